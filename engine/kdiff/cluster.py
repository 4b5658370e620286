"""kdiff on a Dask cluster (``--backend dask``): :class:`ClusterScanRunner` and its tasks.

The task grid of :mod:`engine.streaming`: the starts of each target record are cut into
ranges, and each range is one task per background chunk (:func:`cluster_task`, run on a
worker by :class:`_WorkerScan`, which keeps the job's kernels and a chunk reader per
thread). The client side (engine.cluster) submits them in scan order and merges each
range's answers as they arrive, with :func:`~engine.kdiff.driver.merge_chunk`: c(r) is
the max over chunks and the scan stops at the first start whose whole suffix occurs in
some chunk, exactly as in one process.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from engine import config
from engine.jobs import Job
from engine.kdiff.driver import KernelCall, ScanRunner, chunk_task, merge_chunk
from engine.slices import Step


@dataclass(frozen=True)
class ClusterJob:
    """What every worker of a dask job gets once (scattered): the job as a worker runs it
    (its backend and flags, engine.cluster.worker_selection) and the chunks' overlap."""

    token: str
    job: Job
    overlap: int


class _WorkerScan:
    """A dask job's state on one worker process: the targets' codes; per thread a chunk
    reader and a kernel call (a cuda call uploads each task's chunk into its device buffer)."""

    def __init__(self, shared: ClusterJob):
        from engine.streaming import Background

        self.job = shared.job
        self.alphas = [np.ascontiguousarray(t.codes) for t in self.job.inputs["target"]]
        self.abort = np.zeros(1, dtype=np.uint8)
        self._background = lambda: Background(self.job.inputs["background"],
                                              self.job.params["strands"])

    def _local(self):
        from types import SimpleNamespace

        return SimpleNamespace(background=self._background(), call=self._call())

    def _call(self) -> KernelCall:
        """A kernel call with an empty background (each task's chunk_task passes its chunk's)."""
        return KernelCall(self.job, np.zeros(1, dtype=np.uint8), np.array([0, 1], dtype=np.int64),
                          self.abort)

    def warm_up(self) -> None:
        from engine import cluster

        cluster.task_threads(self.job.backend)
        cluster.per_thread(self, self._local).call.warm_up()

    def run(self, record: int, r_lo: int, r_hi: int, chunk):
        from engine import cluster

        cluster.task_threads(self.job.backend)
        local = cluster.per_thread(self, self._local)
        text = local.background.text(chunk)  # (a cuda call uploads it into its device buffer)
        counters = np.zeros(2, dtype=np.int64)
        part, got = chunk_task(local.call, self.alphas[record], r_lo, r_hi, text.codes,
                               text.offsets, counters)
        local.background.release(chunk)
        return part, got, counters


def _worker_scan(shared: ClusterJob) -> _WorkerScan:
    from engine import cluster

    return cluster.worker_state(shared, _WorkerScan)


def cluster_warm(shared: ClusterJob) -> None:
    """A dask job's first call on each worker: its kernels compiled or loaded."""
    _worker_scan(shared).warm_up()


def cluster_task(shared: ClusterJob, record: int, r_lo: int, r_hi: int, chunk):
    """A dask task: (c, settled, counters, seconds) of :func:`chunk_task` for starts
    [r_lo, r_hi) of target ``record`` against one background chunk."""
    t0 = time.perf_counter()
    part, got, counters = _worker_scan(shared).run(record, r_lo, r_hi, chunk)
    return part, got, counters, time.perf_counter() - t0


@dataclass(eq=False)
class _Range:
    """Starts [r_lo, r_hi) of target ``record`` (of length ``m``): its chunks' answers merged
    so far (``best``, ``settled``), ``pending`` chunk tasks still to merge."""

    record: int
    r_lo: int
    r_hi: int
    m: int
    pending: int

    def __post_init__(self):
        self.best = np.full(self.r_hi - self.r_lo, -1, dtype=np.int64)
        self.settled = self.r_hi - self.r_lo
        self.counters = np.zeros(2, dtype=np.int64)
        self.seconds = 0.0
        self.submitted = 0


class _Merged:
    """The call a :class:`ScanRunner` makes in :class:`ClusterScanRunner`: it hands back the
    merged answer of the range being committed."""

    def __init__(self):
        self.range: _Range | None = None

    def min_slice(self) -> int:
        return 1

    def __call__(self, alpha, r_lo, r_hi, out_c, counters) -> int:
        rng = self.range
        assert (r_lo, r_hi) == (rng.r_lo, rng.r_hi), "ranges are committed in scan order"
        out_c[:rng.settled] = rng.best[:rng.settled]
        counters += rng.counters
        return rng.settled


