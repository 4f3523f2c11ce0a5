#!/usr/bin/env bash
# amem index and impact --diff as users run them: whole processes, each with its
# peak RSS (/usr/bin/time), medians of --runs, and the yardstick each budget names
# measured in the same run (docs/CODE.md, docs/BENCHMARKS.md "Code graph"):
#
#   scip full      `amem index --scip` of a synthetic index (bench/scip_gen: 5,000
#                  files, 1M occurrences, 100K symbols) into a fresh store
#   ingest         `amem ingest` of the same nodes and edges as JSON Lines (the
#                  index's own revision from `amem log`, without rev fields)
#   scip 1 file    the re-index after one file changed (scip_gen --changed-doc:
#                  two indexes that differ in one document, indexed in turn)
#   scip same      the re-index of an unchanged index (writes nothing)
#   impact --diff  a 50-line diff of one file of that index, as a process, and as
#                  tools/call round trips through one `amem mcp` session
#   ctags full     `amem index DIR` of amem's own source tree (git's files) into a
#                  fresh store, universal-ctags included
#   ctags 1 file   its re-index after one file changed
#
# Budgets (100K symbols, 1M occurrences): scip full <= 2 x ingest; scip 1 file
# <= 200 ms; impact --diff <= 50 ms as a process and <= 10 ms through amem mcp.
#
#   bash bench/index_bench.sh [BUILD_DIR] [--runs 5] [--docs 5000] [--work DIR]
#   bash bench/index_bench.sh [BUILD_DIR] --impact-store [--docs 5000] [--work DIR]
#
# --impact-store builds only the store and the 50-line diff of the impact --diff
# row (one index of the synthetic index), keeps them in --work and prints the
# commands to time against another build; nothing else is timed.
#
# BUILD_DIR defaults to build/ (with the bench targets: scip_gen). Needs
# /usr/bin/time (apt-get install time), universal-ctags, git and /usr/bin/python3.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build
runs=5 docs=5000 work=/tmp/amem-index-bench impact_store=0
while [ $# -gt 0 ]; do
  case $1 in
    --runs) runs=$2; shift 2 ;;
    --impact-store) impact_store=1; shift ;;
    --docs) docs=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/{/^#/p}' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "index_bench: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) build=$(cd "$1" && pwd); shift ;;
  esac
done
amem=$build/amem gen=$build/bench/scip_gen
for f in "$amem" "$gen" /usr/bin/time /usr/bin/python3; do
  [ -x "$f" ] || { echo "index_bench: $f not found (build amem and scip_gen; apt-get install time)" >&2; exit 1; }
done
rm -rf "$work"
mkdir -p "$work"
[ "$impact_store" = 1 ] || trap 'rm -rf "$work"' EXIT

. "$root/bench/bench_lib.sh"
# row NAME FILE: prints the median ms and the largest peak RSS of FILE's runs.
row() {
  local ms rss
  ms=$(awk '{print $1}' "$2" | median)
  rss=$(awk '{print $2}' "$2" | sort -n | tail -1)
  printf '%-26s %10s ms %8s MB\n' "$1" "$ms" "$((rss / 1024))"
  echo "$ms" > "$2.median"
}

# A 50-line diff of document 17's file, inside its functions.
write_diff() {
  /usr/bin/python3 - "$work/change.diff" <<'EOF'
import sys
path = "src/mod17/file17.cc"
lines = ["--- a/" + path, "+++ b/" + path, "@@ -21,50 +21,50 @@"]
lines += ["-old line %d" % i for i in range(50)] + ["+new line %d" % i for i in range(50)]
open(sys.argv[1], "w").write("\n".join(lines) + "\n")
EOF
}

"$gen" --out="$work/a.scip" --docs="$docs" > /dev/null
if [ "$impact_store" = 1 ]; then
  s=$work/store
  "$amem" --store "$s" init > /dev/null
  "$amem" --store "$s" index --scip "$work/a.scip" > /dev/null
  rm "$work/a.scip"
  write_diff
  "$amem" --store "$s" impact --diff "$work/change.diff" > /dev/null  # compiles the snapshot
  node=$("$amem" --store "$s" --json impact --diff "$work/change.diff" |
    /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["changed"][0]["id"])')
  echo "store: $s (kept); time these as whole processes, e.g. against another build's amem:"
  echo "  $amem --store $s --json impact --diff $work/change.diff"
  echo "  $amem --store $s --json impact $node   # one changed symbol, for comparison"
  exit 0
fi
"$gen" --out="$work/b.scip" --docs="$docs" --changed-doc=17 > /dev/null
s=$work/store

# Full index, and the same records through amem ingest, alternating.
for _ in $(seq "$runs"); do
  rm -rf "$s" && "$amem" --store "$s" init > /dev/null
  timed "$work/full" "$amem" --store "$s" index --scip "$work/a.scip"
  if [ ! -f "$work/w.jsonl" ]; then
    "$amem" --store "$s" log --until-rev 1 --out "$work/log.jsonl" > /dev/null
    /usr/bin/python3 - "$work/log.jsonl" "$work/w.jsonl" <<'EOF'
import json, sys
with open(sys.argv[1]) as f, open(sys.argv[2], "w") as out:
    for line in f:
        op = json.loads(line)
        op.pop("rev", None)
        op.pop("rev_ts", None)
        out.write(json.dumps(op, separators=(",", ":")) + "\n")
EOF
  fi
  rm -rf "$work/s2" && "$amem" --store "$work/s2" init > /dev/null
  timed "$work/ingest" "$amem" --store "$work/s2" ingest "$work/w.jsonl"
done
rm -rf "$work/s2"

# One changed file, in turn; then an unchanged index.
for i in $(seq "$runs"); do
  if [ $((i % 2)) = 1 ]; then f=b; else f=a; fi
  timed "$work/one" "$amem" --store "$s" index --scip "$work/$f.scip"
done
for _ in $(seq "$runs"); do timed "$work/same" "$amem" --store "$s" index --scip "$work/$f.scip"; done

write_diff
"$amem" --store "$s" impact --diff "$work/change.diff" > /dev/null  # compiles the snapshot
for _ in $(seq "$runs"); do
  timed "$work/impact" "$amem" --store "$s" impact --diff "$work/change.diff" --json
done
# Through MCP: one session, the same diff as tools/call, round trips timed in Python.
/usr/bin/python3 - "$amem" "$s" "$work/change.diff" "$((runs * 10))" > "$work/mcp" <<'EOF'
import json, subprocess, sys, time
amem, store, diff_path, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
diff = open(diff_path).read()
p = subprocess.Popen([amem, "--store", store, "mcp", "--tools", "all"], stdin=subprocess.PIPE,
                     stdout=subprocess.PIPE, text=True)
def call(i, method, params):
    p.stdin.write(json.dumps({"jsonrpc": "2.0", "id": i, "method": method, "params": params}) + "\n")
    p.stdin.flush()
    reply = json.loads(p.stdout.readline())
    if "error" in reply or reply.get("result", {}).get("isError"):
        sys.exit("index_bench: MCP call failed: " + json.dumps(reply)[:300])
    return reply
call(0, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "index_bench", "version": "1"}})
p.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n")
args = {"name": "impact", "arguments": {"diff": diff}}
call(1, "tools/call", args)  # warm-up
times = []
for i in range(n):
    t0 = time.perf_counter()
    call(2 + i, "tools/call", args)
    times.append((time.perf_counter() - t0) * 1000)
