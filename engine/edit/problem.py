"""edit search as a chunked problem (engine.executors): :class:`SearchProblem`.

A search (``pairing="all"``) runs on any executor: in this process its whole text at once
when it fits (``config.STREAM_MEMORY_BASES``; cuda: ``config.GPU_STREAM_BYTES``), else
chunk by chunk; on Dask one task per chunk. A chunk's pieces are the text records
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

The merge (:class:`SearchProblem`'s, in any order of chunks): ``report="hits"`` hits are
appended as found; a best hit of (pattern, strand, record) is the smallest (distance,
end) over the record's pieces, final once every chunk holding a piece of the record is
merged; a profile bin is the minimum over pieces. The result (hits, profiles) equals the
in-memory path's, whichever executor ran the chunks.
"""

from __future__ import annotations

import dataclasses
from functools import cached_property

import numpy as np

from engine.columns import ColumnBuffer
from engine.edit.driver import Collector, make_runner
from engine.edit.hits import HIT_DTYPES
from engine.edit.plan import UNSEEN, Pieces, Plan, search_overlap
from engine.edit.spec import SPEC
from engine.executors import ChunkedProblem, Task
from engine.executors.protocol import InnerRunnerRun
from engine.jobs import Job
from engine.sequences import Record
from engine.streaming import FlatText


class ChunkSearch(InnerRunnerRun):
    """One chunk's search (an engine.executors.ChunkRun): the in-memory runner (any variant
    and backend) over its pieces, and what it found in the whole records' terms. ``text``
    (the chunk's engine.streaming.ChunkText) is valid until the next chunk is read."""

    def __init__(self, job: Job, plan: Plan, records, lengths: np.ndarray, text,
                 abort: np.ndarray, threads: int | None):
        self.plan = plan
        self.text = text
        offs = text.offsets
        pieces = Pieces(text.codes, offs, np.array([p.start for p in text.pieces], dtype=np.int64),
                        np.array([p.own for p in text.pieces], dtype=np.int64),
                        lengths[[p.record for p in text.pieces]])
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
        self.first_slice = self.runner.first_slice

    def take(self):
        """(hit rows, CIGAR bytes, profile bins, their values) found so far (the profile
        is the chunk's whole so far: a minimum, merged any number of times)."""
        rows, _, cigar = self.new_hits()
        return rows, cigar, *self.profile()

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
        # Each row's group in the chunk's plan (pattern, piece, strand), then in the whole one.
        S, R = len(self.plan.strands), len(self.runner.plan.texts)
        rows["group"] = self._group[(rows["pattern"].astype(np.int64) * R + rows["record"]) * S
                                    + rows["strand"]]
        pieces = rows["record"]
        rows["record"] = self._record[pieces]
        return rows, pieces, inner.cigar_text.view()["byte"][lo:hi]

    def profile(self) -> tuple[np.ndarray, np.ndarray]:
        """(where, values): the bins of the whole plan's profiles that the chunk's pieces
        scanned so far, and their values (a bin may come more than once)."""
        if not self.plan.profile:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
        inner = self.runner.plan
        values = self.runner.lanes.prof
        sizes = np.diff(inner.prof_offs)
        shift = self.plan.prof_offs[self._group] - inner.prof_offs[:-1]
        where = np.repeat(shift, sizes) + np.arange(int(inner.prof_offs[-1]))
        seen = values != UNSEEN
        gap_where, gap_values = self._skipped_bins
        return (np.concatenate((where[seen], gap_where)),
                np.concatenate((values[seen], gap_values)))

    @cached_property
    def _skipped_bins(self) -> tuple[np.ndarray, np.ndarray]:
        """(where, values) of the profile bins of the skipped gap columns that the chunk's
        pieces own (a piece after a skip owns the skip, engine.streaming.plan_chunks, which
        is not in its text). A skip lies more than the overlap (>= m) into its gap, so any
        occurrence ending there holds more than m gap bases and C[m,j] = m there: the
        whole-text scan's bins read min(m, cap). A bin the skip shares with scanned columns
        is no higher (C <= m everywhere)."""
        inner = self.runner.plan
        pieces = inner.pieces
        owns_skip = pieces.own[inner.g_rec] < pieces.start[inner.g_rec]
        groups = np.flatnonzero(owns_skip)
        if not groups.size:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
        binw = inner.binw[groups]
        first = pieces.own[inner.g_rec[groups]] // binw
        count = (pieces.start[inner.g_rec[groups]] - 1) // binw + 1 - first
        m = np.diff(inner.p_offs)[inner.g_inst[groups]]
        value = np.minimum(m, inner.g_cut[groups] + 1)
        base = self.plan.prof_offs[self._group[groups]] + first
        where = np.repeat(base, count) + _ranks(count)
        return where, np.repeat(value, count)


