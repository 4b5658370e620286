"""Ctrl-C, SIGTERM and closed pipes in command-line runs: exit 130 / 143, one line, no
output file; a reader that stops early (``| head``) ends the run quietly (141, as SIGPIPE).

A signal ends a run cleanly at any moment:

- while Python code runs on the main thread (imports, loading, building or writing
  the output) the handler raises :class:`Interrupted`. Output files are written
  atomically (:mod:`engine.output`), so an interrupted write leaves neither the file
  nor its temporary;
- while a job runs (on a worker thread, :func:`run_job`: a Python handler runs only
  on the main thread and between bytecodes, never inside a kernel call) it cancels the
  job's :class:`~engine.jobs.CancelToken`, which the kernels poll. If the job has not
  stopped ``GRACE_S`` later (a compile in progress, a kernel that does not poll), or on
  a second signal, the process ends at once: nothing has been written yet;
- once finished outputs are being renamed into place, or an error is being reported
  (:func:`settle`), signals are ignored: the run is complete and exits 0, or exits
  with its error.

Only the command-line entry points call :func:`install` (never the GUI, never a test
process); :func:`run_job` works without it (a KeyboardInterrupt then cancels the job).
This module stays light: the launcher installs the handlers before the heavy imports.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import time

#: Seconds a cancelled job gets to stop before the process ends without it.
GRACE_S = 1.0
MESSAGE = "primerscope: interrupted; no output written"


class Interrupted(BaseException):
    """SIGINT or SIGTERM arrived; ``status`` is the exit status, 128 + the signal number.
    A BaseException, so that no ``except Exception`` on the way swallows it."""

    def __init__(self, signum: int, result=None) -> None:
        super().__init__(signum)
        self.signum = signum
        self.result = result   # what the cancelled job returned (run_job), if anything

    @property
    def status(self) -> int:
        return 128 + self.signum


class _State:
    def __init__(self) -> None:
        self.cancel = None        # the running job's CancelToken
        self.signum = None        # the signal that cancelled it
        self.since = 0.0
        self.settled = False      # the outcome is settled: too late to interrupt
        self.ran = False          # a job ran to its end (run_job returned): leave() may be quick


_state = _State()


def install() -> None:
    """Handle SIGINT and SIGTERM from here on (call from the main thread)."""
    global _installed
    _installed = True
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, _handler)


_installed = False


def installed() -> bool:
    """:func:`install` was called: this is a command-line process (not the GUI, not a test)."""
    return _installed


def leave(status: int) -> int:
    """A command-line entry point's last step, with the run's exit ``status``.

    After a job ran (:func:`run_job`) or a CUDA context was made, and no Dask cluster or
    other child process was started, the process ends here without the interpreter's
    teardown: the driver's context teardown and freeing some 1,100 modules took ~0.7 s of
    a 2.3 s W2 run on CUDA (issue 16); numba's threads and the modules ~0.1 s of a
    multicore one on the 2-core machine; the operating system releases all of it anyway.
    Nothing is lost: every output file is written and closed (renamed into place) before
    the command returns, and the standard streams are flushed here. After a CUDA run the
    driver's own teardown of the context is left to a child that outlives this process by a
    moment (engine.cuda_start.defer_teardown). Only processes that
    called :func:`install` (the command line, never a test or the GUI) and run under no
    profiler or tracer (cProfile, coverage: they write their data at exit) end so;
    otherwise ``status`` is returned for ``sys.exit``."""
    cuda_context = getattr(sys.modules.get("engine.gpu"), "CONTEXT_MADE", False)
    if (_installed and (_state.ran or cuda_context)
            and "distributed" not in sys.modules and not _children() and not _observed()):
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        if cuda_context:
            from engine import cuda_start

            cuda_start.defer_teardown()  # the driver's ~0.1 s after the caller has the prompt
        os._exit(status)
    return status


def fork_child(work) -> int | None:
    """Fork a child of the command line's process that runs ``work()`` and ends (``os._exit``
    whatever happens: no teardown, no atexit, none of this process's buffers flushed); its
    pid, or None when the fork failed. The process has threads by then (numpy's, the CUDA
    context's); the child runs only ``work``, which touches none of their state, so Python's
    warning about forking them is not shown. (engine.cli.preload, engine.cuda_start)"""
    import warnings

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            pid = os.fork()
    except OSError:
        return None
    if pid == 0:
        try:
            work()
        finally:
            os._exit(0)
    return pid


def _children() -> bool:
    """A child process started through multiprocessing is still there (its module's exit
    handler would end it)."""
    mp = sys.modules.get("multiprocessing")
    return mp is not None and bool(mp.active_children())


def _observed() -> bool:
    """A profiler or tracer is attached (sys.setprofile/settrace, or sys.monitoring's tools
    as cProfile uses them from Python 3.12)."""
    if sys.getprofile() is not None or sys.gettrace() is not None:
        return True
    monitoring = getattr(sys, "monitoring", None)
    return monitoring is not None and any(
        monitoring.get_tool(tool) is not None
        for tool in (monitoring.PROFILER_ID, monitoring.DEBUGGER_ID, monitoring.COVERAGE_ID))


def _handler(signum, frame) -> None:
    if _state.settled:
        return
    if _state.cancel is not None:
        if _state.signum is not None:
            exit_now(signum)  # a second signal: stop waiting for the job
        _state.signum, _state.since = signum, time.monotonic()
        _state.cancel.cancel()
        return
    raise Interrupted(signum)


def exit_now(signum: int) -> None:
    """End the process at once with the one line (used when waiting makes no sense)."""
    text = MESSAGE + "\n"
    with contextlib.suppress(Exception):
        if sys.stderr is not None and sys.stderr.isatty():
            text = "\r" + " " * 72 + "\r" + text  # over the progress bar
        os.write(2, text.encode())
    os._exit(128 + signum)


def run_job(work, cancel):
    """Run ``work()`` (a whole job: compile, slices) on a worker thread and return what it
    returns; a signal meanwhile cancels ``cancel`` and raises :class:`Interrupted` here
    once the job has stopped. What ``work`` raises is raised here."""
    box: dict = {}

    def target():
        try:
            box["result"] = work()
        except BaseException as exc:  # handed to the main thread
            box["error"] = exc

    worker = threading.Thread(target=target, name="primerscope-job", daemon=True)
    _state.cancel, _state.signum, _state.settled = cancel, None, False
    try:
        worker.start()
        while worker.is_alive():
            worker.join(0.05)
            if _state.signum is not None and time.monotonic() - _state.since > GRACE_S:
                exit_now(_state.signum)
    except KeyboardInterrupt:  # no handler installed (a test process)
        cancel.cancel()
        raise
    finally:
        signum, _state.cancel, _state.signum = _state.signum, None, None
    if signum is not None:
        raise Interrupted(signum, box.get("result"))
    if "error" in box:
        raise box["error"]
    _state.ran = True
    return box["result"]


def settle() -> None:
    """The run's outcome is settled (its outputs are being renamed into place, or its
    error reported): from here on a signal is ignored. In a process that installed the
    handlers the signals are then ignored by the operating system too: the interpreter's
    finalization puts a Python handler back to the default action (a late Ctrl-C would
    then kill the exiting process: status -2), but leaves SIG_IGN alone."""
    _state.settled = True
    if _installed and threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, signal.SIG_IGN)


def guarded(main) -> int:
    """Run a command's ``main()`` (its imports included) and return its exit status: an
    interrupt that escapes it becomes the one line and 128 + the signal; a standard
    output closed by its reader, a quiet 141. Flushes standard output while that can
    still be reported."""
    try:
        status = main()
        if sys.stdout is not None:
            sys.stdout.flush()
        settle()  # done: a signal from here on (the interpreter's exit) changes nothing
        return status
    except (Interrupted, KeyboardInterrupt) as exc:
        settle()
        with contextlib.suppress(Exception):
            print(MESSAGE, file=sys.stderr)
        return exc.status if isinstance(exc, Interrupted) else 130
    except BrokenPipeError:
        settle()
        quiet_stdout()
        return 141


def quiet_stdout() -> None:
    """Point a broken standard output at /dev/null, so that Python's flush at exit does
    not print "Exception ignored ... BrokenPipeError" (the recipe of Python's docs)."""
    with contextlib.suppress(OSError, ValueError, AttributeError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
