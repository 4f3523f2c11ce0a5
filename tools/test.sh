#!/usr/bin/env bash
# The README's test command: installs what is missing (tools/bootstrap.sh test),
# builds amem twice and runs every test in both with ctest:
#   build/       Release, with the tests and benchmarks (the demo shares it), the
#                short libFuzzer sessions (tests/fuzz.cmake), and the Python module
#                with its pytest suite (python/, tests/python);
#   build-asan/  Debug with AddressSanitizer and UndefinedBehaviorSanitizer.
# Compiles through ccache when it is installed (CMakeLists.txt), so a second run
# recompiles only what changed.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/bootstrap.sh test
jobs=$(nproc)

run() {  # run DIR CMAKE_ARGS...
  local dir=$1; shift
  cmake -S . -B "$dir" -G Ninja "$@" >/dev/null
  cmake --build "$dir" -j "$jobs"
  (cd "$dir" && ctest --output-on-failure -j "$jobs" --timeout 600)
}

echo "== normal build (Release, build/)"
run build -DCMAKE_BUILD_TYPE=Release -DAMEM_BUILD_TESTS=ON -DAMEM_BUILD_BENCH=ON \
  -DAMEM_FUZZ_TESTS=ON -DAMEM_BUILD_PYTHON=ON
echo "== sanitizer build (ASan + UBSan, build-asan/)"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  run build-asan -DCMAKE_BUILD_TYPE=Debug -DAMEM_SANITIZE=ON -DAMEM_BUILD_TESTS=ON \
  -DAMEM_BUILD_BENCH=OFF -DAMEM_FUZZ_TESTS=OFF
