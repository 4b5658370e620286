"""The edit family: Levenshtein distance (global) and approximate search (Myers).

- ``global``: the edit distance of each pattern to each text record.
- ``search``: every end position where a pattern occurs with <= k edits
  (semi-global, C[0,j] = 0), or with ``report="best"`` one best hit per pattern,
  strand and record. Each hit gets its start and a CIGAR (``=``, ``X``, ``I``
  for a pattern symbol with no text symbol, ``D`` for a text symbol with no
  pattern symbol); the start is the smallest one that realises the distance.
- ``pairing="zip"`` turns the records into a batch of (query, candidate region)
  pairs: pattern i against text record i, the read-verification workload of
  the seed study. :func:`verify` is that batch with one best hit per pair.
  A large batch comes as columns (engine.sequences.SeqColumns: one buffer of
  codes and a range per sequence; regions may be ranges of one genome), planned
  with numpy alone; Records take the same path (SeqColumns.from_records).

Symbols match when their IUPAC sets intersect. Coordinates are 1-based with
inclusive ends. Hits come in pattern order, then record order, end, and ``+``
before ``-``; a ``-`` hit is the pattern's reverse complement aligned to the
forward text (its start and end are on the forward text; ``matched`` is the text
as read on the hit's strand, and the CIGAR aligns the pattern 5'->3' against it).

Variants (all give the same answers):

- ``dp``: Sellers (1980), one DP column, O(mn);
- ``myers``: Myers (1999), one 64-bit word per column, m <= 64, O(n); with
  its ``simd`` flag (on by default), when at least
  ``config.EDIT_SIMD_MIN_LANES`` patterns x strands share a text (``pairing``
  "all"), up to 128 of them read the text once, one 32-bit (or 64-bit) word
  each, 16 (8) per AVX-512 instruction (cpu_simd);
- ``myers-blocked``: Myers' block-based form (Hyyrö), O(n ceil(m/64));
- ``banded``: Myers' blocks under Ukkonen's (1985) cut-off, as in edlib: in
  search, only the blocks down to the last one that can hold a value <= k
  (O(n k / 64) expected on random text); in global, only the blocks of the
  diagonal band of k, or of a threshold doubled until the distance fits
  (O(n d / 64)).
- ``task`` (cuda): one GPU thread per (pattern, text) pair, its words in
  registers;
- ``cooperative`` (cuda): the threads of a warp share a pattern's words and
  pass carries by warp shuffles, several patterns per warp (Chacon et al.,
  "Thread-cooperative, bit-parallel computation of Levenshtein distance on
  GPU"); ``words_per_thread`` sets how many 64-bit words each thread holds.
  Both GPU variants search long records as overlapping chunks (as multicore
  does); starts and CIGARs of their hits come from the CPU path stage.

Search results also carry a :class:`ScoreProfile` per pattern, strand and
record: the best distance per bin along the text (at most ~4096 bins).

Work is cut into tasks: (pattern, strand, record) pairs, pairs of a batch,
and in search mode overlapping chunks of each record. The multicore backend
spreads them over threads; ``myers`` also scans two tasks at once on each
thread (their instruction chains overlap), serial included. In best mode the
chunks of a record share the best found so far, so they can cut harder.
A search whose text is larger than ``config.STREAM_MEMORY_BASES`` (on cuda,
``config.GPU_STREAM_BYTES``) reads it a chunk at a time (engine.streaming,
engine/edit/problem.py), with the same answers. The ``dask`` backend (search mode,
``pairing="all"``) runs those chunks as tasks on a Dask cluster (engine.executors),
with the same answers too.

``k`` is a **maximum**: the most edits a hit (or a reported distance) may have (in kdiff,
k is a minimum). Arguments come as everywhere in the engine: what you look for (the
patterns), then where you look (the texts); any input form of :func:`engine.api.records`.
A search reads both strands unless ``strands="forward"``.

Examples
--------
>>> distance("TAGAC", "ATCGAG")
3
>>> solve("TAGAC", "ATCGAG", backend="serial").distances[0].distance
3
>>> res = solve("ACGT", "TTACGATT", mode="search", k=1, strands="forward", backend="serial")
>>> [(h.start, h.end, h.distance, h.cigar) for h in res.hits]
[(3, 5, 1, '3=1I'), (3, 6, 1, '3=1X'), (3, 7, 1, '3=1D1=')]
>>> res.to_records(coords="bed")[0]
{'chrom': 'seq1', 'start': 2, 'end': 5, 'pattern_id': 'seq1', 'strand': '+', 'distance': 1, 'cigar': '3=1I', 'matched': 'ACG'}
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generator

import numpy as np

from engine import api, columns, gaps, registry
from engine.edit.cuda_options import cuda_params
from engine.edit.hits import EditHits, Hit, PairDistance, ScoreProfile
from engine.edit.spec import SPEC
from engine.jobs import CancelToken, Job, Progress, RunInfo, check_threads, drive
from engine.sequences import SeqColumns
from engine.slices import (Meter, compile_once, numba_threads, run_info, run_slices, tiny_job,
                           warm_key)

__all__ = ["EditHits", "EditResult", "Hit", "PairDistance", "SPEC", "ScoreProfile", "distance",
           "iter_solve", "make_job", "solve", "verify"]


@dataclass(frozen=True)
class EditResult:
    """What an edit job found.

    ``hits`` (search) or ``distances`` (global, one per pair in pattern then
    record order). ``best`` is the smallest distance among them, None when
    nothing is within k. ``info.complete`` is False after a cancel.
    ``profiles`` (search with ``profile=True``): one :class:`ScoreProfile` per
    pattern, record and strand, in that order; :meth:`profile` finds one.
    """

    info: RunInfo
    mode: str
    k: int | None
    strands: str
    pairing: str
    report: str | None
    #: search: a sequence of :class:`Hit` over columns (:class:`EditHits`; ``to_pandas()``).
    hits: EditHits | tuple = ()
    distances: tuple[PairDistance, ...] = ()
    best: int | None = None
    profiles: tuple[ScoreProfile, ...] = ()

    def to_pandas(self, coords: str = "one-based"):
        """The hits (search) or the distances (global) as a pandas DataFrame, in the CSV's
        columns (needs the ``pandas`` extra); an empty cell is <NA>. ``coords="bed"``
        (search): ``chrom, start, end`` half-open first (engine.columns)."""
        if self.mode == "search":
            return self.hits.to_pandas(coords)
        import pandas as pd

        data = self._distance_columns(coords)
        data["distance"] = pd.array(data["distance"], dtype="Int64")
        return columns.frame(data)

    def to_records(self, coords: str = "one-based") -> list[dict]:
        """The rows of :meth:`to_pandas` as plain dicts (no pandas needed; None where empty)."""
        if self.mode == "search":
            return self.hits.to_records(coords)
        return columns.plain_records(self._distance_columns(coords))

    def _distance_columns(self, coords: str) -> dict:
        """A global job's distances as columns (they have no interval: one-based only)."""
        data = {"pattern_id": [d.pattern_id for d in self.distances],
                "record_id": [d.record_id for d in self.distances],
                "distance": [d.distance for d in self.distances],
                "cigar": [d.cigar for d in self.distances]}
        return columns.with_coords(data, coords, None, what="a global edit distance table")

    def profile(self, pattern_id: str, record_id: str, strand: str = "+") -> ScoreProfile | None:
        """The score profile of one pattern on one strand along one record, or None."""
        key = (pattern_id, record_id, strand)
        return next((prof for prof in self.profiles
                     if (prof.pattern_id, prof.record_id, prof.strand) == key), None)


