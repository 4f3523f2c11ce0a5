#!/usr/bin/python3
"""python_bench: the Python module against the other ways a Python program reaches
amem, in one run on this machine (docs/PYTHON.md, docs/BENCHMARKS.md).

    PYTHONPATH=build/python /usr/bin/python3 bench/python_bench.py [--num 100000]
        [--reps 201] [--process-reps 21] [--loop 2000] [--amem build/amem]

One workload: --num fact nodes with a few words of content each, as `amem ingest`
JSON Lines. Timed:
  query    text_search of two words, limit 10, on a snapshot of the workload:
           the C++ table call in-process (timed in C++, no Python in the loop), the
           module (amem.Snapshot(...).text_search and store.view().text_search), an
           `amem text-search --json` process per call, and `amem mcp`'s text_search
           tool (one session, a round trip per call);
  writes   put_node in a loop (--loop calls, one durable revision each), batch() of
           all --num nodes (one revision), `amem ingest` of the same records (the
           process, one revision), and py-lmdb's raw put of the same records (key ->
           the JSON line, one transaction) when Debian's python3-lmdb is installed.
           batch() and ingest alternate --write-reps times (fresh stores); their
           medians are given in wall time and in CPU time (the process's user +
           system time), which a loaded machine leaves comparable.
Budgets (issue 36): module query <= 1.5x the C++ in-process median + 5 us; 100K
batch() <= 2x amem ingest. Medians; every call is timed alone.
"""
import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import amem

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from mcp_client import Session  # noqa: E402

WORDS = ("lmdb writer reader snapshot cache index graph edge node query store delta "
         "ingest batch revision commit history export merge vector text search fact "
         "decision module file symbol budget token context path").split()
QUERY = "snapshot cache"


def records(num):
    out = []
    for i in range(num):
        words = " ".join(WORDS[(i * k + k * k) % len(WORDS)] for k in (1, 3, 7, 11, 13))
        out.append({"key": "fact:%d" % i, "type": "fact", "content": "%s %d" % (words, i)})
    return out


def median_us(seconds):
    return statistics.median(seconds) * 1e6


