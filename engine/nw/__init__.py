"""Needleman-Wunsch global alignment with linear gaps: validate, then dispatch.

H[i][j] is the best score of aligning a[:i] with b[:j]; H[i][0] = i*gap,
H[0][j] = j*gap and

    H[i][j] = max(H[i-1][j-1] + s(a_i, b_j), H[i-1][j] + gap, H[i][j-1] + gap)

where s is ``match`` when the IUPAC base sets of a_i and b_j intersect and
``mismatch`` otherwise. The score pass keeps one row; the traceback uses
Hirschberg's linear-space recursion (with the variant's own kernel for its
passes) above a small full-matrix threshold.

Examples
--------
>>> res = solve("GATTACA", "GCATGCT", match=1, mismatch=-1, gap=-1, backend="serial")
>>> res.score, res.alignment.aligned_a, res.alignment.aligned_b, res.alignment.cigar
(0, 'G-ATTACA', 'GCA-TGCT', '1=1I1=1D1=1X1=1X')
>>> score("ACGTTAGCA", "ACGTAGCNA", backend="serial")   # N matches any base
6
>>> res.to_records(coords="bed")[0]["start"], res.to_records()[0]["a_start"]
(0, 1)
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Generator

import numpy as np

from engine import api, config, registry
from engine.columns import Tabular
from engine.jobs import CancelToken, Job, Progress, RunInfo, check_threads, drive
from engine.nw.alignment import Alignment
from engine.nw.cuda_options import cuda_params
from engine.nw.scoring import Scores
from engine.nw.spec import SPEC
from engine.sequences import Record
from engine.slices import (Meter, compile_once, numba_threads, run_info, run_slices, tiny_job,
                           warm_key)

__all__ = ["Alignment", "NwResult", "SPEC", "Scores", "iter_solve", "make_job", "score", "solve"]


@dataclass(frozen=True)
class NwResult(Tabular):
    """The answer of one nw job.

    ``score`` is None only when the job was cancelled before the score pass
    ended; ``alignment`` is None for score-only jobs and cancelled tracebacks.
    ``snapshot`` (uint16: 0 = not computed, else 1 + (H - snapshot_base) // snapshot_step,
    the scaling of :func:`engine.nw.scoring.snapshot_scale`, also used by the progress
    reports) samples the score matrix at ``snapshot_rows`` x ``snapshot_cols`` of its
    ``snapshot_shape``; it is None unless the job asked for snapshots.
    """

    info: RunInfo
    a_id: str
    b_id: str
    a_length: int
    b_length: int
    scores: Scores
    score: int | None
    alignment: Alignment | None = None
    snapshot: np.ndarray | None = None
    snapshot_rows: np.ndarray | None = None
    snapshot_cols: np.ndarray | None = None
    snapshot_shape: tuple[int, int] | None = None
    snapshot_base: int | None = None
    snapshot_step: int | None = None

    def table(self):
        """One row: the aligned spans of a and b (1-based; a global alignment spans both
        records whole), the score and, with a traceback, identity, CIGAR and the aligned
        texts. In ``bed`` the interval is a's span."""
        a_off = self.alignment.a_offset if self.alignment is not None else 0
        b_off = self.alignment.b_offset if self.alignment is not None else 0
        data = {"a_id": [self.a_id], "a_start": [a_off + 1], "a_end": [a_off + self.a_length],
                "b_id": [self.b_id], "b_start": [b_off + 1], "b_end": [b_off + self.b_length],
                "score": [self.score]}
        al = self.alignment
        data.update({"identity": [None if al is None else al.identity],
                     "cigar": [None if al is None else al.cigar],
                     "aligned_a": [None if al is None else al.aligned_a],
                     "aligned_b": [None if al is None else al.aligned_b]})
        return data, ("a_id", "a_start", "a_end"), (("b_start", "b_end"),)


def _first_record(value, role: str) -> Record:
    record = api.one_record(value, role)
    if len(record) == 0:
        raise ValueError(f"sequence {role} ('{record.id}') is empty")
    return record


def make_job(a, b, *, match: int = 1, mismatch: int = 0, gap: int = -1, traceback: bool = True,
             variant=None, backend=None, parallel=None, flags=None, threads: int | None = None,
             snapshots: bool = False, threads_per_block: int | None = None,
             blocks: int | None = None) -> Job:
    """Check every argument and return a :class:`~engine.jobs.Job` with defaults filled in.

    Parameters
    ----------
    a, b : str, path, SeqRecord(s) or Record(s)
        The two sequences, in any form of :func:`engine.api.records` (of several records,
        the first).
    match, mismatch, gap : int
        Linear scores (|score| <= 1000); defaults +1 / 0 / -1.
    traceback : bool
        False computes the score only (one row of memory, no alignment).
    variant : {'rows', 'diagonal', 'prefix'}, optional
    backend : {'serial', 'multicore', 'cuda'}, optional
        cuda offers diagonal and prefix.
    parallel : {'multi-block', 'one-block'}, optional
        The cuda form (default multi-block); the CPU backends have none.
    flags : collection of str, optional
        ``tiled`` (cuda multi-block diagonal, on by default): bands of rows swept as a
        tiled wavefront in one persistent launch, instead of one launch per anti-diagonal.
    threads : int, optional
        Threads for multicore.
    snapshots : bool
        Attach downsampled uint16 images of the score matrix to the progress reports.
    threads_per_block, blocks : int, optional
        cuda only; 0 or None picks them (``engine.config.NW_CUDA_THREADS_PER_BLOCK``; one
        block count for the input and the GPU). One-block forms take no block count.

    Raises
    ------
    ValueError
        On a bad score, an empty sequence, an unknown variant/backend/form/flag, threads
        < 1, a CUDA option on a CPU backend, or a problem too large for 32-bit CUDA scores.
    """
    sc = Scores.checked(match, mismatch, gap)
    # The registry's rule, as on the command line and in the GUI.
    checked = registry.check_params(SPEC, threads_per_block=threads_per_block, blocks=blocks)
    threads_per_block, blocks = checked["threads_per_block"], checked["blocks"]
    threads = check_threads(threads)
    ra, rb = _first_record(a, "A"), _first_record(b, "B")
    sel = registry.resolve(SPEC, variant, backend, parallel, flags)
    params = {"match": sc.match, "mismatch": sc.mismatch, "gap": sc.gap,
              "traceback": bool(traceback)}
    params.update(cuda_params(sel.variant, sel.backend, sel.parallel, sel.flags, len(ra), len(rb),
                              sc, threads_per_block, blocks))
    return Job(family="nw", inputs={"a": (ra,), "b": (rb,)}, variant=sel.variant,
               backend=sel.backend, parallel=sel.parallel, flags=sel.flags, params=params,
               threads=threads, snapshots=bool(snapshots))


