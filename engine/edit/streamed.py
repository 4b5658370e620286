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

The merge: ``report="hits"`` hits are appended as found; a best hit of (pattern, strand,
record) is the smallest (distance, end) over the record's pieces, final once the chunk
holding its last piece is done; a profile bin is the minimum over pieces. The result
(hits, profiles) equals the in-memory path's.
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


class StreamedRunner:
    """The search's scan over a streamed text (an engine.slices.SliceRunner, with the
    ``collector`` and ``lanes`` that engine.edit.iter_solve reads of a ScanRunner).

    Units are text columns x pattern instances (one chunk's worth each: its bases)."""

    def __init__(self, job: Job, abort: np.ndarray, threads: int | None, background):
        from engine.streaming import FlatText

        self.job, self.abort, self.threads, self.background = job, abort, threads, background
        records = background.records
        k = job.params["k"]
        m = int(job.inputs["pattern"].lengths.max())
        self.chunks = background.chunks(m + (min(k, m) if k is not None else m))
        # The whole records' plan: groups, profile geometry, and the result's hit table (its
        # text read on demand, for the ``matched`` strings).
        flat = FlatText(records)
        none = np.zeros(len(records), dtype=np.int64)
        self.plan = Plan(job, 1, pieces=Pieces(flat, flat.offsets, none, none, np.diff(flat.offsets)))
        self.collector = Collector(self.plan, self, job.params["align"])
        self.best = self.plan.report == "best"
        self._prof = np.full(int(self.plan.prof_offs[-1]), UNSEEN, dtype=np.int64)
        self._candidates = ColumnBuffer(group=np.int64, **HIT_DTYPES)  # best mode, per piece
        self._last_chunk = np.zeros(len(records), dtype=np.int64)  # of each record
        for index, chunk in enumerate(self.chunks):
            self._last_chunk[[p.record for p in chunk.pieces]] = index
        instances = len(self.plan.p_offs) - 1
        self._units = [instances * chunk.bases for chunk in self.chunks]
        self.total = sum(self._units)
        self.done = 0
        self._index = -1
        self._inner = None
        self._open_next()
        self.lanes = self._inner.lanes  # what compile_once asks (any chunk's: the same kernels)
        self.first_slice = self._inner.first_slice

    @property
    def finished(self) -> bool:
        return self._index >= len(self.chunks)

    def _open_next(self) -> None:
        if self._inner is not None:
            self._close()
        self._index += 1
        if self.finished:
            return
        chunk = self.chunks[self._index]
        text = self.background.text(chunk)
        records, offs = self.background.records, text.offsets
        pieces = Pieces(text.codes, offs, np.array([p.start for p in text.pieces], dtype=np.int64),
                        np.array([p.own for p in text.pieces], dtype=np.int64),
                        self.background.lengths[[p.record for p in text.pieces]])
        texts = tuple(Record(records[p.record].id, text.codes[offs[i]:offs[i + 1]],
                             offset=records[p.record].offset + p.start)
                      for i, p in enumerate(text.pieces))
        inner_job = dataclasses.replace(self.job, inputs={"pattern": self.job.inputs["pattern"],
                                                          "text": texts})
        self._inner = make_runner(inner_job, self.abort, self.threads, pieces)
        self._record = np.array([p.record for p in text.pieces], dtype=np.int64)
        inner = self._inner.plan
        S, R = len(self.plan.strands), len(records)
        self._group = (inner.g_pattern * R + self._record[inner.g_rec]) * S + inner.g_strand
        self._rows = self._cigar_bytes = 0

    def _close(self) -> None:
        """Fold the finished chunk's profile in, settle the bests of the records it ended."""
        self._fold_profile()
        self.background.release(self.chunks[self._index])
        self._inner = None
        if self.best:
            self._settle_bests(np.flatnonzero(self._last_chunk == self._index))

    def step(self, budget: int) -> Step:
        inner = self._inner
        step = inner.step(budget)
        self._take_hits()
        if step.aborted:
            return step
        units = self._units[self._index]
        self.done = (sum(self._units[:self._index])
                     + units * min(inner.done, inner.total) // max(1, inner.total))
        finished, inner = inner.finished, None
        if finished:
            self._open_next()
        return step

    def _take_hits(self) -> None:
        """The chunk's new hits (their CIGARs copied along): into the result, or with
        report="best" among the candidates of their record's best."""
        inner = self._inner.collector
        n = len(inner.found)
        if n == self._rows:
            return
        rows = {name: col[self._rows:n] for name, col in inner.found.view().items()}
        self._rows = n
        lo, hi = self._cigar_bytes, len(inner.cigar_text)
        self._cigar_bytes = hi
        base = len(self.collector.cigar_text)
        self.collector.cigar_text.append(byte=inner.cigar_text.view()["byte"][lo:hi])
        aligned = rows["cig_lo"] >= 0
        rows["cig_lo"] = np.where(aligned, rows["cig_lo"] - lo + base, -1)
        rows["cig_hi"] = np.where(aligned, rows["cig_hi"] - lo + base, -1)
        group = self._group[_inner_groups(self._inner.plan, rows)]
        rows["record"] = self._record[rows["record"]]
        if self.best:
            self._candidates.append(group=group, **rows)
        else:
            self.collector.found.append(**rows)

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

    def _fold_profile(self) -> None:
        """Lower the record profiles by the current chunk's (a record has one piece a chunk)."""
        inner = self._inner.plan
        if not self.plan.profile:
            return
        values = self._inner.lanes.prof
        sizes = np.diff(inner.prof_offs)
        shift = self.plan.prof_offs[self._group] - inner.prof_offs[:-1]
        where = np.repeat(shift, sizes) + np.arange(int(inner.prof_offs[-1]))
        self._prof[where] = np.minimum(self._prof[where], values)

    @property
    def prof(self) -> np.ndarray:
        """The record profiles (what Collector.profiles reads), the open chunk's included."""
        if self._inner is not None:
            self._fold_profile()
        return self._prof

    def report(self) -> dict:
        return {"partial": self.collector.hit_table()}


def _inner_groups(plan, rows) -> np.ndarray:
    """The plan group of each of a chunk's hit rows (pattern, piece, strand)."""
    S, R = len(plan.strands), len(plan.texts)
    return (rows["pattern"].astype(np.int64) * R + rows["record"]) * S + rows["strand"]
