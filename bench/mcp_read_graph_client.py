#!/usr/bin/python3
"""read_graph as an agent meets it: right at a server's start, paging on, and
jumping into the listing once the server's start-up work is done.

    mcp_read_graph_client.py AMEM STORE [SETTLE_SECONDS [PAGES]]

Starts `AMEM --store STORE mcp` and asks read_graph (limit 1000) at once (the
first call right after the start), then PAGES more pages (default 50) from its
cursor. After SETTLE_SECONDS (default 10: the start-up thread has checked the
base and built what it keeps) it asks the page at 20 offsets spread over the
listing (entities, then relations, at the first page's revision), each twice:
the first read of a page touches parts of the file no call read before. Prints
the times in milliseconds and the server's memory (VmHWM, RssAnon).
docs/BENCHMARKS.md ("read_graph at a server's start") gives the store and the
figures."""
import statistics
import sys
import time

from mcp_client import Session


def page(s, args):
    ms, result = s.call_reply("tools/call", {"name": "read_graph", "arguments": args})
    return ms, result["structuredContent"]


def memory(pid):
    with open("/proc/%d/status" % pid) as f:
        fields = dict(line.split(":", 1) for line in f)
    return "VmHWM %s, RssAnon %s" % (fields["VmHWM"].strip(), fields["RssAnon"].strip())


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    amem, store = sys.argv[1], sys.argv[2]
    settle = float(sys.argv[3]) if len(sys.argv) > 3 else 10.0
    pages = int(sys.argv[4]) if len(sys.argv) > 4 else 50
    s = Session(amem, store, "mcp_read_graph_client")
    first, r = page(s, {"limit": 1000})
    if "nextCursor" not in r:
        sys.exit("the graph fits one page: nothing to page through")
    cursor = r["nextCursor"]
    revision = cursor[1:cursor.index("o")]
    more = []
    for _ in range(pages):
        ms, r = page(s, {"limit": 1000, "cursor": cursor})
        more.append(ms)
        if "nextCursor" not in r:
            break
        cursor = r["nextCursor"]
    print("first page at start %.1f ms; the next %d pages: p50 %.2f ms, max %.1f ms" %
          (first, len(more), statistics.median(more), max(more)))
    time.sleep(settle)
    # The listing's length: the last offset that still lists something.
    lo, hi = 0, 1
    while "nextCursor" in page(s, {"limit": 1, "cursor": "r%so%d" % (revision, hi)})[1]:
        lo, hi = hi, hi * 2
    while lo + 1 < hi:
        mid = (lo + hi) // 2
        if "nextCursor" in page(s, {"limit": 1, "cursor": "r%so%d" % (revision, mid)})[1]:
            lo = mid
        else:
            hi = mid
    total = hi + 1
    cold, warm = [], []
    for k in range(20):
        offset = total * (2 * k + 1) // 40
        args = {"limit": 1000, "cursor": "r%so%d" % (revision, offset)}
        cold.append(page(s, args)[0])
        warm.append(page(s, args)[0])
    print("%d items; a page at 20 offsets: first read p50 %.2f ms (max %.1f), again p50 %.2f ms" %
          (total, statistics.median(cold), max(cold), statistics.median(warm)))
    print("server memory: %s" % memory(s.proc.pid))
    s.close()


if __name__ == "__main__":
    main()