class ClusterScanRunner:
    """:class:`ScanRunner`'s scan with its c(r) computed on a Dask cluster (backend dask).

    The starts of each target record are cut into ranges (sized so that a task takes about
    ``config.CLUSTER_TASK_SECONDS``, from the tasks done so far); each range is one task
    per background chunk (:func:`cluster_task`), submitted in scan order and merged per
    range as they complete, in any order (:func:`merge_chunk`: the max of c(r), the scan
    stopping at the first start whose whole suffix occurs in some chunk). Merged ranges
    are committed in order to an inner :class:`ScanRunner`, which keeps the candidates,
    the profiles and the early stop exactly as in one process; a record that stops drops
    its later ranges' tasks.
    """

    def __init__(self, job: Job, abort: np.ndarray):
        from engine import cluster

        self.job, self.abort = job, abort
        self.K = job.params["k"] - 1
        self._merged = _Merged()
        self.scan = ScanRunner(job, self._merged)
        self.total = self.scan.total
        self.first_slice = 1
        self.targets = job.inputs["target"]
        self.overlap = max(len(t) for t in self.targets) + self.K  # one plan for every record
        self.grid = cluster.TaskGrid(job.params.get("scheduler"), self._shared, cluster_task,
                                     cluster_warm)
        self.chunks: list = []
        self._ranges: list[_Range] = []  # submitted, not yet committed, in scan order
        self._cursor = (0, 0)            # the next range's record and first start
        self._size = 1

    # -- the SliceRunner protocol -----------------------------------------------------------------
    @property
    def done(self) -> int:
        """Starts committed, plus the merged share of the ranges not committed yet (a range of
        a large background is many tasks: the progress bar moves as they complete)."""
        chunks = max(1, len(self.chunks))
        pending = sum((r.r_hi - r.r_lo) * (chunks - r.pending) // chunks for r in self._ranges)
        return min(self.total, self.scan.done + pending)

    @property
    def finished(self) -> bool:
        return self.scan.finished

    def report(self) -> dict:
        return self.scan.report()

    def compiled(self) -> bool:
        return self.grid.ready()

    def warm_up(self) -> None:
        """Start (or reach) the cluster and warm its workers; plan the chunks."""
        self.grid.open()
        self.chunks = self.grid.chunks(self.job.inputs["background"], self.job.params["strands"],
                                       self.overlap)
        worker = self.grid.shared.job
        if worker.backend == "cuda":
            self._size = config.CLUSTER_GPU_STARTS
        elif "simd" in worker.flags and self.K < 64:
            self._size = config.KDIFF_SIMD_LANES[32 if self.K < 32 else 64]
        else:
            self._size = config.KDIFF_BITPARALLEL_LANES
        self._granule = self._size

    def _shared(self, gpu: bool) -> ClusterJob:
        from engine import cluster
        from engine.kdiff.spec import SPEC

        return ClusterJob(self.grid.token(), cluster.worker_job(SPEC, self.job, gpu), self.overlap)

    def close(self) -> None:
        self.grid.close()

    @property
    def threads(self) -> int:
        return self.grid.threads

    # -- tasks ------------------------------------------------------------------------------------
    def _next_range(self) -> _Range | None:
        rec, r = self._cursor
        while rec < len(self.targets):
            r_end = max(0, len(self.targets[rec]) - self.K)
            if rec >= self.scan.position[0] and r < r_end:
                r_hi = min(r_end, r + self._size)
                self._cursor = (rec, r_hi)
                return _Range(rec, r, r_hi, len(self.targets[rec]), len(self.chunks))
            rec, r = rec + 1, 0
        self._cursor = (rec, r)
        return None

    def _fill(self) -> None:
        """Submit tasks in scan order until the grid's window is full."""
        while self.grid.in_flight < self.grid.window:
            rng = self._ranges[-1] if self._ranges else None
            if rng is None or rng.submitted == len(self.chunks):
                rng = self._next_range()
                if rng is None:
                    return
                self._ranges.append(rng)
            self.grid.submit(rng, rng.record, rng.r_lo, rng.r_hi, self.chunks[rng.submitted])
            rng.submitted += 1

    def _merge(self, rng: _Range, result) -> None:
        part, got, counters, seconds = result
        rng.settled = merge_chunk(rng.best, rng.settled, part, got, rng.m, rng.r_lo)
        if rng.settled < 0:
            raise RuntimeError("a dask task stopped before the end of its range")
        rng.counters += counters
        rng.seconds += seconds
        rng.pending -= 1
        if rng.pending == 0:  # the next ranges' size, from this one's tasks
            per_task = rng.seconds / max(1, len(self.chunks))
            size = int((rng.r_hi - rng.r_lo) * config.CLUSTER_TASK_SECONDS / max(per_task, 1e-3))
            size = min(4 * self._size, max(self._granule, size))
            self._size = -(-size // self._granule) * self._granule

    def step(self, budget: int) -> Step:
        self._fill()
        for rng, result in self.grid.collect(config.SLICE_SECONDS, self.abort):
            self._merge(rng, result)
        if self.abort[0]:
            return Step(0, aborted=True)
        units = cells = comparisons = 0
        while self._ranges and self._ranges[0].pending == 0 and not self.scan.finished:
            rng = self._ranges.pop(0)
            if (rng.record, rng.r_lo) != self.scan.position:
                continue  # its record stopped before it
            self._merged.range = rng
            step = self.scan.step(rng.r_hi - rng.r_lo)
            units += step.units
            cells += step.cells
            comparisons += step.comparisons
            if self.scan.position[0] != rng.record:  # the record is done: drop its later ranges
                self.grid.drop(lambda key, rec=rng.record: key.record == rec)
                self._ranges = [r for r in self._ranges if r.record != rng.record]
                if self._cursor[0] == rng.record:
                    self._cursor = (rng.record + 1, 0)
        self._fill()
        return Step(units, cells, comparisons)
