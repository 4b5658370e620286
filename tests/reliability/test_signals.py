"""Defect 4 of issue #14: Ctrl-C or SIGTERM at any moment (imports, loading, compiling,
computing, writing) ends with exit 130 / 143, one line, no output file and no temporary."""

from __future__ import annotations

import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from tests.reliability.helpers import ROOT, command, env, leftovers, run

MESSAGE = "primerscope: interrupted; no output written"


@pytest.fixture(scope="module")
def long_pair(tmp_path_factory):
    """Two single-line 200 kb records: an nw job of minutes (and a single long line, the
    case where Ctrl-C used to be lost)."""
    folder = tmp_path_factory.mktemp("long")
    rng = np.random.default_rng(14)
    paths = []
    for name in ("a", "b"):
        seq = np.frombuffer(b"ACGT", np.uint8)[rng.integers(0, 4, 200_000)].tobytes().decode()
        path = folder / f"{name}.fa"
        path.write_text(f">{name}\n{seq}\n")
        paths.append(path)
    return paths


def _interrupt(args, delay, sig, cwd, extra_env=None):
    proc = subprocess.Popen(command(*args), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, cwd=cwd, env=env(**(extra_env or {})))
    time.sleep(delay)
    sent = time.perf_counter()
    proc.send_signal(sig)
    try:
        out, err = proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        pytest.fail(f"still running 30 s after {sig.name}; stderr: {err[-1000:]}")
    return proc.returncode, err, time.perf_counter() - sent


@pytest.mark.alone  # the phases are found by timing: not beside other CPU-heavy tests
@pytest.mark.parametrize("sig,status", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
@pytest.mark.parametrize("delay", [0.2, 0.6, 1.5, 4.0])  # imports, loading, compile, compute
def test_signal_at_any_moment(tmp_path, long_pair, sig, status, delay):
    out = tmp_path / "out.txt"
    rc, err, took = _interrupt(["nw", *long_pair, "-o", out], delay, sig, ROOT)
    assert (rc, err) == (status, MESSAGE + "\n")
    assert took < 10
    assert not out.exists() and leftovers(tmp_path) == []


@pytest.mark.alone  # timed like the test above: under a loaded CI it once ended with -2 (see the session 7 note)
def test_a_second_ctrl_c_does_not_wait(tmp_path, long_pair):
    proc = subprocess.Popen(command("nw", *long_pair, "-o", tmp_path / "o.txt"),
                            stderr=subprocess.PIPE, text=True, cwd=ROOT, env=env())
    time.sleep(3.0)
    proc.send_signal(signal.SIGINT)
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=10) == 130
    assert proc.stderr.read().strip().splitlines() == [MESSAGE]


WRITE = """
import os, signal, sys, threading
from engine import interrupts, output
interrupts.install()
path = sys.argv[1]
threading.Timer(0.02, os.kill, (os.getpid(), signal.SIGINT)).start()
text = "ACGT," * 60_000_000  # 300 MB: the signal lands while it is written
sys.exit(interrupts.guarded(lambda: output.write_texts({path: text, path + ".bed": "x"},
                                                       interrupts.settle) or 0))
"""


def test_signal_during_the_final_write_leaves_nothing(tmp_path):
    out = tmp_path / "out.csv"
    done = subprocess.run([sys.executable, "-c", WRITE, str(out)], capture_output=True,
                          text=True, cwd=ROOT, env=env(), timeout=120)
    assert (done.returncode, done.stderr) == (130, MESSAGE + "\n")
    assert list(tmp_path.iterdir()) == []


def test_a_run_after_an_interrupted_compile_works(tmp_path):
    """Interrupted while numba compiled (fresh cache), the next run neither fails with
    "no compiled object yet" nor leaves anything broken."""
    cache = {"NUMBA_CACHE_DIR": tmp_path / "numba"}
    args = ["kdiff", "ACGTACGTTTGA", "ACGTTTGGA", "-k", "2", "--variant", "conventional"]
    rc, err, _ = _interrupt(args, 1.0, signal.SIGINT, ROOT, cache)
    assert (rc, err) == (130, MESSAGE + "\n")
    again = run(*args, extra_env=cache)
    assert again.returncode == 0 and again.stderr == "", again.stderr
    assert again.stdout.startswith("target_id")


def test_a_settled_run_ignores_signals_through_the_interpreters_exit():
    """Once settled, SIGINT and SIGTERM are ignored by the operating system, not only by the
    Python handler (which the interpreter's finalization resets to the default action: a
    Ctrl-C arriving then used to kill the exiting process, status -2)."""
    code = ("import os, signal, sys\n"
            "from engine import interrupts\n"
            "interrupts.install()\n"
            "status = interrupts.guarded(lambda: 130)\n"
            "assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN\n"
            "assert signal.getsignal(signal.SIGTERM) is signal.SIG_IGN\n"
            "import atexit\n"
            "atexit.register(lambda: os.kill(os.getpid(), signal.SIGINT))  # during the exit\n"
            "sys.exit(status)\n")
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env(), capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 130, (proc.returncode, proc.stderr)
