#!/usr/bin/env bash
# The README's first command: installs what is missing (tools/bootstrap.sh demo),
# builds the `amem` target and nothing else (Release, in build/; the test command
# shares that build), then runs the demo (tools/demo_run.sh) on a fresh default
# store ./.amem in the working directory $AMEM_DEMO_DIR (default /tmp/amem-demo); an
# old ./.amem there is removed first. On a built tree nothing is rebuilt.
#
#   bash tools/demo.sh             install, build, run the demo
#   bash tools/demo.sh --dry-run   install and configure, then print every command
#                                  the build of amem runs (ninja -t commands amem)
#                                  instead of building and running
# $AMEM_DEMO_BUILD names another build directory (default build/).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dry=0
case ${1:-} in
  "") ;;
  --dry-run) dry=1 ;;
  -h|--help) sed -n '2,12s/^# \{0,1\}//p' "$0"; exit 0 ;;
  *) echo "demo.sh: unknown argument '$1' (try --help)" >&2; exit 2 ;;
esac
cd "$root"
bash tools/bootstrap.sh demo
build=${AMEM_DEMO_BUILD:-$root/build}
mkdir -p "$build"
log=$build/demo-build.log
{
  # A new build directory is configured without tests and benchmarks, whose
  # packages the demo does not install; one the test command configured keeps them.
  if [[ ! -f $build/CMakeCache.txt ]]; then
    cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DAMEM_BUILD_TESTS=OFF -DAMEM_BUILD_BENCH=OFF
  fi
  if [[ $dry == 1 ]]; then
    ninja -C "$build" -t commands amem
  else
    cmake --build "$build" --target amem -j "$(nproc)"
  fi
} >"$log" 2>&1 || { cat "$log" >&2; exit 1; }
if [[ $dry == 1 ]]; then cat "$log"; exit 0; fi
grep -q "no work to do" "$log" || echo "amem demo: built $build/amem (log: $log)"

work=${AMEM_DEMO_DIR:-/tmp/amem-demo}
mkdir -p "$work"
rm -rf "$work/.amem"
echo "amem demo: working directory $work (store $work/.amem)"
cd "$work"
bash "$root/tools/demo_run.sh" "$build/amem"
