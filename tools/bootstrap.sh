#!/usr/bin/env bash
# Installs the Debian packages one of the README's commands needs, when any is
# missing (apt-get; sudo when not root). Safe to run again: does nothing, and asks
# no package server, when everything is there.
#
#   bootstrap.sh demo [PACKAGE...]   what `amem` needs to build, and what `amem index`
#                                    runs: universal-ctags, and git for the list of
#                                    a work tree's files (tools/demo.sh); and
#                                    fetches the graph library of `amem view`'s
#                                    HTML pages (tools/view/fetch_library.sh)
#   bootstrap.sh test [PACKAGE...]   that, plus the tests', benchmarks' and fuzzers'
#                                    needs: Catch2, SQLite (a benchmark peer), clang
#                                    and libFuzzer's runtime, Node.js and npm,
#                                    Chromium and Graphviz, NATS (libnats-dev and
#                                    nats-server: docs/REPLICATION.md) (tools/test.sh)
# ccache comes with both: CMakeLists.txt compiles through it when it is installed.
set -euo pipefail

what=${1:-}
case $what in
  demo|test) shift ;;
  *) echo "usage: bootstrap.sh demo|test [PACKAGE...]" >&2; exit 2 ;;
esac

packages=(build-essential cmake ninja-build pkg-config ccache
          liblmdb-dev liblmdb++-dev libxxhash-dev liblz4-dev
          nlohmann-json3-dev libcli11-dev libsimdjson-dev universal-ctags git)
if [[ $what == test ]]; then
  # libclang-rt-14-dev holds libFuzzer's runtime; clang only recommends it.
  packages+=(catch2 libsqlite3-dev clang libclang-rt-14-dev)
  # The Python module and its tests (python/, tests/python, docs/PYTHON.md).
  packages+=(pybind11-dev python3-dev python3-pytest python3-numpy)
  # amem view's tests: headless Chromium opens its pages (tests/view), Graphviz
  # parses its DOT.
  packages+=(chromium graphviz)
  # Replication (docs/REPLICATION.md): the NATS client library amem links when it is
  # there, and the server tests/replication/cluster_test.sh runs a cluster of.
  packages+=(libnats-dev nats-server)
fi
packages+=("$@")

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [[ $what == test ]]; then
  # The MCP end-to-end tests (tests/mcp/run_node_tests.sh) and scip-typescript
  # (tests/index/make_scip.sh) need node and npm.
  # Checked by command, not by package: a NodeSource `nodejs` package bundles npm
  # and conflicts with Debian's `npm`, so only what is missing is installed (on
  # plain Debian 12: nodejs and npm).
  command -v node >/dev/null 2>&1 || missing+=(nodejs)
  command -v npm >/dev/null 2>&1 || missing+=(npm)
fi
# The graph library amem view's HTML pages embed, pinned and checked (curl only;
# nothing is asked of the npm registry when it is there already). Without it amem
# still builds; only `amem view --format html` is refused, saying how to get it.
bash "$(dirname "$0")/view/fetch_library.sh" ||
  echo "bootstrap: warning: no graph library for amem view's HTML pages" >&2
[[ ${#missing[@]} -eq 0 ]] && exit 0

sudo=()
if [[ $(id -u) -ne 0 ]]; then sudo=(sudo); fi
echo "bootstrap: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