def solve(a, b, *, progress: bool = False, **options) -> NwResult:
    """Run an nw job to completion (see :func:`make_job` for the options; ``progress=True``
    shows a tqdm bar). nw has no k: ``match``, ``mismatch`` and ``gap`` score it.

    Notes
    -----
    O(len(a) * len(b)) time; O(len(a) + len(b)) memory, plus at most
    ``config.NW_FULL_MATRIX_CELLS`` bytes for a traceback's base cases.
    Hirschberg, D. S. (1975), CACM 18(6); Aluru, S. et al. (2003), JPDC 63(3).
    """
    return api.solve(make_job, iter_solve, a, b, progress=progress, **options)


def score(a, b, **options) -> int:
    """The optimal global score only (the fast path: no traceback)."""
    return solve(a, b, traceback=False, **options).score


def iter_solve(job: Job, cancel: CancelToken | None = None) -> Generator[Progress, None, NwResult]:
    """Yield :class:`Progress` about every 100 ms; return an :class:`NwResult`.

    The score pass sweeps bands of rows (with snapshots when ``job.snapshots``);
    a traceback then runs Hirschberg's passes, reusing the score pass's middle
    row. After ``cancel.cancel()`` the generator returns at the next check with
    ``info.complete = False``, the score if the score pass had finished, and the
    last snapshot.
    """
    from engine.nw.alignment import build
    from engine.nw.driver import Recorder, ScoreRunner, Sweep, TracebackRunner, make_kernels

    cancel = cancel or CancelToken()
    ra, rb = job.inputs["a"][0], job.inputs["b"][0]
    a = np.ascontiguousarray(ra.codes, dtype=np.uint8)
    b = np.ascontiguousarray(rb.codes, dtype=np.uint8)
    m, n = a.shape[0], b.shape[0]
    p = job.params
    sc = Scores(p["match"], p["mismatch"], p["gap"])
    traceback = p["traceback"]
    meter = Meter(job, threads=numba_threads(job))
    kernels = make_kernels(job)
    vtype = kernels.value_type(m, n, sc)
    dtype, offset = vtype
    # Hirschberg's passes after the score pass: at most 1.5 m n (halves at every level).
    later = int(1.5 * m * n) if traceback else 0
    # (the tiny job's scores fit int16: a larger job's type loads in its first slice)
    yield from compile_once(warm_key(job),
                            lambda: drive(iter_solve(tiny_job(job, "a", "b"))), m * n + later)

    recorder = Recorder(m, n, sc, dtype, offset, job.snapshots)
    big = traceback and (m + 1) * (n + 1) > config.NW_FULL_MATRIX_CELLS
    score_pass = ScoreRunner(Sweep(kernels, a, b, sc, vtype, cancel.flag, recorder,
                                   keep=m // 2 if big else None), recorder)

    def result(score_value=None, alignment=None):
        if alignment is not None and (ra.offset or rb.offset):  # the records' coordinates
            alignment = replace(alignment, a_offset=ra.offset, b_offset=rb.offset)
        image = recorder.image()
        shown = image is not None
        return NwResult(run_info(job, meter), ra.id, rb.id, m, n, sc, score_value, alignment,
                        image, recorder.rows if shown else None, recorder.cols if shown else None,
                        recorder.shape if shown else None, recorder.base if shown else None,
                        recorder.step if shown else None)

    if not (yield from run_slices(score_pass, meter, cancel, total_after=lambda: later)):
        return result()
    best = int(score_pass.sweep.row[n]) + offset
    if not traceback:
        return result(best)

    tracing = TracebackRunner(kernels, a, b, sc, vtype, cancel.flag, recorder,
                              top_row=score_pass.sweep.kept)
    if not (yield from run_slices(tracing, meter, cancel, done_before=m * n)):
        return result(best)
    alignment = meter.timed(lambda: build(a, b, tracing.answer))
    found = alignment.matches * sc.match + alignment.mismatches * sc.mismatch + alignment.gaps * sc.gap
    if found != best:
        raise RuntimeError(f"internal error: traceback scores {found}, score pass {best}")
    return result(best, alignment)
