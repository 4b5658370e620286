"""``import engine`` is cheap and leaves the process alone; solve() shows progress and runs
on a caller's distributed.Client (issue #31, item 4)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import engine

ROOT = Path(__file__).resolve().parents[2]

PROBE = """
import json, os, sys, threading
before_env, before_threads = dict(os.environ), sorted(t.name for t in threading.enumerate())
import engine
loaded = sorted(m for m in sys.modules if m.split(".")[0] in ("numpy", "numba", "Bio", "pandas"))
names = [engine.kdiff, engine.kmismatch, engine.lcs, engine.edit, engine.nw, engine.pairs,
         engine.pcr, engine.panel, engine.offtarget, engine.index, engine.load,
         engine.__version__]
import numba
after_env = dict(os.environ)
print(json.dumps({
    "loaded_by_import": loaded,
    "changed": sorted(k for k in set(before_env) | set(after_env)
                      if before_env.get(k) != after_env.get(k)),
    "threads": [before_threads, sorted(t.name for t in threading.enumerate())],
    "layer_loaded": numba.config.THREADING_LAYER != "default" or any(
        m.startswith(("numba.np.ufunc.omppool", "numba.np.ufunc.tbbpool",
                      "numba.np.ufunc.workqueue")) for m in sys.modules),
    "all": sorted(engine.__all__),
}))
"""


def test_import_and_every_export_leave_the_process_as_it_was():
    environ = {k: v for k, v in os.environ.items()
               if k not in ("OMP_WAIT_POLICY", "NUMBA_CACHE_DIR", "NUMBA_ENABLE_CUDASIM")}
    environ["PYTHONPATH"] = str(ROOT) + os.pathsep + environ.get("PYTHONPATH", "")
    done = subprocess.run([sys.executable, "-c", PROBE], cwd=ROOT, env=environ,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert seen["loaded_by_import"] == [], "import engine loaded more than the standard library"
    assert seen["changed"] == []
    assert seen["threads"][0] == seen["threads"][1]
    assert not seen["layer_loaded"]
    assert set(seen["all"]) >= {"kdiff", "kmismatch", "lcs", "edit", "nw", "pairs", "pcr",
                                "panel", "offtarget", "index", "load", "__version__"}


def test_exports_are_the_modules_and_functions():
    from engine.primers import offtarget, pairs, panel, pcr
    from engine.sequences import load

    assert (engine.pairs, engine.pcr, engine.panel, engine.offtarget) == (pairs, pcr, panel,
                                                                          offtarget)
    assert engine.load is load
    assert isinstance(engine.__version__, str) and engine.__version__
    with pytest.raises(AttributeError):
        engine.no_such_name  # noqa: B018


def test_progress_shows_a_bar_and_gives_the_same_answer(capsys):
    text = engine.load(ROOT / "resources" / "demo" / "lambda_NC_001416.fa")
    quiet = engine.kmismatch.solve(["GGCGGCGCTTCGGTTTTTCA"], text, 2, backend="serial")
    capsys.readouterr()
    shown = engine.kmismatch.solve(["GGCGGCGCTTCGGTTTTTCA"], text, 2, backend="serial",
                                   progress=True)
    err = capsys.readouterr().err
    assert "kmismatch" in err and "100%" in err, err
    assert shown.to_records() == quiet.to_records()
    with pytest.raises(ValueError, match="progress must be True or False"):
        engine.kmismatch.solve(["ACGT"], "ACGTACGT", 0, progress="yes")


def test_index_builds_a_store_any_background_may_be(tmp_path):
    fasta = tmp_path / "g.fa"
    fasta.write_text(">chr1\nACGTACGTTTGACCA\n")
    path = engine.index(fasta)
    assert path == str(tmp_path / "g.psg")
    assert [r.text for r in engine.load(path)] == ["ACGTACGTTTGACCA"]
    with pytest.raises(ValueError, match="ends with .psg"):
        engine.index(fasta, tmp_path / "g.store")


def test_a_backend_that_is_neither_a_name_nor_a_client_is_refused():
    with pytest.raises(TypeError, match="distributed.Client"):
        engine.kmismatch.solve(["ACGT"], "ACGTACGT", 0, backend=object())


def test_backend_may_be_a_distributed_client():
    """stumpy's shape: bring your own client; the jobs' chunks run there, the client stays
    open, and the answer is the serial one."""
    distributed = pytest.importorskip("distributed")
    text = engine.load(ROOT / "resources" / "demo" / "lambda_NC_001416.fa")
    pattern = ["GGCGGCGCTTCGGTTTTTCA"]
    want = engine.kmismatch.solve(pattern, text, 2, backend="serial").to_records()
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        got = engine.kmismatch.solve(pattern, text, 2, backend=client)
        assert got.info.backend == "dask"
        assert got.to_records() == want
        assert client.status == "running"
