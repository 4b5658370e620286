"""edit's plan: from a job to the flat arrays and the task table the kernels read.

Every backend's lanes (engine.edit.driver's CPU ones, engine.edit.cuda's) build a
:class:`Plan` and hand their alignments to :func:`align_items`; the plan's geometry is
described in engine.edit.driver's docstring. It sits below the driver and the
backends, so that neither imports the other's module for it.
"""

from __future__ import annotations

from functools import cached_property
from typing import NamedTuple

import numpy as np

from engine import config
from engine.columns import Ids
from engine.edit import cpu_common as cc
from engine.sequences import SeqColumns

#: Most bins of a score profile (per pattern, strand and record).
PROFILE_BINS = 4096

#: Profile bin value before any column of it was scanned (-1 once handed out).
UNSEEN = cc.INF


def search_overlap(job) -> int:
    """Columns a piece's (or a chunk's) text starts before the first it owns: an occurrence
    with d <= k edits spans at most m + d columns, and d <= m."""
    k = job.params["k"]
    m = int(job.inputs["pattern"].lengths.max())
    return m + (min(k, m) if k is not None else m)


def _distinct(starts: np.ndarray, ends: np.ndarray):
    """(index of each range among the distinct ones, their starts, their ends): equal
    ranges are one, sorted by (start, end). O(n) when the ranges come in that order."""
    ds, de = np.diff(starts), np.diff(ends)
    in_order = bool(np.all((ds > 0) | ((ds == 0) & (de >= 0))))
    order = None if in_order else np.lexsort((ends, starts))
    s, e = (starts, ends) if order is None else (starts[order], ends[order])
    new = np.ones(len(s), dtype=bool)
    new[1:] = (s[1:] != s[:-1]) | (e[1:] != e[:-1])
    rank = np.cumsum(new) - 1
    if order is None:
        return rank, s[new], e[new]
    index = np.empty_like(rank)
    index[order] = rank
    return index, s[new], e[new]


def _instances(codes: np.ndarray, starts: np.ndarray, ends: np.ndarray, strands: int):
    """(codes, offsets) of the instances end to end: each range, and after it its reverse
    complement when ``strands`` is 2. Ranges that already lie end to end on one strand are
    read in place."""
    n = len(starts)
    if strands == 1 and n and np.array_equal(starts[1:], ends[:-1]):
        offsets = np.empty(n + 1, dtype=np.int64)
        offsets[:-1] = starts - starts[0]
        offsets[-1] = ends[-1] - starts[0]
        return codes[starts[0]:ends[-1]], offsets
    from engine.edit.cpu_align import gather_windows
    from engine.sequences import COMPLEMENT_TABLE

    lo, hi = np.repeat(starts, strands), np.repeat(ends, strands)
    minus = np.tile(np.arange(strands) == 1, n)
    out = np.empty(int(np.sum(hi - lo)), dtype=np.uint8)
    offsets = np.zeros(n * strands + 1, dtype=np.int64)
    gather_windows(codes, lo, hi, minus, COMPLEMENT_TABLE, out, offsets)
    return out, offsets


def _table(fields: dict, count: int) -> np.ndarray:
    """A (count, cpu_common.NTASK) task table from its fields (field -> a scalar, or an array
    of ``count``): the scalars in one pass (a broadcast row), then a column per array."""
    row = np.array([0 if np.ndim(fields[f]) else fields[f] for f in range(cc.NTASK)],
                   dtype=np.int64)
    tasks = np.empty((count, cc.NTASK), dtype=np.int64)
    tasks[:] = row
    for f, value in fields.items():
        if np.ndim(value):
            tasks[:, f] = value
    return tasks


class Pieces(NamedTuple):
    """The job's text records as pieces of background records (engine.streaming): record i
    is columns [start[i], start[i] + its length) of a record of ``length[i]`` columns, and
    owns those from ``own[i]`` on (ends before it are the piece before's). ``codes`` and
    ``offsets``: the records end to end (a streamed chunk's text, or an
    engine.streaming.FlatText for a plan that only describes the whole records)."""

    codes: object
    offsets: np.ndarray
    start: np.ndarray
    own: np.ndarray
    length: np.ndarray


