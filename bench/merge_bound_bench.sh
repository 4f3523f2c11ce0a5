#!/usr/bin/env bash
# The CLI query that finds the delta past its merge bound (docs/STORE.md §10): a
# baseline amem that merges in the query's foreground against one that answers
# from base + delta and merges in a detached `amem merge-base` process.
#
#   bash bench/merge_bound_bench.sh BASELINE_AMEM [AMEM] [--num 100000] [--trials 11]
#        [--work DIR]
#
# The store: amem_gen --num=N --vectors=0 --start_ts=auto, ingested (its base at
# revision 1), then N/50 facts each with one edge, one ingest --no-compile
# (revision 2: past the bound of 1% of the base's records, under four times it).
# Each trial copies that store afresh for each build, in turn, and times
# `text-search` on it; after the new build's query it waits until the background
# merge put revision 2 in and exited, so that no trial runs beside a merge.
# Prints the medians in ms, the median of the per-trial ratios, and the load.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
[ $# -ge 1 ] || { echo "usage: merge_bound_bench.sh BASELINE_AMEM [AMEM] [--num N] [--trials N] [--work DIR]" >&2; exit 2; }
old=$1; shift
amem=$root/build/amem
if [ $# -gt 0 ] && [[ $1 != -* ]]; then amem=$1; shift; fi
num=100000 trials=11 work=/tmp/amem-merge-bound-bench
while [ $# -gt 0 ]; do
  case $1 in
    --num) num=$2; shift 2 ;;
    --trials) trials=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    *) echo "merge_bound_bench: unknown argument $1" >&2; exit 2 ;;
  esac
done
gen=$(dirname "$amem")/bench/amem_gen
for f in "$old" "$amem" "$gen"; do
  [ -x "$f" ] || { echo "merge_bound_bench: $f not found" >&2; exit 1; }
done
mkdir -p "$work"
. "$root/bench/bench_lib.sh"
prep=$work/prep$num
if [ ! -f "$prep/.complete" ]; then
  rm -rf "$prep"
  "$gen" --num="$num" --vectors=0 --start_ts=auto --out="$work/w.jsonl" 2>/dev/null
  "$amem" --store "$prep" init > /dev/null
  "$amem" --store "$prep" ingest "$work/w.jsonl" > /dev/null
  /usr/bin/python3 - "$work/w.jsonl" "$work/delta.jsonl" "$num" <<'PY'
import json, sys, time
keys = [json.loads(l)["key"] for l in open(sys.argv[1]) if l.startswith('{"op":"node"')]
now = int(time.time())
with open(sys.argv[2], "w") as f:
    for i in range(int(sys.argv[3]) // 50):
        f.write(json.dumps({"op": "node", "key": f"fact:bound-{i}", "type": "fact",
                            "content": f"bound retry cache note {i}", "ts": now}) + "\n")
        f.write(json.dumps({"op": "edge", "src": f"fact:bound-{i}", "rel": "related_to",
                            "dst": keys[(i * 37) % len(keys)]}) + "\n")
PY
  "$amem" --store "$prep" ingest --no-compile "$work/delta.jsonl" > /dev/null
  rm -f "$work/w.jsonl" "$work/delta.jsonl"
  touch "$prep/.complete"
fi
t=$work/t
rm -f "$work/old" "$work/new"
echo "load before: $(uptime)"
for i in $(seq "$trials"); do
  for who in old new; do
    bin=$old; [ $who = new ] && bin=$amem
    rm -rf "$t" && cp -a --sparse=always "$prep" "$t"
    timed "$work/$who" "$bin" --store "$t" text-search "retry cache"
    if [ $who = new ]; then
      for _ in $(seq 3000); do [ "$(cut -d' ' -f1 "$t/current.rev")" = 2 ] && break; sleep 0.02; done
      [ -e "$t/merge.lock" ] && flock "$t/merge.lock" true
    fi
    [ "$(cut -d' ' -f1 "$t/current.rev")" = 2 ] || echo "trial $i, $who: the base did not move" >&2
  done
done
echo "load after:  $(uptime)"
o=$(col 1 "$work/old") n=$(col 1 "$work/new")
r=$(paste -d' ' "$work/old" "$work/new" | awk '{print $3 / $1}' | median)
printf '%-40s %10s %10s %10s\n' "$num nodes, $trials trials" "baseline" "this" "ratio"
printf '%-40s %10s %10s %10s\n' "query past the bound, ms (median)" "$o" "$n" "$r"
