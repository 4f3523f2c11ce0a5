#!/usr/bin/env python3
"""Writes a code graph laid out as docs/CODE.md says `amem index` writes one, as
`amem ingest` JSON Lines, and a patch against it, for bench/code_impact_bench.cc
and whole-process timings of `amem impact --diff`.

    python3 bench/code_graph_gen.py OUT_DIR [--files 2000] [--symbols 50]

OUT_DIR/graph.jsonl: FILES files of SYMBOLS functions each (meta file and lines,
20 lines apart), every tenth file a test file whose functions `tests` three
others, the rest `calls` three others and `imports` one file; 2,000 memories
(decisions, constraints, facts), each linked to two symbols. OUT_DIR/change.patch:
a git diff of 5 files, 2 hunks each, 50 removed and 50 added lines. Fixed seed:
the same files every time.
"""
import argparse
import json
import os
import random


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--files", type=int, default=2000)
    ap.add_argument("--symbols", type=int, default=50)
    a = ap.parse_args()
    rnd = random.Random(7)
    os.makedirs(a.out, exist_ok=True)
    paths = [f"src/m{f // 100}/f{f}.cc" if f % 10 else f"tests/m{f // 100}/f{f}_test.cc"
             for f in range(a.files)]
    with open(os.path.join(a.out, "graph.jsonl"), "w") as out:
        def w(d):
            out.write(json.dumps(d, separators=(",", ":")) + "\n")
        w({"op": "rel", "name": "contains"})
        for p in paths:
            w({"op": "node", "key": "file:" + p, "type": "file", "content": p,
               "meta": {"digest": "%016x" % rnd.getrandbits(64), "indexer": "ctags"}})
            for s in range(a.symbols):
                key = f"symbol:{p}#fn{s}"
                w({"op": "node", "key": key, "type": "symbol", "content": f"function fn{s}",
                   "meta": {"file": p, "indexer": "ctags", "kind": "function",
                            "lines": f"{s * 20 + 1}-{s * 20 + 18}", "name": f"fn{s}"}})
                w({"op": "edge", "src": "file:" + p, "rel": "defines", "dst": key})
        for f, p in enumerate(paths):
            rel = "tests" if f % 10 == 0 else "calls"
            for s in range(a.symbols):
                for _ in range(3):
                    g, t = rnd.randrange(a.files), rnd.randrange(a.symbols)
                    w({"op": "edge", "src": f"symbol:{p}#fn{s}", "rel": rel,
                       "dst": f"symbol:{paths[g]}#fn{t}"})
            if f % 10:
                w({"op": "edge", "src": "file:" + p, "rel": "imports",
                   "dst": "file:" + paths[rnd.randrange(a.files)]})
        for m in range(2000):
            kind = rnd.choice(["decision", "constraint", "fact"])
            w({"op": "node", "key": f"{kind}:m{m}", "type": kind,
               "content": f"memory {m} about code"})
            for _ in range(2):
                f, s = rnd.randrange(a.files), rnd.randrange(a.symbols)
                w({"op": "edge", "src": f"{kind}:m{m}",
                   "rel": "constrains" if kind == "constraint" else "related_to",
                   "dst": f"symbol:{paths[f]}#fn{s}"})
    parts = []
    for f in [1, 17, 333, 1234, 1999]:
        p = paths[f % a.files]
        parts.append(f"diff --git a/{p} b/{p}\nindex 1111111..2222222 100644\n"
                     f"--- a/{p}\n+++ b/{p}\n")
        for h in range(2):
            parts.append(f"@@ -{100 + h * 400},5 +{100 + h * 400},5 @@\n")
            parts += [f"-old {k}\n" for k in range(5)] + [f"+new {k}\n" for k in range(5)]
    with open(os.path.join(a.out, "change.patch"), "w") as out:
        out.write("".join(parts))


if __name__ == "__main__":
    main()
