"""primerscope's computation engine. It never imports Qt.

The app talks to it through the family APIs (``engine.kdiff`` ...) and the job
generator :func:`iter_solve`. Importing it changes nothing about the caller's process:
the programs (the command line, the app) call :func:`configure_process` for themselves.
"""

from __future__ import annotations

import os


def numba_cache_dir() -> str | None:
    """Where numba should keep compiled kernels, or None for its default.

    ``NUMBA_CACHE_DIR`` wins. Otherwise numba writes ``__pycache__`` beside each kernel
    module, which is right for a checkout but not for an installed, read-only package:
    there the cache goes to the user's cache directory (``$XDG_CACHE_HOME/primerscope/numba``).
    """
    if os.environ.get("NUMBA_CACHE_DIR"):
        return os.environ["NUMBA_CACHE_DIR"]
    if os.access(os.path.dirname(os.path.abspath(__file__)), os.W_OK):
        return None
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "primerscope", "numba")


def configure_process() -> None:
    """The process-wide settings primerscope's own programs want, set before numba loads.

    For the command line and the app only (engine.cli.main, app.launcher.main): a library
    caller's process is left as it is (numba then caches a read-only install in its own
    user-wide folder). Idempotent; explicit settings in the environment win.
    """
    # Idle OpenMP threads (numba's threading layer) should sleep, not spin: on a desktop the
    # GUI thread and other programs share the cores, and a spinning pool makes every
    # fork/join of the fine-grained forms cost milliseconds when cores are busy.
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    path = numba_cache_dir()
    if path is None or os.environ.get("NUMBA_CACHE_DIR") == path:
        return
    os.environ["NUMBA_CACHE_DIR"] = path  # read by numba when it is first imported
    import sys

    if "numba.core.config" in sys.modules:  # numba came first: tell it directly
        sys.modules["numba.core.config"].CACHE_DIR = path


def iter_solve(job, cancel=None):
    """Run any family's job as a generator of Progress that returns the family's result."""
    from engine import registry

    return registry.family_api(job.family).iter_solve(job, cancel)
