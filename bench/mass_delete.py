#!/usr/bin/python3
"""Issue 40's merge-bound case: one write deleting most of the store.

    mass_delete.py WORKLOAD.jsonl FRACTION OUT.jsonl

Reads a workload made by bench/amem_gen and writes an ingest file that deletes the
first FRACTION of its nodes (in file order) and every edge touching them: del_edge
lines first, then del_node lines. bench/process_bench.sh times the queries after it.
"""
import json
import sys


def main():
    src, fraction, out = sys.argv[1], float(sys.argv[2]), sys.argv[3]
    nodes, edges = [], []
    with open(src) as f:
        for line in f:
            o = json.loads(line)
            if o["op"] == "node":
                nodes.append(o["key"])
            elif o["op"] == "edge":
                edges.append((o["src"], o["rel"], o["dst"]))
    gone = set(nodes[:int(len(nodes) * fraction)])
    with open(out, "w") as w:
        for s, r, d in edges:
            if s in gone or d in gone:
                w.write(json.dumps({"op": "del_edge", "src": s, "rel": r, "dst": d}) + "\n")
        for k in nodes:
            if k in gone:
                w.write(json.dumps({"op": "del_node", "key": k}) + "\n")


if __name__ == "__main__":
    main()
