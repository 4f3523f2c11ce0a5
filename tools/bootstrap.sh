#!/usr/bin/env bash
# Installs the Debian packages amem needs, when any is missing (apt-get; sudo when
# not root). Safe to run again: does nothing when everything is there.
set -euo pipefail

packages=(build-essential cmake ninja-build pkg-config git
          liblmdb-dev liblmdb++-dev libxxhash-dev liblz4-dev catch2
          nlohmann-json3-dev libcli11-dev)
# Benchmarks and fuzzing compare against peers and need these too.
if [[ "${AMEM_BOOTSTRAP_BENCH:-1}" == 1 ]]; then
  packages+=(libsqlite3-dev clang)
fi
packages+=("$@")

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[[ ${#missing[@]} -eq 0 ]] && exit 0

sudo=()
if [[ $(id -u) -ne 0 ]]; then sudo=(sudo); fi
echo "bootstrap: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
