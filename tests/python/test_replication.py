"""Python writes on a store bound to a NATS JetStream stream (docs/REPLICATION.md):
they go through the stream as the CLI's do. Each test that needs one starts a
single-node nats-server with JetStream on a free loopback port in its temporary
directory and kills it at the end (nats-server: bash tools/bootstrap.sh test)."""
import os
import shutil
import socket
import subprocess
import sys
import threading
import time

import pytest

import amem


class NatsServer:
    """One nats-server with JetStream, its data and log under `root`."""

    def __init__(self, root):
        self.root = root
        root.mkdir()
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.url = "nats://127.0.0.1:%d" % self.port
        self.proc = None

    def start(self):
        log = open(self.root / "server.log", "a")
        self.proc = subprocess.Popen(
            ["nats-server", "-js", "-sd", str(self.root / "js"), "-a", "127.0.0.1",
             "-p", str(self.port)], stdout=log, stderr=log)
        log.close()
        deadline = time.monotonic() + 20
        while True:
            assert self.proc.poll() is None, (self.root / "server.log").read_text()
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError:
                assert time.monotonic() < deadline, "nats-server did not start"
                time.sleep(0.05)

    def stop(self):
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()
            self.proc = None


@pytest.fixture
def nats(tmp_path, monkeypatch):
    assert shutil.which("nats-server"), \
        "nats-server is missing (bash tools/bootstrap.sh test installs it)"
    # A write that cannot reach the stream fails after this long (the default is 5 s).
    monkeypatch.setenv("AMEM_NATS_TIMEOUT_MS", "1500")
    server = NatsServer(tmp_path / "nats")
    server.start()
    yield server
    server.stop()


def bind(cli, nats, stream):
    """`amem remote add` (retried while JetStream starts), one replica."""
    for _ in range(40):
        r = cli.run("remote", "add", nats.url, "--stream", stream, "--replicas", "1",
                    check=False)
        if r.returncode == 0:
            return
        time.sleep(0.25)
    raise AssertionError(r.stderr)


def bound_store(tmp_path, amem_cli, nats, name, stream="py"):
    """A new store in tmp_path/name bound to `stream`, opened from Python."""
    amem.Store(tmp_path / name, create=True).close()  # dimension 128, as amem init
    cli = amem_cli(tmp_path / name)
    bind(cli, nats, stream)
    return amem.Store(tmp_path / name), cli


def export_bytes(cli, path):
    cli.run("export", path)
    return path.read_bytes()


def test_python_writes_go_through_the_stream_and_replicas_sync(tmp_path, amem_cli, nats):
    a, a_cli = bound_store(tmp_path, amem_cli, nats, "a")
    assert a.put_node("fact:a", type="fact", content="from python") == 1
    # Another writer on the stream: Python's next write is refused by the stream,
    # catches up, is validated again and lands after it, at the stream's sequence.
    b_cli = amem_cli(tmp_path / "b")
    b_cli.run("init")
    bind(b_cli, nats, "py")
    b_cli.run("put-node", "fact:b", "--type", "fact", "--content", "from the cli")
    assert a.put_edge("fact:a", "related_to", "fact:b", payload={"by": "python"}) == 3
    assert a.get_node("fact:b")["content"] == "from the cli"
    with a.batch(run="r1") as batch:
        batch.put_node("file:x", type="file")
        batch.kv_put("team", "ns", "k", {"v": 1})
    assert batch.revision == 4
    assert a.kv_put("team", "ns", "k", "two") == 5
    assert a.ingest(['{"op":"node","key":"fact:i","type":"fact","content":"ingested"}'])["rev"] == 6
    assert a.define_relation("blocks") == 7
    assert a.delete_edge("fact:a", "related_to", "fact:b") == 8
    assert a.kv_delete("team", "ns", "k") == 9
    assert a.delete_node("fact:i") == 10
    a.view().consolidate(execute=True)
    b_cli.run("put-node", "fact:b2", "--type", "fact", "--content", "again from the cli")
    # A delete made moot by the other writer fails as it would locally.
    b_cli.run("del-node", "file:x")
    with pytest.raises(amem.NotFound):
        a.delete_node("file:x")
    last = a.put_node("fact:last", type="fact", content="the last one")
    assert last == a.revision
    # A third store bound to the stream catches up to the same bytes.
    c_cli = amem_cli(tmp_path / "c")
    c_cli.run("init")
    bind(c_cli, nats, "py")
    assert "applied" in c_cli.run("sync").stdout
    b_cli.run("sync")
    a_bytes = export_bytes(a_cli, tmp_path / "a.amem")
    assert a_bytes == export_bytes(c_cli, tmp_path / "c.amem")
    assert a_bytes == export_bytes(b_cli, tmp_path / "b.amem")
    assert c_cli.json("stats")["revision"] == last
    assert a.log() == amem.Store(tmp_path / "c").log()


