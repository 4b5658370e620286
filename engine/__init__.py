"""primerscope's computation engine. It never imports Qt.

The Python API, from a notebook or a pipeline::

    import engine
    hits = engine.kmismatch.solve(["ACGTTGCATGCA"], "lambda.fa", 1)   # patterns, then text
    frame = hits.to_pandas(coords="bed")                                # chrom, start, end

The families (``kdiff``, ``kmismatch``, ``lcs``, ``edit``, ``nw``) and the primer tools
(``pairs``, ``pcr``, ``panel``, ``offtarget``) are loaded on first use, as are ``load``
(read sequences), ``index`` (build a genome store) and ``__version__``: ``import engine``
itself reads no module beyond the standard library's ``os``. Every ``solve`` takes what
you look for first, then where you look; any input form of :func:`engine.api.records`;
``progress=True`` and ``backend=`` a backend's name or a ``distributed.Client``.

Importing it changes nothing about the caller's process: the programs (the command line,
the app) call :func:`configure_process` for themselves. The app talks to the engine
through the same family APIs and the job generator :func:`iter_solve`.
"""

from __future__ import annotations

import os

#: Loaded on first use (module ``__getattr__``): name -> "module" or "module:attribute".
_LAZY = {"kdiff": "engine.kdiff", "kmismatch": "engine.kmismatch", "lcs": "engine.lcs",
         "edit": "engine.edit", "nw": "engine.nw", "pairs": "engine.primers.pairs",
         "pcr": "engine.primers.pcr", "panel": "engine.primers.panel",
         "offtarget": "engine.primers.offtarget", "load": "engine.sequences:load",
         "index": "engine.api:index"}

__all__ = ["__version__", "configure_process", "edit", "index", "iter_solve", "kdiff",
           "kmismatch", "lcs", "load", "numba_cache_dir", "nw", "offtarget", "pairs", "panel",
           "pcr"]


def __getattr__(name: str):
    """The API's names, imported when first read (numba, numpy and Biopython load only then)."""
    import importlib

    if name == "__version__":
        from importlib import metadata

        try:
            value = metadata.version("primerscope")
        except metadata.PackageNotFoundError:  # a checkout that was never installed
            value = "0+unknown"
    elif name in _LAZY:
        module, _, attribute = _LAZY[name].partition(":")
        value = importlib.import_module(module)
        value = getattr(value, attribute) if attribute else value
    else:
        raise AttributeError(f"module 'engine' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))


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
