#!/usr/bin/env bash
# MCP latency benchmark runner: amem (`amem mcp`) vs the official MCP memory server
# (@modelcontextprotocol/server-memory), driven by the same SDK client in one run.
# See bench/mcp_bench.mjs for what is measured.
#
#   bash bench/mcp_bench.sh [AMEM_BINARY] [mcp_bench.mjs args...]
#   bash bench/mcp_bench.sh build/amem --sizes 1000,10000 --reps 200 --write-reps 100
#
# AMEM_BINARY defaults to build/amem of this repository; a relative path is taken
# from the current directory. tests/mcp/node_modules.sh installs the pinned SDK and
# official server, as for the MCP tests.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
amem=$root/build/amem
if [ $# -gt 0 ] && [[ $1 != -* ]]; then
  amem=$1
  shift
fi
case $amem in /*) ;; *) amem=$PWD/$amem ;; esac
if [ ! -x "$amem" ]; then
  echo "FAIL: amem binary '$amem' not found or not executable (build it, or pass its path)" >&2
  exit 1
fi
bash "$root/tests/mcp/node_modules.sh" "the MCP benchmark"
exec node "$root/bench/mcp_bench.mjs" --amem "$amem" "$@"