class SearchProblem(ChunkedProblem):
    """An edit search over whole text records (``pairing="all"``) as a chunked problem:
    one task per chunk (all patterns and strands). Units are text columns x pattern
    instances. The merge (the client's, made with the tasks: a worker only runs them)
    takes chunks' hits and profiles as they come, in any order of chunks, into the
    ``collector`` and ``prof`` that engine.edit.iter_solve reads of a ScanRunner."""

    spec = SPEC
    role = "text"

    def __init__(self, job: Job):
        super().__init__(job)
        self.overlap = search_overlap(job)
        self.instances = len(job.inputs["pattern"]) * (2 if job.params["strands"] == "both"
                                                        else 1)

    @cached_property
    def lengths(self) -> np.ndarray:
        return np.array([len(r) for r in self.records], dtype=np.int64)

    @cached_property
    def plan(self) -> Plan:
        """The whole records' plan (what a chunk's groups and profile bins map into): groups,
        profile geometry, and the result's hit table (its text read on demand, for the
        ``matched`` strings)."""
        flat = FlatText(self.records)
        none = np.zeros(len(self.records), dtype=np.int64)
        return Plan(self.job, 1, pieces=Pieces(flat, flat.offsets, none, none,
                                               np.diff(flat.offsets)))

    def total_units(self) -> int:
        return self.instances * int(self.lengths.sum())

    def weight(self, task: Task) -> int:
        return self.instances * task.owned

    def tasks(self, chunks) -> list[Task]:
        """One task a chunk, and the merge: the result's collector, the record profiles
        (``prof``, what Collector.profiles reads), the best mode's candidates, and the
        chunks of each record to merge (a record's best is final once all of its are)."""
        self.collector = Collector(self.plan, self, self.job.params["align"])
        self.prof = np.full(int(self.plan.prof_offs[-1]), UNSEEN, dtype=np.int64)
        self._candidates = ColumnBuffer(group=np.int64, **HIT_DTYPES)  # best mode, per piece
        self._left = np.zeros(len(self.records), dtype=np.int64)
        for chunk in chunks:
            np.add.at(self._left, [p.record for p in chunk.pieces], 1)
        return super().tasks(chunks)

    def open(self, task: Task, text, abort: np.ndarray, threads: int | None) -> ChunkSearch:
        return ChunkSearch(self.job, self.plan, self.records, self.lengths, text, abort, threads)

    def whole(self, abort: np.ndarray, threads: int | None):
        return make_runner(self.job, abort, threads)

    def merge(self, task: Task, answer) -> None:
        """A chunk's hit rows (:meth:`ChunkSearch.new_hits`) into the result, or with
        report="best" among the candidates of their record's best; the record profiles
        lowered by its bins (:meth:`ChunkSearch.profile`). A bin may come more than once
        (two pieces of a record either side of a skipped gap share a chunk, and the skip's
        own bins): an unbuffered minimum, not a last write."""
        rows, cigar, where, values = answer
        np.minimum.at(self.prof, where, values)
        if not len(rows["end"]):
            return
        base = len(self.collector.cigar_text)
        self.collector.cigar_text.append(byte=cigar)
        aligned = rows["cig_lo"] >= 0
        rows = dict(rows, cig_lo=np.where(aligned, rows["cig_lo"] + base, -1),
                    cig_hi=np.where(aligned, rows["cig_hi"] + base, -1))
        group = rows.pop("group")
        if self.plan.report == "best":
            self._candidates.append(group=group, **rows)
        else:
            self.collector.found.append(**rows)

    def task_done(self, task: Task) -> None:
        """Every hit and profile bin of the task's chunk is merged: settle the bests of the
        records it was the last chunk of."""
        records = np.array([p.record for p in task.chunk.pieces], dtype=np.int64)
        np.subtract.at(self._left, records, 1)
        if self.plan.report == "best":
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

    def report(self) -> dict:
        return {"partial": self.collector.hit_table()}


def _ranks(count: np.ndarray) -> np.ndarray:
    """0 .. count[i] - 1 for each i, end to end."""
    return np.arange(int(count.sum())) - np.repeat(np.cumsum(count) - count, count)