def make_job(patterns, texts, *, mode: str = "global", k: int | None = None, variant=None,
             backend=None, parallel=None, flags=None, strands: str | None = None,
             pairing: str = "all", report: str | None = None, align: bool | None = None,
             profile: bool | None = None, threads: int | None = None,
             threads_per_block: int | None = None, words_per_thread: int | None = None,
             scheduler: str | None = None, gap_min: int | None = None) -> Job:
    """Check every argument and return a :class:`~engine.jobs.Job` with defaults filled in.

    Runs of at least ``gap_min`` N in the text records are assembly gaps (engine.gaps):
    they match nothing, and no hit ends on one. (A batch given as SeqColumns is taken as it
    is: its codes are the caller's buffer.)

    Parameters
    ----------
    patterns, texts : str, list of str, path, SeqRecord(s), Record(s), or SeqColumns
        Queries, then the records to compare them with (or search in): any form of
        :func:`engine.api.records`. Many sequences are best given as one
        :class:`~engine.sequences.SeqColumns` (a buffer of codes and a range per
        sequence): a batch is then planned without a Python object per pair.
    mode : {"global", "search"}
    k : int or None
        The **most** edits (a maximum). Required in search mode with ``report="hits"``.
        In global mode, distances above k come back as None (and banded computes only
        the band of k).
    variant, backend, parallel, flags
        A combination listed in :data:`SPEC`; defaults are the fastest available.
    strands : {"forward", "both"} or None
        ``both`` also searches with each pattern's reverse complement (search mode).
        Default: ``both`` for a search over whole records (a primer binds either strand,
        as in kdiff and kmismatch), ``forward`` for global distances and zip batches.
    pairing : {"all", "zip"}
        ``zip`` pairs pattern i with text record i (a batch).
    report : {"hits", "best"} or None
        Search mode only: every end within k (default), or one best hit per
        pattern, strand and record (the first end with the smallest distance).
    align : bool or None
        Compute starts and CIGARs. Default: True in search mode, False in global.
    profile : bool or None
        Search mode: keep a :class:`ScoreProfile` (best distance per bin along
        each record, capped at k + 1) for every pattern, strand and record.
        Default: True for ``pairing="all"``, False for batches. In best mode it
        keeps ``banded`` from cutting below k once a good hit is found.
    threads : int or None
        Threads for the multicore backend.
    threads_per_block, words_per_thread : int or None
        cuda backend only (``words_per_thread``: ``cooperative`` only); job
        parameters of the same names (defaults: ``engine.config.EDIT_CUDA_*``).
    scheduler : str or None
        dask backend only (search mode, ``pairing="all"``): a scheduler's address,
        ``tcp://HOST:PORT`` (None or empty: a local cluster, engine.cluster).

    Raises
    ------
    ValueError
        On any bad argument, naming it.
    """
    if strands is None:
        strands = "both" if mode == "search" and pairing == "all" else "forward"
    # The registry's rule for every parameter, as on the command line and in the GUI.
    checked = registry.check_params(SPEC, mode=mode, k=k, strands=strands, pairing=pairing,
                                    report=report, gap_min=gap_min,
                                    threads_per_block=threads_per_block,
                                    words_per_thread=words_per_thread, scheduler=scheduler)
    mode, k, strands, pairing, report = (checked[name] for name in
                                         ("mode", "k", "strands", "pairing", "report"))
    threads_per_block, words_per_thread = (checked["threads_per_block"],
                                           checked["words_per_thread"])
    gap_min = checked["gap_min"]
    if mode == "global":
        if report is not None:
            raise ValueError("report applies to search mode only")
        if strands != "forward":
            raise ValueError("strands='both' applies to search mode only")
    else:
        report = report or "hits"
        if report == "hits" and k is None:
            raise ValueError("search mode needs k (the most edits a hit may have), "
                             "or report='best'")
    if align is None:
        align = mode == "search"
    if not isinstance(align, bool):
        raise ValueError(f"align must be True or False, got {align!r}")
    if profile is None:
        profile = mode == "search" and pairing == "all"
    if not isinstance(profile, bool):
        raise ValueError(f"profile must be True or False, got {profile!r}")
    if profile and mode != "search":
        raise ValueError("profile applies to search mode only")
    threads = check_threads(threads)
    # Patterns, and the text records of a batch, as columns (one buffer, a range each): the
    # plan reads them with numpy alone. Other text records stay as given (a genome is read
    # in place or streamed, a genome store's record never unpacked whole here).
    patterns = _columns("pattern", api.records(patterns, "patterns", columns=True))
    texts = api.records(texts, "texts", columns=True)
    if not isinstance(texts, SeqColumns):  # assembly gaps match nothing (engine.gaps)
        texts = _records("text", texts)
        gap_min = gaps.resolve_gap_min(texts, gap_min)  # (unset: a store text's own)
        texts = gaps.as_background(texts, gap_min)
    else:
        gap_min = gaps.resolve_gap_min((), gap_min)
    texts = _columns("text", texts) if pairing == "zip" or isinstance(texts, SeqColumns) \
        else _records("text", texts)
    if pairing == "zip" and len(patterns) != len(texts):
        raise ValueError(f"pairing='zip' needs as many patterns as text records "
                         f"({len(patterns)} patterns, {len(texts)} text records)")
    sel = registry.resolve(SPEC, variant, backend, parallel, flags)
    lengths = patterns.lengths
    if sel.variant == "myers" and lengths.max() > 64:
        longest = int(np.argmax(lengths))
        name, m = patterns.ids[longest], int(lengths[longest])
        raise ValueError(f"variant myers takes patterns of up to 64 symbols; pattern "
                         f"{name!r} has {m} (use myers-blocked)")
    params = {"mode": mode, "k": k, "strands": strands, "pairing": pairing, "report": report,
              "align": align, "profile": profile, "gap_min": gap_min}
    params.update(cuda_params(sel.variant, sel.backend, threads_per_block, words_per_thread))
    # (dask: its tasks are the chunks of whole records, engine/edit/problem.py: searches only)
    registry.check_backend_takes(SPEC, sel.variant, sel.backend, params)
    params.update(registry.check_scheduler(SPEC, sel.backend, scheduler))
    return Job(family="edit", inputs={"pattern": patterns, "text": texts}, variant=sel.variant,
               backend=sel.backend, parallel=sel.parallel, flags=sel.flags, params=params,
               threads=threads)