def test_a_python_write_with_the_server_down_fails_and_changes_nothing(
        tmp_path, amem_cli, nats):
    a, a_cli = bound_store(tmp_path, amem_cli, nats, "a")
    assert a.put_node("fact:a", type="fact", content="one") == 1
    before = export_bytes(a_cli, tmp_path / "before.amem")
    nats.stop()
    # The client notices the closed socket at once; give its reader thread a moment,
    # since a publish racing that would be "may or may not be in the stream".
    time.sleep(0.2)
    # A store whose connection is gone, and one opened while the server is down.
    with pytest.raises(amem.IOError, match="stream py did not accept revision 2; nothing "
                       "was written: cannot reach stream py at nats://127.0.0.1:[0-9]+: "
                       "not connected within 1500 ms"):
        a.put_node("fact:down", type="fact", content="two")
    fresh = amem.Store(tmp_path / "a")
    with pytest.raises(amem.IOError, match="cannot reach stream py at nats://127.0.0.1"):
        with fresh.batch() as batch:
            batch.put_node("fact:down2", type="fact")
    with pytest.raises(amem.IOError, match="the store is bound to stream py; nothing was written"):
        fresh.ingest(['{"op":"node","key":"fact:down3","type":"fact"}'])
    assert a.revision == fresh.revision == 1
    with pytest.raises(amem.NotFound):
        a.get_node("fact:down")
    assert export_bytes(a_cli, tmp_path / "after.amem") == before
    # Back up: writes go through again, and nothing failed is in the stream.
    nats.start()
    deadline = time.monotonic() + 20
    while True:
        try:
            rev = fresh.put_node("fact:up", type="fact", content="three")
            break
        except amem.Error:
            assert time.monotonic() < deadline
            time.sleep(0.2)
    assert rev == 2
    # The first handle reconnected on its own, and sent nothing it had failed.
    assert a.put_node("fact:up2", type="fact", content="four") == 3
    c_cli = amem_cli(tmp_path / "c")
    c_cli.run("init")
    bind(c_cli, nats, "py")
    c_cli.run("sync")
    a.close()
    assert export_bytes(c_cli, tmp_path / "c.amem") == export_bytes(a_cli, tmp_path / "a.amem")
    assert [d["key"] for d in fresh.log() if "key" in d] == ["fact:a", "fact:up", "fact:up2"]


def test_an_open_store_follows_its_binding_as_the_cli_changes_it(tmp_path, amem_cli, nats):
    s = amem.Store(tmp_path / "s", create=True, dimension=4)
    assert [s.put_node("fact:%d" % i) for i in range(3)] == [1, 2, 3]
    cli = amem_cli(tmp_path / "s")
    assert cli.json("stats")["revision"] == 3
    # Bound by the CLI while this handle is open (its history published by remote
    # add): the handle's next writes go through the stream.
    bind(cli, nats, "later")
    assert s.put_node("fact:x") == 4
    with s.batch() as b:
        b.kv_put("a", "b", "c", "one")
    assert s.kv_delete("a", "b", "c") == 6
    other = amem_cli(tmp_path / "other")
    other.run("init", "--dimension", "4")  # the stream records 4 (amem remote add)
    bind(other, nats, "later")
    other.run("sync")
    assert other.json("stats")["revision"] == 6
    # Another writer comes first: this handle catches up before its own write.
    other.run("put-node", "fact:o", "--type", "fact")
    assert s.put_node("fact:y") == 8
    # Unbound while open: local again, and the stream does not move.
    cli.run("remote", "remove")
    assert s.put_node("fact:z") == 9
    other.run("sync")
    assert other.json("stats")["revision"] == 8
    assert s.get_node("fact:o")["key"] == "fact:o"


