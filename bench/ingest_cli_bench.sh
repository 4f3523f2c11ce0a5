#!/usr/bin/env bash
# amem ingest as users run it, side by side with what it is measured against, in
# one run (the CLI ingest budgets, docs/DESIGN.md §8): for each size,
#
#   cli        `amem ingest FILE` as a process into a fresh store (FILE: the paper's
#              workload from bench/amem_gen, vectors on, synced to disk first),
#              median of --runs after a warm-up run (none at 1M, as in-process)
#   in-process Store::Apply of the same workload as one batch
#              (`ingest_bench --benchmarks=ingest`, durable, timed apply only)
#   pieces     Store::ApplyStream of the same JSON Lines, parsed beforehand into
#              the pieces amem ingest cuts (`--benchmarks=ingest_stream`): the
#              CLI's write without its parsing. pieces/apply is what writing in
#              bounded pieces costs against one sorted batch; the CLI's column
#              over this one, what parsing (overlapped with the writes) and a
#              fresh process add.
#   lmdb       raw LMDB, the same bytes in one transaction (`--benchmarks=lmdb_ingest`)
#   sqlite     SQLite's import of the same rows, the peer (`--benchmarks=sqlite_ingest`)
#
# each with the peak RSS of its process (/usr/bin/time). One more, untimed CLI run
# per size samples /proc/PID/status every 20 ms for the two parts of that RSS: the
# process's own memory (RssAnon) and the store file's pages LMDB maps for the
# write (RssFile: page cache, shared with the kernel). An ingest_bench process
# holds the generated workload and the batch too (1M: ~8 GB; pieces: the text and
# the pieces besides, ~13 GB), so its RSS is an upper bound for the apply; amem
# ingest streams its file. The budgets: CLI/apply <= 2 at 100K, the CLI's peak RSS
# <= 1 GB at 1M.
#
#   bash bench/ingest_cli_bench.sh [BUILD_DIR] [--sizes 10000,100000,1000000]
#        [--runs 3] [--work DIR]
#
# BUILD_DIR defaults to build/ (with the bench targets). 1M takes ~4 minutes and
# ~3 GB under --work (default /tmp/amem-ingest-bench), which is removed at the end.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build
sizes=10000,100000,1000000 runs=3 work=/tmp/amem-ingest-bench
while [ $# -gt 0 ]; do
  case $1 in
    --sizes) sizes=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/{/^#/p}' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "ingest_cli_bench: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) build=$(cd "$1" && pwd); shift ;;
  esac
done
amem=$build/amem gen=$build/bench/amem_gen bench=$build/bench/ingest_bench
for f in "$amem" "$gen" "$bench" /usr/bin/time; do
  [ -x "$f" ] || { echo "ingest_cli_bench: $f not found (build amem and the bench targets; apt-get install time)" >&2; exit 1; }
done
mkdir -p "$work"
trap 'rm -rf "$work"' EXIT

# peak_parts CMD...: runs CMD, prints "<peak RssAnon KB> <peak RssFile KB>" from
# /proc/PID/status sampled every 20 ms (a sample can miss a peak shorter than that).
peak_parts() {
  "$@" > /dev/null &
  local pid=$! anon=0 file=0 key value _
  while kill -0 "$pid" 2> /dev/null; do
    while read -r key value _; do
      case $key in
        RssAnon:) [ "$value" -gt "$anon" ] && anon=$value ;;
        RssFile:) [ "$value" -gt "$file" ] && file=$value ;;
      esac
    done < "/proc/$pid/status" 2> /dev/null || true
    sleep 0.02
  done
  wait "$pid"
  echo "$anon $file"
}

. "$root/bench/bench_lib.sh"
mb() { awk -v k="$1" 'BEGIN {printf "%.0f MB", k / 1024}'; }

# ingest_bench BENCHMARK N: prints "<median seconds> <peak RSS KB>".
in_process() {
  local warmup=1 r=$runs
  if [ "$2" -ge 1000000 ]; then warmup=0; r=1; fi  # a warm-up run at 1M costs a minute
  /usr/bin/time -f "%M" -o "$work/rss" "$bench" --num="$2" --benchmarks="$1" --runs="$r" \
    --warmup="$warmup" > "$work/out" 2>&1
  local s
  s=$(grep -E "^$1 +:" "$work/out" | sed -E 's/.*median ([0-9.]+) s.*/\1/')
  grep -o "workload checksum [0-9a-f]*" "$work/out" | head -1 > "$work/checksum.bench"
  echo "$s $(cat "$work/rss")"
}

