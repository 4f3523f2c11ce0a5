#!/usr/bin/env bash
# Makes DIR/node_modules hold what DIR/package-lock.json pins, for the tests that
# drive real Node components (tests/mcp: the MCP SDK; tests/index: scip-typescript).
# Checks for node (at least MIN_NODE when given, e.g. 18.19) and npm: a missing or
# too old one is a failure, never a skip. Then runs `npm ci` when node_modules is
# missing or stale. Two builds (normal and sanitizer) or a benchmark may call this
# at once: it installs under a lock, one per DIR.
#   bash tests/npm_ci.sh DIR WHAT [MIN_NODE]     WHAT: "the MCP tests", for messages
set -euo pipefail
dir=${1:?usage: npm_ci.sh DIR WHAT [MIN_NODE]}
what=${2:-the tests}
min=${3:-}
cd "$dir"
for tool in node npm; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "FAIL: '$tool' is not installed; $what need Node.js${min:+ >= $min} and npm" >&2
    echo "      (bash tools/bootstrap.sh test installs them; on Debian: sudo apt-get install nodejs npm)" >&2
    exit 1
  fi
done
if [ -n "$min" ] && ! node -e 'const want = process.argv[1].split(".").map(Number);
    const have = process.versions.node.split(".").map(Number);
    process.exit(have[0] > want[0] || (have[0] === want[0] && have[1] >= want[1]) ? 0 : 1)' "$min"; then
  echo "FAIL: Node.js $(node --version) is too old; $what need >= $min" >&2
  exit 1
fi
exec 9>"${TMPDIR:-/tmp}/amem-npm-$(basename "$PWD").lock"
flock 9
stamp=node_modules/.amem-lock-stamp
if [ ! -f "$stamp" ] || ! cmp -s package-lock.json "$stamp"; then
  npm ci --no-audit --no-fund --loglevel=error >&2
  cp package-lock.json "$stamp"
fi
