#!/usr/bin/env bash
# Replication against a three-node nats-server cluster on loopback, streams of three
# replicas (docs/REPLICATION.md §9). Starts the cluster (tests/replication/cluster_lib.sh)
# in a temporary directory and always stops it.
#
#   bash bench/replication_bench.sh [--amem PATH] [--runs R] [--writers K] [--revisions N]
#
#   --amem       the amem binary (default build/amem)
#   --runs       writes per measurement (default 50)
#   --writers    concurrent writers of the second throughput row (default 3)
#   --revisions  revisions of the catch-up log (default 2000; 100000 for the issue's size)
#
# Prints, as a Markdown table:
# - single-write latency, one `amem put-node` process per write, from its start to its
#   exit 0, on a store bound to a stream against an unbound store (interleaved), p50
#   and p99, and bound p50 over unbound p50;
# - the same write through one `amem mcp` session (its put_memory tool), bound against
#   unbound (interleaved), from the request's write to the response's read, p50
#   and p99, and their ratio;
# - writes per second with 1 and K writers, each writer a loop of put-node processes
#   on its own store bound to the same stream (wall time over all writes);
# - replication lag from a write's acknowledgement (its process exited 0) until a
#   store running `amem follow --interval-ms 10` has it: (a) its data.mdb first
#   modified after the writer started (polled by stat every 0.5 ms; the follower
#   writes nothing else; negative when the follower applied the revision before the
#   writer process had committed it locally and exited), and (b)
#   `amem get-node KEY` on the follower, run in a loop, first exits 0 (the end of
#   that process);
# - catch-up of an empty store from N revisions in a stream (`amem remote add` +
#   `amem sync`), against `amem replay` of the same log into an empty store and
#   `amem import` of its snapshot;
# - catch-up from a snapshot + the stream's tail: `amem clone` of that stream after
#   `amem publish-snapshot --at N-N/100`, against `amem import` of that snapshot
#   (three of each, interleaved, medians).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
amem=$root/build/amem
runs=50 writers=3 revisions=2000
usage() { echo "usage: $0 [--amem PATH] [--runs R] [--writers K] [--revisions N]" >&2; exit 2; }
while [[ $# -gt 0 ]]; do
  [[ $# -ge 2 ]] || usage
  case $1 in
    --amem) amem=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --writers) writers=$2; shift 2 ;;
    --revisions) revisions=$2; shift 2 ;;
    *) usage ;;
  esac
done
for n in "$runs" "$writers" "$revisions"; do
  [[ $n =~ ^[1-9][0-9]*$ ]] || { echo "FAIL: not a positive count: $n" >&2; exit 2; }
done
[[ -x $amem ]] || { echo "FAIL: $amem not found (ninja -C build amem)" >&2; exit 1; }
amem=$(realpath "$amem")

dir=$(mktemp -d /tmp/amem-replication-bench.XXXXXX)
pids=()
source "$root/tests/replication/cluster_lib.sh"
cleanup() {
  cluster_kill
  rm -rf "$dir"
}
trap cleanup EXIT
cluster_start

A() { "$amem" --store "$dir/$1" "${@:2}"; }
for s in unbound bound follower catch mcp-unbound mcp-bound; do A $s init >/dev/null; done
cluster_bind "$amem" "$dir/bound" "$dir/add.out" --stream lat --replicas 3
A mcp-bound remote add "$servers" --stream mcplat >/dev/null
A follower remote add "$servers" --stream lat >/dev/null
for w in $(seq 1 "$writers"); do
  A "w$w" init >/dev/null
  A "w$w" remote add "$servers" --stream tput --replicas 3 >/dev/null
done

# The catch-up log: N revisions of one node each, with fixed times.
/usr/bin/python3 - "$revisions" >"$dir/catch.log" <<'EOF'
import json, sys
for r in range(1, int(sys.argv[1]) + 1):
    ts = 1700000000 + r
    print(json.dumps({"rev": r, "rev_ts": ts, "op": "node", "key": "fact:n%d" % r,
                      "type": "fact", "content": "revision %d of the catch-up log" % r,
                      "meta": {}, "confidence": 1.0, "ts": ts}, separators=(",", ":")))
EOF

/usr/bin/python3 - "$amem" "$dir" "$servers" "$runs" "$writers" "$revisions" "$root" <<'EOF'
import math, os, signal, statistics, subprocess, sys, threading, time
amem, d, servers = sys.argv[1], sys.argv[2], sys.argv[3]
runs, writers, revisions = int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6])
sys.path.insert(0, os.path.join(sys.argv[7], "bench"))
from mcp_client import Session