def time_calls(fn, reps, warmup=3):
    for _ in range(warmup):
        fn()
    out = []
    for _ in range(reps):
        start = time.perf_counter()
        fn()
        out.append(time.perf_counter() - start)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--num", type=int, default=100000)
    ap.add_argument("--reps", type=int, default=201)
    ap.add_argument("--process-reps", type=int, default=21)
    ap.add_argument("--loop", type=int, default=2000)
    ap.add_argument("--write-reps", type=int, default=3)
    ap.add_argument("--amem", default=os.path.join(HERE, "..", "build", "amem"))
    a = ap.parse_args()
    work = tempfile.mkdtemp(prefix="python_bench.")
    try:
        run(a, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def run(a, work):
    recs = records(a.num)
    lines = os.path.join(work, "nodes.jsonl")
    with open(lines, "w") as f:
        for r in recs:
            f.write(json.dumps(dict(op="node", **r)) + "\n")
    rows = []

    def row(what, seconds, note=""):
        rows.append((what, seconds, note))
        print("%-52s %12.1f us  %s" % (what, seconds * 1e6, note), flush=True)

    # ---- writes: ingest and batch() alternate, --write-reps times each ----
    def ingest_once(n):
        store_dir = os.path.join(work, "ingest%d" % n)
        subprocess.run([a.amem, "--store", store_dir, "init"], check=True, capture_output=True)
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run([a.amem, "--store", store_dir, "ingest", lines], check=True,
                       capture_output=True)
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        return store_dir, wall, cpu

    def batch_once(n):
        store = amem.Store(os.path.join(work, "batch%d" % n), create=True)
        start, cpu_start = time.perf_counter(), time.process_time()
        with store.batch() as b:
            for r in recs:
                b.put_node(r["key"], type=r["type"], content=r["content"])
        wall, cpu = time.perf_counter() - start, time.process_time() - cpu_start
        store.close()
        shutil.rmtree(os.path.join(work, "batch%d" % n))
        return wall, cpu

    ingests, batches = [], []
    for n in range(a.write_reps):
        ingests.append(ingest_once(n))
        batches.append(batch_once(n))
    ingest_store = ingests[0][0]
    ingest_s = statistics.median(x[1] for x in ingests)
    ingest_cpu = statistics.median(x[2] for x in ingests)
    batch_s = statistics.median(x[0] for x in batches)
    batch_cpu = statistics.median(x[1] for x in batches)
    row("amem ingest, %d nodes (process)" % a.num, ingest_s,
        "CPU %.0f ms; median of %d" % (ingest_cpu * 1e3, a.write_reps))
    row("batch() of %d put_node" % a.num, batch_s,
        "CPU %.0f ms; %.2fx ingest (budget 2x), CPU %.2fx"
        % (batch_cpu * 1e3, batch_s / ingest_s, batch_cpu / ingest_cpu))

    loop = amem.Store(os.path.join(work, "loop"), create=True)
    it = iter(recs)
    per_call = time_calls(lambda: loop.put_node(**next(it)), min(a.loop, a.num - 3))
    row("put_node in a loop (median per call, durable)", statistics.median(per_call),
        "%d calls" % len(per_call))
    loop.close()

    try:
        import lmdb
        env = lmdb.open(os.path.join(work, "pylmdb"), map_size=8 << 30)
        start = time.perf_counter()
        with env.begin(write=True) as txn:
            for r in recs:
                txn.put(r["key"].encode(), json.dumps(r).encode())
        lmdb_s = time.perf_counter() - start
        env.close()
        row("py-lmdb raw put of %d records (one txn)" % a.num, lmdb_s)
    except ImportError:
        print("py-lmdb: not installed (Debian python3-lmdb); skipped")

    # ---- a query ----
    snap_path = os.path.join(work, "w.amem")
    subprocess.run([a.amem, "--store", ingest_store, "export", snap_path], check=True,
                   capture_output=True)
    snap = amem.Snapshot(snap_path)
    cpp = snap._time_native("text_search", a.reps, query=QUERY, limit=10)
    cpp_us = median_us(cpp)
    row("text_search, C++ table call in-process", statistics.median(cpp))
    mod = time_calls(lambda: snap.text_search(QUERY, limit=10), a.reps)
    mod_us = median_us(mod)
    budget = 1.5 * cpp_us + 5
    row("text_search, module on a Snapshot", statistics.median(mod),
        "budget 1.5x C++ + 5 us = %.1f us: %s" % (budget, "ok" if mod_us <= budget else "OVER"))
    s2 = amem.Store(ingest_store)
    view = s2.view()
    live = time_calls(lambda: view.text_search(QUERY, limit=10), a.reps)
    row("text_search, module on store.view()", statistics.median(live))
    same = snap.text_search(QUERY, limit=10)
    cmd = [a.amem, "--store", ingest_store, "text-search", *QUERY.split(), "--limit", "10",
           "--snapshot", snap_path, "--json"]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    assert json.loads(out) == same, "the process's answer differs from the module's"
    proc = time_calls(lambda: subprocess.run(cmd, check=True, capture_output=True),
                      a.process_reps, warmup=2)
    row("text_search, an amem process per call", statistics.median(proc))
    session = Session(a.amem, ingest_store, "python_bench")
    mcp = [session.tool("text_search", {"query": QUERY, "limit": 10}) / 1000
           for _ in range(a.reps + 3)][3:]
    session.close()
    row("text_search, amem mcp tool call (round trip)", statistics.median(mcp))
    s2.close()
    print("\nbudgets: query %s (module %.1f us, C++ %.1f us); batch() %s (%.2fx ingest; "
          "CPU %.2fx)" % ("ok" if mod_us <= budget else "OVER", mod_us, cpp_us,
                          "ok" if batch_s <= 2 * ingest_s else "OVER", batch_s / ingest_s,
                          batch_cpu / ingest_cpu))


if __name__ == "__main__":
    main()
