#!/usr/bin/env bash
# Runs the Node end-to-end tests of `amem mcp` (tests/mcp/*.test.mjs) against the
# amem binary given as $1, after node_modules.sh has installed the pinned SDK and
# official memory server. A missing node or npm is a failure, never a skip.
set -euo pipefail
amem=${1:?usage: run_node_tests.sh AMEM_BINARY}
cd "$(dirname "$0")"
bash node_modules.sh "the MCP end-to-end tests"
export AMEM_BINARY=$amem
exec node --test --test-concurrency=1 ./*.test.mjs
