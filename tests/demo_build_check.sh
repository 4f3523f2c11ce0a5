#!/usr/bin/env bash
# The demo builds the `amem` target and nothing else, and a built tree rebuilds
# nothing (tools/demo.sh). Usage: demo_build_check.sh SOURCE_DIR BUILD_DIR
#   1. `tools/demo.sh --dry-run` in a new build directory, configured as a new user's
#      would be: ninja's plan compiles only the sources of amem's libraries and links
#      only `amem` (no test, benchmark or fuzz target, nothing from tests/ or bench/);
#   2. BUILD_DIR, where ctest runs and `amem` is built: ninja has no work for `amem`
#      (what makes `bash tools/demo.sh` start at once on a built tree).
set -euo pipefail
src=${1:?usage: demo_build_check.sh SOURCE_DIR BUILD_DIR} built=${2:?usage: demo_build_check.sh SOURCE_DIR BUILD_DIR}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

AMEM_DEMO_BUILD=$tmp/build bash "$src/tools/demo.sh" --dry-run >"$tmp/plan" 2>&1 ||
  { cat "$tmp/plan" >&2; fail "tools/demo.sh --dry-run failed"; }
grep -q "AMEM_BUILD_TESTS:BOOL=OFF" "$tmp/build/CMakeCache.txt" ||
  fail "the demo's build directory is configured with the tests"
# Each compile command: "... -o OBJECT -c SOURCE"; the link of an executable ends
# in "-o NAME" followed by its inputs.
objects=$(grep -oE ' -o [^ ]+\.o -c [^ ]+' "$tmp/plan" || true)
[[ -n $objects ]] || { cat "$tmp/plan" >&2; fail "the plan compiles nothing"; }
others=$(grep -vE ' -o CMakeFiles/amem(_common|_store|_snapshot|_query|_view|_index|_io|_mcp|_cli|_nats)?\.dir/' <<<"$objects" || true)
[[ -z $others ]] || fail "the demo compiles more than amem: $others"
if grep -qE ' -c [^ ]*/(tests|bench)/|_fuzz\.cc$|catch' <<<"$objects"; then
  fail "the demo compiles a test, benchmark or fuzz source"
fi
exes=$(grep -vE ' -c ' "$tmp/plan" | grep -oE ' -o [^ ]+' | sed 's/^ -o //' | grep -vE '\.(a|o)$' || true)
[[ $exes == amem ]] || fail "the demo links '$exes', not just amem"
echo "demo plan: $(wc -l <<<"$objects") objects, linking amem only"

# A real build, not `ninja -n`: with CMake's globs, a dry run always plans to re-run
# CMake and stops there. On a built tree this only re-checks the globs.
noop=$(cd "$built" && ninja amem)
grep -q "no work to do" <<<"$noop" || fail "a built tree still had work for amem: $noop"
echo "built tree: no work to do for amem"
