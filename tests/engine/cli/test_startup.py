"""CLI start-up (issue #16): a run imports only its own plug-in, a CPU run never numba.cuda,
and a cuda run starts the CUDA context while the inputs are read."""

from __future__ import annotations

import os
import select
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
                  "m.rpartition('.')[2].startswith('cli_') or "
                  "m.startswith('numba.cuda') or m == 'Bio'))\n")
    # kdiff's plug-in is in the primer layer (its annotation options): engine.primers.cli_kdiff
    assert out.strip() == ("['engine.cli', 'engine.primers.cli_kdiff', "
                           "'engine.primers.cli_options']")


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


DEMO = ROOT / "resources" / "demo"


def test_a_multicore_run_from_fasta_files_imports_no_gui_or_other_family(tmp_path):
    """``python -m engine.cli kdiff FASTA FASTA --backend multicore``: the modules it ends with.
    The other families' packages, the index command's store code path through the parser,
    the GUI, pandas and dask stay out (FASTA is read by Biopython's SimpleFastaParser, only
    when a file is read)."""
    lam = str(DEMO / "lambda_NC_001416.fa")
    code = ("import runpy, sys\n"
            "from engine import interrupts\n"
            "interrupts.leave = lambda status: status  # (its quick exit would skip the print)\n"
            f"sys.argv = ['primerscope', 'kdiff', {lam!r}, {lam!r}, '-k', '8', '--strands',\n"
            "            'forward', '--target-region', '1-120', '--background-region',\n"
            "            '3001-6000', '--backend', 'multicore', '--json', '--no-progress',\n"
            "            '-o', sys.argv[1]]\n"
            "try:\n"
            "    runpy.run_module('engine.cli', run_name='__main__', alter_sys=True)\n"
            "except SystemExit as exc:\n"
            "    assert exc.code == 0, exc.code\n"
            "print(sorted(sys.modules))\n")
    with_out = str(tmp_path / "out.json")
    proc = subprocess.run([sys.executable, "-c", code, with_out], cwd=ROOT, capture_output=True,
                          text=True, timeout=600, env=_env_without_simulator())
    assert proc.returncode == 0, proc.stderr
    modules = eval(proc.stdout.strip().splitlines()[-1])
    import json

    assert json.loads(Path(with_out).read_text())["candidates"], "the run found nothing"
    tops = {m.split(".")[0] for m in modules}
    assert not tops & {"PySide6", "shiboken6", "pyqtgraph", "app", "pandas", "dask", "distributed",
                       "benchmarks"}, sorted(tops)
    families = {m.split(".")[1] for m in modules if m.startswith("engine.") and m.count(".") >= 1}
    assert not families & {"kmismatch", "lcs", "edit", "nw", "cluster", "gpu", "cuda_start"}, families
    assert not [m for m in modules if m.startswith("numba.cuda")]
    assert "engine.kdiff.cuda" not in modules and "engine.cli.index" not in modules
    assert "Bio.SeqIO.FastaIO" in modules


def _env_without_simulator() -> dict:
    return {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}


#: A serial kdiff run through engine.cli.main, in the child of :func:`_with_stand_ins`.
_SERIAL_RUN = ("import contextlib, io, sys\n"
               "from engine.cli import main\n"
               "with contextlib.redirect_stdout(io.StringIO()) as out:\n"
               "    assert main(['kdiff', 'ACGTACGTTTGACCA', 'AGCAAGACGTAC', '-k', '2',\n"
               "                 '--backend', 'serial', '--no-progress']) == 0\n"
               "assert 'ACG' in out.getvalue()\n")


def _with_stand_ins(stand_ins: Path, code: str, cwd: Path = ROOT) -> str:
    """Run ``code`` in a child (no simulator) whose imports find the packages in
    ``stand_ins`` before the real ones; its standard output."""
    env = _env_without_simulator()
    env["PYTHONPATH"] = os.pathsep.join([str(stand_ins), str(ROOT)])
    proc = subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True,
                          timeout=600, env=env)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


