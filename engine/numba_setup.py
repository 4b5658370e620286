"""numba's compiler set-up, once per process per target, without importing scipy (issue #16).

Before it first compiles a kernel, or loads one from its disk cache, numba refreshes the
target's typing and target contexts; the first refresh imports numba's lowering modules.
One of them, np.arraymath (numba's, and numba-cuda's copy alike), imports scipy.linalg
only to learn whether ``np.correlate`` and ``np.convolve`` may call a BLAS ``dot``: 0.4 s
of a run's start-up on the GPU machine, where scipy is installed. No kernel of ours calls
those (and none on CUDA could call a BLAS), so :func:`ready` does the refresh with that
import failing at once; numba then inlines its own loop there. The import fails only on
the refreshing thread, during the refresh: ``np.dot`` in anyone's numba code, and other
threads, still find scipy.

The cuda target is readied by engine.gpu (before the driver is first asked for the
context, so that it overlaps the context's creation); the CPU one by
engine.slices.numba_threads, at the start of every serial and multicore job.
"""

from __future__ import annotations

import importlib.abc
import sys
import threading
from contextlib import contextmanager

_ready: set[str] = set()
_lock = threading.Lock()


def ready(target: str) -> None:
    """Refresh numba's ``"cpu"`` or ``"cuda"`` target once (thread-safe; later calls return
    at once)."""
    if target in _ready:
        return
    with _lock:
        if target in _ready:
            return
        if target == "cuda":
            from numba.cuda.descriptor import cuda_target as descriptor
        else:
            from numba.core.registry import cpu_target as descriptor
        with without_scipy_blas():
            descriptor.typing_context.refresh()
            descriptor.target_context.refresh()
        _ready.add(target)


class _NoScipyLinalg(importlib.abc.MetaPathFinder):
    """Fails ``import scipy.linalg`` (and so its cython_blas) on one thread only: the GUI's
    other threads import what they like meanwhile."""

    def __init__(self) -> None:
        self.thread = threading.get_ident()

    def find_spec(self, name, path=None, target=None):
        if name == "scipy.linalg" and threading.get_ident() == self.thread:
            raise ModuleNotFoundError("left out while numba sets up", name=name)
        return None


@contextmanager
def without_scipy_blas():
    """Inside, on this thread, ``import scipy.linalg.cython_blas`` fails at once (numba itself
    imports only scipy's light top package), unless scipy.linalg is imported already."""
    if "scipy.linalg" in sys.modules:
        yield
        return
    finder = _NoScipyLinalg()
    sys.meta_path.insert(0, finder)
    try:
        yield
    finally:
        sys.meta_path.remove(finder)
