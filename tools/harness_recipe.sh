#!/usr/bin/env bash
# The README's "Benchmark harnesses" recipe (docs/LOG.md), run for real: runs the
# amem binary given as $1 in the current directory (which must hold no run-1.* files
# or stores yet) on the demo data (tests/data/demo/): one agent run leaves a log, a
# snapshot and a query log; later the memory is rebuilt from the log and every
# question asked again. Every timestamp is fixed, so the output is the same on every
# run and machine; README.md shows it and tests/cli/cmd_replay_queries_test.cc checks that.
#
#   mkdir /tmp/recipe && cd /tmp/recipe && bash /path/to/amem/tools/harness_recipe.sh \
#       /path/to/amem/build/amem
set -euo pipefail
bin=$1
data=$(cd "$(dirname "$0")/../tests/data/demo" && pwd)

step() { printf '\n== %s\n' "$*"; }
run() {  # prints the command as a user would type it, then runs it
  local shown="" arg
  for arg in "$@"; do
    [[ $arg == *" "* ]] && arg="'$arg'"
    shown+="${shown:+ }$arg"
  done
  printf '$ amem %s\n' "${shown//$data\//tests/data/demo/}"
  "$bin" "$@"
}
quiet() { "$bin" "$@" >/dev/null; }

step "An agent run on a fresh store (./run-1), every question recorded"
printf '$ export AMEM_STORE=run-1 AMEM_QUERY_LOG=run-1.queries.jsonl\n'
export AMEM_STORE=run-1 AMEM_QUERY_LOG=run-1.queries.jsonl
run init
run ingest "$data/1-explore.jsonl" --ts 1700000000 --run run-1 --scope amem
run ingest "$data/2-correct.jsonl" --ts 1700000600 --run run-1 --scope amem
run ingest "$data/3-next-run.jsonl" --ts 1700003600 --run run-1 --scope amem
run text-search snapshot cache --limit 3
quiet traverse module:store --depth 1
quiet context file:store/store.cc --depth 1 --budget-tokens 300
quiet search --type decision
printf '$ amem traverse module:store --depth 1     # and context, search: output left out\n'

step "Archive the run: its history, its snapshot and its questions"
run log --out run-1.log
run export run-1.amem
printf '%s\n' "\$ sed 's/\"ts\":[0-9]*/\"ts\":T/' run-1.queries.jsonl | cut -c1-110"
sed 's/"ts":[0-9]*/"ts":T/' run-1.queries.jsonl | cut -c1-110
unset AMEM_QUERY_LOG

step "Later, elsewhere: rebuild the memory from the log, revision by revision"
run --store rebuilt replay run-1.log
run --store rebuilt export rebuilt.amem
printf '$ cmp run-1.amem rebuilt.amem && echo identical\n'
cmp run-1.amem rebuilt.amem && echo identical
printf '$ for r in 1 2; do  # and every earlier revision\n'
printf '    amem export a.amem --as-of $r; amem --store rebuilt export b.amem --as-of $r\n'
printf '    cmp a.amem b.amem && echo "revision $r: identical"; done\n'
for r in 1 2; do
  quiet export a.amem --as-of $r
  quiet --store rebuilt export b.amem --as-of $r
  cmp a.amem b.amem && echo "revision $r: identical"
done

step "Ask every recorded question again: the same memory, the same answers"
run replay-queries run-1.queries.jsonl --snapshot rebuilt.amem

step "A changed memory (another run, a new build): which answers moved?"
run --store rebuilt put-node decision:reject-unknown-fields --type decision \
  --content "Ingest rejects unknown fields; the snapshot cache checks them too." \
  --ts 1700007200 --run run-2 --scope amem
quiet --store rebuilt export run-2.amem
run replay-queries run-1.queries.jsonl --snapshot run-1.amem --against run-2.amem ||
  printf '(exit %d)\n' $?
