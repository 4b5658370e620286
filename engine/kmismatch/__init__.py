"""The k-mismatch family: many fixed-length patterns, at most k mismatches (Hamming).

Every (pattern, record, start, strand) whose window has Hamming distance <= k
to the pattern is a hit; a text symbol matches a pattern symbol when their
IUPAC base sets intersect. With both strands each pattern's reverse
complement is searched too; such hits are reported on '-' in forward
coordinates, with ``matched`` read on that strand. Patterns are grouped by
length; each group is one fixed-length problem for the chosen variant. No
window spans two text records. The variants thread, block-thread, shared-mem and
pair-tile run on the cuda backend (engine/kmismatch/cuda.py, imported only for
cuda jobs); the others on serial and multicore.

``k`` is a **maximum**: hits have at most k mismatches (in kdiff, k is a minimum).
Arguments come as everywhere in the engine: what you look for (the patterns), then where
you look (the text). Any input form of :func:`engine.api.records` is accepted.

Examples
--------
>>> res = solve("ACTG", "ACTTGTAC", 1, strands="forward", backend="serial")
>>> [(h.start, h.end, h.strand, h.mismatches, h.matched) for h in res.hits]
[(1, 4, '+', 1, 'ACTT')]
>>> res.to_records()
[{'pattern_id': 'seq1', 'record_id': 'seq1', 'start': 1, 'end': 4, 'strand': '+', 'mismatches': 1, 'matched': 'ACTT'}]
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Generator

import numpy as np

from engine import api, gaps, registry
from engine.jobs import CancelToken, Job, Progress, RunInfo, check_threads
from engine.kmismatch.cuda_options import check_cuda_limits, check_threads_per_block
from engine.kmismatch.hits import Hit, HitDensity, HitTable
from engine.kmismatch.spec import SPEC
from engine.sequences import Record, SequenceWarning
from engine.slices import Meter, numba_threads, run_info

__all__ = ["Hit", "HitDensity", "HitTable", "KmismatchResult", "SPEC", "iter_solve", "make_job",
           "solve"]


@dataclass(frozen=True)
class KmismatchResult:
    """The hits, plus per-pattern counts and a hit-density profile per record for the GUI."""

    info: RunInfo
    k: int
    strands: str
    hits: HitTable
    pattern_ids: tuple[str, ...]
    pattern_lengths: tuple[int, ...]
    #: hits per pattern (both strands together), aligned with ``pattern_ids``.
    pattern_hits: np.ndarray
    #: one :class:`HitDensity` per text record.
    density: tuple[HitDensity, ...]
    #: text positions scanned (all of them unless cancelled).
    scanned: int

    def to_pandas(self, coords: str = "one-based"):
        """The hits as a pandas DataFrame: the CSV's columns (``coords="one-based"``) or
        ``chrom, start, end`` half-open first (``"bed"``; engine.columns)."""
        return self.hits.to_pandas(coords)

    def to_records(self, coords: str = "one-based") -> list[dict]:
        """The hits as plain dicts (no pandas needed), columns as :meth:`to_pandas`."""
        return self.hits.to_records(coords)


def make_job(patterns, text, k: int, *, variant=None, backend=None, strands: str = "both",
             threads: int | None = None, threads_per_block: int | None = None,
             scheduler: str | None = None, gap_min: int | None = None) -> Job:
    """Check every argument and return a :class:`~engine.jobs.Job` with defaults filled in.

    Parameters
    ----------
    patterns, text : str, list of str, path, SeqRecord(s) or Record(s)
        What to look for (one record each, any lengths), then where (the text records):
        any form of :func:`engine.api.records`.
    k : int
        The **most** mismatches a hit may have (k >= 0).
    variant : {'naive', 'shift-add', 'pmasm', 'thread', 'block-thread', 'shared-mem', 'pair-tile'}
        Default: pair-tile where a GPU is present (or the backend is cuda), else pmasm.
        The last four are the CUDA methods (cuda backend only).
    backend : {'serial', 'multicore', 'cuda', 'dask'}, optional
        Default: the fastest available (never dask: a cluster is asked for by name).
    strands : {'both', 'forward'}
        'both' also searches each pattern's reverse complement.
    threads : int, optional
        Threads for multicore.
    threads_per_block : int, optional
        CUDA thread, shared-mem and pair-tile only (default
        ``engine.config.KMISMATCH_CUDA_THREADS_PER_BLOCK``, for shared-mem
        ``KMISMATCH_CUDA_SHARED_MEM_THREADS_PER_BLOCK``); block-thread runs one thread
        per level.
    scheduler : str, optional
        dask only: a scheduler's address, ``tcp://HOST:PORT`` (None or empty: a local
        cluster, engine.cluster).
    gap_min : int
        Runs of at least this many N in the text are assembly gaps (engine.gaps): they
        match nothing, and no hit's window holds one of their bases.

    Raises
    ------
    ValueError
        On k < 0 or not an integer, an unknown strands value, an empty text or
        pattern set, or a variant/backend combination that does not exist.
    TypeError
        On an input of no accepted form.

    Warns
    -----
    SequenceWarning
        When every pattern is longer than every text record: nothing can match, which is
        what the old argument order (text first) looks like.
    """
    # The registry's rule for every parameter, as on the command line and in the GUI.
    checked = registry.check_params(SPEC, k=k, strands=strands, gap_min=gap_min,
                                    threads_per_block=threads_per_block, scheduler=scheduler)
    k, strands, threads_per_block = checked["k"], checked["strands"], checked["threads_per_block"]
    gap_min = checked["gap_min"]
    threads = check_threads(threads)
    patterns, text = api.records(patterns, "patterns"), api.records(text, "text")
    if not text:
        raise ValueError("no text records")
    if not patterns:
        raise ValueError("empty pattern set: give at least one pattern")
    for rec in text + patterns:
        if len(rec) == 0:
            raise ValueError(f"record '{rec.id}' is empty")
    _check_order(patterns, text)
    if variant is None and backend is None and registry.backend_status("cuda")[0]:
        backend = "cuda"  # with a GPU, kmismatch runs there (the registry's cuda default)
    sel = registry.resolve(SPEC, variant, backend, None, frozenset())
    gap_min = gaps.resolve_gap_min(text, gap_min)  # (unset: a store text's own)
    text = tuple(gaps.as_background(text, gap_min))
    params = {"k": int(k), "strands": strands, "gap_min": gap_min}
    registry.check_backend_only(SPEC, sel.backend, threads_per_block=threads_per_block)
    params.update(registry.check_scheduler(SPEC, sel.backend, scheduler))
    if threads_per_block is not None:
        params["threads_per_block"] = check_threads_per_block(sel.variant, threads_per_block)
    if registry.on_gpu(sel.backend):
        check_cuda_limits(patterns, strands)
    return Job(family="kmismatch", inputs={"text": text, "patterns": patterns},
               variant=sel.variant, backend=sel.backend, parallel=None, flags=frozenset(),
               params=params, threads=threads)


def _check_order(patterns, text) -> None:
    """Warn when no pattern fits in any text record: nothing can match, and that is what the
    old argument order (text first, then patterns) looks like. A warning, not an error (a
    short text is a valid, empty job) and never a swap: the answer is the one asked for."""
    shortest = min(len(p) for p in patterns)
    longest = max(len(r) for r in text)
    if shortest > longest:
        warnings.warn(SequenceWarning(
            f"every pattern (the shortest: {shortest:,} nt) is longer than every text record "
            f"(the longest: {longest:,} nt), so nothing can match (in Python the patterns "
            f"come first, then the text: kmismatch.solve(patterns, text, k))"), stacklevel=3)


def solve(patterns, text, k: int, *, progress: bool = False, backend=None,
          **options) -> KmismatchResult:
    """Every window of ``text`` within **at most** ``k`` mismatches of a pattern.

    ``patterns``, then ``text`` (any input form, :func:`engine.api.records`); the options
    are :func:`make_job`'s. ``backend`` may also be a ``distributed.Client`` (the job's
    chunks run there); ``progress=True`` shows a tqdm bar.
    """
    return api.solve(make_job, iter_solve, patterns, text, k, progress=progress,
                     backend=backend, **options)


def iter_solve(job: Job, cancel: CancelToken | None = None
               ) -> Generator[Progress, None, KmismatchResult]:
    """Yield :class:`Progress` about every 100 ms; return a :class:`KmismatchResult`.

    The text is scanned in slices of adaptive size (progress counts text
    positions; ``cells`` counts positions x patterns searched, a reverse
    complement counting as one more pattern; ``comparisons`` the symbol
    comparisons these Hamming distances stand for). ``Progress.partial`` is a
    :class:`HitTable` of the hits so far, which grows by appending. After
    ``cancel.cancel()`` the generator returns at the next check with
    ``info.complete = False`` and the hits of the slices finished before it.
    """
    from engine.kmismatch.driver import ScanProblem

    cancel = cancel or CancelToken()
    meter = Meter(job, threads=numba_threads(job))
    patterns: tuple[Record, ...] = job.inputs["patterns"]
    # The whole text at once, a chunk at a time when over config.STREAM_MEMORY_BASES (cuda:
    # config.GPU_STREAM_BYTES), or a cluster's tasks (engine.executors).
    runner = yield from registry.executor(job).run(ScanProblem(job), meter, cancel)
    # (hits over an assembly gap were dropped as found: the runners' rule, engine.gaps)
    hits, density = meter.timed(lambda: (runner.hits(), runner.density()))
    return KmismatchResult(run_info(job, meter), job.params["k"], job.params["strands"], hits,
                           tuple(p.id for p in patterns), tuple(len(p) for p in patterns),
                           runner.counts.pattern_hits, density, runner.done)
