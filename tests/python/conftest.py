"""Fixtures of the pytest suite of the Python module (docs/PYTHON.md).

`store` gives each test a fresh store of its own (dimension 4, in tmp_path);
`demo` is the demo's store (tests/data/demo, ingested by the amem binary as
tools/demo_run.sh does) and a snapshot file of it, shared by the session;
`amem_cli` runs the amem binary. ctest sets PYTHONPATH, AMEM_BINARY and
AMEM_SOURCE_DIR (python/CMakeLists.txt); run by hand:
    PYTHONPATH=build/python AMEM_BINARY=build/amem /usr/bin/python3 -m pytest tests/python
"""
import json
import os
import subprocess
from pathlib import Path

import pytest

import amem

SOURCE_DIR = Path(os.environ.get("AMEM_SOURCE_DIR", Path(__file__).resolve().parents[2]))
AMEM_BINARY = os.environ.get("AMEM_BINARY", str(SOURCE_DIR / "build" / "amem"))
DEMO_DATA = SOURCE_DIR / "tests" / "data" / "demo"
# tools/demo_run.sh's three ingests: file, --ts, --run.
DEMO_INGESTS = [("1-explore.jsonl", 1700000000, "run-1"),
                ("2-correct.jsonl", 1700000600, "run-1"),
                ("3-next-run.jsonl", 1700003600, "run-2")]


class Cli:
    """The amem binary on one store directory."""

    def __init__(self, store_dir):
        self.store_dir = str(store_dir)

    def run(self, *args, check=True):
        env = dict(os.environ)
        env.pop("AMEM_QUERY_LOG", None)
        return subprocess.run([AMEM_BINARY, "--store", self.store_dir, *map(str, args)],
                              capture_output=True, text=True, check=check, env=env)

    def json(self, *args):
        """The --json document of a command that succeeds."""
        r = self.run(*args, "--json", check=False)
        assert r.returncode in (0, 1), r.stderr
        return json.loads(r.stdout)

    def error(self, *args):
        """The error text the command prints after 'amem <command>: '."""
        r = self.run(*args, check=False)
        assert r.returncode not in (0, 1), r.stdout
        line = r.stderr.strip().splitlines()[-1]
        return line.split(": ", 1)[1]


@pytest.fixture
def store(tmp_path):
    """A fresh store (dimension 4) for one test."""
    s = amem.Store(tmp_path / "store", create=True, dimension=4)
    yield s
    s.close()


@pytest.fixture
def amem_cli():
    return Cli


@pytest.fixture(scope="session")
def demo(tmp_path_factory):
    """The demo's store, built by the CLI, and `demo.amem`, a snapshot of it."""
    root = tmp_path_factory.mktemp("demo")
    cli = Cli(root / "store")
    cli.run("init")
    for name, ts, run in DEMO_INGESTS:
        cli.run("ingest", DEMO_DATA / name, "--ts", ts, "--run", run, "--scope", "amem")
    cli.run("export", root / "demo.amem")

    class Demo:
        pass

    d = Demo()
    d.cli = cli
    d.store_dir = root / "store"
    d.snapshot = root / "demo.amem"
    return d
