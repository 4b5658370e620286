"""The k-difference primer family: validate, then dispatch to a variant's kernels.

For each start r of each target record, c(r) is the length of the longest
prefix of alpha[r:] that occurs in a background record (or, with both strands,
its reverse complement) within k-1 edits; the candidate is alpha[r:r+c+1]. The
scan of a record stops at the first r whose whole suffix occurs.

Examples
--------
>>> from engine.sequences import load
>>> res = solve(load("ACTG"), load("AGCAAG"), 2, strands="forward", backend="serial")
>>> [(c.start, c.end, c.sequence) for c in res.candidates]
[(1, 3, 'ACT'), (2, 4, 'CTG')]
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Generator

import numba
import numpy as np

from engine import config, registry
from engine.jobs import (CancelToken, Job, Progress, RunInfo, SliceClock, check_int, check_threads,
                         drive, now)
from engine.kdiff.cuda_options import cuda_params
from engine.kdiff.spec import SPEC
from engine.sequences import Record, concat_with_offsets, decode, reverse_complement_record

__all__ = ["Candidate", "KdiffResult", "SPEC", "iter_solve", "make_job", "solve"]


@dataclass(frozen=True)
class Candidate:
    """A candidate primer region, 1-based with an inclusive end (as in GenBank)."""

    target_id: str
    start: int
    end: int
    sequence: str

    @property
    def length(self) -> int:
        return self.end - self.start + 1


@dataclass(frozen=True)
class KdiffResult:
    info: RunInfo
    k: int
    strands: str
    candidates: tuple[Candidate, ...]
    #: target id -> c(r) for every settled r (the specificity profile; candidate length is c+1).
    profiles: dict = field(default_factory=dict)
    #: target id -> number of start positions settled (all of them unless cancelled).
    settled: dict = field(default_factory=dict)


def make_job(target, background, k: int, *, variant=None, backend=None, parallel=None, flags=None,
             strands: str = "both", threads: int | None = None, count_comparisons: bool = False,
             threads_per_block: int | None = None, prefetch_factor: int | None = None) -> Job:
    """Check every argument and return a :class:`~engine.jobs.Job` with defaults filled in.

    ``threads_per_block`` and ``prefetch_factor`` (the seed study's c) apply to the cuda
    backend only; they become ``Job.params`` keys of the same names (defaults:
    ``engine.config.KDIFF_CUDA_*``).
    """
    k = check_int("k", k, 1)
    if strands not in ("both", "forward"):
        raise ValueError(f"strands must be 'both' or 'forward', got {strands!r}")
    threads = check_threads(threads)
    target, background = tuple(target), tuple(background)
    if not target:
        raise ValueError("no target records")
    if not background:
        raise ValueError("no background records")
    sel = registry.resolve(SPEC, variant, backend, parallel, flags)
    params = {"k": int(k), "strands": strands}
    params.update(cuda_params(sel.variant, sel.backend, sel.flags, threads_per_block, prefetch_factor))
    return Job(family="kdiff", inputs={"target": target, "background": background},
               variant=sel.variant, backend=sel.backend, parallel=sel.parallel, flags=sel.flags,
               params=params, threads=threads, count_comparisons=count_comparisons)


def solve(target, background, k: int, **options) -> KdiffResult:
    """Run a kdiff job to completion (see :func:`make_job` for the options)."""
    return drive(iter_solve(make_job(target, background, k, **options)))


@lru_cache(maxsize=None)
def _kernels(variant: str, counting: bool):
    if variant == "bitparallel":
        from engine.kdiff import cpu_bitparallel as mod
    elif variant == "conventional":
        from engine.kdiff import cpu_conventional as mod
    else:
        from engine.kdiff import cpu_alternative as mod
    return mod.build(counting)


class _SliceRunner:
    """Calls the right kernel for a slice [r_lo, r_hi) of one target record."""

    def __init__(self, job: Job, beta: np.ndarray, offsets: np.ndarray, abort: np.ndarray):
        self.job = job
        self.beta, self.offsets, self.abort = beta, offsets, abort
        self.K = job.params["k"] - 1
        self.flags = job.flags
        # CUDA jobs hand every slice to engine.kdiff.cuda (imported only here).
        self.device = _cuda_runner(job, beta, offsets, abort) if job.backend == "cuda" else None
        self.kernels = None if self.device else _kernels(job.variant, job.count_comparisons)

    def min_slice(self) -> int:
        """Enough start positions per slice to keep every thread busy."""
        if self.device is not None:
            return self.device.min_slice()
        if self.job.backend != "multicore":
            return 1
        threads = min(self.job.threads or numba.config.NUMBA_NUM_THREADS, numba.config.NUMBA_NUM_THREADS)
        per_task = config.KDIFF_BITPARALLEL_LANES if self.job.variant == "bitparallel" else 1
        return 2 * threads * per_task if self.job.parallel == "coarse" else 1

    def compiled(self) -> bool:
        if self.device is not None:
            return self.device.compiled()
        return all(getattr(k, "signatures", None) for k in self.kernels[1:])

    def __call__(self, alpha, r_lo, r_hi, out_c, counters) -> int:
        if self.device is not None:
            return self.device(alpha, r_lo, r_hi, out_c, counters)
        job, m_end = self.job, alpha.shape[0]
        args_tail = (self.beta, self.offsets, self.K)
        if job.backend == "multicore":
            numba.set_num_threads(min(job.threads or numba.config.NUMBA_NUM_THREADS,
                                      numba.config.NUMBA_NUM_THREADS))
        if job.variant == "bitparallel":
            lanes = config.KDIFF_BITPARALLEL_LANES
            if job.backend == "serial":
                return self.kernels[1](alpha, m_end, r_lo, r_hi, *args_tail, out_c, counters,
                                       self.abort, lanes)
            return self.kernels[2](alpha, m_end, r_lo, r_hi, *args_tail, out_c, counters,
                                   self.abort, lanes, numba.get_num_threads())
        early = "opt1" in self.flags if job.variant == "conventional" else "opt2" in self.flags
        if job.backend == "serial" or job.parallel == "coarse":
            kernel = self.kernels[1] if job.backend == "serial" else self.kernels[2]
            return kernel(alpha, m_end, r_lo, r_hi, *args_tail, early, out_c, counters, self.abort)
        return self._fine(alpha, r_lo, r_hi, out_c, counters, early)

    def _fine(self, alpha, r_lo, r_hi, out_c, counters, early) -> int:
        """Fine forms: one matrix (fine) or a batch (coarse+fine) per kernel call."""
        batch = 1 if self.job.parallel == "fine" else config.KDIFF_COARSE_FINE_BATCH
        opt3 = "opt3" in self.flags
        fine = self.kernels[3]
        nthreads = numba.get_num_threads()
        m_end = alpha.shape[0]
        r = r_lo
        while r < r_hi:
            width = min(batch, r_hi - r)
            starts = np.arange(r, r + width, dtype=np.int64)
            chunk = out_c[r - r_lo:r - r_lo + width]
            if self.job.variant == "conventional":
                ok = fine(alpha, m_end, starts, self.beta, self.offsets, self.K, early, opt3,
                          config.KDIFF_FINE_STRIPE_ROWS, chunk, counters, self.abort, nthreads)
            else:
                ok = fine(alpha, m_end, starts, self.beta, self.offsets, self.K, early, opt3,
                          chunk, counters, self.abort, nthreads)
            if not ok:
                return r - r_lo
            for q in range(width):
                if chunk[q] == m_end - (r + q):
                    return r - r_lo + q + 1
            r += width
        return r_hi - r_lo


def _cuda_runner(job: Job, beta: np.ndarray, offsets: np.ndarray, abort: np.ndarray):
    from engine.kdiff.cuda import CudaSliceRunner

    return CudaSliceRunner(job, beta, offsets, abort)


def _warm_up(runner: _SliceRunner) -> None:
    """Compile (or load from cache) every kernel the job uses, on a tiny input."""
    if runner.device is not None:
        runner.device.warm_up()
        return
    tiny_alpha = np.array([1, 2, 4, 8, 1, 2, 4, 8], dtype=np.uint8)
    beta, offsets = concat_with_offsets([Record("w", np.array([1, 2, 4, 8, 8], dtype=np.uint8))])
    saved = runner.beta, runner.offsets, runner.K
    runner.beta, runner.offsets, runner.K = beta, offsets, 1
    try:
        out = np.zeros(8, dtype=np.int64)
        runner(tiny_alpha, 0, 4, out, np.zeros(2, dtype=np.int64))
    finally:
        runner.beta, runner.offsets, runner.K = saved


def iter_solve(job: Job, cancel: CancelToken | None = None) -> Generator[Progress, None, KdiffResult]:
    """Yield :class:`Progress` every ~100 ms; return a :class:`KdiffResult`.

    After ``cancel.cancel()`` the generator returns at the next check with
    ``info.complete = False`` and every candidate settled so far.
    """
    cancel = cancel or CancelToken()
    k = job.params["k"]
    K = k - 1
    targets: tuple[Record, ...] = job.inputs["target"]
    backgrounds = list(job.inputs["background"])
    if job.params["strands"] == "both":
        backgrounds += [reverse_complement_record(r) for r in job.inputs["background"]]
    beta, offsets = concat_with_offsets(backgrounds)
    runner = _SliceRunner(job, beta, offsets, cancel.flag)

    # Start positions whose suffix is longer than k-1 (shorter ones always match).
    total = sum(max(0, len(t) - K) for t in targets)
    if not runner.compiled():
        yield Progress(0, total, 0, 0, 0.0, phase="compiling", message="compiling kernels…")
        _warm_up(runner)

    counters = np.zeros(2, dtype=np.int64)
    candidates: list[Candidate] = []
    profiles: dict[str, np.ndarray] = {}
    settled_by: dict[str, int] = {}
    done = 0
    elapsed = 0.0
    complete = True
    for target in targets:
        alpha = np.ascontiguousarray(target.codes)
        m = alpha.shape[0]
        r_end = max(0, m - K)
        cs = np.full(r_end, -1, dtype=np.int64)
        clock = SliceClock(first=runner.min_slice(), maximum=max(1, r_end))
        r = 0
        stopped = False
        while r < r_end and not stopped:
            if cancel.cancelled:
                complete = False
                break
            r_hi = min(r_end, r + clock.size)
            out = np.full(r_hi - r, -1, dtype=np.int64)
            t0 = now()
            asked = r_hi - r
            settled = runner(alpha, r, r_hi, out, counters)
            aborted = settled < asked
            dt = now() - t0
            elapsed += dt
            clock.update(settled, dt)
            for i in range(settled):
                c = int(out[i])
                cs[r + i] = c
                if c >= m - (r + i):
                    stopped = True
                    aborted = False
                    settled = i + 1
                    break
                candidates.append(Candidate(target.id, r + i + 1, r + i + c + 1,
                                            decode(alpha[r + i:r + i + c + 1])))
            done += settled
            r += settled
            if aborted:
                complete = False
                break
            yield Progress(done, total, int(counters[0]), int(counters[1]), elapsed,
                           partial=tuple(candidates))
        if stopped:
            done += r_end - r  # positions after the stop have no candidate by definition
            yield Progress(done, total, int(counters[0]), int(counters[1]), elapsed,
                           partial=tuple(candidates))
        profiles[target.id] = cs[:r]
        settled_by[target.id] = r
        if not complete:
            break
    info = RunInfo("kdiff", job.variant, job.backend, job.parallel, tuple(sorted(job.flags)),
                   elapsed, int(counters[0]), int(counters[1]), complete, job.threads)
    return KdiffResult(info, k, job.params["strands"], tuple(candidates), profiles, settled_by)
