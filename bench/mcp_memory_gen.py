#!/usr/bin/python3
"""A memory.jsonl of the official MCP memory server's shape, for `amem
import-mcp-memory`: the store docs/BENCHMARKS.md calls "1M MCP entities".

    mcp_memory_gen.py ENTITIES [SEED] > memory.jsonl

Entity i is `ent-%07d` (type `concept`, every 50th `person`) with one
observation of six words drawn from a list of 18; every other entity has one
relation to another (`relates_to`). The same arguments write the same bytes.
The words hold `writer` and `batch` but not `write`, so `search_nodes "write
batch"` has many candidates and no hit."""
import json
import random
import sys

WORDS = ["retry", "policy", "late", "writer", "batch", "queue", "deploy", "cache",
         "index", "merge", "parser", "token", "schema", "lease", "fence", "shard",
         "replica", "budget"]


def main():
    if len(sys.argv) not in (2, 3) or not sys.argv[1].isdigit() or (
            len(sys.argv) == 3 and not sys.argv[2].isdigit()):
        sys.exit(__doc__)
    n = int(sys.argv[1])
    rng = random.Random(int(sys.argv[2]) if len(sys.argv) == 3 else 1)
    out = sys.stdout
    for i in range(n):
        text = " ".join(rng.choice(WORDS) for _ in range(6))
        out.write(json.dumps({"type": "entity", "name": "ent-%07d" % i,
                              "entityType": "person" if i % 50 == 0 else "concept",
                              "observations": [text]}) + "\n")
    for i in range(0, n, 2):
        out.write(json.dumps({"type": "relation", "from": "ent-%07d" % i,
                              "to": "ent-%07d" % rng.randrange(n),
                              "relationType": "relates_to"}) + "\n")


if __name__ == "__main__":
    main()
