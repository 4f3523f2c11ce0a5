#!/usr/bin/python3
"""An agent-like harness over the Python module (docs/PYTHON.md).

Run 1 works through three tasks: for each it writes what the agent learned (one
batch per task, attributed to the run and the task), asks the memory what an agent
would ask before its next step (the questions are recorded in a query log), and
exports a snapshot of the memory as it stood when the task ended.

Run 2 (the same command again) learns something that corrects run 1, exports the
memory again, and re-asks every question run 1 recorded with replay_queries: on
run 1's last snapshot against the new one, printing which answers changed.

    /usr/bin/python3 examples/harness.py WORKDIR     # run 1, then again: run 2
"""
import json
import os
import sys

import amem

TS = 1700000000  # fixed timestamps: the same output on every machine

TASKS = [
    ("task-1", "Find how the store commits writes", [
        ("module:store", "module", "The LMDB-backed graph store."),
        ("fact:lmdb-one-writer", "fact", "LMDB allows one writer at a time per environment."),
        ("decision:use-lmdb", "decision", "Store the graph in LMDB: crash-safe, mmap reads."),
    ], [("decision:use-lmdb", "decided_for", "module:store"),
        ("decision:use-lmdb", "caused_by", "fact:lmdb-one-writer")]),
    ("task-2", "Speed up bulk ingest", [
        ("file:tools/ingest.cc", "file", "JSON Lines ingest: one transaction for the file."),
        ("inference:batch-writes", "inference", "Batching writes avoids one fsync per line."),
    ], [("inference:batch-writes", "derived_from", "fact:lmdb-one-writer"),
        ("file:tools/ingest.cc", "part_of", "module:store")]),
    ("task-3", "Explain why readers never block", [
        ("fact:mvcc-readers", "fact", "LMDB readers see a snapshot and never block the writer."),
    ], [("fact:mvcc-readers", "related_to", "fact:lmdb-one-writer")]),
]



def questions(goal, first_key):
    """What the agent asks before its next step: keyword recall of the task's goal,
    and the context of the first thing it learned, within a token budget."""
    return [("text_search", {"query": goal, "limit": 5}),
            ("context", {"seeds": [first_key], "budget_tokens": 200})]


def short(value):
    text = json.dumps(value)
    return text if len(text) <= 60 else text[:57] + "..."


def run_1(work, store):
    for n, (task, goal, nodes, edges) in enumerate(TASKS):
        ts = TS + 600 * n
        with store.batch(run="run-1", task=task, ts=ts, scope="demo") as b:
            b.put_node("episode:" + task, type="episode", content=goal)
            for key, typ, content in nodes:
                b.put_node(key, type=typ, content=content)
            for src, rel, dst in edges:
                b.put_edge(src, rel, dst)
        view = store.view()
        answers = {name: getattr(view, name)(**args)
                   for name, args in questions(goal, nodes[0][0])}
        hits = [r["key"] for r in answers["text_search"]["results"]]
        snap = store.export(os.path.join(work, task + ".amem"))
        print("run 1 %s: rev %d, %d nodes; text_search %s -> %s"
              % (task, b.revision, snap["nodes"], json.dumps(goal), ", ".join(hits)))


def run_2(work, store):
    with store.batch(run="run-2", task="task-4", ts=TS + 3600) as b:
        b.put_node("correction:lmdb-writers", type="correction",
                   content="LMDB allows one writer per environment at a time, across processes.")
        b.put_edge("correction:lmdb-writers", "supersedes", "fact:lmdb-one-writer")
        b.put_node("fact:writer-lock", type="fact",
                   content="The writer lock of LMDB is a robust mutex in the lock file.")
        b.put_edge("fact:writer-lock", "related_to", "correction:lmdb-writers")
    after = os.path.join(work, "after.amem")
    store.export(after)
    before = os.path.join(work, TASKS[-1][0] + ".amem")
    report = amem.replay_queries(os.path.join(work, "queries.jsonl"), before, against=after)
    print("run 2: re-asked %d questions of run 1: %d same, %d changed"
          % (report["total"], report["same"], report["changed"]))
    for q in report["queries"]:
        if q["status"] != "changed":
            continue
        print("  line %d %s %s" % (q["line"], q["query"], json.dumps(q["args"], sort_keys=True)))
        for row in q.get("added", []):
            print("    + %s (at %d)" % (row["row"], row["at"]))
        for row in q.get("removed", []):
            print("    - %s (was at %d)" % (row["row"], row["was"]))
        for row in q.get("moved", []):
            print("    ~ %s moved %d -> %d" % (row["row"], row["from"], row["to"]))
        for row in q.get("score_changes", []):
            print("    score %s %.4g -> %.4g" % (row["row"], row["from"], row["to"]))
        for f in q.get("changed_fields", []):
            print("    %s: %s -> %s" % (f["field"], short(f["from"]), short(f["to"])))


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: harness.py WORKDIR")
    work = sys.argv[1]
    os.makedirs(work, exist_ok=True)
    second = os.path.exists(os.path.join(work, "queries.jsonl"))
    store = amem.Store(os.path.join(work, "store"), create=True,
                       query_log=os.path.join(work, "queries.jsonl"))
    if second:
        store.query_log = ""  # run 2 replays run 1's questions; it records none
        run_2(work, store)
    else:
        run_1(work, store)


if __name__ == "__main__":
    main()
