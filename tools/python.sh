#!/usr/bin/env bash
# Installs the Python module `amem` (docs/PYTHON.md) for Debian's /usr/bin/python3:
# installs the Debian packages that are missing (tools/bootstrap.sh), builds the
# module with CMake in build-python/ and copies the package into that Python's
# site-packages (sysconfig's purelib: /usr/local/lib/python3.X/dist-packages).
# Nothing comes from PyPI. Safe to run again: a second run rebuilds what changed
# and replaces the installed package.
#   bash tools/python.sh            build and install
#   PYTHON=/path/to/python3 bash tools/python.sh   another interpreter
set -euo pipefail
cd "$(dirname "$0")/.."
python=${PYTHON:-/usr/bin/python3}
bash tools/bootstrap.sh demo pybind11-dev python3-dev python3-numpy python3-pytest
cmake -S . -B build-python -G Ninja -DCMAKE_BUILD_TYPE=Release -DAMEM_BUILD_PYTHON=ON \
  -DAMEM_BUILD_TESTS=OFF -DAMEM_BUILD_BENCH=OFF -DPython_EXECUTABLE="$python" >/dev/null
cmake --build build-python -j "$(nproc)" --target _amem
site=$("$python" -c 'import sysconfig; print(sysconfig.get_path("purelib"))')
sudo=()
if [[ ! -w $site && ! -w $(dirname "$site") ]] && [[ $(id -u) -ne 0 ]]; then sudo=(sudo); fi
"${sudo[@]}" mkdir -p "$site"
# Replaced whole, so that a file the package no longer has does not stay behind.
"${sudo[@]}" rm -rf "$site/amem.new"
"${sudo[@]}" cp -r build-python/python/amem "$site/amem.new"
"${sudo[@]}" rm -rf "$site/amem"
"${sudo[@]}" mv "$site/amem.new" "$site/amem"
(cd / && "$python" -c 'import amem; print("amem", amem.__version__, "installed in", amem.__path__[0])')
