"""The Store: writes, batches, history, reads, views, vectors and errors."""
import array
import json
import multiprocessing
import os

import pytest

import amem

np = pytest.importorskip("numpy")


def test_version():
    assert amem.__version__.count(".") == 2


def test_put_node_and_get_node(store):
    rev = store.put_node("fact:a", type="fact", content="alpha beta", meta={"k": "v"},
                         confidence=0.5, vector=[1, 0, 0, 0], ts=1700000000, run="r1",
                         task="t1", scope="s")
    assert rev == 1 == store.revision
    n = store.get_node("fact:a")
    assert (n["key"], n["type"], n["content"], n["meta"], n["confidence"]) == \
        ("fact:a", "fact", "alpha beta", {"k": "v"}, 0.5)
    assert (n["run"], n["task"], n["scope"], n["created_ts"], n["rev"]) == \
        ("r1", "t1", "s", 1700000000, 1)
    assert n["vector"] == [1, 0, 0, 0]
    # by id too, as the CLI's get-node
    assert store.get_node(n["id"])["key"] == "fact:a"


def test_writes_return_revisions_and_mirror_the_cli(store, amem_cli):
    store.put_node("file:a", type="file")
    store.put_node("file:b", type="file")
    store.define_relation("blocks")
    assert store.put_edge("file:a", "blocks", "file:b", weight=0.5, payload={"why": 1}) == 4
    assert store.kv_put("proj", "ns", "k", {"x": [1]}) == 5
    assert store.kv_put("proj", "ns", "k", "plain") == 6
    cli = amem_cli(store.path)
    assert store.out_edges("file:a") == cli.json("out", "file:a")["edges"]
    assert store.in_edges("file:b") == cli.json("in", "file:b")["edges"]
    assert store.out_edges("file:a")[0]["payload"] == {"why": 1}
    assert store.kv_get("proj", "ns", "k") == cli.json("kv-get", "proj", "ns", "k")
    assert [v["value"] for v in store.kv_history("proj", "ns", "k")] == ['{"x":[1]}', "plain"]
    assert store.get_node("file:a") == cli.json("get-node", "file:a")
    assert store.stats() == cli.json("stats")
    assert store.changes(since_rev=4) == cli.json("changes", "--since-rev", "4")["changes"]
    assert store.delete_edge("file:a", "blocks", "file:b") == 7
    assert store.kv_delete("proj", "ns", "k") == 8
    assert store.kv_history("proj", "ns", "k")[-1]["deleted"] is True
    assert store.delete_node("file:b") == 9
    with pytest.raises(amem.NotFound):
        store.get_node("file:b")
    assert store.get_node("file:b", as_of=8)["key"] == "file:b"


def test_delete_node_with_edges(store):
    with store.batch() as b:
        b.put_node("a")
        b.put_node("b")
        b.put_edge("a", "related_to", "b")
        b.put_edge("b", "related_to", "a")
    store.delete_node("a", with_edges=True)
    assert store.out_edges("b") == [] and store.in_edges("b") == []


def test_bad_writes_raise_the_cli_message_and_write_nothing(store, amem_cli):
    store.put_node("file:a")
    cli = amem_cli(store.path)
    cases = [
        (lambda: store.put_node("x", type="nonsense"), ["put-node", "x", "--type", "nonsense"],
         amem.InvalidArgument),
        (lambda: store.put_edge("file:a", "no_such_rel", "file:a"),
         ["put-edge", "file:a", "no_such_rel", "file:a"], amem.InvalidArgument),
        (lambda: store.delete_node("nobody"), ["del-node", "nobody"], amem.NotFound),
        (lambda: store.kv_delete("s", "n", "k"), ["kv-del", "s", "n", "k"], amem.NotFound),
        (lambda: store.put_node("x", confidence=2.0), ["put-node", "x", "--type", "entity", "--confidence", "2"],
         amem.InvalidArgument),
    ]
    for call, cli_args, cls in cases:
        with pytest.raises(cls) as e:
            call()
        # the same text, arguments named as in Python (type, not --type)
        assert str(e.value) == cli.error(*cli_args).replace(": --", ": ")
        assert isinstance(e.value, amem.Error)
    with pytest.raises(amem.InvalidArgument, match="vector"):
        store.put_node("x", vector=[1.0, 2.0])  # dimension 4
    with pytest.raises(amem.InvalidArgument, match="meta"):
        store.put_node("x", meta={"k": object()})
    with pytest.raises(amem.InvalidArgument, match="float32"):
        store.put_node("x", vector=np.zeros(4, dtype=np.float64))
    assert store.revision == 1
    assert store.stats()["live_nodes"] == 1


def test_batch_is_one_revision(store):
    with store.batch(run="r", task="t") as b:
        for i in range(10):
            b.put_node("n%d" % i, content="node %d" % i)
        b.put_edge("n0", "related_to", "n1")
        b.kv_put("p", "ns", "k", "v")
        assert len(b) == 12
    assert b.revision == 1 == store.revision
    assert store.get_node("n9")["run"] == "r"
    with pytest.raises(amem.InvalidArgument):
        b.put_node("late")  # applied: closed


