#!/usr/bin/python3
"""An agent's write-then-ask session through `amem mcp` (bench/process_bench.sh).

    mcp_session_client.py AMEM STORE SEED_KEY WRITES [--apart]

Starts one `amem mcp` session on STORE and, WRITES times, stores one memory with
put_memory and right after it asks one query, in turn text_search, search_nodes,
context (seeded with SEED_KEY) and traverse (from SEED_KEY). Round trips are timed
from the request's write to the response's read, what an MCP client sees. Prints,
for each tool and each tenth of the session, p50, p99 and max in milliseconds, and
the session's slowest call. Any tool error aborts with exit 1.

Each memory holds text_search's three words, so that query's answer grows by one
document a write (its cost with it: every matching document is counted). With
--apart the memories hold none of them, and text_search's answer stays the base's:
what is left of its growth is then the cost of the changes since the base.

STORE's files are fsynced before the session starts: a store just copied or
written has its pages dirty in the page cache, and the session's first commit
(LMDB's fdatasync of data.mdb) would wait for all of them to reach the disk (about
500 ms for the first put_memory at 1M nodes), which is the harness, not amem.
"""
import os
import sys

from mcp_client import Session


def pct(values, p):
    s = sorted(values)
    return s[min(len(s) - 1, int(p / 100.0 * len(s)))]


def sync_store(store):
    """fsyncs every file under STORE and its directories."""
    for top, _, files in os.walk(store):
        for name in files + ["."]:
            path = os.path.join(top, name)
            if name != "." and not os.path.isfile(path):
                continue
            fd = os.open(path, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)


def main():
    args = [a for a in sys.argv[1:] if a != "--apart"]
    if len(args) != 4:
        sys.exit("usage: mcp_session_client.py AMEM STORE SEED_KEY WRITES [--apart]")
    amem, store, seed, writes = args[0], args[1], args[2], int(args[3])
    topic = "deploy window" if "--apart" in sys.argv[1:] else "retry policy cache"
    sync_store(store)
    session = Session(amem, store, "process_bench")
    call = session.call
    queries = [("text_search", {"query": "retry policy cache", "limit": 10}),
               ("search_nodes", {"query": "session note", "limit": 10}),
               ("context", {"seeds": [seed]}),
               ("traverse", {"node": seed, "depth": 2, "limit": 50})]
    tools = ["put_memory"] + [q[0] for q in queries]
    tenths = [{t: [] for t in tools} for _ in range(10)]
    call("tools/call", {"name": "text_search", "arguments": queries[0][1]})  # maps the base
    tag = os.getpid()
    slowest = (0.0, "", 0)
    for i in range(writes):
        part = tenths[i * 10 // writes]
        ms = call("tools/call", {"name": "put_memory", "arguments": {
            "key": "fact:session-%d-%d" % (tag, i), "type": "fact",
            "content": "session note %d on the %s" % (i, topic)}})
        part["put_memory"].append(ms)
        slowest = max(slowest, (ms, "put_memory", i))
        name, arguments = queries[i % len(queries)]
        ms = call("tools/call", {"name": name, "arguments": arguments})
        part[name].append(ms)
        slowest = max(slowest, (ms, name, i))
    session.close()
    worst = 0.0
    print("%-13s %-7s %9s %9s %9s" % ("tool", "tenth", "p50 ms", "p99 ms", "max ms"))
    for t in tools:
        for k, part in enumerate(tenths):
            v = part[t]
            if not v:
                continue
            worst = max(worst, max(v))
            print("%-13s %-7d %9.2f %9.2f %9.2f" % (t, k + 1, pct(v, 50), pct(v, 99), max(v)))
    print("slowest call: %.1f ms (%s after write %d of %d)" % (worst, slowest[1], slowest[2] + 1,
                                                             writes))


if __name__ == "__main__":
    main()
