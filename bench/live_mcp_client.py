#!/usr/bin/python3
"""Write-then-query latency through `amem mcp` (bench/live_bench.sh runs it).

    live_mcp_client.py AMEM STORE SEED_KEY REPS [full]

Starts one `amem mcp` session on STORE (with AMEM_FULL_EXPORT=1 when `full` is
given: the re-export path before delta segments) and, REPS times, writes one
entity with create_entities and then asks text_search, context (seeded with
SEED_KEY) or search_nodes right after it; each query follows its own write. Prints
one JSON object: per step the list of round-trip times in milliseconds, measured
from the request's write to its response's read, what an MCP client sees. Any
tool error aborts with exit 1.
"""
import json
import os
import sys

from mcp_client import Session


def main():
    amem, store, seed_key, reps = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    env = dict(os.environ)
    if len(sys.argv) > 5 and sys.argv[5] == "full":
        env["AMEM_FULL_EXPORT"] = "1"
    session = Session(amem, store, "live_bench", env)
    tool = session.tool
    queries = {
        "text_search": {"query": "retry policy cache"},
        "context": {"seeds": [seed_key]},
        "search_nodes": {"query": "live-bench"},
    }
    out = {"write": [], **{q: [] for q in queries}, "idle_text_search": []}
    # Warm up: the first call maps the base (and may export it).
    tool("text_search", queries["text_search"])
    n = 0
    for _ in range(reps):
        for name, arguments in queries.items():
            n += 1
            entity = {"name": "live-bench-%d-%d" % (os.getpid(), n), "entityType": "note",
                      "observations": ["retry policy cache note %d" % n]}
            out["write"].append(tool("create_entities", {"entities": [entity]}))
            out[name].append(tool(name, arguments))
        tool("text_search", queries["text_search"])  # catches up with the last write
        out["idle_text_search"].append(tool("text_search", queries["text_search"]))
    session.close()
    print(json.dumps(out))


if __name__ == "__main__":
    main()