def test_batch_rolled_back_on_exception(store):
    store.put_node("keep")
    with pytest.raises(RuntimeError):
        with store.batch() as b:
            b.put_node("lost1")
            b.put_node("lost2")
            raise RuntimeError("stop")
    assert b.revision is None
    assert store.revision == 1
    with pytest.raises(amem.NotFound):
        store.get_node("lost1")


def test_batch_with_a_bad_operation_writes_nothing(store):
    with pytest.raises(amem.InvalidArgument, match="op 1"):
        with store.batch() as b:
            b.put_node("ok")
            b.put_edge("ok", "no_such_rel", "ok")
    assert store.revision == 0


def test_batch_expected_revision(store):
    store.put_node("a")
    with pytest.raises(amem.Aborted):
        with store.batch(expected_revision=0) as b:
            b.put_node("b")
    assert store.revision == 1


def test_ingest_log_replay(store, tmp_path):
    lines = [{"op": "node", "key": "fact:x", "type": "fact", "content": "x"},
             '{"op":"node","key":"fact:y","type":"fact"}',
             {"op": "edge", "src": "fact:x", "rel": "related_to", "dst": "fact:y"}]
    assert store.ingest(lines, ts=1700000000) == {"rev": 1, "ops": 3, "lines": 3}
    path = tmp_path / "more.jsonl"
    path.write_text('{"op":"kv","scope":"s","ns":"n","key":"k","value":"v"}\n')
    assert store.ingest(path)["rev"] == 2
    with pytest.raises(amem.InvalidArgument, match="line 2"):
        store.ingest(['{"op":"node","key":"z","type":"fact"}', '{"op":"nope"}'])
    assert store.revision == 2
    log = store.log()
    assert [l["rev"] for l in log] == [1, 1, 1, 2]
    # the log re-creates the store elsewhere
    other = amem.Store(tmp_path / "other", create=True, dimension=4)
    assert other.replay(json.dumps(l) for l in log)["rev"] == 2
    assert other.log() == log
    with pytest.raises(amem.InvalidArgument):
        other.replay([json.dumps(log[0])])  # does not continue it
    assert other.revision == 2


def test_export_and_snapshot(store, tmp_path):
    store.put_node("fact:a", content="one")
    store.put_node("fact:a", content="two")
    r = store.export(tmp_path / "old.amem", as_of=1)
    assert (r["revision"], r["nodes"]) == (1, 1)
    snap = amem.Snapshot(str(tmp_path / "old.amem"))
    assert snap.get_node("fact:a")["content"] == "one"
    assert snap.revision is None and snap.node_count == 1
    with pytest.raises(amem.IOError, match="missing.amem"):
        amem.Snapshot(tmp_path / "missing.amem")
    (tmp_path / "bad.amem").write_bytes(b"not a snapshot" * 10)
    with pytest.raises(amem.Error):
        amem.Snapshot(str(tmp_path / "bad.amem"))


def test_live_view_after_writes(store):
    store.put_node("fact:a", type="fact", content="lmdb writer")
    v1 = store.view()
    assert v1.revision == 1
    store.put_node("fact:b", type="fact", content="lmdb reader")
    store.put_edge("fact:a", "related_to", "fact:b")
    v2 = store.view()
    assert v2.revision == 3
    assert [r["key"] for r in v2.text_search("lmdb")["results"]] != []
    assert {r["key"] for r in v2.text_search("lmdb")["results"]} == {"fact:a", "fact:b"}
    assert {r["key"] for r in v1.text_search("lmdb")["results"]} == {"fact:a"}
    assert v2.out_edges("fact:a") == [{"src": "fact:a", "rel": "related_to", "dst": "fact:b",
                                       "weight": 1}]
    assert v2.in_edges("fact:b")[0]["src"] == "fact:a"
    old = store.view(as_of=1)
    assert old.revision == 1 and old.node_count == 1
    with pytest.raises(amem.InvalidArgument):
        store.view(as_of=99)


def test_consolidate_execute_only_on_the_latest_view(store):
    store.put_node("fact:a", content="x")
    with pytest.raises(amem.InvalidArgument, match="latest"):
        store.view(as_of=1).consolidate(execute=True)


def test_vectors_without_copies(store, tmp_path):
    vec = np.array([0.5, 0.25, 0.125, 1.0], dtype=np.float32)
    store.put_node("v:a", vector=vec)
    store.put_node("v:b", vector=array.array("f", [1, 2, 3, 4]))
    store.put_node("v:c", vector=memoryview(np.ones(4, dtype=np.float32)))
    store.put_node("v:none")
    store.export(tmp_path / "v.amem")
    snap = amem.Snapshot(str(tmp_path / "v.amem"))
    a = snap.vector("v:a")
    assert isinstance(a, np.ndarray) and a.dtype == np.float32
    assert np.array_equal(a, vec)
    assert not a.flags.writeable and not a.flags.owndata
    # the array's memory is the snapshot's: its base is the buffer that holds it open
    base = a.base.obj if isinstance(a.base, memoryview) else a.base
    assert type(base).__name__ == "_VectorBuffer"
    assert a.ctypes.data == base.address
    again = snap.vector("v:a")
    assert again.ctypes.data == a.ctypes.data  # the same bytes, no copy
    node = snap.get_node("v:b")
    assert np.array_equal(node["vector"], [1, 2, 3, 4])
    assert snap.get_node("v:none")["vector"] is None
    # the snapshot stays open while an array lives
    del snap, node, again
    import gc
    gc.collect()
    assert np.array_equal(a, vec)
    with pytest.raises(ValueError):
        a[0] = 1.0
    # and in the live view
    assert np.array_equal(store.view().vector("v:c"), np.ones(4))