_SIMULATED_RUN = """
import sys
import pytest
from engine import config, gpu, kdiff
from engine.jobs import drive
from engine.sequences import Record, encode

monkeypatch = pytest.MonkeyPatch()  # (this child's whole life; undone at its exit)
for name, value in {"KDIFF_CUDA_BITPARALLEL_THREADS_PER_BLOCK": 8,
                    "KDIFF_CUDA_BITPARALLEL_THREADS": 64, "KDIFF_CUDA_LANES_THREADS_PER_BLOCK": 4,
                    "KDIFF_CUDA_LANES_PER_THREAD": {32: 2, 64: 2},
                    "KDIFF_CUDA_LANES_MIN_CHUNK": 8, "KDIFF_CUDA_MIN_CHUNK": 4}.items():
    monkeypatch.setattr(config, name, value)

target = [Record("t", encode("ACGTTGCAAGCTTACG"))]
background = [Record("b", encode("TTACGTTGAAGCATTACGGA"))]


def run(flags):
    job = kdiff.make_job(target, background, 3, backend="cuda", variant="bitparallel",
                         flags=flags, strands="forward")
    phases = []
    res = drive(kdiff.iter_solve(job), lambda p: phases.append(p.phase))
    serial = kdiff.solve(target, background, 3, backend="serial", strands="forward")
    assert [(c.start, c.end) for c in res.candidates] == [(c.start, c.end) for c in serial.candidates]
    return phases[0]


first = run({"word32"})
second = run({"word32"})
print(first, second, gpu.loaded_kernels())
"""


def test_a_cuda_job_in_the_simulator_loads_only_the_kernels_it_launches():
    """No warm-up of every tier and stage: a word32 job whose candidates all fit 32 bits
    loads its match table and the 32-bit lanes kernel, at their first launch, and nothing
    else (before issue #16's change it launched every tier kernel on a tiny input). The first
    job still shows "compiling" first; the same settings again load nothing new."""
    out = _python(_SIMULATED_RUN, NUMBA_ENABLE_CUDASIM="1")
    first, second, loaded = out.strip().splitlines()[-1].split(" ", 2)
    assert first == "compiling" and second != "compiling"
    assert eval(loaded) == ["match_table32", "lanes32"]


def test_numbas_set_up_leaves_scipy_linalg_alone(tmp_path):
    """numba's np.arraymath imports scipy.linalg (0.4 s on the GPU machine) when a target is
    first set up; engine.numba_setup makes that import fail fast, for the CPU target (a serial
    run through the command line) and the CUDA one. A stand-in scipy shows what is imported."""
    fake = tmp_path / "scipy"
    (fake / "linalg").mkdir(parents=True)
    (fake / "__init__.py").write_text("__version__ = '1.14.0'\n")
    (fake / "linalg" / "__init__.py").write_text("raise AssertionError('scipy.linalg imported')\n")
    (fake / "linalg" / "cython_blas.py").write_text("")
    code = _SERIAL_RUN + ("from engine import numba_setup\n"
                          "numba_setup.ready('cuda')\n"
                          "print('scipy' in sys.modules, "
                          "[m for m in sys.modules if m.startswith('scipy.')])\n")
    out = _with_stand_ins(tmp_path, code)
    assert out.split("\n")[-2] == "False []"  # (nor scipy itself: numba_without_extras)


@pytest.mark.parametrize("numba_config", [False, True])
def test_the_command_line_imports_numba_without_its_extras(tmp_path, numba_config):
    """engine.numba_setup.numba_without_extras: in a command-line run numba's own imports of
    coverage, scipy and yaml fail at once (64 ms on the GPU machine); anyone else's still
    work, and yaml is imported for numba where a .numba_config.yaml is there for it to read.
    Stand-in packages note who imported them."""
    for name in ("coverage", "scipy", "yaml"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "__init__.py").write_text(
            "import sys\n__version__ = '9.0'\nsys.extras_imported.append(__name__)\n"
            "def safe_load(stream):\n    return None\n")
    work = tmp_path / "work"
    work.mkdir()
    if numba_config:
        (work / ".numba_config.yaml").write_text("")
    code = ("import sys\nsys.extras_imported = []\n" + _SERIAL_RUN
            + "assert 'numba' in sys.modules\n"
              "print(sys.extras_imported)\n"
              "import coverage, scipy\n"
              "print(sys.extras_imported)\n")
    during, after = _with_stand_ins(tmp_path, code, cwd=work).splitlines()[-2:]
    assert during == ("['yaml']" if numba_config else "[]")
    assert sorted(eval(after)) == sorted(eval(during) + ["coverage", "scipy"])


def test_the_early_cuda_context_thread_imports_nothing_and_starts_once():
    """engine.cuda_start asks the driver through ctypes on its own thread; it imports no numba
    (import locks: see its docstring), starts once, and under the simulator not at all. On a
    machine without a driver the thread just ends."""
    code = ("import sys\n"
            "from engine import cuda_start\n"
            "assert cuda_start.start() and cuda_start.start()\n"
            "thread = cuda_start._thread\n"
            "assert cuda_start.start() and cuda_start._thread is thread\n"
            "thread.join(120)\n"
            "print(thread.is_alive(), sorted(m for m in ('numpy', 'numba') if m in sys.modules))\n")
    assert _python(code, **{"NUMBA_ENABLE_CUDASIM": "0"}).split("\n")[-2] == "False []"
    code = ("from engine import cuda_start\n"
            "print(cuda_start.start(), cuda_start._thread)\n")
    assert _python(code, NUMBA_ENABLE_CUDASIM="1").strip() == "False None"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/fd")
