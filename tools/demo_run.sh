#!/usr/bin/env bash
# The demo's steps: runs the amem binary given as $1 on the default store ./.amem of
# the current directory (which must not exist yet), ingesting the agent run in
# tests/data/demo/, then asks what an agent would ask. Every timestamp is fixed, so
# the output is the same on every run and machine (tests/data/demo/expected.txt).
# tools/demo.sh builds amem and calls this in a fresh directory.
set -euo pipefail
bin=$1
data=$(cd "$(dirname "$0")/../tests/data/demo" && pwd)

step() { printf '\n== %s\n' "$*"; }
run() {  # prints the command as a user would type it, then runs it
  local shown="$*"
  printf '$ amem %s\n' "${shown//$data\//tests/data/demo/}"
  "$bin" "$@"
}

step "Create the embedded store (./.amem)"
run init

step "Run 1 explores the repository: modules, files, symbols, first facts, decisions"
run ingest "$data/1-explore.jsonl" --ts 1700000000 --run run-1 --scope amem
step "Run 1 finds the build files and corrects a wrong fact"
run ingest "$data/2-correct.jsonl" --ts 1700000600 --run run-1 --scope amem
step "Run 2 adds the ingest code, a decision and a constraint"
run ingest "$data/3-next-run.jsonl" --ts 1700003600 --run run-2 --scope amem

step "Neighbours of a file: what store/store.cc defines and what points at it"
run out file:store/store.cc
run in file:store/store.cc

step "Constraints in scope amem"
run kv-list amem constraints

step "History of a decision: how the adjacency layout was chosen"
run kv-history amem decisions adjacency

step "The build fact now, what superseded it, and the state before the correction"
run get-node fact:build-system
run in fact:build-system --rel supersedes
run get-node fact:build-system --at 1700000000

step "What changed since run 2 began"
run changes --since 1700003000

step "Any answer for a program: one JSON document (--json)"
run kv-get amem constraints atomic-ingest --json

step "Compile the store into a read-only snapshot, check it and describe it"
run export after.amem
run verify after.amem
run info after.amem

step "What the correction changed: the snapshot as of run 1's first commit against now"
run export before.amem --at 1700000000
run diff before.amem after.amem || true  # exit 1: the snapshots differ, like diff(1)

step "Next task starts: recall what surrounds a file, within a token budget"
run context file:store/store.cc --depth 1 --budget-tokens 300

step "Keyword recall (BM25) and the current version of a corrected belief"
run text-search "snapshot cache" --limit 3
run resolve fact:build-system

step "If LMDB's single writer were wrong, what would fall? What depends on it?"
run revise fact:lmdb-one-writer
run impact fact:lmdb-one-writer

step "Audit the memory: weak reasoning, then contradictions to clean up"
run gaps
run consolidate
run consolidate --execute
run consolidate

# The code graph of amem's own source tree. What follows depends on the source, so
# it is not part of tests/data/demo/expected.txt; tests/cli/cli_demo_test.cc checks
# what it must show.
src=$(cd "$(dirname "$0")/.." && pwd)
work=$(pwd)
code() {  # like run, with the source tree and the working directory shown short
  local shown="$*"
  shown=${shown//$src/<amem source>}
  printf '$ amem %s\n' "${shown//$work\//}"
  "$bin" "$@"
}
printf '\n%s\n' "== The code graph (below this line the output depends on amem's source)"
step "Index amem's own source with universal-ctags, as an agent does when a task starts"
code index "$src"
step "Record a decision against the symbol it concerns"
code put-node decision:hex-ids-are-16-digits --type decision \
  --content "A node id on the command line is exactly 16 hex digits; anything shorter is a key"
code put-edge decision:hex-ids-are-16-digits decided_for 'symbol:common/hash.cc#amem::ParseHexId'
step "Before committing a change to ParseHexId: what does the diff touch?"
sed 's/if (text.size() != 16) return false;/if (text.empty() || text.size() > 16) return false;/' \
  "$src/common/hash.cc" > hash.cc.new
diff -U0 --label a/common/hash.cc --label b/common/hash.cc "$src/common/hash.cc" hash.cc.new \
  > change.diff || true
cat change.diff
code impact --diff change.diff --depth 1 --limit 5
step "Draw that impact as one self-contained page (open impact.html in a browser, offline)"
code view impact --diff change.diff --depth 1 --limit 5 --out impact.html
