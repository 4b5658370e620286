"""kmismatch's slices and dispatch: which kernel scans a range of text positions.

:class:`ScanRunner` walks the text positions of every record laid end to end (the
units of :func:`engine.slices.run_slices`), one length group of patterns after the
other within a slice. CPU variants run a range scanner over many text chunks
(:func:`scan`); cuda jobs go through ``engine.kmismatch.cuda``, imported only for
them. :class:`ScanProblem` is the job as a chunked problem (engine.executors): whole,
streamed or on Dask.

**CPU chunks.** Every chunk writes its hits into its own region of the result
columns (no races, no atomics: stumpy's per-thread buffers, the study's opt3
idea); the host then closes the gaps between the regions in chunk order, so the
hits stay sorted by window and slot. A chunk that filled its region reports how
far it got and is resumed from there with a larger one.
"""

from __future__ import annotations

import dataclasses
import threading
from functools import cached_property
from typing import NamedTuple

import numba
import numpy as np

from engine import config, registry
from engine.gaps import text_gaps, touches_gap
from engine.executors import ChunkedProblem
from engine.executors.protocol import InnerRunnerRun
from engine.jobs import Job
from engine.kmismatch.cpu_common import Counts, pack
from engine.kmismatch.cuda_options import check_cuda_limits
from engine.kmismatch.hits import HitBuffer, HitDensity, HitTable
from engine.kmismatch.spec import SPEC
from engine.sequences import COMPLEMENT_TABLE, Record, SeqColumns
from engine.slices import Step

# -- pattern groups and text -----------------------------------------------------------------

def slot_groups(patterns, strands: str):
    """(m, slot patterns (R, m), slot codes (R,)) per pattern length, shortest first: the
    patterns of that length and, with both strands, each one's reverse complement."""
    by_length: dict[int, list[int]] = {}
    for index, rec in enumerate(patterns):
        by_length.setdefault(len(rec), []).append(index)
    ns = 2 if strands == "both" else 1
    out = []
    for m in sorted(by_length):
        members = by_length[m]
        rows = []
        for index in members:
            codes = patterns[index].codes
            rows.append(codes)
            if ns == 2:
                rows.append(COMPLEMENT_TABLE[codes[::-1]])
        slot_patterns = np.array(rows, dtype=np.uint8).reshape(len(rows), m)
        # A hit reports 2 * pattern + strand, so hits sort by pattern then strand.
        slot_code = (2 * np.repeat(np.array(members, dtype=np.int32), ns)
                     + np.tile(np.arange(ns, dtype=np.int32), len(members)))
        out.append((m, slot_patterns, slot_code))
    return out