class Plan:
    """Everything the kernels read for one job."""

    def __init__(self, job, nlanes: int, min_chunk: int | None = None, together: int = 1,
                 pieces: Pieces | None = None):
        """``nlanes``: workers to give search chunks to; ``min_chunk``: the shortest chunk
        (default config.EDIT_MIN_CHUNK_COLUMNS, sized for CPU threads). ``together``:
        instances that scan a chunk together (simd): chunks are sized by the text they
        share, and every chunk's scan starts where the longest instance's must.
        ``pieces``: the text records are pieces of a streamed background (search)."""
        self.min_chunk = config.EDIT_MIN_CHUNK_COLUMNS if min_chunk is None else min_chunk
        self.together = together
        params = job.params
        self.mode, self.k, self.report = params["mode"], params["k"], params["report"]
        self.profile = self.mode == "search" and params["profile"]
        patterns, texts = job.inputs["pattern"], job.inputs["text"]  # SeqColumns (texts: or Records)
        self.texts = texts
        self.strands = ("+", "-") if params["strands"] == "both" else ("+",)
        S = len(self.strands)
        P, R = len(patterns), len(texts)
        zipped = params["pairing"] == "zip"
        if zipped:
            inst_of, lo, hi = _distinct(patterns.starts, patterns.ends)
        else:
            inst_of, lo, hi = np.arange(P), patterns.starts, patterns.ends
        self.pats, self.p_offs = _instances(patterns.codes, lo, hi, S)
        #: per instance, whether it is a reverse complement (a '-' strand's): see align_items.
        self.p_minus = np.tile(np.arange(S) == 1, len(lo))
        self.pattern_ids = patterns.ids
        self.pieces = pieces
        if pieces is None and not isinstance(texts, SeqColumns):
            # one record (a genome): read in place, the kernels never write it
            texts = SeqColumns.from_records(texts)
        if isinstance(texts, SeqColumns):
            self.text_ids, self.shifts = texts.ids, texts.shift_array()
        else:
            self.text_ids = Ids([t.id for t in texts])
            #: per text record, bases of the loaded record before its codes (Record.offset):
            #: hits are reported in the loaded record's coordinates.
            self.shifts = np.fromiter((t.offset for t in texts), dtype=np.int64, count=R)
        if pieces is not None:
            self.text, offsets = pieces.codes, pieces.offsets
            self.t_lo, self.t_hi = offsets[:-1], offsets[1:]
        else:
            self.text, self.t_lo, self.t_hi = texts.codes, texts.starts, texts.ends
        if zipped:
            pat_of = rec_of = np.arange(P)
        else:
            pat_of, rec_of = np.repeat(np.arange(P), R), np.tile(np.arange(R), P)
        # Groups in output order: pattern, record, strand (one strand: the pairs as they are,
        # no copies).
        if S == 1:
            self.g_pattern, self.g_rec = pat_of, rec_of
            self.g_strand = np.broadcast_to(np.int64(0), (len(pat_of),))
            self.g_inst = inst_of if zipped else pat_of
        else:
            self.g_pattern, self.g_rec = np.repeat(pat_of, S), np.repeat(rec_of, S)
            self.g_strand = np.tile(np.arange(S, dtype=np.int64), len(pat_of))
            self.g_inst = inst_of[self.g_pattern] * S + self.g_strand
        self._build_tasks(nlanes, identity=zipped and S == 1)

    def _build_tasks(self, nlanes: int, identity: bool) -> None:
        """The tasks as :attr:`fields`: each field of the task table (cpu_common.T_*) as a
        scalar where it is alike in every task, else an array per task. ``identity``: group g
        is text record g. A batch of pairs that are one task each (short regions) skips the
        chunk arithmetic."""
        lo = self.t_lo if identity else self.t_lo[self.g_rec]
        hi = self.t_hi if identity else self.t_hi[self.g_rec]
        lengths = np.diff(self.p_offs)
        self.max_m = int(lengths.max())
        # Pattern length per group (a scalar when all patterns are as long: one read length).
        m = self.max_m if int(lengths.min()) == self.max_m else lengths[self.g_inst]
        G = len(lo)
        # A piece of a record: where it starts in the record, the first column it owns
        # (relative), and the record's length (its profile bins are the record's).
        if self.pieces is None:
            p_start = p_own = 0
            rec_lo = lo  # where the record's column 0 would lie (profile bins count from it)
        else:
            p_start = self.pieces.start[self.g_rec]
            # The piece after a skipped gap owns the gap's columns too (its own lies before its
            # start, engine.streaming.plan_chunks), but they are not in its text and hold no
            # hit: its tasks own from its start. Counted from its own, a task's columns could
            # all lie before the text and end before they begin (a cooperative CUDA warp read
            # before the text for them); their profile bins are the merge's (ChunkSearch).
            p_own = np.maximum(self.pieces.own[self.g_rec] - p_start, 0)
            rec_lo = lo - p_start
        # Profile cap - 1: k, or m (C[m,j] <= m, so no cap without k).
        cut = self.k if self.k is not None else m
        self.g_cut = np.broadcast_to(np.asarray(cut, dtype=np.int64), (G,))
        if self.profile:
            rec_len = hi - lo if self.pieces is None else self.pieces.length[self.g_rec]
            self.binw = -(-rec_len // PROFILE_BINS)
            nbins = -(-rec_len // self.binw)
            self.prof_offs = np.zeros(G + 1, dtype=np.int64)
            np.cumsum(nbins, out=self.prof_offs[1:])
            prof = self.prof_offs[:-1]
        else:
            self.binw = np.broadcast_to(np.int64(0), (G,))
            self.prof_offs = np.zeros(G + 1, dtype=np.int64)
            prof = 0
        # Chunk length (0: one task for the whole record), whole bins per chunk.
        chunk = self._chunk_columns(nlanes, -(-int(np.sum(hi - lo)) // self.together))
        # Chunks own from the piece's first owned column, then from bin edges on.
        first = lo if self.pieces is None else lo + p_own
        if self.profile:
            chunk = -(-chunk // self.binw) * self.binw
            first = rec_lo + (p_start + p_own) // self.binw * self.binw
        span = hi - first
        if np.ndim(chunk):
            count = np.where(chunk > 0, -(-span // np.maximum(chunk, 1)), 1)
        elif chunk > 0:  # (one chunk each when every span fits one: no count per group)
            count = 1 if span.min() > 0 and span.max() <= chunk else -(-span // chunk)
        else:
            count = 1
        # (a batch of short regions: one task per group, so per-task columns are per-group ones)
        self.one_task_each = bool(np.all(count == 1))
        if self.one_task_each:
            self.task_group = first_task = np.arange(G, dtype=np.int64)
            index = 0

            def per_task(a):
                return a
        else:
            self.task_group = np.repeat(np.arange(G, dtype=np.int64), count)
            first_task = np.concatenate(([0], np.cumsum(count)[:-1])).astype(np.int64)
            index = np.arange(len(self.task_group)) - first_task[self.task_group]

            def per_task(a):
                return a if np.ndim(a) == 0 else a[self.task_group]
        self.first_task = first_task
        fields = {cc.T_PAT: per_task(self.g_inst), cc.T_BEST: cc.INF, cc.T_END: -1, cc.T_DONE: 0,
                  cc.T_REC_LO: per_task(rec_lo), cc.T_BINW: per_task(self.binw if self.profile else 0),
                  cc.T_PROF: per_task(prof), cc.T_CUT: per_task(cut), cc.T_LEAD: per_task(first_task),
                  cc.T_SHARED: -1}
        if self.mode == "global":
            fields[cc.T_SCAN_LO] = lo
            fields[cc.T_OWN_LO] = hi  # nothing is recorded on the way
            fields[cc.T_HI] = hi
            # k, or the first band of banded's doubling.
            fields[cc.T_THRESH] = self.k if self.k is not None else \
                np.abs((hi - lo) - m) + config.EDIT_BAND_FIRST_SLACK
            self.widths = hi - lo
        else:
            lo_t, hi_t, first_t = per_task(lo), per_task(hi), per_task(first)
            if self.one_task_each:  # its chunk owns from its first column to the record's end
                own_lo = first_t if not self.profile else np.maximum(lo_t + p_own, first_t)
                own_hi = hi_t
            else:
                chunk_t = per_task(chunk)
                own_lo = np.maximum(lo_t + per_task(p_own), first_t + index * chunk_t)
                own_hi = np.where(chunk_t > 0, np.minimum(hi_t, first_t + (index + 1) * chunk_t),
                                  hi_t)
            mo = self.max_m if self.together > 1 else per_task(m)
            overlap = mo + (np.minimum(self.k, mo) if self.k is not None else mo)
            # (a task that owns its whole record scans from its start: no pass over them)
            scan_lo = lo_t if own_lo is lo_t else np.maximum(lo_t, own_lo - overlap)
            fields[cc.T_SCAN_LO] = scan_lo
            fields[cc.T_OWN_LO] = own_lo
            fields[cc.T_HI] = own_hi
            fields[cc.T_THRESH] = self.k if self.k is not None else cc.INF
            self.widths = own_hi - scan_lo
        self.fields = fields
        #: per task, the text columns it scans (banded global may scan more: restarts)
        self.columns = int(np.sum(self.widths))

    @cached_property
    def tasks(self) -> np.ndarray:
        """The task table the CPU kernels read and write (:attr:`fields` as rows), made on
        first use: a GPU runner reads the fields and keeps the answers itself, so that a
        batch of 200,000 pairs on the GPU never makes these 22 MB."""
        return _table(self.fields, len(self.task_group))

    def _chunk_columns(self, nlanes: int, total: int) -> int:
        """Chunk length for search (0: no chunks), so that every lane gets work."""
        if self.mode == "global" or nlanes == 1:
            return 0
        return max(self.min_chunk, -(-total // (nlanes * config.EDIT_CHUNKS_PER_THREAD)))

    def mode_id(self) -> int:
        if self.mode == "global":
            return cc.MODE_GLOBAL
        return cc.MODE_HITS if self.report == "hits" else cc.MODE_BEST


def align_items(plan, kernel, abort: np.ndarray, items: np.ndarray):
    """The path stage (cpu_align) for items [instance, end, record start, distance, start or -1]
    of a plan: (starts, cigars), cigar None for an item a cancel stopped. Every backend's
    hits and pairs go through it, so all report the same start and CIGAR, and every CIGAR
    reads along the pattern 5'->3' against the text as read on the hit's strand."""
    m = np.diff(plan.p_offs)[items[:, 0]]
    longest = np.where(items[:, 4] >= 0, items[:, 1] - items[:, 4],
                       np.minimum(items[:, 1] - items[:, 2], m + items[:, 3]))
    op_offs = np.zeros(len(items) + 1, dtype=np.int64)
    np.cumsum(m + longest, out=op_offs[1:])
    ops = np.zeros(int(op_offs[-1]), dtype=np.uint8)
    starts = np.zeros(len(items), dtype=np.int64)
    counts = np.zeros(len(items), dtype=np.int64)
    kernel(plan.pats, plan.p_offs, plan.p_minus, plan.text, np.ascontiguousarray(items), op_offs,
           ops, starts, counts, config.EDIT_ALIGN_STORE_WORDS, abort)
    from engine.edit import cpu_align

    bad = np.flatnonzero((counts == -1) | (starts < 0))
    if bad.size:
        raise RuntimeError(f"edit: alignment disagrees with the scanned distance for item "
                           f"{items[bad[0]].tolist()}")
    return starts, Cigars(*cpu_align.cigar_text(ops, op_offs, counts), counts >= 0)


class Cigars(NamedTuple):
    """The CIGARs of aligned items as one byte string: item h's is text[offs[h]:offs[h+1]]
    where ``done[h]`` (False: a cancel stopped it)."""

    text: np.ndarray
    offs: np.ndarray
    done: np.ndarray

    def strings(self) -> list:
        """One str per item (None where not done)."""
        text, bounds = self.text.tobytes().decode("ascii"), self.offs.tolist()
        return [text[bounds[h]:bounds[h + 1]] if ok else None
                for h, ok in enumerate(self.done.tolist())]
