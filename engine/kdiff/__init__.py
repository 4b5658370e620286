"""The k-difference primer family: validate, then dispatch to a variant's kernels.

For each start r of each target record, c(r) is the length of the longest
prefix of alpha[r:] that occurs in a background record (or, with both strands,
its reverse complement) within k-1 edits; the candidate is alpha[r:r+c+1]. The
scan of a record stops at the first r whose whole suffix occurs.

``k`` is a **minimum**: a candidate is at least k edits from every background substring
(in kmismatch and edit, k is a maximum). Arguments come as everywhere in the engine: the
target (where primers are wanted), then the background (where they must not bind); any
input form of :func:`engine.api.records`.

Examples
--------
>>> res = solve("ACTG", "AGCAAG", 2, strands="forward", backend="serial")
>>> [(c.start, c.end, c.sequence) for c in res.candidates]
[(1, 3, 'ACT'), (2, 4, 'CTG')]
>>> res.to_records(coords="bed")
[{'chrom': 'seq1', 'start': 0, 'end': 3, 'length': 3, 'sequence': 'ACT'}, {'chrom': 'seq1', 'start': 1, 'end': 4, 'length': 3, 'sequence': 'CTG'}]
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Generator

from engine import api, gaps, registry
from engine.jobs import CancelToken, Job, Progress, RunInfo, check_threads
from engine.kdiff.candidates import Candidate, CandidateTable
from engine.kdiff.closest import ClosestMatch, closest_match, iter_closest_match
from engine.kdiff.spec import ONE_K_FLAGS, SPEC
from engine.slices import Meter, numba_threads, run_info

__all__ = ["Candidate", "CandidateTable", "ClosestMatch", "KdiffResult", "SPEC", "closest_match",
           "iter_closest_match", "iter_solve", "landscape", "make_job", "solve"]


@dataclass(frozen=True)
class KdiffResult:
    info: RunInfo
    k: int
    strands: str
    #: a sequence of :class:`Candidate` over columns (``to_pandas()`` with pandas installed).
    candidates: CandidateTable
    #: target id -> c(r) for every settled r (the specificity profile; candidate length is c+1).
    profiles: dict = field(default_factory=dict)
    #: target id -> number of start positions settled (all of them unless cancelled).
    settled: dict = field(default_factory=dict)
    #: the background's assembly gaps and ambiguity codes (:class:`engine.gaps.GapSummary`).
    background_summary: gaps.GapSummary | None = None
    #: ``all_k`` jobs: the candidate length of every start at every k in 1..k
    #: (:class:`engine.kdiff.landscape_table.Landscape`; ``candidates`` are those at k).
    landscape: object = None

    def to_pandas(self, coords: str = "one-based"):
        """The candidates as a pandas DataFrame: the CSV's columns (``coords="one-based"``)
        or ``chrom, start, end`` half-open first (``"bed"``; engine.columns)."""
        return self.candidates.to_pandas(coords)

    def to_records(self, coords: str = "one-based") -> list[dict]:
        """The candidates as plain dicts (no pandas needed), columns as :meth:`to_pandas`."""
        return self.candidates.to_records(coords)


def make_job(target, background, k: int, *, variant=None, backend=None, parallel=None, flags=None,
             strands: str = "both", threads: int | None = None, count_comparisons: bool = False,
             threads_per_block: int | None = None, prefetch_factor: int | None = None,
             scheduler: str | None = None, gap_min: int | None = None,
             avoid_masked: bool = False, all_k: bool = False) -> Job:
    """Check every argument and return a :class:`~engine.jobs.Job` with defaults filled in.

    ``target`` then ``background``: any form of :func:`engine.api.records`. ``k`` is a
    **minimum** (k >= 1): a candidate is at least k edits from every background substring.
    Runs of at least ``gap_min`` N in the target and the background are assembly gaps
    (engine.gaps): they match nothing, and no candidate holds a gap base.
    ``avoid_masked``: drop the candidates whose 3'-most 5 bases touch a soft-masked (lower
    case) base of the target (engine.softmask).

    ``threads_per_block`` and ``prefetch_factor`` (the seed study's c) apply to the cuda
    backend only; they become ``Job.params`` keys of the same names (defaults:
    ``engine.config.KDIFF_CUDA_*``). ``scheduler`` applies to the dask backend only: a
    scheduler's address (``tcp://HOST:PORT``; None or empty: a local cluster).

    ``all_k``: every k in 1..k at once (the result's ``landscape``), in the one scan at k.
    The CPU kernels do it (with a streamed background too), and bitparallel on CUDA
    (without flags: its default flags but neighbours), on Dask as well (GPU workers run
    the CUDA kernels, CPU workers the CPU ones); CUDA's conventional and alternative, the
    neighbours flag and the fine forms refuse by name.
    """
    # The registry's rule for every parameter, as on the command line and in the GUI.
    checked = registry.check_params(SPEC, k=k, strands=strands, gap_min=gap_min,
                                    threads_per_block=threads_per_block,
                                    prefetch_factor=prefetch_factor, scheduler=scheduler)
    k, strands, gap_min = checked["k"], checked["strands"], checked["gap_min"]
    threads_per_block, prefetch_factor = checked["threads_per_block"], checked["prefetch_factor"]
    threads = check_threads(threads)
    target, background = api.records(target, "target"), api.records(background, "background")
    if not target:
        raise ValueError("no target records")
    if not background:
        raise ValueError("no background records")
    sel = registry.resolve(SPEC, variant, backend, parallel, flags)
    if all_k and flags is None and sel.flags & ONE_K_FLAGS:
        # the neighbours' bounds are on one k's c(r): the defaults but it
        sel = registry.resolve(SPEC, sel.variant, sel.backend, sel.parallel,
                               sel.flags - ONE_K_FLAGS)
    gap_min = gaps.resolve_gap_min(background, gap_min)  # (unset: a store background's own)
    target = tuple(gaps.as_background(target, gap_min))
    background = tuple(gaps.as_background(background, gap_min))
    if avoid_masked:
        from engine.softmask import known_mask

        for rec in target:
            known_mask(rec)  # refused before the run, not after it
    params = {"k": int(k), "strands": strands, "gap_min": gap_min,
              "avoid_masked": bool(avoid_masked)}
    if all_k:
        _check_all_k(sel)
        params["all_k"] = True
    # (the CUDA options' ranges are the registry's, checked above; flags that need flags:
    # BackendSpec.flag_requires, checked by registry.resolve)
    params.update(registry.check_backend_only(
        SPEC, sel.backend, threads_per_block=threads_per_block, prefetch_factor=prefetch_factor))
    params.update(registry.check_scheduler(SPEC, sel.backend, scheduler))
    return Job(family="kdiff", inputs={"target": target, "background": background},
               variant=sel.variant, backend=sel.backend, parallel=sel.parallel, flags=sel.flags,
               params=params, threads=threads, count_comparisons=count_comparisons)


def _check_all_k(sel) -> None:
    """``all_k`` runs on the CPU kernels' serial and coarse forms, the background whole,
    streamed in chunks or on Dask, and on bitparallel's CUDA kernels
    (engine/kdiff/cuda_bitparallel.py; a Dask GPU worker's too): CUDA's conventional and
    alternative block kernels, the neighbours flag (bounds on one k's c(r)) and the fine
    forms know one k only."""
    if registry.on_gpu(sel.backend) and sel.variant != "bitparallel":
        raise ValueError(f"kdiff --all-k does not run with --variant {sel.variant} on the "
                         f"{sel.backend} backend (use bitparallel)")
    if sel.flags & ONE_K_FLAGS:
        raise ValueError("kdiff --all-k does not run with the neighbours flag "
                         "(drop --opt neighbours)")
    if sel.parallel in ("fine", "coarse+fine"):
        raise ValueError(f"kdiff --all-k does not run with --parallel {sel.parallel} "
                         "(use coarse)")


def landscape(target, background, k: int, **options):
    """Every k in 1..k at once: the :class:`~engine.kdiff.landscape_table.Landscape` (columns;
    ``to_pandas()``) of an ``all_k`` run (see :func:`make_job` for the options).

    ``target`` then ``background``, as in :func:`solve`: any form of
    :func:`engine.api.records` (a str, list of str, SeqRecord(s), a path to a file or genome
    store, Records); they go through :func:`make_job`'s coercion.
    """
    return solve(target, background, k, all_k=True, **options).landscape


def solve(target, background, k: int, *, progress: bool = False, backend=None,
          **options) -> KdiffResult:
    """For every start of ``target``, the shortest substring **at least** ``k`` edits from
    every substring of ``background`` (see :func:`make_job` for the options).

    ``backend`` may also be a ``distributed.Client`` (the job's chunks run there);
    ``progress=True`` shows a tqdm bar.
    """
    return api.solve(make_job, iter_solve, target, background, k, progress=progress,
                     backend=backend, **options)


def iter_solve(job: Job, cancel: CancelToken | None = None) -> Generator[Progress, None, KdiffResult]:
    """Yield :class:`Progress` every ~100 ms; return a :class:`KdiffResult`.

    After ``cancel.cancel()`` the generator returns at the next check with
    ``info.complete = False`` and every candidate settled so far.
    """
    from engine.kdiff.problem import ScanProblem

    cancel = cancel or CancelToken()
    meter = Meter(job, threads=numba_threads(job))
    # The whole background at once (its ScanRunner comes back), a chunk at a time when it is
    # too large, or a cluster's tasks (engine.executors; the problem's committed scan).
    problem = ScanProblem(job)
    scan = yield from registry.executor(job).run(problem, meter, cancel)
    if scan is problem:
        scan = problem.scan
    summary = gaps.summarize(job.inputs["background"], job.params.get("gap_min", gaps.GAP_MIN))
    candidates = scan.candidates()
    landscape = scan.landscape()
    if job.params.get("avoid_masked"):
        from engine.softmask import drop_masked_candidates

        candidates = drop_masked_candidates(candidates, job.inputs["target"])
        if landscape is not None:  # at every k, as a run at that k would drop them
            landscape = landscape.drop_masked(job.inputs["target"])
    return KdiffResult(run_info(job, meter), job.params["k"], job.params["strands"],
                       candidates, scan.profiles, scan.settled, summary, landscape)
