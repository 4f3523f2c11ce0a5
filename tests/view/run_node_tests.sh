#!/usr/bin/env bash
# Runs the headless Chromium tests of `amem view`'s HTML pages (tests/view/*.test.mjs)
# against the amem binary given as $1, after npm_ci.sh has installed the pinned
# puppeteer-core and fetch_library.sh Mermaid's pinned browser bundle. Chromium is
# Debian's (tools/bootstrap.sh test installs it); a missing node, npm or chromium is
# a failure, never a skip. Screenshots go to $2 (default: the build's
# view-artifacts directory next to amem).
set -euo pipefail
amem=$(realpath "${1:?usage: run_node_tests.sh AMEM_BINARY [ARTIFACT_DIR]}")
artifacts=$(realpath -m "${2:-$(dirname "$amem")/view-artifacts}")
cd "$(dirname "$0")"
bash ../npm_ci.sh "$PWD" "the amem view tests" 18.19
chromium=${AMEM_CHROMIUM:-/usr/bin/chromium}
if [[ ! -x $chromium ]]; then
  echo "FAIL: $chromium is missing; the amem view tests need Chromium" >&2
  echo "      (bash tools/bootstrap.sh test installs it; on Debian: apt-get install chromium)" >&2
  exit 1
fi
mkdir -p "$artifacts"
# Mermaid's browser bundle, pinned in mermaid.lock: the Mermaid views are rendered
# by the parser GitHub uses.
mermaid=$(dirname "$amem")/view-mermaid
bash ../../tools/view/fetch_library.sh "$mermaid" "$PWD/mermaid.lock"
export AMEM_BINARY=$amem AMEM_CHROMIUM=$chromium AMEM_VIEW_ARTIFACTS=$artifacts \
  AMEM_MERMAID_JS=$mermaid/mermaid.min.js
exec node --test --test-concurrency=1 ./*.test.mjs