def chunks(offsets: np.ndarray, lo: int, hi: int, m: int, pieces: int):
    """Window-start ranges of length-m windows that start in [lo, hi), one record each.

    With ``pieces`` > 1 the ranges are cut further, to about ``pieces`` chunks
    of at least ``KMISMATCH_MIN_CHUNK`` windows (multicore).
    """
    first = int(np.searchsorted(offsets, lo, side="right")) - 1
    last = int(np.searchsorted(offsets, hi, side="left"))
    rec_lo = offsets[first:last]
    rec_hi = offsets[first + 1:last + 1]
    los = np.maximum(rec_lo, lo)
    his = np.minimum(rec_hi - m + 1, hi)
    keep = los < his
    los, his = los[keep], his[keep]
    if pieces > 1 and los.size:
        lengths = his - los
        target = max(config.KMISMATCH_MIN_CHUNK, -(-int(lengths.sum()) // pieces))
        cuts = -(-lengths // target)
        starts = np.repeat(los, cuts)
        step = np.repeat(-(-lengths // cuts), cuts)
        within = np.arange(int(cuts.sum())) - np.repeat(np.cumsum(cuts) - cuts, cuts)
        new_lo = starts + within * step
        new_hi = np.minimum(new_lo + step, np.repeat(his, cuts))
        los, his = new_lo, new_hi
    return los, his


# -- CPU variants ------------------------------------------------------------------------------

class Model(NamedTuple):
    """One length group compiled for one variant (the arrays its kernel reads)."""

    variant: str
    pat: np.ndarray  # uint8 (R, m): naive's slot patterns
    tab: np.ndarray  # uint64: shift-add tables / pmasm look-up memory
    prm: np.ndarray  # int64: m, k, R, then the variant's own fields
    msk: np.ndarray  # uint64: pmasm's word constants
    slot_code: np.ndarray  # int32: what a hit of each slot reports (2 * pattern + strand)
    m: int

    @property
    def slots(self) -> int:
        return int(self.slot_code.shape[0])


def build_model(variant: str, slot_patterns: np.ndarray, k: int,
                slot_code: np.ndarray | None = None) -> Model:
    """Tables for the ``(R, m)`` slot patterns (with both strands: patterns and their
    reverse complements).

    ``slot_code[r]`` is written for a hit of slot r (default: r itself).
    """
    R, m = slot_patterns.shape
    arrays = _module(variant).build_model(slot_patterns, k)
    if slot_code is None:
        slot_code = np.arange(R, dtype=np.int32)
    return Model(variant, *arrays, np.ascontiguousarray(slot_code, dtype=np.int32), m)


def _module(variant: str):
    """A CPU variant's kernel module (engine/kmismatch/spec.py), imported at first use."""
    return registry.named_kernels("kmismatch", variant, "serial")


_POOL = threading.local()


def _spare(size: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Scratch hit columns for the multicore chunks, kept from call to call (per calling
    thread): fresh memory costs a page fault per 4 KiB on first touch, and threads that
    fault at once wait for each other, which made a first multicore scan slower than a
    serial one."""
    cols = getattr(_POOL, "columns", None)
    if cols is None or cols[0].shape[0] < size:
        size = max(size, 2 * (0 if cols is None else cols[0].shape[0]), 1 << 16)
        cols = _POOL.columns = tuple(np.empty(size, dtype=d) for d in (np.int64, np.int32,
                                                                          np.int32))
    return cols


def scan(model: Model, text: np.ndarray, los, his, backend: str, abort: np.ndarray, out,
         per_window: float, counts: Counts) -> int | None:
    """Add the hits of windows starting in the chunks [los[c], his[c]) to ``out``.

    ``out`` is a :class:`~engine.kmismatch.hits.HitBuffer`; its new hits are in
    window then slot order (chunks are given in text order), and ``counts``
    counts them. Each chunk writes into its own region, sized for
    ``per_window`` hits a window (the caller's estimate): of ``out`` itself
    when serial, of a spare buffer when multicore, from which the regions are
    then packed into ``out`` (and counted) in parallel. A chunk that filled its
    region is resumed where it stopped with four times the room (and the chunks
    after it run again). Returns the number of hits added, or None when
    ``abort`` stopped the scan (``out`` is then as before, ``counts`` may not be:
    see :meth:`Counts.recount`).
    """
    module = _module(model.variant)
    kernel = module.scan_chunks_serial if registry.serial(backend) else module.scan_chunks_multicore
    R = model.slots
    los = np.array(los, dtype=np.int64)
    his = np.asarray(his, dtype=np.int64)
    # Room for a window's worth of hits at least, so that every round makes progress.
    caps = (R + 64 + (his - los) * per_window).astype(np.int64)
    start = len(out)
    active = np.flatnonzero(los < his)
    while active.size:
        c_lo, c_hi, c_cap = los[active], his[active], caps[active]
        bases = np.zeros(active.size, dtype=np.int64)
        np.cumsum(c_cap[:-1], out=bases[1:])
        room = int(c_cap.sum())
        if registry.serial(backend):
            bases += out.room(room)
            target = out.columns
        else:
            target = _spare(room)
        found = np.zeros(active.size, dtype=np.int64)
        reached = np.zeros(active.size, dtype=np.int64)
        # Chunks are handed to threads one at a time as they free up (not split evenly in
        # advance), so a thread that loses its core for a while does not hold the others up.
        with numba.parallel_chunksize(1):
            kernel(text, c_lo, c_hi, model.pat, model.tab, model.prm, model.msk,
                   model.slot_code, *target, bases, c_cap, found, reached, abort)
        if abort[0] != 0:
            out.truncate(start)  # keep nothing of this scan
            return None
        # Keep chunks in order up to the first one that stopped early; it goes on from
        # where it stopped, and those after it run again. Every chunk that stopped early
        # gets four times the room.
        short = reached < c_hi
        kept = int(np.argmax(short)) + 1 if short.any() else active.size
        n = int(found[:kept].sum())
        if registry.serial(backend):
            at = len(out)
            out.keep(zip(bases[:kept].tolist(), found[:kept].tolist()))
            counts.add(out, at, at + n)
        else:
            at = out.room(n)
            pack(*target, bases[:kept], found[:kept], *out.columns, at, *counts.arrays())
            out.keep([(at, n)])
        los[active[:kept]] = reached[:kept]
        caps[active[short]] *= 4
        active = np.flatnonzero(los < his)
    return len(out) - start


# -- the scan ----------------------------------------------------------------------------------

class ScanRunner:
    """The scan of the text, a slice of text positions at a time (a SliceRunner).

    A slice adds the hits of the windows that start in it to :attr:`found`, in
    (record, start, pattern, strand) order, and counts them in :attr:`counts`.
    ``cells`` counts positions x patterns searched (a reverse complement counting as one
    more pattern), ``comparisons`` the symbol comparisons these Hamming distances stand
    for. A slice that a kernel aborts (the cancel flag) is dropped whole. On cuda the GPU
    does the whole slice (engine.kmismatch.cuda.CudaSearch: hits ordered, merged and
    counted there, copied into page-locked columns); ``cache_text`` keeps the text packed
    for its records, so that solving them again uploads it at once.
    """

    def __init__(self, job: Job, groups: list, abort: np.ndarray, cache_text: bool = True):
        records: tuple[Record, ...] = job.inputs["text"]
        patterns: tuple[Record, ...] = job.inputs["patterns"]
        k = job.params["k"]
        self.records = records
        self.backend = job.backend
        self.abort = abort
        text = SeqColumns.from_records(records)  # (one record, a genome: read in place)
        self.text, self.offsets = text.codes, text.offsets
        self.counts = Counts([len(r) for r in records], len(patterns),
                             config.KMISMATCH_DENSITY_BINS)
        self.search = None
        columns: dict = {}
        on_gpu = registry.on_gpu(job.backend)
        if on_gpu:
            from engine import gpu
            self.search = registry.kernels(job)(job.variant, self.text, self.offsets, groups, k,
                                                job.params.get("threads_per_block"), abort,
                                                owners=records if cache_text else None,
                                                counts=self.counts, n_patterns=len(patterns))
            self.groups = self.search.groups  # (cuda.Group: m and slots, as a Model has)
            columns = {"dtypes": self.search.dtypes, "alloc": gpu.pinned_empty}
        else:  # one Model per pattern length, compiled for the job's variant
            self.groups = [build_model(job.variant, slot_patterns, k, slot_code)
                           for _, slot_patterns, slot_code in groups]
        #: CPU: hits a window per group, as seen so far (the first guess: one in 8 windows
        #: hits 8 slots).
        self.per_window = [min(g.slots, 8) / 8 for g in self.groups]
        self.pieces = 1  # chunks a slice is cut into
        if registry.threaded(job.backend):
            self.pieces = config.KMISMATCH_CHUNKS_PER_THREAD * numba.get_num_threads()
        self.found = HitBuffer(pattern_ids=tuple(p.id for p in patterns),
                               pattern_lengths=tuple(len(p) for p in patterns),
                               record_ids=tuple(r.id for r in records), text=self.text,
                               offsets=self.offsets, shifts=[r.offset for r in records],
                               **columns)
        self.pattern_lengths = np.array([len(p) for p in patterns], dtype=np.int64)
        self._recount = False  # hits over a gap were dropped: the counts are made again
        self.total = sum(len(r) for r in records)
        self.done = 0
        slots = sum(g.slots for g in self.groups)
        first_cells = (config.KMISMATCH_CUDA_FIRST_SLICE_CELLS if on_gpu
                       else config.KMISMATCH_FIRST_SLICE_CELLS.get(job.variant, 1 << 24))
        self.first_slice = max(4096, first_cells // slots)

    @property
    def finished(self) -> bool:
        return self.done >= self.total

    def step(self, budget: int) -> Step:
        lo, hi = self.done, min(self.total, self.done + budget)
        before = len(self.found)
        counted = self._scan_slice(lo, hi)
        if counted is None:  # a kernel saw the cancel flag mid-slice: drop that slice
            self.counts.recount(self.found)
            return Step(0, aborted=True)
        self._drop_gap_hits(before)
        if not lo and hi < self.total:  # room for the whole text's hits at the first slice's rate
            self.found.reserve(int(len(self.found) * (self.total / hi) * 1.2) + 1024)
        self.done = hi
        if self.finished:
            self._settle()
        return Step(hi - lo, *counted)

    def _settle(self) -> None:
        """cuda: the GPU's counts into :attr:`counts`, and its memory left for the next job."""
        if self.search is not None:
            self.search.fetch_counts(self.counts)
            self.search.close()
            self.search = None

    @cached_property
    def _gaps(self) -> tuple[np.ndarray, np.ndarray]:
        """The assembly gaps (engine.gaps) of the text laid end to end, found once."""
        return text_gaps(self.records)

    def _drop_gap_hits(self, before: int) -> None:
        """Drop the slice's hits (those after the first ``before``) whose window holds an
        assembly gap base: with the gap as a record break they would not exist. Dropped as
        found, so that Progress.partial and a cancelled run's hits follow the final rule;
        the counts are made again from the hits kept (:meth:`density`)."""
        n = len(self.found)
        if n == before or not self._gaps[0].size:
            return
        pos, code, mis = (col[before:n] for col in self.found.columns)
        keep = ~touches_gap(self._gaps, pos, pos + self.pattern_lengths[code >> 1])
        if keep.all():
            return
        kept = [col[keep] for col in (pos, code, mis)]  # (copies: the columns are rewritten)
        self.found.truncate(before)
        self.found.append(*kept)
        self._recount = True

    def report(self) -> dict:
        return {"partial": self.found.view()}

    def hits(self) -> HitTable:
        return self.found.view()

    def density(self) -> tuple[HitDensity, ...]:
        self._settle()
        if self._recount:  # (after the GPU's counts came: they hold the dropped hits)
            self.counts.recount(self.found)
            self._recount = False
        return self.counts.density(self.records)

    def _scan_slice(self, lo: int, hi: int):
        """Add the hits of windows starting in text[lo:hi] to ``found`` and count them.
        Returns (cells, comparisons), or None when aborted (then ``found`` is unchanged).
        A cuda job hands the whole slice to the GPU, which skips the windows that cross
        records itself."""
        spans = [chunks(self.offsets, lo, hi, g.m, self.pieces) for g in self.groups]
        windows = [int((his - los).sum()) for los, his in spans]
        cells = sum(w * g.slots for w, g in zip(windows, self.groups))
        comparisons = sum(w * g.slots * g.m for w, g in zip(windows, self.groups))
        if self.search is not None:
            self.search.scan(lo, hi, self.found)
            return cells, comparisons
        # One length group's hits come out in order; several groups are merged.
        merge = [HitBuffer() for _ in self.groups] if len(self.groups) > 1 else [self.found]
        for i, (model, out, (los, his), n) in enumerate(zip(self.groups, merge, spans, windows)):
            if not los.size:
                continue
            added = scan(model, self.text, los, his, self.backend, self.abort, out,
                         1.5 * self.per_window[i], self.counts)
            if added is None:
                return None
            self.per_window[i] = max(added / n, 0.01)
        if len(self.groups) > 1:
            pos, code, mis = (np.concatenate([b.columns[i][:len(b)] for b in merge])
                              for i in range(3))
            order = np.lexsort((code, pos))
            self.found.append(pos[order], code[order], mis[order])
        return cells, comparisons


def owned_hits(pos, code, mis, inner_offsets, pieces, offsets, pattern_lengths):
    """Hits found in a chunk's pieces laid end to end (``inner_offsets``) in the whole text's
    coordinates (record ``offsets``), keeping those whose window ends in a column its piece
    owns: every window lies whole in that piece (engine.streaming), so each hit is kept once."""
    p_start = np.array([p.start for p in pieces], dtype=np.int64)
    p_own = np.array([p.own for p in pieces], dtype=np.int64)
    p_base = offsets[[p.record for p in pieces]]
    piece = np.searchsorted(inner_offsets, pos, side="right") - 1
    column = p_start[piece] + (pos - inner_offsets[piece])
    keep = column + pattern_lengths[code >> 1] - 1 >= p_own[piece]
    return (p_base[piece] + column)[keep], code[keep], mis[keep]


class ChunkScan(InnerRunnerRun):
    """One chunk's scan (an engine.executors.ChunkRun): a :class:`ScanRunner` over the
    chunk's pieces; :meth:`take` hands back the hits it found since the last call that
    its pieces own, in the whole text's coordinates (:func:`owned_hits`)."""

    def __init__(self, problem: "ScanProblem", chunk, text, abort: np.ndarray):
        from engine.streaming import piece_records

        self.problem, self.pieces = problem, chunk.pieces
        job = dataclasses.replace(problem.job, inputs={
            "text": tuple(piece_records(problem.records, text)),
            "patterns": problem.job.inputs["patterns"]})
        # (a chunk's pieces are views of one reused buffer: nothing to keep packed)
        self.runner = ScanRunner(job, problem.groups, abort, cache_text=False)
        self.first_slice = self.runner.first_slice
        self._seen = 0

    def take(self) -> tuple:
        inner = self.runner
        n = len(inner.found)
        pos, code, mis = (col[self._seen:n] for col in inner.found.columns)
        self._seen = n
        return owned_hits(pos, code, mis, inner.offsets, self.pieces, self.problem.offsets,
                          self.problem.pattern_lengths)


class ScanProblem(ChunkedProblem):
    """kmismatch as a chunked problem (engine.executors): one task per text chunk, all
    patterns. Chunks overlap by the longest pattern - 1, so every window lies whole in the
    piece that owns its last column, and that piece alone keeps the hit. Hits are merged
    in any order; at the end they are put in the in-memory order (window, then slot) and
    counted, so the result is one in-memory scan's. Progress counts text positions."""

    spec = SPEC
    role = "text"
    setup_is_solve_time = True  # (the text packed, or uploaded to the GPU)

    def __init__(self, job: Job):
        from engine.streaming import FlatText

        super().__init__(job)
        patterns = job.inputs["patterns"]
        self.pattern_lengths = np.array([len(p) for p in patterns], dtype=np.int64)
        self.overlap = int(self.pattern_lengths.max()) - 1
        self.flat = FlatText(self.records)
        self.offsets = self.flat.offsets
        self.done = 0  # text positions of the tasks merged whole
        self._sorted = True

    @cached_property
    def groups(self) -> list:
        """The patterns' length groups (:func:`slot_groups`)."""
        return slot_groups(self.job.inputs["patterns"], self.job.params["strands"])

    @cached_property
    def found(self) -> HitBuffer:
        patterns = self.job.inputs["patterns"]
        return HitBuffer(pattern_ids=tuple(p.id for p in patterns),
                         pattern_lengths=tuple(self.pattern_lengths.tolist()),
                         record_ids=tuple(r.id for r in self.records), text=self.flat,
                         offsets=self.offsets, shifts=[r.offset for r in self.records])

    @cached_property
    def counts(self) -> Counts:
        return Counts([len(r) for r in self.records], len(self.pattern_lengths),
                      config.KMISMATCH_DENSITY_BINS)

    def whole(self, abort: np.ndarray, threads: int | None) -> ScanRunner:
        return ScanRunner(self.job, self.groups, abort)

    def open(self, task, text, abort: np.ndarray, threads: int | None) -> ChunkScan:
        return ChunkScan(self, task.chunk, text, abort)

    def merge(self, task, answer) -> None:
        pos, code, mis = answer
        if len(pos):
            self.found.append(pos, code, mis)
            self._sorted = False

    def task_done(self, task) -> None:
        self.done += task.owned

    def worker_job(self, gpu: bool) -> Job:
        worker = super().worker_job(gpu)
        if gpu:  # the GPU kernels' limits, said before any task (make_job's)
            check_cuda_limits(self.job.inputs["patterns"], self.job.params["strands"])
        return worker

    def warm_key(self) -> tuple:
        """The pattern lengths: the cuda kernels specialise on them."""
        return tuple(sorted(set(self.pattern_lengths.tolist())))

    def _finish(self) -> None:
        if self._sorted:
            return
        n = len(self.found)
        pos, code, mis = (col[:n].copy() for col in self.found.columns)
        order = np.lexsort((code, pos))
        self.found.truncate(0)
        self.found.append(pos[order], code[order], mis[order])
        self.counts.recount(self.found)
        self._sorted = True

    def report(self) -> dict:
        return {"partial": self.found.view()}

    def hits(self) -> HitTable:
        self._finish()
        return self.found.view()

    def density(self) -> tuple[HitDensity, ...]:
        self._finish()
        return self.counts.density(self.records)