p.stdin.close()
p.wait()
times.sort()
print("%.2f" % times[len(times) // 2])
EOF

# amem's own source tree through universal-ctags: git's files, copied.
tree=$work/tree
mkdir -p "$tree"
(cd "$root" && git ls-files -z | xargs -0 cp --parents -t "$tree")
(cd "$tree" && git init -q && git add -A > /dev/null)
for _ in $(seq "$runs"); do
  rm -rf "$work/s3" && "$amem" --store "$work/s3" init > /dev/null
  timed "$work/ctags_full" "$amem" --store "$work/s3" index "$tree"
done
for i in $(seq "$runs"); do
  echo "// edit $i" >> "$tree/common/hash.cc"
  timed "$work/ctags_one" "$amem" --store "$work/s3" index "$tree"
done
symbols=$("$amem" --store "$work/s3" stats --json | /usr/bin/python3 -c \
  'import json,sys; j=json.load(sys.stdin); print(j["live_nodes"], "nodes,", j["live_edges"], "edges")')

echo "amem index and impact --diff, whole processes (medians of $runs runs; peak RSS: the largest)"
printf '%-26s %13s %11s\n' step time "peak RSS"
row "scip full ($((docs * 200 / 1000))K occurrences)" "$work/full"
row "ingest of the same records" "$work/ingest"
row "scip re-index, 1 file" "$work/one"
row "scip re-index, unchanged" "$work/same"
row "impact --diff, 50 lines" "$work/impact"
printf '%-26s %10s ms (median of %d tools/call round trips)\n' "impact --diff via amem mcp" \
  "$(cat "$work/mcp")" "$((runs * 10))"
row "ctags full (amem's tree)" "$work/ctags_full"
row "ctags re-index, 1 file" "$work/ctags_one"
echo "amem's tree: $symbols"
awk -v a="$(cat "$work/full.median")" -v b="$(cat "$work/ingest.median")" \
  'BEGIN {printf "scip full / ingest: %.2fx (budget <= 2)\n", a / b}'
echo "budgets: scip re-index of 1 file <= 200 ms; impact --diff <= 50 ms as a process, <= 10 ms via MCP"
