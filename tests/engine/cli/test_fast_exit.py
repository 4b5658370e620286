"""engine.interrupts.leave: after a run that made a CUDA context, or ran a job, the command
line ends without the interpreter's teardown, keeping its status and everything it printed."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]

_PROGRAM = """
import atexit, sys, types
from engine import interrupts
sys.modules["engine.gpu"] = types.SimpleNamespace(CONTEXT_MADE={made})
if {installed}:
    interrupts.install()
atexit.register(lambda: print("teardown ran"))
print("output", end="")
sys.exit(interrupts.leave(3))
"""


def _run(made: bool, installed: bool):
    code = _PROGRAM.format(made=made, installed=installed)
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                          timeout=60)


def test_a_gpu_run_leaves_at_once_with_its_status_and_output():
    proc = _run(True, True)
    assert proc.returncode == 3
    assert proc.stdout == "output"  # flushed; the teardown (atexit) never ran


def test_other_runs_exit_as_usual():
    for made, installed in ((False, True), (True, False)):
        proc = _run(made, installed)
        assert proc.returncode == 3
        assert proc.stdout == "outputteardown ran\n", (made, installed)


_JOB_PROGRAM = """
import atexit, sys
from engine import interrupts
from engine.jobs import CancelToken
interrupts.install()
atexit.register(lambda: print("teardown ran"))
if {child}:
    import multiprocessing
    child = multiprocessing.get_context("spawn").Process(target=__import__("time").sleep,
                                                          args=(2,))
    child.start()
print(interrupts.run_job(lambda: "output", CancelToken()), end="")
sys.exit(interrupts.leave(0))
"""


def test_a_run_that_ran_a_job_leaves_at_once_unless_a_child_process_is_left():
    """A CPU run's exit (numba's threads, the modules) is skipped too; not while a child
    process of multiprocessing lives (its exit handler ends it)."""
    for child, out in ((False, "output"), (True, "outputteardown ran\n")):
        proc = subprocess.run([sys.executable, "-c", _JOB_PROGRAM.format(child=child)], cwd=ROOT,
                              capture_output=True, text=True, timeout=60)
        assert (proc.returncode, proc.stdout) == (0, out), proc.stderr


def test_a_profiled_run_exits_as_usual(tmp_path):
    """cProfile writes its data at exit: a profiled GPU run keeps the normal exit."""
    script = tmp_path / "prog.py"
    script.write_text(_PROGRAM.format(made=True, installed=True))
    out = tmp_path / "prof.out"
    proc = subprocess.run([sys.executable, "-m", "cProfile", "-o", str(out), str(script)], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)
    assert out.exists()  # (cProfile ends with 0 whatever the program exits with)
    assert proc.stdout == "outputteardown ran\n"


def test_an_error_naming_a_path_with_a_line_break_is_still_one_line(capsys):
    """A path holding NEL or a newline (the fuzz test drew one) is written escaped."""
    from engine import cli

    for path in ("\x85", "a\nb", "x\u2028y"):
        assert cli.main(["index", path]) == 2
        err = capsys.readouterr().err
        assert len(err.splitlines()) == 1 and err.startswith("primerscope: error: "), err
