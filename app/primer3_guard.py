"""Primer3 work one step at a time across the window's worker threads.

primer3-py keeps its settings in shared objects (the thermodynamic arguments are set
before each call, Primer3's design settings are global), so two threads that call it
at once can mix each other's settings or free them under each other. Every job of the
window that calls Primer3 in this process (pair design, panel checks, the library's
Tm and GC) runs its generator through :func:`steps`, which holds one lock while the
generator works and lets it go at each yield: jobs interleave between steps and
never inside one. Only worker threads take the lock; the GUI thread never waits on it.
(The candidates' annotations run Primer3 in a child process: engine.primers.annotate_children.)
"""

from __future__ import annotations

import threading
from typing import Generator

LOCK = threading.Lock()


def steps(gen: Generator) -> Generator:
    """Re-yield ``gen``'s items, running each of its steps under :data:`LOCK`; return its value."""
    while True:
        with LOCK:
            try:
                item = next(gen)
            except StopIteration as stop:
                return stop.value
        yield item