def run(store, *args, check=True):
    p = subprocess.run([amem, "--store", os.path.join(d, store), *args],
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    if check and p.returncode != 0:
        sys.exit("FAIL: amem --store %s %s: %s" % (store, " ".join(args), p.stderr.decode()))
    return p.returncode == 0

def timed(store, *args):
    t = time.perf_counter()
    run(store, *args)
    return time.perf_counter() - t

def put(store, key):
    return ("put-node", key, "--type", "fact", "--content", "written to " + store)

def pct(xs, q):
    xs = sorted(xs)
    return xs[max(0, math.ceil(q * len(xs)) - 1)]

rows = []
def row(name, value):
    rows.append((name, value))
    print("  %s: %s" % (name, value), file=sys.stderr, flush=True)

ms = lambda s: "%.1f ms" % (s * 1000)

# Single-write latency, bound and unbound interleaved.
lat = {"unbound": [], "bound": []}
for i in range(runs):
    for s in ("unbound", "bound"):
        lat[s].append(timed(s, *put(s, "fact:lat%d" % i)))
for s in ("unbound", "bound"):
    row("write latency, %s, p50 / p99" % s, "%s / %s" % (ms(pct(lat[s], .5)), ms(pct(lat[s], .99))))
ratio = pct(lat["bound"], .5) / pct(lat["unbound"], .5)
row("bound p50 / unbound p50 (budget <= 3)", "%.2f" % ratio)

# The same through one amem mcp session each (the first call connects: not timed).
sessions = {s: Session(amem, os.path.join(d, "mcp-" + s), "replication_bench")
            for s in ("unbound", "bound")}
mcp = {"unbound": [], "bound": []}
for i in range(runs + 1):
    for s, session in sessions.items():
        t = session.tool("put_memory", {"key": "fact:mcp%d" % i, "type": "fact",
                                        "content": "written through amem mcp"})
        if i > 0:
            mcp[s].append(t / 1000)
for session in sessions.values():
    session.close()
for s in ("unbound", "bound"):
    row("write through amem mcp (put_memory), %s, p50 / p99" % s,
        "%s / %s" % (ms(pct(mcp[s], .5)), ms(pct(mcp[s], .99))))
row("amem mcp: bound p50 / unbound p50",
    "%.2f" % (pct(mcp["bound"], .5) / pct(mcp["unbound"], .5)))

# Writes per second, 1 and K writers on their own stores of one stream.
def throughput(k, tag):
    def loop(w):
        for i in range(runs):
            run("w%d" % w, *put("w%d" % w, "fact:%s-w%d-%d" % (tag, w, i)))
    ts = [threading.Thread(target=loop, args=(w,)) for w in range(1, k + 1)]
    t = time.perf_counter()
    for x in ts: x.start()
    for x in ts: x.join()
    return k * runs / (time.perf_counter() - t)
one = throughput(1, "a")
row("writes/s, 1 writer", "%.1f" % one)
if writers > 1:
    many = throughput(writers, "b")
    row("writes/s, %d writers (total)" % writers, "%.1f (%.2fx of 1)" % (many, many / one))
run("w1", "sync")

# Replication lag to a follower polling every 10 ms.
follow = subprocess.Popen([amem, "--store", os.path.join(d, "follower"), "follow",
                           "--interval-ms", "10"], stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE)
mdb = os.path.join(d, "follower", "data.mdb")
stat = lambda: (lambda st: (st.st_mtime_ns, st.st_size))(os.stat(mdb))
deadline = time.time() + 30
while stat()[0] == 0 or not run("follower", "get-node", "fact:lat%d" % (runs - 1), check=False):
    if time.time() > deadline or follow.poll() is not None:
        sys.exit("FAIL: the follower did not catch up: %s" % follow.stderr.read().decode())
    time.sleep(0.05)
# Every change of the follower's data.mdb, timed by a thread polling it.
changes, polling = [], True
def poll():
    last = stat()
    while polling:
        now = stat()
        if now != last:
            changes.append(time.perf_counter())
            last = now
        time.sleep(0.0005)
poller = threading.Thread(target=poll)
poller.start()
lag_stat, lag_read, early = [], [], 0
for i in range(runs):
    time.sleep(0.05)
    t0 = time.perf_counter()
    run("bound", *put("bound", "fact:lagA%d" % i))
    t1 = time.perf_counter()
    while not [c for c in changes if c > t0]:
        if time.perf_counter() - t1 > 30: sys.exit("FAIL: the follower did not apply a write")
        time.sleep(0.0005)
    lag_stat.append(min(c for c in changes if c > t0) - t1)
    early += lag_stat[-1] < 0
polling = False
poller.join()
for i in range(runs):
    time.sleep(0.05)
    key = "fact:lagB%d" % i
    run("bound", *put("bound", key))
    t = time.perf_counter()
    while not run("follower", "get-node", key, check=False):
        if time.perf_counter() - t > 30: sys.exit("FAIL: the follower never had " + key)
    lag_read.append(time.perf_counter() - t)
follow.send_signal(signal.SIGTERM)
if follow.wait() != 0:
    sys.exit("FAIL: follow exited %d: %s" % (follow.returncode, follow.stderr.read().decode()))
row("lag to the follower's data.mdb write, p50 / p99 (negative: before the writer exited)",
    "%s / %s (%d of %d before)" % (ms(pct(lag_stat, .5)), ms(pct(lag_stat, .99)), early, runs))
row("lag to a get-node that reads it, p50 / p99",
    "%s / %s" % (ms(pct(lag_read, .5)), ms(pct(lag_read, .99))))
# Unloaded, for scale: one get-node process that finds the key.
getn = [timed("follower", "get-node", "fact:lagB0") for _ in range(min(runs, 20))]
row("one get-node process, p50", ms(pct(getn, .5)))

# Catch-up of an empty store from N revisions.
t_replay = timed("replayed", "replay", os.path.join(d, "catch.log"))
row("amem replay of the %d-revision log into an empty store" % revisions, "%.2f s" % t_replay)
t_pub = timed("replayed", "remote", "add", servers, "--stream", "catch", "--replicas", "3")
row("remote add publishing them to a new stream", "%.2f s" % t_pub)
t_add = timed("catch", "remote", "add", servers, "--stream", "catch")
t_sync = timed("catch", "sync")
row("catch-up: remote add + sync of an empty store", "%.2f s (%.2fx replay)" % (
    t_add + t_sync, (t_add + t_sync) / t_replay))
run("replayed", "export", os.path.join(d, "replayed.amem"))
run("catch", "export", os.path.join(d, "catch.amem"))
if open(os.path.join(d, "replayed.amem"), "rb").read() != open(os.path.join(d, "catch.amem"), "rb").read():
    sys.exit("FAIL: the caught-up store exports other bytes than its source")
run("imported", "init")
t_import = timed("imported", "import", os.path.join(d, "replayed.amem"))
row("amem import of its snapshot into an empty store", "%.2f s (catch-up is %.2fx)" % (
    t_import, (t_add + t_sync) / t_import))
# Catch-up from a snapshot + the stream's tail (amem clone): the source publishes its
# export at N - T (T = N / 100, at least 1) and a new replica fetches it, imports it at
# that revision and applies the T revisions after it; against `amem import` of that
# snapshot file into an empty store.
tail = max(1, revisions // 100)
at = revisions - tail
t_snap = timed("replayed", "publish-snapshot", "--at", str(at))
row("publish-snapshot of revision %d (its export, put in the object store)" % at, "%.2f s" % t_snap)
snap = os.path.join(d, "snap.amem")
run("replayed", "export", snap, "--as-of", str(at))
# Three of each, interleaved, each into a new store: the medians.
t_imports, t_clones = [], []
for i in range(3):
    run("snapimported%d" % i, "init")
    t_imports.append(timed("snapimported%d" % i, "import", snap))
    t = time.perf_counter()
    p = subprocess.run([amem, "clone", servers, "--stream", "catch", os.path.join(d, "cloned%d" % i)],
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    t_clones.append(time.perf_counter() - t)
    if p.returncode != 0:
        sys.exit("FAIL: amem clone: " + p.stderr.decode())
    run("cloned%d" % i, "export", os.path.join(d, "cloned.amem"))
    if open(os.path.join(d, "replayed.amem"), "rb").read() != open(os.path.join(d, "cloned.amem"), "rb").read():
        sys.exit("FAIL: the clone exports other bytes than its source")
t_import_snap, t_clone = statistics.median(t_imports), statistics.median(t_clones)
row("amem import of the snapshot of revision %d into an empty store, median of 3" % at,
    "%.2f s" % t_import_snap)
row("catch-up from snapshot + tail: amem clone (that snapshot + %d revisions), median of 3" % tail,
    "%.2f s (%.2fx import, budget <= 2)" % (t_clone, t_clone / t_import_snap))

print("| measure (runs %d, %d revisions) | value |" % (runs, revisions))
print("|---|---|")
for name, value in rows:
    print("| %s | %s |" % (name, value))
EOF
