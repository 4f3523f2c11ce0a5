#!/usr/bin/python3
"""search_nodes as an agent meets it: right at a server's start, then once the
server's start-up work is done.

    mcp_search_client.py AMEM STORE [SETTLE_SECONDS [QUERY ...]]

Starts `AMEM --store STORE mcp`, asks search_nodes (limit 10) for each QUERY at
once (the first call right after the start), then waits SETTLE_SECONDS (default
25: the start-up thread has checked the base and built what it keeps) and asks
each QUERY 15 times. Prints each query's first time, and its median once
settled, in milliseconds. docs/BENCHMARKS.md ("search_nodes at a server's
start") gives the store and the figures."""
import statistics
import sys
import time

from mcp_client import Session

DEFAULT_QUERIES = ["retry policy late", "ent-0000042", "zq", "e", "policy", "write batch",
                   "late", "xyzzy", "ent-09"]


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    amem, store = sys.argv[1], sys.argv[2]
    settle = float(sys.argv[3]) if len(sys.argv) > 3 else 25.0
    queries = sys.argv[4:] or DEFAULT_QUERIES
    s = Session(amem, store, "mcp_search_client")
    first = [s.tool("search_nodes", {"query": q, "limit": 10}) for q in queries]
    time.sleep(settle)
    for q, ms in zip(queries, first):
        settled = [s.tool("search_nodes", {"query": q, "limit": 10}) for _ in range(15)]
        print("%-20s at start %8.2f ms   settled p50 %8.2f ms" % (q, ms, statistics.median(settled)))
    s.close()


if __name__ == "__main__":
    main()
