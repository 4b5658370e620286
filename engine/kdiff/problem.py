"""kdiff as an ordered chunked problem (engine.executors): :class:`ScanProblem`.

The task grid of :mod:`engine.streaming`: the starts of each target record are cut into
ranges, and each range is one task per background chunk (:class:`RangeRun`: c(r) for
the range against the chunk). Ranges come in scan order and are sized so that a task
takes about ``task_seconds`` (a slice in this process, ``config.CLUSTER_TASK_SECONDS`` on
Dask), from the tasks done so far. A range's answers merge in any order
(:meth:`_Range.merge`: the max of c(r), the scan stopping at the first start whose whole
suffix occurs in some chunk); merged ranges are committed in order to an inner
:class:`~engine.kdiff.driver.ScanRunner`, which keeps the candidates, the profiles and
the early stop exactly as in one process.
A record that stops drops its later ranges' tasks. A background that fits runs as the
plain ScanRunner over the whole text.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from engine import config, registry
from engine.executors import ChunkedProblem, Task
from engine.jobs import Job
from engine.kdiff.driver import KernelCall, ScanRunner, background_text
from engine.kdiff.spec import ONE_K_FLAGS, SPEC
from engine.slices import Step


@dataclass(eq=False)
class _Range:
    """Starts [r_lo, r_hi) of target ``record``: its chunks' answers merged so far (``best``,
    ``settled``; -1 once a chunk was cut short), ``pending`` chunk tasks still to merge."""

    record: int
    r_lo: int
    r_hi: int
    pending: int
    levels: int = 0  # kdiff --all-k: the lower levels merged besides c

    def __post_init__(self):
        self.best = np.full(self.r_hi - self.r_lo, -1, dtype=np.int64)
        self.best_lv = np.full((self.r_hi - self.r_lo, self.levels), -1, dtype=np.int64)
        self.settled = self.r_hi - self.r_lo
        self.counters = np.zeros(2, dtype=np.int64)
        self.seconds = 0.0

    def merge(self, part: np.ndarray, part_lv: np.ndarray, got: int, stopped: bool) -> None:
        """Fold a chunk's c(r) and levels of the range's first ``got`` starts into the running
        maxima ``best`` and ``best_lv``. c(r) is the max over chunks (engine.streaming's
        overlap argument), and so is c at each lower level (a match within t edits is no
        longer than one within K). A chunk that ``stopped`` at start r found r's whole suffix
        (with levels: within 0 edits, where the scan of every k stops), so the merged scan
        stops there too: ``settled`` is the smallest stop, and every chunk computed every
        start before it. A chunk cancelled before it makes the range unusable (-1)."""
        if self.settled < 0 or (got < self.settled and not stopped):
            self.settled = -1
            return
        self.settled = n = min(self.settled, got)
        np.maximum(self.best[:n], part[:n], out=self.best[:n])
        np.maximum(self.best_lv[:n], part_lv[:n], out=self.best_lv[:n])


class _Merged:
    """The call the inner ScanRunner makes: it hands back the merged answer of the range
    being committed."""

    def __init__(self):
        self.range: _Range | None = None

    def min_slice(self) -> int:
        return 1

    def __call__(self, alpha, r_lo, r_hi, out_c, counters, out_lv) -> int:
        rng = self.range
        assert (r_lo, r_hi) == (rng.r_lo, rng.r_hi), "ranges are committed in scan order"
        out_c[:rng.settled] = rng.best[:rng.settled]
        out_lv[:rng.settled] = rng.best_lv[:rng.settled]
        counters += rng.counters
        return rng.settled


class RangeRun:
    """One task (an engine.executors.ChunkRun): c(r) for a range of starts against one
    chunk's text, in one step; its answer is (c, levels, settled, stopped, counters,
    seconds): c(r) and, for ``kdiff --all-k``, the lower levels (starts x levels) of the
    first ``settled`` starts (fewer than asked when a start's whole suffix occurs in the
    chunk: the scan ``stopped`` there; or when cancelled)."""

    def __init__(self, call: KernelCall, alpha: np.ndarray, r_lo: int, r_hi: int, text):
        self.call, self.alpha, self.r_lo, self.r_hi, self.text = call, alpha, r_lo, r_hi, text
        self.total = self.first_slice = r_hi - r_lo
        self.done = 0
        self._answer = None

    @property
    def finished(self) -> bool:
        return self._answer is not None

    def step(self, budget: int) -> Step:
        t0 = time.perf_counter()
        counters = np.zeros(2, dtype=np.int64)
        part = np.full(self.total, -1, dtype=np.int64)
        part_lv = np.full((self.total, self.call.levels), -1, dtype=np.int64)  # (--all-k)
        self.call.use_background(self.text.codes, self.text.offsets)  # (cuda: uploaded)
        got = self.call(self.alpha, self.r_lo, self.r_hi, part, counters, part_lv)
        whole = part_lv[:, 0] if part_lv.shape[1] else part
        stopped = got > 0 and whole[got - 1] >= self.alpha.shape[0] - (self.r_lo + got - 1)
        self._answer = part, part_lv, got, stopped, counters, time.perf_counter() - t0
        self.done = self.total
        return Step(self.total, int(counters[0]), int(counters[1]),
                    aborted=got < self.total and not stopped)

    def take(self):
        return self._answer


class ScanProblem(ChunkedProblem):
    """A kdiff job as an ordered chunked problem (see the module docstring)."""

    spec = SPEC
    ordered = True

    def __init__(self, job: Job):
        super().__init__(job)
        self.K = job.params["k"] - 1
        self.strands = job.params["strands"]
        self.targets = job.inputs["target"]
        # The longest footprint of any candidate (m - r_lo + K would do for a range; one
        # overlap for every record keeps one chunk plan for all).
        self.overlap = max(len(t) for t in self.targets) + self.K
        # A candidate holds at most K gap bases: the rest of a long gap is never read (not
        # `overlap` bases at each end of every gap, 10 kb a gap for S1's 5 kb target).
        self.gap_reach = self.K
        #: the job its tasks run (a Dask worker's, once known) and their time (sizes ranges)
        self.task_job = job
        self._worker_gpu = False
        self._local = threading.local()
        self._idle = np.zeros(1, dtype=np.uint8)
        self._merged = _Merged()
        self._ranges: list[_Range] = []  # made, not yet committed, in scan order
        self._by_key: dict = {}
        self._cursor = (0, 0)  # the next range's record and first start
        self.chunks: list = []
        if registry.on_gpu(job.backend):
            self.slice_scale = config.KDIFF_CUDA_SLICE_SCALE

    @cached_property
    def alphas(self) -> list:
        return [np.ascontiguousarray(t.codes) for t in self.targets]

    def _call(self, abort: np.ndarray | None = None) -> KernelCall:
        """This thread's kernel call watching ``abort`` (None: one for compile checks), a
        cuda call uploading each task's chunk into its device buffer; against an empty
        background until a task passes its chunk's."""
        calls = self._local.__dict__.setdefault("calls", {})
        flag = abort if abort is not None else self._idle
        if id(flag) not in calls:
            calls[id(flag)] = flag, KernelCall(self.job, np.zeros(1, dtype=np.uint8),
                                               np.array([0, 1], dtype=np.int64), flag)
        return calls[id(flag)][1]

    # -- the whole-text run, and kernels --------------------------------------------------------
    def whole(self, abort: np.ndarray, threads: int | None) -> ScanRunner:
        beta, offsets = background_text(self.job)
        return ScanRunner(self.job, KernelCall(self.job, beta, offsets, abort))

    def worker_job(self, gpu: bool) -> Job:
        """The job a worker runs (engine.cluster.worker_job): on GPU workers bitparallel's
        CUDA kernels with cuda's default flags, but for ``all_k`` without the flags of one k
        (ONE_K_FLAGS), as make_job leaves them out of a cuda job's defaults."""
        job = super().worker_job(gpu)
        if gpu and self.job.params.get("all_k"):
            job = dataclasses.replace(job, flags=frozenset(job.flags) - ONE_K_FLAGS)
        self.task_job, self._worker_gpu = job, gpu
        return job

    # -- tasks -----------------------------------------------------------------------------------
    def open(self, task: Task, text, abort: np.ndarray, threads: int | None) -> RangeRun:
        record, r_lo, r_hi = task.key
        rng = self._by_key.get(task.key)  # (None in a Dask worker: its tasks run at once)
        if rng is not None and rng.settled >= 0:
            # A chunk merged before stopped at a start (its whole suffix occurs there): the
            # range's scan stops there too, so this chunk scans only the starts before it.
            r_hi = r_lo + max(1, min(rng.settled, r_hi - r_lo))
        return RangeRun(self._call(abort), self.alphas[record], r_lo, r_hi, text)

    def warm_task(self, chunk) -> Task:
        return Task(chunk, (0, 0, min(1, len(self.targets[0]))))

    def tasks(self, chunks):
        self.chunks = list(chunks)
        self._size = self._granule = self._granule_size()
        return self._stream()

    def _granule_size(self) -> int:
        """Starts a task takes at least: what keeps this process's threads busy, or a
        worker's kernel (GPU: many starts a launch; simd: a group of lanes)."""
        job = self.task_job
        if job is self.job:
            return max(1, self._call().min_slice())
        if self._worker_gpu:
            return config.CLUSTER_GPU_STARTS
        if "simd" in job.flags and self.K < 64:
            return config.KDIFF_SIMD_LANES[32 if self.K < 32 else 64]
        return config.KDIFF_BITPARALLEL_LANES

    def _stream(self):
        """Tasks in scan order: each range's chunks, ranges made as they are asked for."""
        while (rng := self._next_range()) is not None:
            self._ranges.append(rng)
            key = (rng.record, rng.r_lo, rng.r_hi)
            self._by_key[key] = rng
            for chunk in self.chunks:
                yield Task(chunk, key)

    def _next_range(self) -> _Range | None:
        rec, r = self._cursor
        scan = self.scan
        while rec < len(self.targets):
            r_end = scan.record_starts(rec)
            if rec >= scan.position[0] and r < r_end:
                r_hi = min(r_end, r + self._size)
                self._cursor = (rec, r_hi)
                return _Range(rec, r, r_hi, len(self.chunks), scan.levels)
            rec, r = rec + 1, 0
        self._cursor = (rec, r)
        return None

    def wanted(self, task: Task) -> bool:
        return task.key in self._by_key

    # -- the client's merge ---------------------------------------------------------------------
    @cached_property
    def scan(self) -> ScanRunner:
        """The committed scan: candidates, profiles and the early stop (its call hands back
        the merged range)."""
        return ScanRunner(self.job, self._merged)

    def total_units(self) -> int:
        return self.scan.total

    def weight(self, task: Task) -> int:
        return (task.key[2] - task.key[1]) // max(1, len(self.chunks))

    def units_done(self) -> int:
        """Starts committed, plus the merged share of the ranges not committed yet (a range
        of a large background is many tasks: the progress bar moves as they complete)."""
        chunks = max(1, len(self.chunks))
        pending = sum((r.r_hi - r.r_lo) * (chunks - r.pending) // chunks for r in self._ranges)
        return min(self.total_units(), self.scan.done + pending)

    def merge(self, task: Task, answer) -> None:
        rng = self._by_key.get(task.key)
        if rng is None or answer is None:
            return
        part, part_lv, got, stopped, counters, seconds = answer
        rng.merge(part, part_lv, got, stopped)
        rng.counters += counters
        rng.seconds += seconds

    def task_done(self, task: Task) -> None:
        rng = self._by_key.get(task.key)
        if rng is None:
            return
        if rng.settled < 0:
            raise RuntimeError("a kdiff task stopped before the end of its range")
        rng.pending -= 1
        if rng.pending == 0:  # the next ranges' size, from this one's tasks
            per_task = rng.seconds / max(1, len(self.chunks))
            size = int((rng.r_hi - rng.r_lo) * self.task_seconds / max(per_task, 1e-3))
            size = min(4 * self._size, max(self._granule, size))
            self._size = -(-size // self._granule) * self._granule

    def settle(self) -> bool:
        """Commit the merged ranges at the head, in scan order; drop the ranges of a record
        that stopped. False once every record is done."""
        scan = self.scan
        while self._ranges and self._ranges[0].pending == 0 and not scan.finished:
            rng = self._ranges.pop(0)
            del self._by_key[(rng.record, rng.r_lo, rng.r_hi)]
            if (rng.record, rng.r_lo) != scan.position:
                continue  # its record stopped before it
            self._merged.range = rng
            scan.step(rng.r_hi - rng.r_lo)
            if scan.position[0] != rng.record:  # the record is done: drop its later ranges
                for r in self._ranges:
                    if r.record == rng.record:
                        del self._by_key[(r.record, r.r_lo, r.r_hi)]
                self._ranges = [r for r in self._ranges if r.record != rng.record]
                if self._cursor[0] == rng.record:
                    self._cursor = (rng.record + 1, 0)
        return not scan.finished

    def report(self) -> dict:
        return self.scan.report()
