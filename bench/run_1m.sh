#!/usr/bin/env bash
# The 1M-node row of every table in docs/BENCHMARKS.md, in one command:
#
#   bash bench/run_1m.sh [BUILD_DIR] [--skip ingest,snapshot,queries,cognitive,live]
#
# BUILD_DIR defaults to build/ of this repository (a RelWithDebInfo or Release build
# with the benches). Each step is one of the bench programs at --num=1000000 (1M nodes,
# 3M edges, the paper's workload of bench/workload.h), run under /usr/bin/time, which
# prints its wall time and peak RSS; the last line is the total. On the 2-core
# machine of docs/BENCHMARKS.md it takes about 10 minutes and needs ~7 GB of memory
# and ~5 GB under $TMPDIR (default /tmp). The peers that take minutes at 1M are left
# out (SQLite and raw LMDB ingest stay; networkx, igraph and SQLite FTS5 do not), and
# betweenness is timed once (22 s a call). The MCP table's 1M row is the live step's
# MCP rows: the official MCP server rewrites its whole JSONL file on every write, so
# at 1M entities one of its writes takes seconds and a run would take hours.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build
skip=""
while [ $# -gt 0 ]; do
  case $1 in
    --skip) skip=$2; shift 2 ;;
    -h|--help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "run_1m.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) build=$(cd "$1" && pwd); shift ;;
  esac
done
for b in ingest_bench snapshot_bench query_bench cognitive_bench amem_gen; do
  if [ ! -x "$build/bench/$b" ]; then
    echo "run_1m.sh: $build/bench/$b not found: build the benches first (cmake --build $build)" >&2
    exit 1
  fi
done
if [ ! -x /usr/bin/time ]; then
  echo "run_1m.sh: /usr/bin/time is needed for peak RSS (apt-get install time)" >&2
  exit 1
fi

start=$(date +%s)
failed=""
step() {  # step NAME COMMAND...; a failing step is reported and the others still run
  local name=$1; shift
  case ",$skip," in *",$name,"*) echo "== $name: skipped"; return 0 ;; esac
  echo "== $name: $*"
  /usr/bin/time -f "== $name: %e s wall, peak RSS %M KB" "$@" || failed="$failed $name"
}

step ingest "$build/bench/ingest_bench" --num=1000000 --runs=1 --warmup=0 \
  --benchmarks=ingest,ingest_nosync,lmdb_ingest,sqlite_ingest,open,lmdb_open
step snapshot "$build/bench/snapshot_bench" --num=1000000 --benchmarks=export,export_nofile,open,verify \
  --reps=3
step queries "$build/bench/query_bench" --num=1000000 --peers=0 --reps=5 --betweenness_reps=1
step cognitive "$build/bench/cognitive_bench" --num=1000000 --runs=5
step live bash "$root/bench/live_bench.sh" "$build/amem" --sizes 1000000 --reps 5 --full-reps 1
echo "== total: $(( $(date +%s) - start )) s"
if [ -n "$failed" ]; then
  echo "run_1m.sh: FAILED:$failed" >&2
  exit 1
fi