def _columns(role: str, sequences) -> SeqColumns:
    """Records or SeqColumns as SeqColumns, none of them empty."""
    if not isinstance(sequences, SeqColumns):
        return SeqColumns.from_records(_records(role, sequences))
    if not len(sequences):
        raise ValueError(f"no {role} records")
    lengths = sequences.lengths
    if not lengths.all():
        empty = sequences.ids[int(np.argmin(lengths))]
        raise ValueError(f"{role} record {empty!r} is empty")
    return sequences


def _records(role: str, records) -> tuple:
    """The records (engine.api.records made them Records) as a tuple, none empty."""
    records = tuple(records)
    if not records:
        raise ValueError(f"no {role} records")
    # (len, not codes: a genome store's record would unpack itself whole)
    lengths = np.fromiter(map(len, records), dtype=np.int64, count=len(records))
    if not lengths.all():
        empty = records[int(np.argmin(lengths))].id
        raise ValueError(f"{role} record {empty!r} is empty")
    return records


def solve(patterns, texts, *, progress: bool = False, backend=None, **options) -> EditResult:
    """Run an edit job to completion: distances (global) or hits within **at most** ``k``
    edits (search).

    Parameters
    ----------
    patterns, texts : str, list of str, path, SeqRecord(s), Record(s) or SeqColumns
        What to look for, then where (:func:`engine.api.records`).
    progress : bool
        Show a tqdm bar (a notebook's widget, or text on a terminal).
    backend : str or distributed.Client
        A backend's name, or a client whose cluster runs the job's chunks (search mode).
    **options
        Keyword arguments of :func:`make_job`.

    Returns
    -------
    EditResult
        ``distances`` (global) or ``hits`` (search), ``best``, and in search the
        ``profiles`` (see ``profile`` in :func:`make_job`).

    Raises
    ------
    ValueError
        On a bad argument (see :func:`make_job`).
    """
    return api.solve(make_job, iter_solve, patterns, texts, progress=progress, backend=backend,
                     **options)


