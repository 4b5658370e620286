"""edit search over a text too large to hold whole, a chunk at a time (engine.streaming).

A search (``pairing="all"``) whose text is over ``config.STREAM_MEMORY_BASES`` (cuda:
``config.GPU_STREAM_BYTES``) is run chunk by chunk. A chunk's pieces are the text records
of an in-memory scan (engine.edit.driver's runners, any variant and backend) whose plan
knows where each piece lies in its record (:class:`~engine.edit.driver.Pieces`):

- a piece's tasks record ends only in the columns the piece owns, so every end is
  recorded by exactly one piece. Pieces overlap by m + k (m + m without k): an
  occurrence with d <= k edits spans at most m + d columns, so it lies whole in the
  piece that owns its end, and its distance, start and CIGAR are the in-memory ones;
- a piece record's ``offset`` is its record's plus the piece's start, so hits come in
  the record's coordinates;
- profile bins are the record's (binned from its column 0), each piece lowering those
  of its own columns.

The merge (:class:`ChunkMerge`, in any order of chunks): ``report="hits"`` hits are
appended as found; a best hit of (pattern, strand, record) is the smallest (distance,
end) over the record's pieces, final once every chunk holding a piece of the record is
merged; a profile bin is the minimum over pieces. The result (hits, profiles) equals the
in-memory path's. :class:`StreamedRunner` searches the chunks one after another here;
the dask backend (engine/edit/cluster.py) runs a :class:`ChunkSearch` per chunk as a task.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from engine.columns import ColumnBuffer
from engine.edit.driver import UNSEEN, Collector, Pieces, Plan, make_runner
from engine.edit.hits import HIT_DTYPES
from engine.jobs import Job
from engine.sequences import Record
from engine.slices import Step
from engine.streaming import FlatText


def search_overlap(job: Job) -> int:
    """Columns a piece's text starts before the first it owns: an occurrence with d <= k
    edits spans at most m + d columns, and d <= m."""
    k = job.params["k"]
    m = int(job.inputs["pattern"].lengths.max())
    return m + (min(k, m) if k is not None else m)


def whole_plan(job: Job, records) -> Plan:
    """The whole records' plan: groups, profile geometry, and the result's hit table (its
    text read on demand, for the ``matched`` strings)."""
    flat = FlatText(records)
    none = np.zeros(len(records), dtype=np.int64)
    return Plan(job, 1, pieces=Pieces(flat, flat.offsets, none, none, np.diff(flat.offsets)))


class ChunkSearch:
    """One chunk's search: the in-memory runner (any variant and backend) over its pieces,
    and what it found in the whole records' terms. ``text`` (the chunk's codes) is valid
    until ``background`` reads the next chunk."""

    def __init__(self, job: Job, plan: Plan, background, chunk, abort: np.ndarray,
                 threads: int | None):
        self.plan = plan
        self.text = text = background.text(chunk)
        records, offs = background.records, text.offsets
        pieces = Pieces(text.codes, offs, np.array([p.start for p in text.pieces], dtype=np.int64),
                        np.array([p.own for p in text.pieces], dtype=np.int64),
                        background.lengths[[p.record for p in text.pieces]])
        texts = tuple(Record(records[p.record].id, text.codes[offs[i]:offs[i + 1]],
                             offset=records[p.record].offset + p.start)
                      for i, p in enumerate(text.pieces))
        inner_job = dataclasses.replace(job, inputs={"pattern": job.inputs["pattern"],
                                                     "text": texts})
        self.runner = make_runner(inner_job, abort, threads, pieces)
        self._record = np.array([p.record for p in text.pieces], dtype=np.int64)
        inner = self.runner.plan
        S, R = len(plan.strands), len(records)
        self._group = (inner.g_pattern * R + self._record[inner.g_rec]) * S + inner.g_strand
        self._rows = self._cigar_bytes = 0

    def new_hits(self) -> tuple[dict, np.ndarray, np.ndarray]:
        """(rows, pieces, CIGAR bytes) of the hits found since the last call: rows with their
        whole record and ``group`` (the whole plan's), cig_lo/cig_hi into those bytes; the
        chunk piece each was found in."""
        inner = self.runner.collector
        n = len(inner.found)
        rows = {name: col[self._rows:n] for name, col in inner.found.view().items()}
        self._rows = n
        lo, hi = self._cigar_bytes, len(inner.cigar_text)
        self._cigar_bytes = hi
        aligned = rows["cig_lo"] >= 0
        rows["cig_lo"] = np.where(aligned, rows["cig_lo"] - lo, -1)
        rows["cig_hi"] = np.where(aligned, rows["cig_hi"] - lo, -1)
        rows["group"] = self._group[_inner_groups(self.runner.plan, rows)]
        pieces = rows["record"]
        rows["record"] = self._record[pieces]
        return rows, pieces, inner.cigar_text.view()["byte"][lo:hi]

    def profile(self) -> tuple[np.ndarray, np.ndarray]:
        """(where, values): the bins of the whole plan's profiles that the chunk's pieces
        scanned so far (a record has one piece a chunk), and their values."""
        if not self.plan.profile:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
        inner = self.runner.plan
        values = self.runner.lanes.prof
        sizes = np.diff(inner.prof_offs)
        shift = self.plan.prof_offs[self._group] - inner.prof_offs[:-1]
        where = np.repeat(shift, sizes) + np.arange(int(inner.prof_offs[-1]))
        seen = values != UNSEEN
        return where[seen], values[seen]


class ChunkMerge:
    """The whole records' answer of a search read in chunks, merged as chunks' hits and
    profiles come, in any order of chunks (the ``collector`` and ``prof`` that
    engine.edit.iter_solve reads of a ScanRunner)."""

    def __init__(self, job: Job, records):
        self.job = job
        self.records = tuple(records)
        self.plan = whole_plan(job, self.records)
        self.collector = Collector(self.plan, self, job.params["align"])
        self.best = self.plan.report == "best"
        self._prof = np.full(int(self.plan.prof_offs[-1]), UNSEEN, dtype=np.int64)
        self._candidates = ColumnBuffer(group=np.int64, **HIT_DTYPES)  # best mode, per piece
        self._left = np.zeros(len(self.records), dtype=np.int64)  # chunks of each record to merge

    def expect(self, chunks) -> None:
        """The chunks to merge (a record's best is final once all of its are)."""
        for chunk in chunks:
            np.add.at(self._left, [p.record for p in chunk.pieces], 1)

    def add_hits(self, rows: dict, cigar: np.ndarray) -> None:
        """A chunk's hit rows (:meth:`ChunkSearch.new_hits`): into the result, or with
        report="best" among the candidates of their record's best."""
        if not len(rows["end"]):
            return
        base = len(self.collector.cigar_text)
        self.collector.cigar_text.append(byte=cigar)
        aligned = rows["cig_lo"] >= 0
        rows = dict(rows, cig_lo=np.where(aligned, rows["cig_lo"] + base, -1),
                    cig_hi=np.where(aligned, rows["cig_hi"] + base, -1))
        group = rows.pop("group")
        if self.best:
            self._candidates.append(group=group, **rows)
        else:
            self.collector.found.append(**rows)

    def add_profile(self, where: np.ndarray, values: np.ndarray) -> None:
        """Lower the record profiles by a chunk's (:meth:`ChunkSearch.profile`)."""
        self._prof[where] = np.minimum(self._prof[where], values)

    def chunk_done(self, chunk) -> None:
        """Every hit and profile bin of ``chunk`` is merged: settle the bests of the records
        it was the last chunk of."""
        records = np.array([p.record for p in chunk.pieces], dtype=np.int64)
        np.subtract.at(self._left, records, 1)
        if self.best:
            self._settle_bests(records[self._left[records] == 0])

    def _settle_bests(self, records: np.ndarray) -> None:
        """The best hit of every (pattern, strand) in ``records`` (all pieces seen): the
        smallest distance, then the first end."""
        if not records.size or not len(self._candidates):
            return
        rows = self._candidates.view()
        mine = np.flatnonzero(np.isin(rows["record"], records))
        if not mine.size:
            return
        order = mine[np.lexsort((rows["end"][mine], rows["distance"][mine], rows["group"][mine]))]
        group = rows["group"][order]
        first = order[np.concatenate(([True], group[1:] != group[:-1]))]
        self.collector.found.append(**{name: rows[name][first] for name in HIT_DTYPES})

    @property
    def prof(self) -> np.ndarray:
        """The record profiles (what Collector.profiles reads)."""
        return self._prof

    def report(self) -> dict:
        return {"partial": self.collector.hit_table()}


class StreamedRunner(ChunkMerge):
    """The search's scan over a streamed text, a chunk after another (an
    engine.slices.SliceRunner, with the ``lanes`` that engine.edit.iter_solve compiles).

    Units are text columns x pattern instances (one chunk's worth each: its bases)."""

    def __init__(self, job: Job, abort: np.ndarray, threads: int | None, background):
        super().__init__(job, background.records)
        self.abort, self.threads, self.background = abort, threads, background
        self.chunks = background.chunks(search_overlap(job))
        self.expect(self.chunks)
        instances = len(self.plan.p_offs) - 1
        self._units = [instances * chunk.bases for chunk in self.chunks]
        self.total = sum(self._units)
        self.done = 0
        self._index = -1
        self._inner: ChunkSearch | None = None
        self._open_next()
        self.lanes = self._inner.runner.lanes  # what compile_once asks (any chunk's: the same)
        self.first_slice = self._inner.runner.first_slice

    @property
    def finished(self) -> bool:
        return self._index >= len(self.chunks)

    def _open_next(self) -> None:
        if self._inner is not None:
            self._close()
        self._index += 1
        if self.finished:
            return
        self._inner = ChunkSearch(self.job, self.plan, self.background, self.chunks[self._index],
                                  self.abort, self.threads)

    def _close(self) -> None:
        """Fold the finished chunk's profile in, settle the bests of the records it ended."""
        self.add_profile(*self._inner.profile())
        chunk = self.chunks[self._index]
        self.background.release(chunk)
        self._inner = None
        self.chunk_done(chunk)

    def step(self, budget: int) -> Step:
        inner = self._inner.runner
        step = inner.step(budget)
        rows, _, cigar = self._inner.new_hits()
        self.add_hits(rows, cigar)
        if step.aborted:
            return step
        units = self._units[self._index]
        self.done = (sum(self._units[:self._index])
                     + units * min(inner.done, inner.total) // max(1, inner.total))
        finished, inner = inner.finished, None
        if finished:
            self._open_next()
        return step

    @property
    def prof(self) -> np.ndarray:
        """The record profiles, the open chunk's included."""
        if self._inner is not None:
            self.add_profile(*self._inner.profile())
        return self._prof


def _inner_groups(plan, rows) -> np.ndarray:
    """The plan group of each of a chunk's hit rows (pattern, piece, strand)."""
    S, R = len(plan.strands), len(plan.texts)
    return (rows["pattern"].astype(np.int64) * R + rows["record"]) * S + rows["strand"]
