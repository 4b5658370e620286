"""The longest common subsequence (LCS) family: validate, then dispatch to a variant's kernels.

Two symbols match when their IUPAC base sets intersect. Callers pay only for
what they ask (edlib's task ladder): ``task="length"`` runs one score pass in
O(m + n) memory; ``task="lcs"`` also recovers one LCS and its index pairs with
Hirschberg's linear-space rule, driven by the same variant's kernels. On the
``cuda`` backend the score passes (and the recovery's last-row passes) run on
the GPU (engine/lcs/cuda.py, imported only for cuda jobs).

Examples
--------
>>> res = solve("ACCGGTT", "ACGTAGT", backend="serial")
>>> res.length, res.lcs
(5, 'ACGGT')
>>> res.pairs.tolist()
[[1, 1], [2, 2], [4, 3], [5, 6], [6, 7]]
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generator

import numpy as np

from engine import config, registry
from engine.jobs import (CancelToken, Job, Progress, RunInfo, SliceClock, check_threads,
                         drive, now)
from engine.lcs.cuda_options import cuda_params
from engine.lcs.spec import SPEC
from engine.sequences import DECODE_TABLE, Record, encode

__all__ = ["LcsResult", "SPEC", "iter_solve", "length", "make_job", "solve"]

TASKS = ("lcs", "length")


@dataclass(frozen=True, eq=False)
class LcsResult:
    """The answer of one lcs job.

    Attributes
    ----------
    length : int or None
        Length of an LCS; None only when the run was cancelled before it was known.
    lcs : str or None
        One LCS (None for ``task="length"``). Each symbol is the intersection of the
        two matched base sets, so it is the shared base itself on plain ACGT input.
        After a cancel it is the prefix recovered so far.
    pairs : numpy.ndarray or None
        ``(k, 2)`` int64 array of 1-based ``(a_pos, b_pos)``, increasing in both, in the
        loaded records' coordinates (``Record.offset`` added): the alignment path the GUI
        draws over the heatmap.
    snapshot : numpy.ndarray or None
        The last uint16 heatmap of the DP matrix (``job.snapshots`` only); values
        are L >> s, with s chosen so that min(m, n) fits in 16 bits.
    snapshot_shape : tuple or None
        The full (m, n) size that ``snapshot`` stands for.
    """

    info: RunInfo
    task: str
    a_id: str
    b_id: str
    a_length: int
    b_length: int
    length: int | None
    lcs: str | None = None
    pairs: np.ndarray | None = None
    snapshot: np.ndarray | None = None
    snapshot_shape: tuple[int, int] | None = None


def _record(value, role: str) -> Record:
    if isinstance(value, Record):
        return value
    if isinstance(value, str):
        return Record(role, encode(value, record_id=role))
    raise ValueError(f"{role} must be a Record or a sequence string, got {type(value).__name__}")


def make_job(a, b, *, variant: str | None = None, backend: str | None = None,
             parallel: str | None = None, task: str = "lcs", threads: int | None = None,
             snapshots: bool = False, threads_per_block: int | None = None) -> Job:
    """Check every argument and return a :class:`~engine.jobs.Job` with defaults filled in.

    Parameters
    ----------
    a, b : Record or str
        The two sequences (a str is read as a literal sequence).
    variant : {'rows', 'wavefront', 'bitparallel'}, optional
        Default: the fastest, ``bitparallel``.
    backend : {'serial', 'multicore', 'cuda'}, optional
        Default: the fastest available.
    parallel : {'tiled', 'diagonal'}, optional
        wavefront/cuda only: anti-diagonals inside warp-wide bands (``tiled``, the
        default), or the seed study's one launch per anti-diagonal (``diagonal``).
    task : {'lcs', 'length'}
        ``length`` stops after the score pass.
    threads : int, optional
        Threads for multicore (default: all numba threads).
    snapshots : bool
        Also run a full score pass that samples the DP matrix for the GUI.
    threads_per_block : int, optional
        cuda only (default ``engine.config.LCS_CUDA_THREADS_PER_BLOCK``); the band
        kernels take whole warps above 32.

    Raises
    ------
    ValueError
        On an unknown variant, backend, parallel form or task, threads < 1, a CUDA
        option on a CPU backend, or an input that is neither a Record nor a sequence
        string (or that holds bad characters).
    """
    if task not in TASKS:
        raise ValueError(f"task must be 'lcs' or 'length', got {task!r}")
    threads = check_threads(threads)
    if not isinstance(snapshots, bool):
        raise ValueError(f"snapshots must be True or False, got {snapshots!r}")
    rec_a, rec_b = _record(a, "a"), _record(b, "b")
    if len(rec_a) == 0 or len(rec_b) == 0:
        raise ValueError("lcs needs two non-empty sequences")
    sel = registry.resolve(SPEC, variant, backend, parallel, None)
    params = {"task": task}
    params.update(cuda_params(sel.variant, sel.backend, sel.parallel, threads_per_block))
    return Job(family="lcs", inputs={"a": (rec_a,), "b": (rec_b,)}, variant=sel.variant,
               backend=sel.backend, parallel=sel.parallel, params=params, threads=threads,
               snapshots=snapshots)


def solve(a, b, **options) -> LcsResult:
    """Run an lcs job to completion (see :func:`make_job` for the options)."""
    return drive(iter_solve(make_job(a, b, **options)))


def length(a, b, **options) -> int:
    """The LCS length alone: one score pass, O(m + n) memory.

    Notes
    -----
    ``bitparallel`` does ceil(m/64) word operations per symbol of ``b``
    (Allison & Dix 1986; Hyyrö 2004).

    Examples
    --------
    >>> length("ACGTN", "TTGCA", backend="serial")
    2
    """
    return solve(a, b, task="length", **options).length


def _warm_up(mod, backend: str) -> None:
    """Compile (or load from the cache) every kernel a job uses, on a tiny input."""
    from engine.lcs import driver
    from engine.lcs.cpu_grid import BITS, traceback

    tiny = np.array([1, 2, 4, 8, 15, 1, 2], dtype=np.uint8)
    p = driver.Pass(mod, tiny, tiny[::-1], backend, BITS)
    for _ in driver.drive(p, lambda: 1 << 30, np.zeros(1, dtype=np.uint8)):
        pass
    traceback(p.bits(), tiny.shape[0], tiny.shape[0], np.empty((7, 2), dtype=np.int64))


def _cuda_passes(job: Job, abort: np.ndarray):
    """The GPU side of a cuda job (engine.lcs.cuda, and numba.cuda, imported only here)."""
    from engine.lcs.cuda import CudaPasses

    return CudaPasses(job, abort)


def _compiled(mod, backend: str) -> bool:
    from engine.lcs.cpu_grid import traceback

    sweep = mod.sweep_serial if backend == "serial" else mod.sweep_multicore
    return bool(sweep.signatures) and bool(traceback.signatures)


class _Meter:
    """Times each kernel call, sizes the next one and counts cells."""

    def __init__(self, job: Job) -> None:
        self.job = job
        self.clock = SliceClock(first=1 << 20, maximum=1 << 42)
        self.cells = 0
        self.elapsed = 0.0

    def budget(self) -> int:
        return self.clock.size

    def run(self, steps) -> Generator[None, None, None]:
        """Advance ``steps`` (a generator of cells per kernel call). Yields after a call
        once half a slice has passed since the last yield (recovery makes many small
        calls, and each report copies the pairs found so far), and once at the end."""
        from engine.lcs.driver import set_threads

        reported = now()
        pending = False
        while True:
            if self.job.backend == "multicore":
                set_threads(self.job.threads)
            t0 = now()
            try:
                cells = next(steps)
            except StopIteration:
                if pending:
                    yield
                return
            t1 = now()
            self.elapsed += t1 - t0
            self.cells += cells
            self.clock.update(cells, t1 - t0)
            pending = True
            if t1 - reported >= config.SLICE_SECONDS / 2:
                reported, pending = t1, False
                yield


def _lcs_text(a: np.ndarray, b: np.ndarray, pairs0: np.ndarray) -> str:
    common = a[pairs0[:, 0]] & b[pairs0[:, 1]]
    return DECODE_TABLE[common].tobytes().decode("ascii")


def iter_solve(job: Job, cancel: CancelToken | None = None) -> Generator[Progress, None, LcsResult]:
    """Yield :class:`Progress` about every 100 ms; return an :class:`LcsResult`.

    Phases: a score pass over the whole matrix when ``task="length"`` or when
    snapshots are asked for (the GUI's live heatmap), then, for ``task="lcs"``,
    the recovery. After ``cancel.cancel()`` it returns at the next check with
    ``info.complete=False``, the length if the score pass had finished, and the
    prefix of the LCS recovered so far.
    """
    from engine.lcs import driver
    from engine.lcs.cpu_grid import PLAIN, SNAPSHOT, make_sampling

    cancel = cancel or CancelToken()
    rec_a, rec_b = job.inputs["a"][0], job.inputs["b"][0]
    first = np.array([rec_a.offset + 1, rec_b.offset + 1], dtype=np.int64)  # records' coordinates
    a = np.ascontiguousarray(rec_a.codes, dtype=np.uint8)
    b = np.ascontiguousarray(rec_b.codes, dtype=np.uint8)
    m, n = a.shape[0], b.shape[0]
    task = job.params["task"]
    mod = driver.kernels(job.variant)
    score_pass = task == "length" or job.snapshots
    score_mode = SNAPSHOT if job.snapshots else PLAIN
    gpu = _cuda_passes(job, cancel.flag) if job.backend == "cuda" else None
    if gpu is not None:
        # Score passes on the GPU; recovery leaves on the CPU (serial kernels of the variant).
        new_pass = gpu.new_pass
        recovery = (driver.Recovery(mod, a, b, "serial", gpu.max_words, gpu.new_pass)
                    if task == "lcs" else None)
        compiled = gpu.compiled() and (task != "lcs" or _compiled(mod, "serial"))
    else:
        def new_pass(a_, b_, mode, sampling=None):
            return driver.Pass(mod, a_, b_, job.backend, mode, sampling)

        recovery = driver.Recovery(mod, a, b, job.backend) if task == "lcs" else None
        compiled = _compiled(mod, job.backend)

    def later() -> int:
        """Cells the recovery still has to run (an estimate until it is under way)."""
        return recovery.remaining() if recovery is not None else 0

    if job.backend == "multicore":
        driver.set_threads(job.threads)  # before any Pass: chunks follow the thread count
    if not compiled:
        yield Progress(0, (m * n if score_pass else 0) + later(), 0, 0, 0.0, phase="compiling",
                       message="compiling kernels…")
        if gpu is None:
            _warm_up(mod, job.backend)
        else:
            gpu.warm_up(([score_mode] if score_pass else []) + ([PLAIN] if task == "lcs" else []))
            if task == "lcs":
                _warm_up(mod, "serial")

    meter = _Meter(job)
    sampling = make_sampling(m, n, config.SNAPSHOT_MAX_SIDE) if job.snapshots else None
    shape = (m, n) if job.snapshots else None
    found: int | None = None
    complete = True

    if score_pass:
        t0 = now()
        p = new_pass(a, b, score_mode, sampling)
        meter.elapsed += now() - t0  # the match words and buffers are part of the solve
        for _ in meter.run(driver.drive(p, meter.budget, cancel.flag)):
            image = sampling.image.copy() if sampling is not None else None
            yield Progress(meter.cells, meter.cells + (p.total - p.done) + later(), meter.cells,
                           meter.cells, meter.elapsed, message="score pass",
                           snapshot=image, snapshot_shape=shape)
            if cancel.cancelled:
                break
        if p.finished:
            t0 = now()
            found = int(p.last_row()[-1])
            meter.elapsed += now() - t0  # on the GPU, the copy of the last row back
        else:
            complete = False

    pairs0 = None
    if recovery is not None and complete:
        for _ in meter.run(recovery.steps(meter.budget, cancel.flag)):
            yield Progress(meter.cells, meter.cells + later(), meter.cells, meter.cells,
                           meter.elapsed, message="recovering the LCS", snapshot_shape=shape,
                           partial=recovery.pairs() + first)
            if cancel.cancelled:
                break
        if not recovery.finished:
            complete = False
        pairs0 = recovery.pairs()
        if complete:
            found = int(pairs0.shape[0])
    elif recovery is not None:
        pairs0 = np.zeros((0, 2), dtype=np.int64)

    info = RunInfo("lcs", job.variant, job.backend, job.parallel, (), meter.elapsed, meter.cells,
                   meter.cells, complete, job.threads)
    lcs_text = _lcs_text(a, b, pairs0) if pairs0 is not None else None
    return LcsResult(info, task, rec_a.id, rec_b.id, m, n, found, lcs_text,
                     pairs0 + first if pairs0 is not None else None,
                     sampling.image.copy() if sampling is not None else None, shape)
