#!/usr/bin/env bash
# First contact and the build loop, timed the way a user meets them: the README's two
# commands from fresh clones of HEAD, each row with wall time as the shell sees it.
# Prints the README's table (Markdown) at the end, and each step as it goes.
#
#   bash bench/setup_bench.sh [--purge] [--no-tests]
#
#   --purge     first removes (apt-get purge) the Debian packages that
#               `tools/bootstrap.sh demo` installs, except the compiler, CMake,
#               Ninja and pkg-config, so that the first demo row starts from a
#               machine without them (it reinstalls them itself). Needs root.
#   --no-tests  only the demo and `amem` rows (about 5 minutes instead of 35).
#
# Rows (each in its own clone under a new temporary directory):
#   demo, new clone       bash tools/demo.sh: packages (missing with --purge),
#                         configure, build amem, run the demo; empty compiler cache
#   demo, built tree      bash tools/demo.sh again in the same clone (median of 5)
#   amem target           configure + build the amem target, empty compiler cache
#   test, cold cache      bash tools/test.sh in a new clone, empty compiler cache
#   test, warm cache      bash tools/test.sh in another new clone, the cache the
#                         previous row filled
#   one file changed      a comment added to store/store.cc, then both test builds
#                         rebuilt (cmake --build build && cmake --build build-asan)
# The compiler cache is this script's own (CCACHE_DIR under the temporary
# directory), so the user's cache neither helps nor suffers.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
purge=0 tests=1
for a in "$@"; do
  case $a in
    --purge) purge=1 ;;
    --no-tests) tests=0 ;;
    -h|--help) sed -n '2,26s/^# \{0,1\}//p' "$0"; exit 0 ;;
    *) echo "setup_bench.sh: unknown argument '$a' (try --help)" >&2; exit 2 ;;
  esac
done

work=$(mktemp -d /tmp/amem-setup.XXXXXX)
logs=$work/logs
mkdir -p "$logs"
export CCACHE_DIR=$work/ccache
commit=$(git -C "$root" rev-parse --short HEAD)
rows=()

now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
fmt() {  # fmt MS: "m:ss" from 60 s on, else "s.s s"
  local ms=$1
  if (( ms >= 60000 )); then printf '%d min %02d s' $((ms / 60000)) $(((ms % 60000) / 1000))
  else printf '%d.%d s' $((ms / 1000)) $(((ms % 1000) / 100)); fi
}
timed() {  # timed LABEL BUDGET LOG CMD...: runs CMD, records a row
  local label=$1 budget=$2 log=$3; shift 3
  local t0 t1 rc=0
  echo "== $label: $*" >&2
  t0=$(now_ms)
  "$@" >"$logs/$log" 2>&1 || rc=$?
  t1=$(now_ms)
  if (( rc != 0 )); then
    tail -30 "$logs/$log" >&2
    echo "setup_bench: '$label' failed (exit $rc; log $logs/$log)" >&2
    exit 1
  fi
  echo "   $(fmt $((t1 - t0)))" >&2
  rows+=("| $label | \`$*\` | **$(fmt $((t1 - t0)))** | $budget |")
}
clone() { git clone -q "$root" "$work/$1"; }

if [[ $purge == 1 ]]; then
  pkgs=(ccache liblmdb-dev liblmdb++-dev libxxhash-dev liblz4-dev nlohmann-json3-dev
        libcli11-dev libsimdjson-dev)
  echo "== purging ${pkgs[*]}" >&2
  DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq "${pkgs[@]}" >"$logs/purge.log" 2>&1
fi
state=$([[ $purge == 1 ]] && echo "packages missing" || echo "packages installed")

clone demo
cd "$work/demo"
timed "demo, new clone ($state)" "≤ 4 min" demo1.log \
  env AMEM_DEMO_DIR="$work/demo-run" bash tools/demo.sh
grep -q "^amem demo: built" "$logs/demo1.log" || { echo "demo built nothing?" >&2; exit 1; }
# The built tree: the median of five runs.
runs=()
for _ in 1 2 3 4 5; do
  t0=$(now_ms)
  AMEM_DEMO_DIR="$work/demo-run" bash tools/demo.sh >"$logs/demo2.log" 2>&1
  runs+=($(( $(now_ms) - t0 )))
done
if grep -q "^amem demo: built" "$logs/demo2.log"; then
  echo "setup_bench: the demo rebuilt on a built tree ($logs/demo2.log)" >&2; exit 1
fi
med=$(printf '%s\n' "${runs[@]}" | sort -n | sed -n 3p)
rows+=("| demo, built tree (median of 5) | \`bash tools/demo.sh\` | **$(fmt "$med")** | ≤ 10 s |")

clone amem
cd "$work/amem"
export CCACHE_DIR=$work/ccache-amem
timed "amem target from scratch" "≤ 2 min" amem.log bash -c \
  'cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DAMEM_BUILD_TESTS=OFF -DAMEM_BUILD_BENCH=OFF && cmake --build build --target amem'

if [[ $tests == 1 ]]; then
  export CCACHE_DIR=$work/ccache-test
  clone test1
  cd "$work/test1"
  timed "test, new clone, empty compiler cache" "≤ 20 min" test1.log bash tools/test.sh
  clone test2
  cd "$work/test2"
  timed "test, new clone, warm compiler cache" "≤ 10 min" test2.log bash tools/test.sh
  echo "// setup_bench: one changed file" >>store/store.cc
  timed "one file changed (store/store.cc), both builds" "seconds" rebuild.log \
    bash -c 'cmake --build build && cmake --build build-asan'
  git checkout -q store/store.cc
fi

cd "$root"
echo
echo "Measured $(date -u +%Y-%m-%d) on $(nproc) cores ($(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)), commit $commit:"
echo
echo "| step | command | wall | budget |"
echo "|---|---|---:|---|"
printf '%s\n' "${rows[@]}"
echo
# The clones and caches are large (build-asan/ alone is about a gigabyte); the logs stay.
rm -rf "$work"/demo "$work"/demo-run "$work"/amem "$work"/test1 "$work"/test2 "$work"/ccache*
echo "Logs: $logs"
