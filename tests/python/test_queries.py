"""The 16 queries through the module answer what `amem <query> --json` prints, on
the demo's data: on a snapshot file and on the store's live view."""
import pytest

import amem

# (CLI arguments, method, positional arguments, keyword arguments): one call of
# each query of docs/QUERIES.md, spelled for both front ends.
CASES = [
    (["traverse", "file:store/store.cc", "--depth", "2"],
     "traverse", ["file:store/store.cc"], {"depth": 2}),
    (["search", "--type", "decision,fact", "--limit", "5", "--sort", "confidence"],
     "search", [], {"types": ["decision", "fact"], "limit": 5, "sort": "confidence"}),
    (["temporal", "run:run-1", "run:run-2"], "temporal", ["run:run-1", "run:run-2"], {}),
    (["impact", "fact:lmdb-one-writer"], "impact", ["fact:lmdb-one-writer"], {}),
    (["context", "file:store/store.cc", "--depth", "1", "--budget-tokens", "300"],
     "context", [], {"seeds": ["file:store/store.cc"], "depth": 1, "budget_tokens": 300}),
    (["resolve", "fact:build-system"], "resolve", ["fact:build-system"], {}),
    (["path", "symbol:amem::Store::Open", "module:store"],
     "path", ["symbol:amem::Store::Open", "module:store"], {}),
    (["similar", "--text", "snapshot cache", "--limit", "4"],
     "similar", [], {"text": "snapshot cache", "limit": 4}),
    (["text-search", "snapshot", "cache", "--limit", "3"],
     "text_search", ["snapshot cache"], {"limit": 3}),
    (["hybrid-search", "lmdb", "writer", "--limit", "4"],
     "hybrid_search", [], {"query": "lmdb writer", "limit": 4}),
    (["centrality", "--metric", "pagerank", "--limit", "5"],
     "centrality", [], {"metric": "pagerank", "limit": 5}),
    (["revise", "fact:lmdb-one-writer"], "revise", ["fact:lmdb-one-writer"], {}),
    (["gaps", "--now", "1700010000"], "gaps", [], {"now": 1700010000}),
    (["analogy", "file:store/store.cc"], "analogy", ["file:store/store.cc"], {}),
    (["consolidate"], "consolidate", [], {}),
    (["drift"], "drift", [], {}),
]


def test_cases_cover_every_query():
    assert sorted(c[1] for c in CASES) == sorted(amem.QUERY_METHODS)
    assert len(amem.QUERY_METHODS) == 16


@pytest.mark.parametrize("cli_args,method,args,kwargs", CASES, ids=[c[1] for c in CASES])
def test_query_on_snapshot_equals_cli_json(demo, cli_args, method, args, kwargs):
    want = demo.cli.json(*cli_args, "--snapshot", demo.snapshot)
    got = getattr(amem.Snapshot(str(demo.snapshot)), method)(*args, **kwargs)
    assert got == want
    assert got["query"] == cli_args[0]


@pytest.mark.parametrize("cli_args,method,args,kwargs", CASES, ids=[c[1] for c in CASES])
def test_query_on_store_view_equals_cli_json(demo, cli_args, method, args, kwargs):
    want = demo.cli.json(*cli_args)
    with amem.Store(demo.store_dir) as store:
        got = getattr(store.view(), method)(*args, **kwargs)
    assert got == want


def test_query_answers_are_plain_python_data(demo):
    answer = amem.Snapshot(demo.snapshot).text_search("lmdb", limit=5)
    assert isinstance(answer, dict)
    assert list(answer)[0] == "query"  # the document's field order is kept
    rows = answer["results"] if "results" in answer else next(
        v for v in answer.values() if isinstance(v, list))
    assert rows and all(isinstance(r, dict) for r in rows)
    assert all(isinstance(r["key"], str) for r in rows)


def test_query_docstrings_come_from_the_cli_help(demo, amem_cli):
    doc = amem.View.traverse.__doc__
    help_text = amem_cli(demo.store_dir).run("traverse", "--help").stdout
    assert "depth (int): Maximum hops" in doc
    first = doc.splitlines()[1].strip() if doc.startswith("traverse(") else doc.splitlines()[0]
    assert first.split(" ")[0] in help_text


@pytest.mark.parametrize("call,message", [
    (lambda v: v.traverse("file:store/store.cc", depth="2"), "depth: an int expected"),
    (lambda v: v.traverse("file:store/store.cc", dept=2), 'unknown argument "dept"'),
    (lambda v: v.centrality(metric="fame"), "is not one of"),
    (lambda v: v.traverse(), '"node" is required'),
    (lambda v: v.similar(), None),
    (lambda v: v.traverse("file:no-such-file"), None),
    (lambda v: v.search(limit=-1), "limit: must be at least"),
    (lambda v: v.search(types=["nonsense"]), 'unknown node type "nonsense"'),
    (lambda v: v.similar(vector=[]), "an empty vector"),
])
def test_bad_query_arguments_raise(demo, call, message):
    with pytest.raises(amem.Error) as e:
        call(amem.Snapshot(demo.snapshot))
    if message is not None:
        assert message in str(e.value)


def test_query_errors_have_the_cli_message(demo):
    want = demo.cli.error("traverse", "file:no-such-file", "--snapshot", demo.snapshot)
    with pytest.raises(amem.NotFound) as e:
        amem.Snapshot(demo.snapshot).traverse("file:no-such-file")
    assert str(e.value) == want
    assert isinstance(e.value, LookupError)


def test_consolidate_execute_writes_as_the_cli_does(tmp_path, amem_cli):
    from conftest import DEMO_DATA, DEMO_INGESTS
    cli = amem_cli(tmp_path / "cli")
    cli.run("init")
    store = amem.Store(tmp_path / "py", create=True)
    for name, ts, run in DEMO_INGESTS:
        cli.run("ingest", DEMO_DATA / name, "--ts", ts, "--run", run)
        store.ingest(DEMO_DATA / name, ts=ts, run=run)
    want = cli.json("consolidate", "--execute", "--ts", "1700005000")
    before = store.revision
    got = store.view().consolidate(execute=True, ts=1700005000, run="audit")
    assert got["query"] == "consolidate" and store.revision == before + 1
    assert store.log(since_rev=before) == [
        dict(line, run="audit") for line in
        amem.Store(tmp_path / "cli").log(since_rev=before)]
    # the same plan, written at its own time
    assert {k: v for k, v in got.items() if k not in ("rev", "revision")} == \
        {k: v for k, v in want.items() if k not in ("rev", "revision")}
    assert store.view().consolidate() == cli.json("consolidate")