def distance(a, b, k: int | None = None, **options) -> int | None:
    """The edit distance of ``a`` to ``b`` (one sequence each, any input form), or None when
    it is above ``k`` (the most edits worth computing: banded then fills only that band).

    >>> distance("ACGTTGCA", "ACGTAGCA"), distance("ACGTTGCA", "TTTT", k=2)
    (1, None)
    """
    pattern, text = api.one_record(a, "a"), api.one_record(b, "b")
    return solve([pattern], [text], k=k, **options).distances[0].distance


def verify(queries, regions, k: int | None = None, **options) -> EditResult:
    """Read verification: query i against candidate region i, one best hit per pair.

    Parameters
    ----------
    queries, regions : sequence of Record, or engine.sequences.SeqColumns
        Equally many; query i is searched in region i. Columns take a batch of any size
        with no Python object per pair: queries and regions as one buffer of codes each
        with offsets (:meth:`SeqColumns.from_offsets`, :meth:`SeqColumns.encode`), or
        ranges of a buffer (:meth:`SeqColumns.from_ranges`: candidate regions of one
        genome; a read repeated for each of its candidates is read once). Records go
        through the same path (:meth:`SeqColumns.from_records`).
    k : int or None
        Most edits; a pair whose best occurrence needs more has no hit. None:
        every pair has a hit at its best distance.
    **options
        Further keyword arguments of :func:`make_job` (variant, backend, align...).

    Returns
    -------
    EditResult
        One :class:`Hit` per pair that has one: the first end with the smallest
        distance, its start and CIGAR. ``hits`` is columnar (:class:`EditHits`:
        ``hits.pattern``/``hits.record`` index the queries and regions, ``hits.end``,
        ``hits.distance``...); a row object is made only when read.

    Notes
    -----
    This is the second step of a seed-and-verify read mapper, the workload of
    Chacón et al., "Thread-cooperative, bit-parallel computation of Levenshtein
    distance on GPU" (the task-parallel scheme, on CPU threads).

    Examples
    --------
    >>> from engine.sequences import load
    >>> res = verify(load("ACGTTGCA"), load("GGACGTAGCATT"), 2, backend="serial")
    >>> [(h.start, h.end, h.distance, h.cigar) for h in res.hits]
    [(3, 10, 1, '4=1X3=')]
    >>> from engine.sequences import SeqColumns
    >>> reads = SeqColumns.encode(["ACGTTGCA", "TTTT"], ids="read")
    >>> regions = SeqColumns.encode(["GGACGTAGCATT", "ACGA"], ids="region")
    >>> res = verify(reads, regions, 2, backend="serial", align=False)
    >>> res.hits.record.tolist(), res.hits.end.tolist(), res.hits.distance.tolist()
    ([0], [10], [1])
    """
    return solve(queries, regions, mode="search", k=k, pairing="zip", report="best", **options)


