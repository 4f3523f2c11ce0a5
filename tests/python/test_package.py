"""The package around the module: its stubs, the example harness, and vectors
without NumPy."""
import os
import subprocess
import sys

import amem
from conftest import SOURCE_DIR

ENV = dict(os.environ)


def test_stubs_are_generated_from_the_module():
    """python/amem/_amem.pyi is what python/gen_stubs.py writes now (the query
    table's parameters and help): regenerate it when the table changes."""
    out = subprocess.run([sys.executable, str(SOURCE_DIR / "python" / "gen_stubs.py")],
                         capture_output=True, text=True, check=True, env=ENV).stdout
    assert out == (SOURCE_DIR / "python" / "amem" / "_amem.pyi").read_text()
    for method in amem.QUERY_METHODS:
        assert "    def %s(" % method in out


def test_vectors_are_memoryviews_without_numpy(tmp_path):
    code = """
import sys
sys.modules["numpy"] = None  # NumPy cannot be imported
import amem
s = amem.Store(sys.argv[1], create=True, dimension=3)
s.put_node("v", vector=[1.0, 2.0, 3.0])
v = s.view().vector("v")
assert isinstance(v, memoryview), type(v)
assert v.format == "f" and v.readonly and v.tolist() == [1.0, 2.0, 3.0]
print("ok")
"""
    r = subprocess.run([sys.executable, "-c", code, str(tmp_path / "s")], capture_output=True,
                       text=True, env=ENV)
    assert r.stdout.strip() == "ok", r.stderr


def test_harness_example_runs_twice(tmp_path):
    script = str(SOURCE_DIR / "examples" / "harness.py")
    work = str(tmp_path / "work")
    first = subprocess.run([sys.executable, script, work], capture_output=True, text=True,
                           env=ENV)
    assert first.returncode == 0, first.stderr
    assert first.stdout.count("run 1 task-") == 3
    assert os.path.exists(os.path.join(work, "task-3.amem"))
    second = subprocess.run([sys.executable, script, work], capture_output=True, text=True,
                            env=ENV)
    assert second.returncode == 0, second.stderr
    assert "run 2: re-asked 6 questions of run 1" in second.stdout
    assert "+ correction:lmdb-writers" in second.stdout
