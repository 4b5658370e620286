"""CLI start-up (issue #16): a run imports only its own plug-in, a CPU run never numba.cuda,
and a cuda run starts the CUDA context while the inputs are read."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]


def _python(code: str, **env) -> str:
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                          timeout=600, env={**os.environ, **env})
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_a_cpu_run_imports_only_its_plugin_and_no_numba_cuda():
    out = _python("import contextlib, io, sys\n"
                  "from engine.cli import main\n"
                  "with contextlib.redirect_stdout(io.StringIO()):\n"
                  "    assert main(['kdiff', 'ACGT', 'ACGTT', '-k', '1', '--no-progress']) == 0\n"
                  "print(sorted(m for m in sys.modules if m.endswith('.cli') or "
                  "m.startswith('numba.cuda') or m == 'Bio'))\n")
    assert out.strip() == "['engine.cli', 'engine.kdiff.cli']"


def test_help_still_lists_every_command(capsys):
    from engine import registry
    from engine.cli import main

    with pytest.raises(SystemExit):
        main(["--help"])
    text = capsys.readouterr().out
    for fam in registry.families():
        assert fam.name in text
    assert "offtarget" in text
    with pytest.raises(SystemExit):
        main(["offtarget", "--help"])
    assert "usage: primerscope offtarget" in capsys.readouterr().out


def test_a_cuda_run_in_the_simulator_answers_as_the_cpu():
    code = ("import contextlib, io\n"
            "from engine.cli import main\n"
            "for backend in ('cuda', 'serial'):\n"
            "    buf = io.StringIO()\n"
            "    with contextlib.redirect_stdout(buf):\n"
            "        assert main(['kdiff', 'ACGTACGTTTGACCA', 'AGCAAGACGTAC', '-k', '2', '--strands',\n"
            "                     'forward', '--backend', backend, '--no-progress']) == 0\n"
            "    print(repr(buf.getvalue()))\n")
    cuda, serial = _python(code, NUMBA_ENABLE_CUDASIM="1").splitlines()
    assert cuda == serial and "ACGTACG" in cuda
