#!/usr/bin/env bash
# amem log and amem replay of the benchmark workload as processes, beside amem ingest
# of the same data (docs/BENCHMARKS.md "Log and replay"): wall and CPU time, MB/s of
# the JSON Lines read or written and operations/s (by wall time), and replay's time
# over ingest's.
#
#   bash bench/replay_bench.sh [BUILD_DIR] [NUM]     # defaults: build, 100000
#
# BUILD_DIR holds amem and bench/amem_gen (cmake --build BUILD_DIR --target amem
# amem_gen). The workload is amem_gen --num=NUM (NUM nodes with vectors, 3 edges each);
# stores and files go to a temporary directory, removed at the end.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
num=${2:-100000}
case $build in /*) ;; *) build=$PWD/$build ;; esac
amem=$build/amem
gen=$build/bench/amem_gen
for b in "$amem" "$gen"; do
  if [ ! -x "$b" ]; then
    echo "FAIL: $b not found (cmake --build $build --target amem amem_gen)" >&2
    exit 1
  fi
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$gen" --num="$num" --out="$work/workload.jsonl" 2>/dev/null
"$amem" --store "$work/a" init >/dev/null

# "wall cpu": seconds the command takes, wall clock and user + system CPU; its
# stdout is dropped.
seconds() {
  local TIMEFORMAT='%R %U %S'
  { time "$@" >/dev/null 2>"$work/stderr"; } 2>"$work/time"
  awk '{ printf "%.3f %.3f", $1, $2 + $3 }' "$work/time"
}
row() {  # name "wall cpu" bytes ops
  awk -v n="$1" -v t="$2" -v b="$3" -v o="$4" 'BEGIN {
    split(t, s, " ")
    printf "| %-6s | %7.3f s | %7.3f s | %7.1f MB | %9.1f | %7d | %9.0f |\n",
           n, s[1], s[2], b / 1e6, b / 1e6 / s[1], o, o / s[1] }'
}

t_ingest=$(seconds "$amem" --store "$work/a" ingest "$work/workload.jsonl" --ts 1700000000)
t_log=$(seconds "$amem" --store "$work/a" log --out "$work/a.log")
t_replay=$(seconds "$amem" --store "$work/b" replay "$work/a.log")

ops=$(wc -l <"$work/workload.jsonl")
log_ops=$(wc -l <"$work/a.log")
in_bytes=$(stat -c %s "$work/workload.jsonl")
log_bytes=$(stat -c %s "$work/a.log")
"$amem" --store "$work/a" export "$work/a.amem" >/dev/null
"$amem" --store "$work/b" export "$work/b.amem" >/dev/null
cmp -s "$work/a.amem" "$work/b.amem" && same=identical || same=DIFFERENT

echo "workload: amem_gen --num=$num ($ops operations); $(nproc) cores"
echo "| step   |      wall |       CPU | JSON Lines |      MB/s |     ops |     ops/s |"
echo "|--------|-----------|-----------|------------|-----------|---------|-----------|"
row ingest "$t_ingest" "$in_bytes" "$ops"
row log "$t_log" "$log_bytes" "$log_ops"
row replay "$t_replay" "$log_bytes" "$log_ops"
awk -v r="$t_replay" -v i="$t_ingest" 'BEGIN {
  split(r, a, " "); split(i, b, " ")
  printf "replay / ingest: %.2fx wall, %.2fx CPU (budget 1.5x: %s)\n", a[1] / b[1],
         a[2] / b[2], a[1] / b[1] <= 1.5 ? "met" : "MISSED" }'
echo "exports of the original and the replayed store: $same"