def test_the_drivers_teardown_is_left_to_a_child_that_outlives_the_command():
    """engine.cuda_start.defer_teardown: the forked child keeps only the driver's files (here a
    pipe's write end stands in for /dev/nvidia*) and its wait pipe, so the caller reading the
    command's output is not held; it ends only after the command has ended, and then."""
    read_driver, write_driver = os.pipe()
    code = ("import os, sys, time\n"
            "from engine import cuda_start\n"
            f"cuda_start._target = lambda fd: '/dev/nvidia0' if fd == {write_driver} else ''\n"
            "pid = cuda_start.defer_teardown()\n"
            "time.sleep(0.3)\n"
            "print(len(os.listdir(f'/proc/{pid}/fd')), "
            f"os.readlink(f'/proc/{{pid}}/fd/{write_driver}').startswith('pipe:'), flush=True)\n"
            "os._exit(3)\n")
    try:
        proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                              text=True, timeout=120, pass_fds=(write_driver,))
        os.close(write_driver)
        assert proc.returncode == 3, proc.stderr
        assert proc.stdout.split() == ["2", "True"]  # the driver's file and the wait pipe only
        ready, _, _ = select.select([read_driver], [], [], 30)
        assert ready and os.read(read_driver, 1) == b""  # the child has ended too
    finally:
        os.close(read_driver)
    nothing = "from engine import cuda_start\nprint(cuda_start.defer_teardown())\n"
    assert _python(nothing).strip() == "None"  # no driver files: no child


def test_cached_cuda_kernels_load_without_readying_the_compiler():
    """engine.numba_setup.load_cuda_kernels_lightly: numba's CUDA cache load no longer refreshes
    the target (0.15 s of imports on the GPU machine); a load that finds nothing readies it
    (without scipy) before numba compiles. A stand-in cache and target context show it."""
    code = ("from engine import numba_setup\n"
            "from numba.cuda.dispatcher import CUDACache\n"
            "calls = []\n"
            "numba_setup.ready = lambda target: calls.append(('ready', target))\n"
            "assert numba_setup.load_cuda_kernels_lightly()\n"
            "assert numba_setup.load_cuda_kernels_lightly()  # once: not wrapped twice\n"
            "class Context:\n"
            "    def refresh(self):\n"
            "        calls.append('refresh')\n"
            "    def codegen(self):\n"
            "        return 'codegen'\n"
            "cache = CUDACache.__new__(CUDACache)\n"
            "cache._load_overload = lambda sig, context: calls.append(context.codegen()) or found\n"
            "found = 'kernel'\n"
            "print(cache.load_overload('sig', Context()), calls)\n"
            "calls.clear(); found = None\n"
            "print(cache.load_overload('sig', Context()), calls)\n")
    out = _python(code, NUMBA_ENABLE_CUDASIM="0").strip().splitlines()
    assert out == ["kernel ['codegen']", "None ['codegen', ('ready', 'cuda')]"]


def test_the_collector_pauses_until_the_job_and_main_puts_it_back(monkeypatch, capsys):
    """engine.cli._StartUpGC: no cyclic collection while the command starts (imports, inputs);
    the job runs with it on and start-up's objects frozen; main leaves it as it found it."""
    import gc

    from engine import interrupts
    from engine.primers import cli_kdiff as kdiff_cli
    from engine.cli import main

    seen = {}
    load_input, run_job = kdiff_cli.load_input, interrupts.run_job

    def loading(args, role):
        seen.setdefault("loading", gc.isenabled())
        return load_input(args, role)

    def job(work, cancel):
        seen["job"] = (gc.isenabled(), gc.get_freeze_count() > 0)
        return run_job(work, cancel)

    monkeypatch.setattr(kdiff_cli, "load_input", loading)
    monkeypatch.setattr(interrupts, "run_job", job)
    assert gc.isenabled()
    assert main(["kdiff", "ACGTACGT", "ACGAAC", "-k", "2", "--backend", "serial",
                 "--no-progress"]) == 0
    assert seen == {"loading": False, "job": (True, True)}
    assert gc.isenabled() and gc.get_freeze_count() == 0
    gc.disable()
    try:
        seen.clear()
        assert main(["kdiff", "ACGTACGT", "ACGAAC", "-k", "2", "--backend", "serial",
                     "--no-progress"]) == 0
        assert seen == {"loading": False, "job": (False, False)}  # a caller's choice, kept
        assert not gc.isenabled() and gc.get_freeze_count() == 0
    finally:
        gc.enable()
    assert "ACG" in capsys.readouterr().out