def test_similar_by_vector_buffer(store):
    store.put_node("v:a", vector=np.array([1, 0, 0, 0], dtype=np.float32))
    store.put_node("v:b", vector=np.array([0, 1, 0, 0], dtype=np.float32))
    rows = store.view().similar(vector=np.array([1, 0.1, 0, 0], dtype=np.float32))["results"]
    assert rows[0]["key"] == "v:a"


def test_closed_store_raises(tmp_path):
    s = amem.Store(tmp_path / "s", create=True)
    s.close()
    with pytest.raises(amem.InvalidArgument, match="closed"):
        s.put_node("a")


def test_missing_store_is_not_found(tmp_path):
    with pytest.raises(amem.NotFound, match="create one"):
        amem.Store(tmp_path / "nothing")
    assert not (tmp_path / "nothing").exists()


def _writer(path, prefix, n):
    s = amem.Store(path)
    for i in range(n):
        s.put_node("%s:%d" % (prefix, i))
    s.close()


def test_two_processes_write_one_store(tmp_path):
    path = str(tmp_path / "shared")
    amem.Store(path, create=True).close()
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(path, p, 50)) for p in ("a", "b")]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    s = amem.Store(path)
    assert s.revision == 100
    assert s.stats()["live_nodes"] == 100


def test_query_log_and_replay_queries(store, tmp_path):
    log = tmp_path / "queries.jsonl"
    store.query_log = str(log)
    store.put_node("fact:a", type="fact", content="lmdb single writer")
    store.view().text_search("lmdb")
    store.view().traverse("fact:a")
    store.export(tmp_path / "one.amem")
    report = amem.replay_queries(log, tmp_path / "one.amem")
    assert (report["total"], report["same"], report["changed"]) == (2, 2, 0)
    store.put_node("fact:b", type="fact", content="lmdb reader")
    store.export(tmp_path / "two.amem")
    report = amem.replay_queries(log, tmp_path / "one.amem", against=tmp_path / "two.amem")
    assert report["changed"] == 1
    changed = [q for q in report["queries"] if q["status"] == "changed"]
    assert changed[0]["query"] == "text_search"
    assert changed[0]["added"][0]["row"] == "fact:b"
    with pytest.raises(amem.Error):
        amem.replay_queries(tmp_path / "missing.jsonl", tmp_path / "one.amem")


def test_views_outlive_their_closed_store(tmp_path):
    s = amem.Store(tmp_path / "s", create=True)
    s.put_node("fact:a", content="lmdb writer")
    view = s.view()
    s.close()
    assert [r["key"] for r in view.text_search("lmdb")["results"]] == ["fact:a"]
    with pytest.raises(amem.InvalidArgument, match="closed"):
        s.view()


def test_every_batch_write_and_history_reads(store, tmp_path):
    with store.batch(ts=1700000000) as b:
        b.define_relation("blocks")
        b.put_node("a", scope="p")
        b.put_node("b")
        b.put_edge("a", "blocks", "b", payload='{"n":1}')
        b.kv_put("p", "ns", "k", "v")
    with store.batch(ts=1700000100) as b:
        b.delete_edge("a", "blocks", "b")
        b.kv_delete("p", "ns", "k")
        b.delete_node("b")
    assert store.revision == 2
    assert [c["kind"] for c in store.changes(since_rev=1)] == \
        [c["kind"] for c in store.changes(since_ts=1700000050)]
    assert len(store.changes(since_rev=1)) == 3
    with pytest.raises(amem.InvalidArgument):
        store.changes(since_rev=1, since_ts=5)
    assert {l["rev"] for l in store.log(since_rev=1)} == {2}
    assert {l["rev"] for l in store.log(until_rev=1)} == {1}
    assert store.get_node("a")["scope"] == "p"
    assert store.out_edges("a") == [] and store.out_edges("a", as_of=1)[0]["dst"] == "b"
    assert store.kv_get("p", "ns", "k", as_of=1)["value"] == "v"
    r = store.export(tmp_path / "at.amem", at=1700000000)
    assert r["revision"] == 1
    snap = amem.Snapshot(tmp_path / "at.amem")
    assert (snap.node_count, snap.edge_count, snap.dimension) == (2, 1, 4)
    assert snap.file_path == str(tmp_path / "at.amem")
    assert store.dimension == 4 and store.path.endswith("store")
    with amem.Store(store.path, read_only=True) as ro:
        with pytest.raises(amem.IOError, match="read-only"):
            ro.put_node("c")
