#!/usr/bin/env bash
# Queries as agents run them: each an `amem` process from the shell, with its peak
# RSS, on the paper's workload (bench/amem_gen --vectors=0 --start_ts=auto) at each
# size (docs/BENCHMARKS.md "Queries as processes", issue budgets in docs/DESIGN.md):
#
#   first query   `amem text-search` right after `amem ingest` of the whole file
#                 into a new store (it may compile the store's base)
#   text-search, traverse, get-node, context
#                 each as a process on the built store, nothing pending
#   mass delete   issue 40's merge-bound case on a new store per build: the ingest,
#                 one query (the base), one write deleting --delete of the nodes
#                 with their edges (bench/mass_delete.py), the first query after
#                 it (1 run), then --runs times a one-node write followed by a
#                 timed `amem text-search`
#   MCP session   one `amem mcp` session per build, each on a fresh synced copy of
#                 the store: --session put_memory writes, each followed by one query
#                 (text_search, search_nodes, context, traverse in turn);
#                 p50/p99/max per tool per tenth (bench/mcp_session_client.py)
#
#   bash bench/process_bench.sh [AMEM] [--vs AMEM_B] [--sizes 100000,1000000]
#        [--runs 9] [--session 2000] [--delete 0.8] [--work DIR]
#
# --vs AMEM_B runs every process step with a second build too, alternating run by
# run, and prints the ratio A/B of the medians (each build on a fresh copy of one
# store, exporting its own base; the ingest and first-query step get a store of
# their own per build). Stores are kept in --work
# (default /tmp/amem-process-bench) and reused by later runs.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/bench/bench_lib.sh"
amem=$root/build/amem
if [ $# -gt 0 ] && [[ $1 != -* ]]; then amem=$1; shift; fi
vs="" sizes=100000,1000000 runs=9 session=2000 delete=0.8 work=/tmp/amem-process-bench
while [ $# -gt 0 ]; do
  case $1 in
    --vs) vs=$2; shift 2 ;;
    --sizes) sizes=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --session) session=$2; shift 2 ;;
    --delete) delete=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/{/^#/p}' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "process_bench: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
abs() { case $1 in /*) echo "$1" ;; *) echo "$PWD/$1" ;; esac; }
amem=$(abs "$amem")
[ -z "$vs" ] || vs=$(abs "$vs")
gen=$(dirname "$amem")/bench/amem_gen
for f in "$amem" "$gen" ${vs:+"$vs"} /usr/bin/time; do
  [ -x "$f" ] || { echo "process_bench: $f not found (build amem and the bench targets)" >&2; exit 1; }
done
py=/usr/bin/python3
mkdir -p "$work"

# step NAME CMD-ARGS...: times `amem --store $store CMD-ARGS` (and with --vs the
# other build) --runs times, alternating, after one warm-up run each.
step() {
  local name=$1; shift
  rm -f "$work/a" "$work/b"
  "$amem" --store "$store_a" "$@" > /dev/null
  [ -z "$vs" ] || "$vs" --store "$store_b" "$@" > /dev/null
  for _ in $(seq "$runs"); do
    timed "$work/a" "$amem" --store "$store_a" "$@"
    [ -z "$vs" ] || timed "$work/b" "$vs" --store "$store_b" "$@"
  done
  report "$name" "$work/a" "$work/b"
}
report() {  # report NAME FILE_A FILE_B
  local a b ratio="" rb=""
  a=$(col 1 "$2")
  if [ -s "$3" ]; then
    b=$(col 1 "$3")
    ratio=$(awk -v a="$a" -v b="$b" 'BEGIN {printf "%.3f", a / b}')
    rb=$(( $(col 2 "$3") / 1024 ))
  fi
  printf '%-9s %-22s %10s %8s %10s %8s %8s\n' "$n" "$1" "$a" "$(( $(col 2 "$2") / 1024 ))" \
    "${b:-}" "$rb" "$ratio"
}

printf '%-9s %-22s %10s %8s %10s %8s %8s\n' size step "A ms" "A MB" "B ms" "B MB" "A/B"
for n in ${sizes//,/ }; do
  [ -f "$work/w$n.jsonl" ] || "$gen" --num="$n" --vectors=0 --start_ts=auto --out="$work/w$n.jsonl" 2> /dev/null
  # Ingest, then the first query, into a new store per build.
  rm -f "$work/a" "$work/b"
  for build in "$amem" ${vs:+"$vs"}; do
    rm -rf "$work/first"
    "$build" --store "$work/first" init > /dev/null
    "$build" --store "$work/first" ingest "$work/w$n.jsonl" > /dev/null
    if [ "$build" = "$amem" ]; then out=$work/a; else out=$work/b; fi
    timed "$out" "$build" --store "$work/first" text-search "retry policy cache"
  done
  rm -rf "$work/first"
  report "first query (1 run)" "$work/a" "$work/b"

  if [ "$delete" != 0 ]; then
    [ -f "$work/del$n-$delete.jsonl" ] ||
      $py "$root/bench/mass_delete.py" "$work/w$n.jsonl" "$delete" "$work/del$n-$delete.jsonl"
    rm -f "$work/a" "$work/b" "$work/a2" "$work/b2"
    for build in "$amem" ${vs:+"$vs"}; do
      if [ "$build" = "$amem" ]; then out=$work/a; else out=$work/b; fi
      rm -rf "$work/del"
      "$build" --store "$work/del" init > /dev/null
      "$build" --store "$work/del" ingest "$work/w$n.jsonl" > /dev/null
      "$build" --store "$work/del" text-search "retry policy cache" > /dev/null
      "$build" --store "$work/del" ingest "$work/del$n-$delete.jsonl" > /dev/null 2>&1
      timed "$out" "$build" --store "$work/del" text-search "retry policy cache"
      for i in $(seq "$runs"); do
        echo "{\"op\":\"node\",\"key\":\"fact:late$i\",\"type\":\"fact\",\"content\":\"late note $i\"}" |
          "$build" --store "$work/del" ingest - > /dev/null 2>&1
        timed "${out}2" "$build" --store "$work/del" text-search "retry policy cache"
      done
    done
    rm -rf "$work/del"
    report "after delete (1 run)" "$work/a" "$work/b"
    report "write+query after del" "$work/a2" "$work/b2"
  fi

  store=$work/s$n
  if [ ! -f "$store/.complete" ]; then
    rm -rf "$store"
    "$amem" --store "$store" init > /dev/null
    "$amem" --store "$store" ingest "$work/w$n.jsonl" > /dev/null
    touch "$store/.complete"
  fi
  # With --vs each build reads a copy of its own, made afresh: two builds may keep
  # different cache files beside the store, and would each throw the other's away;
  # and a base file written hours ago, through memory pressure, maps slower than one
  # just written (docs/BENCHMARKS.md, Queries as processes), so neither build gets
  # the older file.
  store_a=$store store_b=$work/s$n-b
  if [ -n "$vs" ]; then
    store_a=$work/s$n-a
    for copy in "$store_a" "$store_b"; do
      rm -rf "$copy"
      cp -r "$store" "$copy"
      rm -f "$copy"/current.*
    done
  fi
  seed=$("$amem" --store "$store" --json search --type file --limit 1 |
         $py -c 'import json,sys; print(json.load(sys.stdin)["nodes"][0]["key"])')
  step "text-search" text-search "retry policy cache"
  step "traverse" traverse "$seed" --depth 2
  step "get-node" get-node "$seed"
  step "context" context "$seed"
  # Each build's session writes into a fresh copy of the store, synced first: a
  # first write would otherwise pay the writeback of the just-copied file.
  if [ "$session" -gt 0 ]; then
    for build in "$amem" ${vs:+"$vs"}; do
      if [ "$build" = "$amem" ]; then label=A; else label=B; fi
      echo "MCP session at $n: $session put_memory writes, each followed by one query ($label)"
      rm -rf "$work/session"
      cp -r "$store" "$work/session"
      sync -f "$work/session/data.mdb"
      $py "$root/bench/mcp_session_client.py" "$build" "$work/session" "$seed" "$session"
    done
    rm -rf "$work/session"
  fi
  [ -z "$vs" ] || rm -rf "$store_a" "$store_b"
done