def iter_solve(job: Job, cancel: CancelToken | None = None) -> Generator[Progress, None, EditResult]:
    """Run a job as a generator: yield :class:`Progress` about every 100 ms, return an :class:`EditResult`.

    Parameters
    ----------
    job : Job
        From :func:`make_job`.
    cancel : CancelToken, optional
        After ``cancel.cancel()`` the generator returns at the next check (the
        kernels poll it every few thousand columns) with ``info.complete =
        False``, every hit found so far and every pair finished.

    Yields
    ------
    Progress
        ``done``/``total`` in text columns scanned, cells, comparisons (0 for
        the bit-parallel variants, which look up match words instead), and the
        hits or distances so far in ``partial``. A first report with
        ``phase="compiling"`` comes while the kernels compile or load.
    """
    from engine.edit.driver import make_runner

    cancel = cancel or CancelToken()
    meter = Meter(job, threads=numba_threads(job))
    p = job.params
    if p["mode"] == "search" and p["pairing"] == "all":
        # A search over whole records is a chunked problem (engine/edit/problem.py): run
        # whole or a chunk at a time here, or as a cluster's tasks (engine.executors).
        from engine.edit.problem import SearchProblem

        answer = yield from registry.executor(job).run(SearchProblem(job), meter, cancel)
    else:
        answer = make_runner(job, cancel.flag, meter.threads)
        # (the warm-up: the job over the first columns of its texts)
        yield from compile_once(warm_key(job), lambda: drive(iter_solve(tiny_job(job, "text"))),
                                answer.total)
        yield from run_slices(answer, meter, cancel)
    collector = answer.collector
    hits = collector.sorted_hits()
    distances = collector.sorted_distances()
    if job.params["mode"] == "search":
        best = int(hits.distance.min()) if len(hits) else None
    else:
        best = min((d.distance for d in distances if d.distance is not None), default=None)
    return EditResult(run_info(job, meter), p["mode"], p["k"], p["strands"], p["pairing"],
                      p["report"], hits, distances, best, collector.profiles())

