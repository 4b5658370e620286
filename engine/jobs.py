"""Jobs, progress and results: the only types that cross from the engine to the app.

A job runs as a generator (superqt's GeneratorWorker shape): ``iter_solve(job)``
yields :class:`Progress` between slices of 50-200 ms and returns a family
result. The caller cancels through a :class:`CancelToken`; the generator then
returns at the next check (kernels poll the token's flag too, so even one huge
matrix stops promptly) with ``complete=False`` and the results found so far.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Generator, Mapping

import numpy as np

from engine import config
from engine.registry import ParamSpec


class CancelToken:
    """Set from any thread; read by the generator between slices and by kernels inside them."""

    def __init__(self) -> None:
        self.flag = np.zeros(1, dtype=np.uint8)  # polled by compiled kernels
        self._event = threading.Event()

    def cancel(self) -> None:
        self.flag[0] = 1
        self._event.set()

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()


@dataclass(frozen=True)
class Job:
    """What to compute. ``inputs`` maps role names (``target``, ``background``...) to records."""

    family: str
    inputs: Mapping[str, tuple]
    variant: str | None = None
    backend: str | None = None
    parallel: str | None = None
    flags: frozenset = frozenset()
    params: Mapping[str, Any] = field(default_factory=dict)
    threads: int | None = None
    count_comparisons: bool = True
    snapshots: bool = False


@dataclass(frozen=True)
class Progress:
    """One report between slices. ``snapshot`` is a copied uint16 image or None."""

    done: int
    total: int
    cells: int
    comparisons: int
    elapsed: float
    phase: str = "running"  # "compiling" | "running"
    message: str = ""
    snapshot: np.ndarray | None = None
    snapshot_shape: tuple[int, int] | None = None  # full matrix size the snapshot stands for
    partial: Any = None

    @property
    def fraction(self) -> float:
        return self.done / self.total if self.total else 1.0

    @property
    def cells_per_second(self) -> float:
        return self.cells / self.elapsed if self.elapsed > 0 else 0.0

    @property
    def comparisons_per_second(self) -> float:
        return self.comparisons / self.elapsed if self.elapsed > 0 else 0.0


@dataclass(frozen=True)
class RunInfo:
    """Metadata common to every result (the ``--json`` header)."""

    family: str
    variant: str
    backend: str
    parallel: str | None
    flags: tuple[str, ...]
    seconds: float
    cells: int
    comparisons: int
    complete: bool
    threads: int | None = None


class SliceClock:
    """Adapts slice sizes so that each slice takes about ``config.SLICE_SECONDS`` (times
    ``scale``: a problem whose launches need many units at once asks for longer slices)."""

    def __init__(self, first: int = 1, maximum: int = 1 << 30, scale: float = 1.0) -> None:
        self.minimum = max(1, first)
        self.size = self.minimum
        self.maximum = maximum
        self.scale = scale

    def update(self, units: int, seconds: float) -> None:
        target = config.SLICE_SECONDS * self.scale
        if units <= 0:
            return
        rate = units / max(seconds, 1e-6)
        proposal = int(rate * target)
        # Grow at most 4x at a time so that one mis-measured slice cannot overshoot badly.
        self.size = int(min(self.maximum, max(self.minimum, min(proposal, self.size * 4))))


def check_int(name: str, value, minimum: int) -> int:
    """An integer argument >= ``minimum`` (bools refused), as int; ValueError naming it: the
    rule and messages of a registry parameter's check."""
    return ParamSpec(name, name, "int", None, "", minimum=minimum, required=True).check(value)


def check_threads(threads) -> int | None:
    """The multicore thread count: None (all) or an integer >= 1."""
    return None if threads is None else check_int("threads", threads, 1)


def drive(gen: Generator, on_progress: Callable[[Progress], None] | None = None):
    """Run an ``iter_solve`` generator to the end and return its result."""
    while True:
        try:
            progress = next(gen)
        except StopIteration as stop:
            return stop.value
        if on_progress is not None:
            on_progress(progress)


def now() -> float:
    return time.perf_counter()
