"""Spawned child processes that do not run the caller's script again.

A child started by multiprocessing's spawn method (Primer3's children, engine.primers.children;
a local Dask cluster's worker processes, engine.cluster) imports the parent's ``__main__``
before its target runs: its file, or its module under ``-m``. A script that calls the API
without an ``if __name__ == "__main__":`` guard therefore ran again in every child, and
multiprocessing stopped the child with its "bootstrapping phase" error ("Primer3's process
ended without an answer", "Nanny failed to start"). These children run engine functions, sent
by reference, and need nothing of ``__main__``.
"""

from __future__ import annotations

import contextlib
import sys


@contextlib.contextmanager
def main_left_out():
    """While children are spawned in this block, the main module's ``__spec__`` and
    ``__file__`` are out of sight, so the spawn's preparation data names no main module to
    import. Spawning reads them only while a process starts; the module is as it was once
    the block ends."""
    main = sys.modules.get("__main__")
    saved = {name: main.__dict__[name] for name in ("__spec__", "__file__")
             if main is not None and name in main.__dict__}
    try:
        if saved:
            main.__spec__ = None
            main.__dict__.pop("__file__", None)
        yield
    finally:
        if saved:
            main.__dict__.update(saved)
