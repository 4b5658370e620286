"""Defect 3 of issue #14: a second identical run compiles nothing and the cache stops growing.

Kernels made inside factory functions captured other kernels; numba keys a closure's cache
entry by the pickle of what it captured, and a dispatcher pickles with a fresh uuid in every
process, so every run compiled again and added files.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.reliability.helpers import ROOT, env, run

# One tiny run per family and per kind of kernel module (kdiff's three variants each had
# factory-made drivers); serial keeps the compiles short.
RUNS = [
    ("kdiff", "ACGTACGTTT", "ACGTTTGGA", "-k", "2"),
    ("kdiff", "ACGTACGTTT", "ACGTTTGGA", "-k", "2", "--variant", "conventional",
     "--backend", "serial"),
    ("kdiff", "ACGTACGTTT", "ACGTTTGGA", "-k", "2", "--variant", "alternative",
     "--backend", "serial"),
    ("lcs", "ACGTACGTTT", "ACGTTTGGA", "--backend", "serial"),
    ("nw", "ACGTACGTTT", "ACGTTTGGA", "--backend", "serial"),
    ("edit", "ACGTACGTTT", "ACGTTTGGA", "--backend", "serial"),
    ("kmismatch", "ACGTAC", "ACGTTTGGAACGTAC", "-k", "1", "--backend", "serial"),
]


def _cache_files(folder):
    return sorted(p.relative_to(folder) for p in folder.rglob("*") if p.is_file())


def test_second_run_loads_every_kernel_and_saves_none(tmp_path):
    cache = tmp_path / "numba"
    for args in RUNS:
        first = run(*args, extra_env={"NUMBA_CACHE_DIR": cache}, timeout=600)
        assert first.returncode == 0, first.stderr
    after_first = _cache_files(cache)
    assert after_first, "nothing was cached"
    for args in RUNS:
        again = run(*args, extra_env={"NUMBA_CACHE_DIR": cache, "NUMBA_DEBUG_CACHE": "1"})
        assert again.returncode == 0, again.stderr
        log = again.stdout + again.stderr
        assert "data saved" not in log, (args, [ln for ln in log.splitlines() if "saved" in ln])
        assert "data loaded" in log, args
    assert _cache_files(cache) == after_first


# The package folder (engine/) seen as read-only, as in a system-wide install.
_READ_ONLY_ENGINE = ("import os\n"
                     "real = os.access\n"
                     "os.access = lambda p, m, *a, **k: (\n"
                     "    False if os.path.basename(p.rstrip('/')) == 'engine' else real(p, m, *a, **k))\n")


@pytest.mark.parametrize("program", ["engine.cli", "app.launcher"])
def test_cache_goes_to_the_user_cache_dir_when_the_package_is_read_only(tmp_path, program):
    """The command line and the app (not ``import engine``) point numba at the user's cache:
    a run there saves its kernels under $XDG_CACHE_HOME/primerscope/numba."""
    code = (_READ_ONLY_ENGINE
            + f"import sys; from {program} import main\n"
            "sys.exit(main(['lcs', 'ACGTAC', 'ACGGTAC', '--backend', 'serial', '-o', os.devnull]))\n")
    environ = env(XDG_CACHE_HOME=tmp_path)
    environ.pop("NUMBA_CACHE_DIR", None)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=ROOT, env=environ, timeout=600)
    assert done.returncode == 0, done.stderr
    saved = list((tmp_path / "primerscope" / "numba").rglob("*.nbi"))
    assert saved, "no kernel index saved in the user's cache"


def test_importing_engine_leaves_numba_cache_dir_alone_when_read_only(tmp_path):
    code = (_READ_ONLY_ENGINE
            + "import engine, engine.lcs, numba\n"
            "print(repr(os.environ.get('NUMBA_CACHE_DIR')), repr(numba.config.CACHE_DIR))\n")
    environ = env(XDG_CACHE_HOME=tmp_path)
    environ.pop("NUMBA_CACHE_DIR", None)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=ROOT, env=environ, timeout=120)
    assert done.stdout.split() == ["None", "''"], done.stderr


@pytest.mark.parametrize("given", [True, False])
def test_numba_cache_dir_is_honoured_and_a_writable_package_keeps_numba_default(tmp_path, given):
    environ = env(NUMBA_CACHE_DIR=tmp_path) if given else env()
    if not given:
        environ.pop("NUMBA_CACHE_DIR", None)
    code = "import engine, numba; print(repr(numba.config.CACHE_DIR))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=ROOT, env=environ, timeout=120)
    assert done.stdout.strip() == (repr(str(tmp_path)) if given else "''"), done.stderr
