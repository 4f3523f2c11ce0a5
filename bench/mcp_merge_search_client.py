#!/usr/bin/python3
"""An agent's write-then-search loop through one `amem mcp` session, across the
server's background merges.

    mcp_merge_search_client.py AMEM STORE STEPS

Each step: create_entities of one entity with one observation holding the query's
words, then search_nodes "retry policy late" (limit 10). Each call is tagged with
the number of times current.rev changed so far (a merge recorded its base). Prints
per base the median and slowest search and write, the first searches after each
merge, and the slowest calls. Run it on a fresh copy of a store: it writes.
docs/BENCHMARKS.md ("search_nodes on a store of 1M MCP entities") gives the store
and the figures."""
import os
import sys
import time

from mcp_client import Session

QUERY = "retry policy late"


def recorded_base(store):
    try:
        with open(os.path.join(store, "current.rev")) as f:
            return f.read()
    except OSError:
        return ""


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    amem, store, steps = sys.argv[1], sys.argv[2], int(sys.argv[3])
    # Whatever the copy left dirty is written back before the session starts.
    for top, _, files in os.walk(store):
        for name in files:
            fd = os.open(os.path.join(top, name), os.O_RDONLY)
            os.fsync(fd)
            os.close(fd)
    t0 = time.time()
    s = Session(amem, store, "merge_search")
    print("first search_nodes (at the start): %.1f ms" % s.tool("search_nodes", {"query": QUERY, "limit": 10}))
    base, epoch, calls = recorded_base(store), 0, []
    for i in range(steps):
        w = s.tool("create_entities", {"entities": [{
            "name": "late-%d-%d" % (os.getpid(), i), "entityType": "note",
            "observations": ["retry policy late note %d" % i]}]})
        q = s.tool("search_nodes", {"query": QUERY, "limit": 10})
        now = recorded_base(store)
        if now != base:
            epoch, base = epoch + 1, now
            print("a merge recorded its base before step %d (t=%.0f s)" % (i, time.time() - t0))
        calls.append((epoch, i, w, q))
    s.close()
    for e in range(epoch + 1):
        qs = sorted(c[3] for c in calls if c[0] == e)
        ws = sorted(c[2] for c in calls if c[0] == e)
        if qs:
            print("base %d: %d steps; search p50 %.2f max %.2f ms; write p50 %.2f max %.2f ms" % (
                e, len(qs), qs[len(qs) // 2], qs[-1], ws[len(ws) // 2], ws[-1]))
    for e in range(1, epoch + 1):
        after = [c for c in calls if c[0] == e][:50]
        print("base %d: the 50 searches after its merge: max %.2f ms, the first five %s" % (
            e, max(c[3] for c in after), " ".join("%.1f" % c[3] for c in after[:5])))
    for c in sorted(calls, key=lambda c: -c[3])[:5]:
        print("slow search: %.1f ms at step %d (base %d)" % (c[3], c[1], c[0]))
    for c in sorted(calls, key=lambda c: -c[2])[:3]:
        print("slow write: %.1f ms at step %d (base %d)" % (c[2], c[1], c[0]))
    print("wall %.0f s" % (time.time() - t0))


if __name__ == "__main__":
    main()
