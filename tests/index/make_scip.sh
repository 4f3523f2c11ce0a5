#!/usr/bin/env bash
# Writes OUT_DIR/index.scip: the SCIP index scip-typescript makes of the TypeScript
# fixture tests/data/code/ts, for the code graph tests to read. tests/npm_ci.sh
# installs the pinned scip-typescript (package-lock.json) into
# tests/index/node_modules when it is missing or stale; a missing node or npm is a
# failure, never a skip. After the install the indexer needs no network.
#   bash tests/index/make_scip.sh OUT_DIR
set -euo pipefail
out=${1:?usage: make_scip.sh OUT_DIR}
mkdir -p "$out"
out=$(cd "$out" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
fixture=$here/../data/code/ts
cd "$here"
bash ../npm_ci.sh "$here" "the code index tests"
rm -f "$out/index.scip"
node_modules/.bin/scip-typescript index --cwd "$fixture" --output "$out/index.scip" \
  --no-progress-bar >&2
if [ ! -s "$out/index.scip" ]; then
  echo "FAIL: scip-typescript wrote no $out/index.scip" >&2
  exit 1
fi
echo "$out/index.scip"
