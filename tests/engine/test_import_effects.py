"""``import engine`` (and a family's API) leaves the caller's process as it was (issue #29):
no environment variable set or rewritten, no thread started, no threading layer loaded.
The command line and the app set what they want for themselves (engine.configure_process)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

PROBE = """
import json, os, sys, threading
before_env, before_threads = dict(os.environ), sorted(t.name for t in threading.enumerate())
import {modules}
import numba
after_env = dict(os.environ)
print(json.dumps({{
    "changed": sorted(k for k in set(before_env) | set(after_env)
                      if before_env.get(k) != after_env.get(k)),
    "threads": [before_threads, sorted(t.name for t in threading.enumerate())],
    "layer_loaded": numba.config.THREADING_LAYER != "default" or any(
        m.startswith("numba.np.ufunc.omppool") or m.startswith("numba.np.ufunc.tbbpool")
        or m.startswith("numba.np.ufunc.workqueue") for m in sys.modules),
    "cache_dir": numba.config.CACHE_DIR,
}}))
"""


def _probe(modules: str, environ: dict) -> dict:
    done = subprocess.run([sys.executable, "-c", PROBE.format(modules=modules)], cwd=ROOT,
                          env=environ, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def _bare_environ() -> dict:
    environ = {k: v for k, v in os.environ.items()
               if k not in ("OMP_WAIT_POLICY", "NUMBA_CACHE_DIR", "NUMBA_ENABLE_CUDASIM")}
    environ["PYTHONPATH"] = str(ROOT) + os.pathsep + environ.get("PYTHONPATH", "")
    return environ


@pytest.mark.parametrize("modules", ["engine", "engine, engine.registry, engine.kdiff"])
def test_import_changes_no_environment_and_starts_no_threads(modules):
    seen = _probe(modules, _bare_environ())
    assert seen["changed"] == [], seen
    before, after = seen["threads"]
    assert after == before
    assert not seen["layer_loaded"], "importing the engine loaded numba's threading layer"
    assert seen["cache_dir"] == ""


def test_configure_process_sets_what_the_programs_want():
    """What the command line and the app call first; an explicit setting still wins."""
    code = ("import os, engine; engine.configure_process();"
            "print(os.environ.get('OMP_WAIT_POLICY'))")
    environ = _bare_environ()
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=environ,
                         capture_output=True, text=True, check=True).stdout
    assert out.strip() == "PASSIVE"
    environ["OMP_WAIT_POLICY"] = "ACTIVE"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=environ,
                         capture_output=True, text=True, check=True).stdout
    assert out.strip() == "ACTIVE"