def test_replay_into_a_bound_store_goes_through_the_stream(tmp_path, amem_cli, nats):
    src = amem.Store(tmp_path / "src", create=True, dimension=128)
    for i in range(4):
        src.put_node("fact:%d" % i, type="fact", content="replayed %d" % i)
    log = src.log()
    a, a_cli = bound_store(tmp_path, amem_cli, nats, "a")
    done = a.replay(log)
    assert (done["rev"], done["stream"], done["published"], done["skipped"]) == (4, "py", 4, 0)
    # Again: the store has every revision already; nothing is published.
    done = a.replay(log)
    assert (done["rev"], done["published"], done["skipped"]) == (4, 0, 4)
    # A replica of the stream has the replayed history, byte for byte.
    c_cli = amem_cli(tmp_path / "c")
    c_cli.run("init")
    bind(c_cli, nats, "py")
    c_cli.run("sync")
    assert export_bytes(c_cli, tmp_path / "c.amem") == export_bytes(a_cli, tmp_path / "a.amem")
    assert amem.Store(tmp_path / "c").log() == log
    # Another history does not go in: nothing written.
    other = amem.Store(tmp_path / "other", create=True)
    other.put_node("fact:elsewhere")
    with pytest.raises(amem.InvalidArgument, match="line 1: revision 1: differs from the store.s revision 1"):
        a.replay(other.log())
    assert a.revision == 4


def test_without_nats_a_bound_store_refuses_writes(tmp_path, amem_cli, nats):
    a, a_cli = bound_store(tmp_path, amem_cli, nats, "a")
    assert a.put_node("fact:a") == 1
    a.close()
    before = export_bytes(a_cli, tmp_path / "before.amem")
    # The module as built without libnats (AMEM_REPLICATION_TEST_NO_NATS).
    code = """
import sys, amem
s = amem.Store(sys.argv[1])
assert s.get_node("fact:a")["key"] == "fact:a"   # reads work
try:
    s.put_node("fact:b")
except amem.NotSupported as e:
    print(e)
"""
    env = dict(os.environ, AMEM_REPLICATION_TEST_NO_NATS="1")
    r = subprocess.run([sys.executable, "-c", code, str(tmp_path / "a")], env=env,
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "built without NATS" in r.stdout and "install libnats-dev" in r.stdout
    assert "the store is bound to stream py; nothing was written" in r.stdout
    assert export_bytes(a_cli, tmp_path / "after.amem") == before


def test_threads_and_a_cli_writer_on_one_stream_converge(tmp_path, amem_cli, nats):
    a, a_cli = bound_store(tmp_path, amem_cli, nats, "a")
    b_cli = amem_cli(tmp_path / "b")
    b_cli.run("init")
    bind(b_cli, nats, "py")
    revs, errors = [], []

    def python_writer(t):
        try:
            for i in range(15):
                revs.append(a.put_node("fact:k%d" % (i % 4), type="fact", content="t%d-%d" % (t, i)))
        except amem.Error as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=python_writer, args=(t,)) for t in range(3)]
    for t in threads:
        t.start()
    for i in range(15):
        b_cli.run("put-node", "fact:k%d" % (i % 4), "--type", "fact", "--content", "cli-%d" % i)
    for t in threads:
        t.join()
    assert errors == []
    assert len(revs) == len(set(revs)) == 45
    a_cli.run("sync")
    b_cli.run("sync")
    assert a.revision == 60
    assert export_bytes(a_cli, tmp_path / "a.amem") == export_bytes(b_cli, tmp_path / "b.amem")
    contents = [d["content"] for d in a.log() if d.get("op") == "node"]
    assert sorted(contents) == sorted(["t%d-%d" % (t, i) for t in range(3) for i in range(15)] +
                                      ["cli-%d" % i for i in range(15)])