printf '%-8s %-22s %-22s %-22s %-22s %-22s %9s %12s\n' size "amem ingest (CLI)" \
  "in-process apply" "in-process pieces" "raw LMDB" "SQLite" "CLI/apply" "pieces/apply"
parts=""
for n in ${sizes//,/ }; do
  file=$work/w$n.jsonl
  "$gen" --num="$n" --start_ts=auto --out="$file" 2> "$work/gen.err"
  sync "$file"  # else the kernel writes the new file back during the first runs' commits
  : > "$work/cli"
  cli_runs=$runs
  if [ "$n" -lt 1000000 ]; then cli_runs=$((runs + 1)); fi  # a warm-up run, as in-process
  for run in $(seq "$cli_runs"); do
    rm -rf "$work/store"
    "$amem" --store "$work/store" init > /dev/null
    t0=$(date +%s%N)
    /usr/bin/time -f "%M" -o "$work/rss" "$amem" --store "$work/store" ingest "$file" > /dev/null
    t1=$(date +%s%N)
    if [ "$cli_runs" -eq "$runs" ] || [ "$run" -gt 1 ]; then
      echo "$(( (t1 - t0) / 1000000 )) $(cat "$work/rss")" >> "$work/cli"
    fi
  done
  cli_s=$(awk '{print $1 / 1000}' "$work/cli" | median)
  cli_rss=$(awk '{print $2}' "$work/cli" | sort -n | tail -1)
  rm -rf "$work/store"
  "$amem" --store "$work/store" init > /dev/null
  read -r anon_kb file_kb < <(peak_parts "$amem" --store "$work/store" ingest "$file")
  parts="$parts$n: $(mb "$anon_kb") RssAnon, $(mb "$file_kb") RssFile"$'\n'
  rm -rf "$work/store" "$file"
  read -r apply_s apply_rss < <(in_process ingest "$n")
  read -r pieces_s pieces_rss < <(in_process ingest_stream "$n")
  read -r lmdb_s lmdb_rss < <(in_process lmdb_ingest "$n")
  read -r sqlite_s sqlite_rss < <(in_process sqlite_ingest "$n")
  gen_sum=$(grep -o "checksum [0-9a-f]*" "$work/gen.err" | awk '{print $2}')
  bench_sum=$(awk '{print $3}' "$work/checksum.bench")
  if [ "$gen_sum" != "$bench_sum" ]; then
    echo "ingest_cli_bench: the workloads differ (amem_gen $gen_sum, ingest_bench $bench_sum)" >&2
    exit 1
  fi
  printf '%-8s %-22s %-22s %-22s %-22s %-22s %8.2fx %11.2fx\n' "$n" \
    "$(printf '%.3f s, %s' "$cli_s" "$(mb "$cli_rss")")" \
    "$(printf '%.3f s, %s' "$apply_s" "$(mb "$apply_rss")")" \
    "$(printf '%.3f s, %s' "$pieces_s" "$(mb "$pieces_rss")")" \
    "$(printf '%.3f s, %s' "$lmdb_s" "$(mb "$lmdb_rss")")" \
    "$(printf '%.3f s, %s' "$sqlite_s" "$(mb "$sqlite_rss")")" \
    "$(awk -v a="$cli_s" -v b="$apply_s" 'BEGIN {print a / b}')" \
    "$(awk -v a="$pieces_s" -v b="$apply_s" 'BEGIN {print a / b}')"
done
echo "(medians of $runs runs; 1M: one in-process run each; workload checksums match)"
echo "amem ingest's peak RSS in parts (one more run each, sampled every 20 ms): the process's"
echo "own memory (RssAnon) and the store file's pages mapped for the write (RssFile)"
printf '%s' "$parts"
echo "budgets: CLI/apply <= 2 at 100K; CLI peak RSS <= 1 GB at 1M"
