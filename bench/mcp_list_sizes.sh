#!/usr/bin/env bash
# The tools/list sizes of `amem mcp`'s three profiles beside the official memory
# server's, in one run (bench/mcp_list_sizes.mjs; the README's table comes from it).
#   bash bench/mcp_list_sizes.sh [AMEM_BINARY]      (default: build/amem)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
amem=${1:-$root/build/amem}
case $amem in /*) ;; *) amem=$PWD/$amem ;; esac
if [ ! -x "$amem" ]; then
  echo "FAIL: amem binary '$amem' not found or not executable (build it, or pass its path)" >&2
  exit 1
fi
bash "$root/tests/mcp/node_modules.sh" "the MCP list-size benchmark"
exec node "$root/bench/mcp_list_sizes.mjs" "$amem"
