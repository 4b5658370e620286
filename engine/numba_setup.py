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

The CPU target is readied by engine.slices.numba_threads, at the start of every serial and
multicore job. For the cuda target, engine.gpu calls :func:`load_cuda_kernels_lightly`:
numba refreshes a target before every load from its disk cache as well ("to ensure it is
initialized"), which for CUDA imports some 60 typing and lowering modules (fp16, bf16,
libdevice, np.arraymath...): 0.15 s of a W2 run's start-up on the H100 machine (issue #16).
A cached kernel needs none of them (its cubin is in the cache; launching it types the
arguments with ``typeof`` alone), so loads skip the refresh; a kernel that is not in the
cache is compiled after the target is readied here (without scipy), as before.
"""

from __future__ import annotations

import contextlib
import importlib.abc
import os
import sys
import threading

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


def load_cuda_kernels_lightly() -> bool:
    """Make numba-cuda's disk-cache loads skip the cuda target's refresh, once per process
    (thread-safe). A load that finds nothing readies the target (:func:`ready`) before numba
    compiles. False where numba's cache class is not the one this was written against
    (numba 0.68's numba.cuda, numba-cuda 0.30): then the target is readied at once."""
    try:
        from numba.cuda.dispatcher import CUDACache
    except ImportError:
        CUDACache = None
    if not hasattr(CUDACache, "load_overload") or not hasattr(CUDACache, "_load_overload"):
        ready("cuda")
        return False
    with _lock:
        load = CUDACache.load_overload
        if not getattr(load, "_without_refresh", False):
            def load_overload(self, sig, target_context):
                kernel = load(self, sig, _WithoutRefresh(target_context))
                if kernel is None:  # numba compiles it next
                    ready("cuda")
                return kernel

            load_overload._without_refresh = True
            CUDACache.load_overload = load_overload
    return True


class _WithoutRefresh:
    """A target context whose ``refresh`` does nothing: what a cache load is handed (it asks
    the context only for its code generator, to find and rebuild the kernel)."""

    def __init__(self, context) -> None:
        self._context = context

    def refresh(self) -> None:
        """Nothing: a cached kernel needs no refreshed target."""

    def __getattr__(self, name):
        return getattr(self._context, name)


#: What numba and numba-cuda import at their own import, when installed, only for something a
#: command-line run never uses: coverage (to report the lines of jitted code to it), scipy
#: (a version check) and yaml (to read a .numba_config.yaml): ~64 ms of a W2 run's start-up
#: on the GPU machine, where all three are installed (issue #16).
NUMBA_EXTRAS = ("coverage", "scipy", "yaml")
_NUMBA_CONFIG_FILE = ".numba_config.yaml"  # (numba reads it from the working directory)


class _First(importlib.abc.MetaPathFinder):
    """A finder that fails some imports at once: first on ``sys.meta_path`` inside ``with``."""

    def __enter__(self) -> None:
        sys.meta_path.insert(0, self)

    def __exit__(self, *exc) -> None:
        sys.meta_path.remove(self)


def numba_without_extras() -> _First:
    """Inside, an import of :data:`NUMBA_EXTRAS` *by numba's own modules* fails at once
    (numba and numba-cuda go on without them); anyone else's import of them is untouched,
    on every thread. yaml is left alone where a .numba_config.yaml is there to read. For
    the command line's process (engine.cli.main), around everything it runs."""
    names = {n for n in NUMBA_EXTRAS if n != "yaml" or not os.path.isfile(_NUMBA_CONFIG_FILE)}
    return _NotForNumba(frozenset(names))


class _NotForNumba(_First):
    def __init__(self, names: frozenset[str]) -> None:
        self.names = names

    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in self.names and _importer().partition(".")[0] == "numba":
            raise ModuleNotFoundError(f"{name} left out for numba (engine.numba_setup)",
                                      name=name)
        return None


def _importer() -> str:
    """The module whose code asked for the import being looked up (past importlib's frames)."""
    frame = sys._getframe(2)
    while frame is not None:
        module = frame.f_globals.get("__name__", "")
        if module.partition(".")[0] not in ("importlib", "_frozen_importlib",
                                             "_frozen_importlib_external"):
            return module
        frame = frame.f_back
    return ""


class _NoScipyLinalg(_First):
    """Fails ``import scipy.linalg`` (and so its cython_blas) on one thread only: the GUI's
    other threads import what they like meanwhile."""

    def __init__(self) -> None:
        self.thread = threading.get_ident()

    def find_spec(self, name, path=None, target=None):
        if name == "scipy.linalg" and threading.get_ident() == self.thread:
            raise ModuleNotFoundError("left out while numba sets up", name=name)
        return None


def without_scipy_blas():
    """Inside, on this thread, ``import scipy.linalg.cython_blas`` fails at once (numba itself
    imports only scipy's light top package), unless scipy.linalg is imported already."""
    return contextlib.nullcontext() if "scipy.linalg" in sys.modules else _NoScipyLinalg()
