#!/usr/bin/env bash
# Installs the Debian packages amem needs, when any is missing (apt-get; sudo when
# not root). Safe to run again: does nothing when everything is there.
set -euo pipefail

packages=(build-essential cmake ninja-build pkg-config git
          liblmdb-dev liblmdb++-dev libxxhash-dev liblz4-dev catch2
          nlohmann-json3-dev libcli11-dev libsimdjson-dev)
# Benchmarks and fuzzing compare against peers and need these too.
if [[ "${AMEM_BOOTSTRAP_BENCH:-1}" == 1 ]]; then
  # libclang-rt-14-dev holds libFuzzer's runtime; clang only recommends it.
  packages+=(libsqlite3-dev clang libclang-rt-14-dev)
fi
packages+=("$@")

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# The MCP end-to-end tests (tests/mcp/run_node_tests.sh) need node and npm. Checked
# by command, not by package: a NodeSource `nodejs` package bundles npm and
# conflicts with Debian's `npm`, so only what is missing is installed (on plain
# Debian 12: nodejs and npm).
command -v node >/dev/null 2>&1 || missing+=(nodejs)
command -v npm >/dev/null 2>&1 || missing+=(npm)
[[ ${#missing[@]} -eq 0 ]] && exit 0

sudo=()
if [[ $(id -u) -ne 0 ]]; then sudo=(sudo); fi
echo "bootstrap: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
