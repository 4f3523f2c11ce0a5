#!/usr/bin/env bash
# The README's first command: installs what is missing (tools/bootstrap.sh), builds
# amem (Release, in build/), then runs the demo (tools/demo_run.sh) on a fresh
# default store ./.amem in the working directory $AMEM_DEMO_DIR (default
# /tmp/amem-demo); an old ./.amem there is removed first.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
bash tools/bootstrap.sh
echo "amem demo: building (Release, build/)"
mkdir -p build
if ! { cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release &&
       cmake --build build -j "$(nproc)"; } >build/demo-build.log 2>&1; then
  cat build/demo-build.log >&2
  exit 1
fi

work=${AMEM_DEMO_DIR:-/tmp/amem-demo}
mkdir -p "$work"
rm -rf "$work/.amem"
echo "amem demo: working directory $work (store $work/.amem)"
cd "$work"
bash "$root/tools/demo_run.sh" "$root/build/amem"
