"""Hits as columns: cheap to collect by the hundred thousand, rows made only when read.

A genome-wide search with a few primers easily finds 10^5-10^6 hits; one
Python object per hit would cost more than the search. :class:`HitTable`
keeps the kernels' numpy columns and behaves as a read-only sequence of
:class:`Hit`.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from engine.columns import BLOCK, ColumnTable, categorical, labels
from engine.sequences import COMPLEMENT_TABLE, DECODE_TABLE

STRANDS = ("+", "-")


@dataclass(frozen=True)
class Hit:
    """One occurrence, 1-based with an inclusive end; ``matched`` is the text read on ``strand``."""

    pattern_id: str
    record_id: str
    start: int
    end: int
    strand: str
    mismatches: int
    matched: str


@dataclass(frozen=True)
class HitDensity:
    """Hits that start in each bin of ``bin_width`` positions along one record (for plots)."""

    record_id: str
    length: int
    bin_width: int
    counts: np.ndarray


class HitTable(ColumnTable):
    """A read-only sequence of :class:`Hit` over numpy columns, sorted by record, start,
    pattern and strand (an :class:`engine.columns.ColumnTable`: rows made when read).

    Stored per hit: ``pos`` (window start in the records laid end to end),
    ``code`` (2 * pattern index + strand) and ``mismatches`` (integers of any width: the
    cuda backend's are as narrow as the job allows). Derived columns:
    ``record`` and ``pattern`` (indices into ``record_ids`` / ``pattern_ids``),
    ``start0`` (0-based start in its record), ``strand`` (0 '+', 1 '-'),
    ``start`` and ``end`` (1-based, inclusive, in the loaded records' coordinates: plus
    ``shifts``, each record's ``Record.offset``).
    """

    COLUMNS = ("pattern_id", "record_id", "start", "end", "strand", "mismatches", "matched")
    ROW = Hit
    NUMERIC = ("start", "end", "mismatches")
    INTERVAL = ("record_id", "start", "end")
    ID_ATTRIBUTES = ("pattern_ids", "record_ids")

    def __init__(self, pos, code, mismatches, *, pattern_ids, pattern_lengths, record_ids, text,
                 offsets, shifts=None):
        self.pos = pos
        self.code = code
        self.mismatches = mismatches
        self.pattern_ids = tuple(pattern_ids)
        self.pattern_lengths = np.asarray(pattern_lengths, dtype=np.int64)
        self.record_ids = tuple(record_ids)
        self._text = text
        self._offsets = offsets
        self._shifts = (np.zeros(len(self.record_ids), dtype=np.int64) if shifts is None
                        else np.asarray(shifts, dtype=np.int64))

    def __len__(self) -> int:
        return int(self.pos.shape[0])

    @property
    def columns(self) -> tuple:
        """(pos, code, mismatches), as a HitBuffer holds them (what HitCounts counts)."""
        return self.pos, self.code, self.mismatches

    def take(self, index) -> "HitTable":
        return HitTable(self.pos[index], self.code[index], self.mismatches[index],
                        pattern_ids=self.pattern_ids, pattern_lengths=self.pattern_lengths,
                        record_ids=self.record_ids, text=self._text, offsets=self._offsets,
                        shifts=self._shifts)

    def block(self, lo: int, hi: int) -> list:
        part = self.take(slice(lo, hi))
        return [labels(self.pattern_ids, part.pattern), labels(self.record_ids, part.record),
                part.start, part.end, [STRANDS[s] for s in (part.code & 1).tolist()],
                part.mismatches, part.matched()]

    @cached_property
    def record(self) -> np.ndarray:
        if self._offsets.shape[0] == 2:
            return np.zeros(len(self), dtype=np.int32)
        return (np.searchsorted(self._offsets, self.pos, side="right") - 1).astype(np.int32)

    @cached_property
    def start0(self) -> np.ndarray:
        if self._offsets.shape[0] == 2:
            return self.pos
        return self.pos - self._offsets[self.record]

    @property
    def pattern(self) -> np.ndarray:
        return self.code >> 1

    @property
    def strand(self) -> np.ndarray:
        return (self.code & 1).astype(np.int8)

    @property
    def start(self) -> np.ndarray:
        """1-based starts (int64, whatever the type of ``pos``)."""
        return self.start0.astype(np.int64, copy=False) + 1 + self._shift()

    @property
    def end(self) -> np.ndarray:
        """1-based inclusive ends."""
        return self.start0 + self.pattern_lengths[self.pattern] + self._shift()

    def _shift(self):
        return self._shifts[self.record] if self._shifts.any() else 0

    def matched(self) -> list[str]:
        """``matched`` of every hit, gathered per pattern length with numpy."""
        out: list[str] = [""] * len(self)
        lengths = self.pattern_lengths[self.pattern]
        for m in np.unique(lengths).tolist():
            rows = np.flatnonzero(lengths == m)
            windows = self._text[self.pos[rows, None] + np.arange(m)]
            minus = (self.code[rows] & 1) == 1
            windows[minus] = COMPLEMENT_TABLE[windows[minus, ::-1]]
            text = DECODE_TABLE[windows].tobytes().decode("ascii")
            for n, row in enumerate(rows.tolist()):
                out[row] = text[n * m:(n + 1) * m]
        return out

    def frame_columns(self) -> dict:
        import pandas as pd

        return {"pattern_id": categorical(self.pattern, self.pattern_ids),
                "record_id": categorical(self.record, self.record_ids), "start": self.start,
                "end": self.end, "strand": pd.Categorical.from_codes(self.strand, list(STRANDS)),
                "mismatches": self.mismatches.astype(np.int32, copy=False),
                "matched": np.array([m for a in range(0, len(self), BLOCK)
                                     for m in self.take(slice(a, a + BLOCK)).matched()],
                                    dtype=object)}


class HitBuffer:
    """Growable columns (pos, code, mismatches) that kernels write into directly.

    :meth:`room` hands out space after the hits already in; :meth:`keep` then
    closes the gaps between the regions that were filled and adds them.
    :meth:`view` is a snapshot: entries below the count are never written again.
    ``dtypes`` (default int64, int32, int32) and ``alloc(n, dtype)`` (default
    ``np.empty``) say what the columns are: the cuda backend's are narrower, in
    page-locked memory that its copies land in.
    """

    _DTYPES = (np.int64, np.int32, np.int32)

    def __init__(self, dtypes=None, alloc=None, **table_args):
        self._table_args = table_args
        self._alloc = alloc or np.empty
        self.columns = tuple(self._alloc(1024, d) for d in (dtypes or self._DTYPES))
        self._n = 0

    def __len__(self) -> int:
        return self._n

    def reserve(self, capacity: int) -> None:
        """Room for ``capacity`` hits in all (a hint; :meth:`room` grows as needed)."""
        if capacity > self.columns[0].shape[0]:
            grown = []
            for col in self.columns:
                new = self._alloc(capacity, col.dtype)
                new[:self._n] = col[:self._n]
                grown.append(new)
            self.columns = tuple(grown)

    def room(self, extra: int) -> int:
        """Make room for ``extra`` hits after those in; returns where it starts."""
        need = self._n + extra
        if need > self.columns[0].shape[0]:
            self.reserve(max(need, 2 * self.columns[0].shape[0]))
        return self._n

    def keep(self, regions) -> None:
        """Add the filled (start, count) regions, in order, packed after the hits in."""
        at = self._n
        for start, count in regions:
            if count and start != at:
                for col in self.columns:
                    col[at:at + count] = col[start:start + count]
            at += count
        self._n = at

    def truncate(self, n: int) -> None:
        """Forget the hits after the first ``n`` (none of them was in a view)."""
        self._n = min(self._n, n)

    def append(self, pos, code, mismatches) -> None:
        start = self.room(len(pos))
        for col, values in zip(self.columns, (pos, code, mismatches)):
            col[start:start + len(pos)] = values
        self.keep([(start, len(pos))])

    def view(self) -> HitTable:
        n = self._n
        return HitTable(*(col[:n] for col in self.columns), **self._table_args)
