#!/usr/bin/env bash
# Write-then-query latency (live queries: base + delta, docs/FORMAT.md §11), the way
# users run it, against the full re-export path (AMEM_FULL_EXPORT=1) in the same run:
#
#   CLI   `amem put-node` then `amem text-search` as processes: the query right after
#         the write, and the same query again with no pending change; peak RSS of
#         the query after the write, and of `amem export` of the same store
#   MCP   one `amem mcp` session (bench/live_mcp_client.py): create_entities of one
#         entity, then text_search, context or search_nodes right after it
#
#   bash bench/live_bench.sh [AMEM] [--sizes 10000,100000,1000000] [--reps 9]
#        [--full-reps 3] [--work DIR]
#
# Stores are the paper's workload (bench/amem_gen --vectors=0 --start_ts=auto)
# ingested once into --work (default /tmp/amem-live-bench) and reused by later
# runs. Medians in milliseconds. The official MCP memory server's figures for the
# same write-then-read pattern come from bench/mcp_bench.sh (its `write` and
# `search_nodes` rows); it has no text_search or context.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
amem=$root/build/amem
if [ $# -gt 0 ] && [[ $1 != -* ]]; then amem=$1; shift; fi
case $amem in /*) ;; *) amem=$PWD/$amem ;; esac
gen=$(dirname "$amem")/bench/amem_gen
sizes=10000,100000,1000000 reps=9 full_reps=3 work=/tmp/amem-live-bench
while [ $# -gt 0 ]; do
  case $1 in
    --sizes) sizes=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --full-reps) full_reps=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    *) echo "live_bench: unknown argument $1" >&2; exit 2 ;;
  esac
done
for f in "$amem" "$gen"; do
  [ -x "$f" ] || { echo "live_bench: $f not found (build amem and the bench targets)" >&2; exit 1; }
done
py=/usr/bin/python3
mkdir -p "$work"

. "$root/bench/bench_lib.sh"

printf '%-9s %-34s %12s %12s %8s\n' size "step" "live ms" "full ms" ratio
for n in ${sizes//,/ }; do
  store=$work/s$n
  if [ ! -f "$store/.complete" ]; then
    rm -rf "$store"
    "$gen" --num="$n" --vectors=0 --start_ts=auto --out="$work/w$n.jsonl" 2>/dev/null
    "$amem" --store "$store" init > /dev/null
    "$amem" --store "$store" ingest "$work/w$n.jsonl" > /dev/null
    rm -f "$work/w$n.jsonl"
    touch "$store/.complete"
  fi
  seed=$("$amem" --store "$store" --json search --type file --limit 1 |
         $py -c 'import json,sys; print(json.load(sys.stdin)["nodes"][0]["key"])')
  "$amem" --store "$store" text-search "retry policy cache" > /dev/null  # the base
  rm -f "$work"/cli_after "$work"/cli_idle "$work"/cli_full "$work"/export
  for r in $(seq "$reps"); do
    "$amem" --store "$store" put-node "fact:live-bench-cli-$r" --type fact \
      --content "retry policy cache live bench $r" > /dev/null
    timed "$work/cli_after" "$amem" --store "$store" text-search "retry policy cache"
    timed "$work/cli_idle" "$amem" --store "$store" text-search "retry policy cache"
  done
  for r in $(seq "$full_reps"); do
    "$amem" --store "$store" put-node "fact:live-bench-full-$r" --type fact \
      --content "retry policy cache full bench $r" > /dev/null
    AMEM_FULL_EXPORT=1 timed "$work/cli_full" "$amem" --store "$store" text-search "retry policy cache"
  done
  timed "$work/export" "$amem" --store "$store" export "$work/export.amem"
  rm -f "$work/export.amem"
  after=$(col 1 "$work/cli_after") idle=$(col 1 "$work/cli_idle") full=$(col 1 "$work/cli_full")
  printf '%-9s %-34s %12s %12s %8s\n' "$n" "CLI text-search after put-node" "$after" "$full" \
    "$(awk -v a="$after" -v b="$full" 'BEGIN {printf "%.3f", a / b}')"
  printf '%-9s %-34s %12s %12s %8s\n' "$n" "CLI text-search, nothing pending" "$idle" "" \
    "$(awk -v a="$after" -v b="$idle" 'BEGIN {printf "after/idle %.2f", a / b}')"
  rss_after=$(col 2 "$work/cli_after") rss_full=$(col 2 "$work/cli_full") rss_export=$(col 2 "$work/export")
  printf '%-9s %-34s %12s %12s %8s\n' "$n" "peak RSS KB: query after write" "$rss_after" "$rss_full" \
    "$(awk -v a="$rss_after" -v b="$rss_export" 'BEGIN {printf "/export %.2f", a / b}')"
  printf '%-9s %-34s %12s\n' "$n" "peak RSS KB: amem export" "$rss_export"

  mcp_full_reps=$(( full_reps / 3 > 0 ? full_reps / 3 : 1 ))
  $py "$root/bench/live_mcp_client.py" "$amem" "$store" "$seed" "$reps" > "$work/mcp_live.json"
  $py "$root/bench/live_mcp_client.py" "$amem" "$store" "$seed" "$mcp_full_reps" full > "$work/mcp_full.json"
  $py - "$n" "$work/mcp_live.json" "$work/mcp_full.json" <<'EOF'
import json, statistics, sys
n, live, full = sys.argv[1], json.load(open(sys.argv[2])), json.load(open(sys.argv[3]))
for step in ["write", "text_search", "context", "search_nodes", "idle_text_search"]:
    a = statistics.median(live[step]); b = statistics.median(full[step])
    label = "MCP " + (step + " after a write" if step not in ("write", "idle_text_search") else
                      {"write": "create_entities", "idle_text_search": "text_search, nothing pending"}[step])
    print("%-9s %-34s %12.1f %12.1f %8.3f" % (n, label, a, b, a / b))
EOF
done
