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
>>> res.to_records()[:2]
[{'a_id': 'seq1', 'a_pos': 1, 'b_id': 'seq1', 'b_pos': 1, 'symbol': 'A'}, {'a_id': 'seq1', 'a_pos': 2, 'b_id': 'seq1', 'b_pos': 2, 'symbol': 'C'}]
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generator

import numpy as np

from engine import api, config, registry
from engine.columns import Tabular
from engine.jobs import CancelToken, Job, Progress, RunInfo, check_threads, drive
from engine.lcs.cuda_options import cuda_params
from engine.lcs.spec import SPEC
from engine.slices import (Meter, compile_once, numba_threads, run_info, run_slices, tiny_job,
                           warm_key)

__all__ = ["LcsResult", "SPEC", "iter_solve", "length", "make_job", "solve"]

@dataclass(frozen=True, eq=False)
class LcsResult(Tabular):
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

    def table(self):
        """One row per LCS symbol, as the CSV: ``a_pos``, ``b_pos`` (1-based), the symbol;
        in ``bed`` each is the 1-nt interval of a (``b_pos`` 0-based). ``task="length"``:
        one row with the length, no interval."""
        if self.pairs is None:
            return ({"a_id": [self.a_id], "b_id": [self.b_id], "a_length": [self.a_length],
                     "b_length": [self.b_length], "length": [self.length]}, None, ())
        n = self.pairs.shape[0]
        data = {"a_id": [self.a_id] * n, "a_pos": self.pairs[:, 0], "b_id": [self.b_id] * n,
                "b_pos": self.pairs[:, 1], "symbol": list(self.lcs or "")[:n]}
        return data, ("a_id", "a_pos", "a_pos"), (("b_pos", "b_pos"),)


def make_job(a, b, *, variant: str | None = None, backend: str | None = None,
             parallel: str | None = None, task: str = "lcs", threads: int | None = None,
             snapshots: bool = False, threads_per_block: int | None = None) -> Job:
    """Check every argument and return a :class:`~engine.jobs.Job` with defaults filled in.

    Parameters
    ----------
    a, b : str, path, SeqRecord or Record
        The two sequences, in any form of :func:`engine.api.records` (of several records,
        the first).
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
    # The registry's rule for every parameter, as on the command line and in the GUI.
    checked = registry.check_params(SPEC, task=task, threads_per_block=threads_per_block)
    task, threads_per_block = checked["task"], checked["threads_per_block"]
    threads = check_threads(threads)
    if not isinstance(snapshots, bool):
        raise ValueError(f"snapshots must be True or False, got {snapshots!r}")
    rec_a, rec_b = api.one_record(a, "a"), api.one_record(b, "b")
    if len(rec_a) == 0 or len(rec_b) == 0:
        raise ValueError("lcs needs two non-empty sequences")
    sel = registry.resolve(SPEC, variant, backend, parallel, None)
    params = {"task": task}
    params.update(cuda_params(sel.variant, sel.backend, sel.parallel, threads_per_block))
    return Job(family="lcs", inputs={"a": (rec_a,), "b": (rec_b,)}, variant=sel.variant,
               backend=sel.backend, parallel=sel.parallel, params=params, threads=threads,
               snapshots=snapshots)


def solve(a, b, *, progress: bool = False, **options) -> LcsResult:
    """Run an lcs job to completion (see :func:`make_job` for the options; ``progress=True``
    shows a tqdm bar). lcs has no k."""
    return api.solve(make_job, iter_solve, a, b, progress=progress, **options)


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


def iter_solve(job: Job, cancel: CancelToken | None = None) -> Generator[Progress, None, LcsResult]:
    """Yield :class:`Progress` about every 100 ms; return an :class:`LcsResult`.

    Phases: a score pass over the whole matrix when ``task="length"`` or when
    snapshots are asked for (the GUI's live heatmap), then, for ``task="lcs"``,
    the recovery. After ``cancel.cancel()`` it returns at the next check with
    ``info.complete=False``, the length if the score pass had finished, and the
    prefix of the LCS recovered so far.
    """
    from engine.lcs.cpu_common import make_sampling
    from engine.lcs.driver import Kernels, RecoveryRunner, ScoreRunner, lcs_text

    cancel = cancel or CancelToken()
    rec_a, rec_b = job.inputs["a"][0], job.inputs["b"][0]
    a = np.ascontiguousarray(rec_a.codes, dtype=np.uint8)
    b = np.ascontiguousarray(rec_b.codes, dtype=np.uint8)
    m, n = a.shape[0], b.shape[0]
    task = job.params["task"]
    meter = Meter(job, threads=numba_threads(job))  # before any pass: chunks follow the threads
    kernels = Kernels(job, cancel.flag)
    shape = (m, n) if job.snapshots else None
    first = np.array([rec_a.offset + 1, rec_b.offset + 1], dtype=np.int64)  # records' coordinates
    recovery = (RecoveryRunner(kernels.recovery(a, b), cancel.flag, shape, first)
                if task == "lcs" else None)

    def later() -> int:
        """Cells the recovery still has to run (an estimate until it is under way)."""
        return recovery.total if recovery is not None else 0

    yield from compile_once(warm_key(job), lambda: drive(iter_solve(tiny_job(job, "a", "b"))),
                            (m * n if kernels.score_pass else 0) + later())

    sampling = make_sampling(m, n, config.SNAPSHOT_MAX_SIDE) if job.snapshots else None
    found: int | None = None
    score_cells = 0
    if kernels.score_pass:
        # The match words and buffers (and on the GPU, the last row's copy back) are solve time.
        p = meter.timed(lambda: kernels.new_pass(a, b, kernels.score_mode, sampling))
        if (yield from run_slices(ScoreRunner(p, cancel.flag, sampling, shape), meter, cancel,
                                  total_after=later)):
            found = meter.timed(lambda: int(p.last_row()[-1]))
        score_cells = p.done

    pairs0 = None
    if recovery is not None:
        if meter.complete:
            yield from run_slices(recovery, meter, cancel, done_before=score_cells)
        pairs0 = recovery.recovery.pairs()  # a prefix of one LCS after a cancel; none unrun
        if meter.complete:
            found = int(pairs0.shape[0])

    return LcsResult(run_info(job, meter), task, rec_a.id, rec_b.id, m, n, found,
                     lcs_text(a, b, pairs0) if pairs0 is not None else None,
                     pairs0 + first if pairs0 is not None else None,
                     sampling.image.copy() if sampling is not None else None, shape)
