#!/usr/bin/env bash
# Runs the Node end-to-end tests of `amem mcp` (tests/mcp/*.test.mjs) against the
# amem binary given as $1. Installs the pinned SDK and official memory server from
# package-lock.json with `npm ci` when node_modules is missing or stale. A missing
# node or npm is a failure, never a skip.
set -euo pipefail
amem=${1:?usage: run_node_tests.sh AMEM_BINARY}
cd "$(dirname "$0")"
for tool in node npm; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "FAIL: '$tool' is not installed; the MCP end-to-end tests need Node.js >= 18 and npm" >&2
    echo "      (Debian: sudo apt-get install nodejs npm)" >&2
    exit 1
  fi
done
# Two builds (normal and sanitizer) may run this at once: install under a lock.
exec 9>"${TMPDIR:-/tmp}/amem-mcp-npm.lock"
flock 9
stamp=node_modules/.amem-lock-stamp
if [ ! -f "$stamp" ] || ! cmp -s package-lock.json "$stamp"; then
  npm ci --no-audit --no-fund --loglevel=error >&2
  cp package-lock.json "$stamp"
fi
flock -u 9
export AMEM_BINARY=$amem
exec node --test --test-concurrency=1 ./*.test.mjs
