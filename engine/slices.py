"""The slice loop every family's ``iter_solve`` shares.

A job is cut into slices of adaptive size (about ``config.SLICE_SECONDS`` each) so
that the caller gets a :class:`~engine.jobs.Progress` between slices and can cancel.
A family supplies a :class:`SliceRunner` per phase of its job (a score pass, a
recovery, ...); :func:`run_slices` drives it and a :class:`Meter` adds up the time,
cells and comparisons of every phase, from which :func:`run_info` makes the
result's :class:`~engine.jobs.RunInfo`. New backends (a Dask cluster, say) plug in
as runners; the loop, the cancel checks and the progress reports stay here.

The shape of a family's ``iter_solve``::

    runner = driver.make_runner(job, cancel)
    meter = Meter(job, threads=numba_threads(job))
    yield from compile_once(warm_key(job), warm_up, total)  # the job on a tiny input, once
    yield from run_slices(runner, meter, cancel)
    return FamilyResult(run_info(job, meter), ...)
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, replace
from typing import Any, Callable, Generator, Protocol

from engine import registry
from engine.jobs import CancelToken, Job, Progress, RunInfo, SliceClock, now


@dataclass(frozen=True)
class Step:
    """What one slice did: ``units`` of the runner's own measure (settled starts, text
    positions, cells...) and the cells/comparisons they cost. ``aborted``: a kernel
    saw the cancel flag inside the slice (its partial work is the runner's to keep or
    drop)."""

    units: int
    cells: int = 0
    comparisons: int = 0
    aborted: bool = False


class SliceRunner(Protocol):
    """One phase of a job, run a slice at a time.

    ``total``/``done`` are in the runner's units (they size the progress bar);
    ``first_slice`` is the size of the first slice (enough to keep every thread
    busy); ``finished`` turns true when nothing is left (a runner may finish early,
    e.g. kdiff's scan stopping at the first suffix that occurs whole).
    """

    total: int
    done: int
    first_slice: int
    finished: bool

    def step(self, budget: int) -> Step:
        """Run about ``budget`` units; at least one unless nothing is left."""

    def report(self) -> dict:
        """Extra :class:`Progress` fields after a slice (``partial``, ``snapshot``,
        ``snapshot_shape``, ``message``); ``{}`` if none."""


class CallsRunner:
    """A SliceRunner over ``work``: a generator of kernel calls that yields each call's cells
    and returns its answer when done, None when cancelled (lcs's recovery, nw's traceback:
    many small calls). A slice runs calls until about ``budget`` cells (the units);
    :attr:`left` is what the slice under way may still run, to size the next call by."""

    def __init__(self, work: Generator[int, None, Any]):
        self._work = work
        self.done = self.left = 0
        self.finished = False
        self.answer = None

    def step(self, budget: int) -> Step:
        cells, aborted = 0, False
        while cells < budget:
            self.left = budget - cells
            try:
                cells += next(self._work)
            except StopIteration as stop:
                self.answer = stop.value
                aborted = self.answer is None
                self.finished = not aborted
                break
        self.done += cells
        return Step(cells, cells, cells, aborted)


_compile_clock = threading.local()


def compile_time() -> float:
    """Seconds this thread has spent compiling or loading kernels inside slices."""
    return getattr(_compile_clock, "seconds", 0.0)


def add_compile_time(seconds: float) -> None:
    """Count ``seconds`` spent inside a slice as compile time, not solve time: a kernel
    compiled, or loaded from numba's disk cache, at its first launch (engine.gpu). The
    slice loop and :meth:`Meter.timed` leave it out of the job's seconds and of the slice
    sizing, as they leave out :func:`compile_once`'s warm-up."""
    _compile_clock.seconds = compile_time() + seconds


class Meter:
    """Time, cells and comparisons of a job, summed over its phases."""

    def __init__(self, job: Job, threads: int | None = None) -> None:
        self.job = job
        self.threads = threads if threads is not None else job.threads
        #: the job as its kernels ran it, where that is another (a Dask cluster's workers run
        #: the job of ChunkedProblem.worker_job: on GPU workers cuda's variant and flags)
        self.ran: Job | None = None
        self.elapsed = 0.0
        self.cells = 0
        self.comparisons = 0
        self.complete = True

    def apply_threads(self) -> None:
        if registry.threaded(self.job.backend) and self.threads:
            import numba

            numba.set_num_threads(self.threads)

    def timed(self, fn: Callable[[], Any]) -> Any:
        """Run ``fn()`` and count its time as solve time (set-up, copies back)."""
        t0, c0 = now(), compile_time()
        try:
            return fn()
        finally:
            self.elapsed += now() - t0 - (compile_time() - c0)

    def progress(self, done: int, total: int, **fields) -> Progress:
        return Progress(done, total, self.cells, self.comparisons, self.elapsed, **fields)


#: Warm keys (:func:`warm_key`) whose kernels this process has warmed up.
_WARMED: set = set()
_warming = threading.local()


def warm_key(job: Job, *extra) -> tuple:
    """What decides the kernels a job compiles: its selection, its scalar parameters and
    ``extra`` (what its inputs decide: pattern lengths...). Kept coarse on purpose: a
    kernel it misses compiles at its first call, and counts as compile time there
    (:func:`count_numba_compiles`)."""
    params = tuple(sorted((k, v) for k, v in job.params.items()
                          if isinstance(v, (bool, int, float, str, type(None)))))
    return (job.family, job.variant, job.backend, job.parallel, tuple(sorted(job.flags)),
            job.count_comparisons, job.snapshots, params) + extra


def warm_once(key: tuple, warm_up: Callable[[], None]) -> None:
    """Run ``warm_up`` (the job's problem on a tiny piece of its input) unless this process
    did for ``key``; a job run inside a warm-up does not warm up again."""
    if key in _WARMED or getattr(_warming, "on", False):
        return
    _warming.on = True
    try:
        warm_up()
    finally:
        _warming.on = False
    _WARMED.add(key)


def compile_once(key: tuple, warm_up: Callable[[], None],
                 total: int = 0) -> Generator[Progress, None, None]:
    """The generic warm-up: announce compilation (one "compiling" Progress) and run
    :func:`warm_once`, only when needed. The message stays up until the first slice's
    Progress, which covers the kernels that load at their first call."""
    if key not in _WARMED and not getattr(_warming, "on", False):
        yield Progress(0, total, 0, 0, 0.0, phase="compiling", message="compiling kernels…")
        warm_once(key, warm_up)


def tiny_job(job: Job, *roles: str, bases: int = 64) -> Job:
    """``job`` with the records of ``roles`` cut to their first ``bases`` columns: the
    problem on a tiny piece of its input, for a warm-up."""
    inputs = dict(job.inputs)
    for role in roles:
        inputs[role] = tuple(r.slice(0, min(len(r), bases)) for r in inputs[role])
    return replace(job, inputs=inputs)


_compile_timer = None


def count_numba_compiles() -> None:
    """From now on, the time numba holds its compiler lock (a kernel compiled, or loaded
    from the disk cache, at its first call) counts as compile time of the thread, not
    solve time: a warm-up's tiny input need not reach every kernel a job calls."""
    global _compile_timer
    if _compile_timer is not None:
        return
    from numba.core import event

    held = threading.local()

    class CompileTimer(event.Listener):
        def on_start(self, ev):
            held.depth = getattr(held, "depth", 0) + 1
            if held.depth == 1:
                held.t0 = now()

        def on_end(self, ev):
            depth = getattr(held, "depth", 0)
            if depth:  # (a lock taken before the timer was registered has no start)
                held.depth = depth - 1
                if depth == 1:
                    add_compile_time(now() - held.t0)

    _compile_timer = CompileTimer()
    event.register("numba:compiler_lock", _compile_timer)


def run_slices(runner: SliceRunner, meter: Meter, cancel: CancelToken, *, done_before: int = 0,
               total_after: Callable[[], int] | None = None,
               scale: float = 1.0) -> Generator[Progress, None, bool]:
    """Drive ``runner`` to its end, the cancel or a kernel's abort.

    Yields a Progress after each slice (``done_before`` and ``total_after()`` place
    this phase within a job of several; a slice lasts about ``scale`` x
    config.SLICE_SECONDS). Returns True when the phase finished; on a
    cancel or abort it sets ``meter.complete = False`` and returns False.
    """
    clock = SliceClock(first=runner.first_slice, maximum=max(1, runner.total), scale=scale)
    count_numba_compiles()
    while not runner.finished:
        if cancel.cancelled:
            meter.complete = False
            return False
        meter.apply_threads()  # numba's count is per thread; another job may have changed it
        t0, c0 = now(), compile_time()
        step = runner.step(clock.size)
        dt = now() - t0 - (compile_time() - c0)  # a kernel's first load is not solve time
        meter.elapsed += dt
        meter.cells += step.cells
        meter.comparisons += step.comparisons
        if step.aborted:
            meter.complete = False
            return False
        clock.update(step.units, dt)
        after = total_after() if total_after is not None else 0
        yield meter.progress(done_before + runner.done, done_before + runner.total + after,
                             **runner.report())
    return True


def numba_threads(job: Job) -> int | None:
    """Set numba's thread count for a multicore job and return the count really used;
    ready numba's CPU compiler for a serial or multicore one (engine.numba_setup).

    ``job.threads`` above the machine's threads is capped (numba cannot start more
    than ``NUMBA_NUM_THREADS``); the result's metadata reports the capped count.
    Other backends: ``job.threads`` unchanged (None for serial).
    """
    if registry.on_cpu(job.backend):
        from engine import numba_setup

        numba_setup.ready("cpu")  # (what the first kernel would do, without scipy)
    if not registry.threaded(job.backend):
        return job.threads
    import numba

    cap = numba.config.NUMBA_NUM_THREADS
    threads = max(1, min(job.threads or cap, cap))
    numba.set_num_threads(threads)
    return threads


def run_info(job: Job, meter: Meter) -> RunInfo:
    """The result's metadata from the job and its meter: the backend the job asked for,
    the variant, parallel form and flags its kernels ran (``meter.ran``, when set)."""
    ran = meter.ran or job
    return RunInfo(job.family, ran.variant, job.backend, ran.parallel, tuple(sorted(ran.flags)),
                   meter.elapsed, int(meter.cells), int(meter.comparisons), meter.complete,
                   meter.threads)
