#!/usr/bin/env bash
# Builds amem twice — a normal build and one with AddressSanitizer and
# UndefinedBehaviorSanitizer — and runs every test in both with ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/bootstrap.sh
jobs=$(nproc)

run() {  # run DIR CMAKE_ARGS...
  local dir=$1; shift
  cmake -S . -B "$dir" -G Ninja "$@" >/dev/null
  cmake --build "$dir" -j "$jobs"
  (cd "$dir" && ctest --output-on-failure -j "$jobs" --timeout 600)
}

echo "== normal build (RelWithDebInfo)"
run build -DCMAKE_BUILD_TYPE=RelWithDebInfo
echo "== sanitizer build (ASan + UBSan)"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  run build-asan -DCMAKE_BUILD_TYPE=Debug -DAMEM_SANITIZE=ON -DAMEM_BUILD_BENCH=OFF
