"""edit's search hits as columns (issue #16): a :class:`Hit` is made only when a row is read.

The collector appends each slice's hits as arrays (pattern, record, strand, end,
distance, start) and their CIGARs as one byte buffer with (lo, hi) bounds per hit;
``matched`` is read from the text when a row is made.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from engine.columns import BLOCK, ColumnTable, Ids, categorical, labels

STRANDS = ("+", "-")


@dataclass(frozen=True)
class Hit:
    """An occurrence of a pattern in a text record.

    Attributes
    ----------
    start, end : int
        1-based, inclusive, on the forward text. ``start`` is the smallest one
        that realises ``distance``.
    strand : {"+", "-"}
        ``-``: the pattern's reverse complement occurs here.
    distance : int
        Edits between the pattern (on ``strand``) and text[start..end].
    cigar : str
        ``=`` match, ``X`` mismatch, ``I`` pattern symbol with no text symbol,
        ``D`` text symbol with no pattern symbol: the pattern (5'->3') against
        ``matched``, on either strand.
    matched : str
        The text as read on the hit's strand.

    ``start``, ``cigar`` and ``matched`` are None when alignments were not
    asked for, or when a cancel came first.
    """

    pattern_id: str
    record_id: str
    strand: str
    start: int | None
    end: int
    distance: int
    cigar: str | None = None
    matched: str | None = None


#: The columns of a hit table, with their dtypes (start and the CIGAR bounds are -1 where a
#: hit has no alignment).
HIT_DTYPES = {"pattern": np.int32, "record": np.int32, "strand": np.int8, "end": np.int64,
              "distance": np.int64, "start": np.int64, "cig_lo": np.int64, "cig_hi": np.int64}


class EditHits(ColumnTable):
    """A read-only sequence of :class:`Hit` over columns (see :data:`HIT_DTYPES`); ``end``
    and ``start`` are 1-based in the loaded record's coordinates (``shifts``: each text
    record's ``Record.offset``), ``strand`` 0 for '+', 1 for '-'."""

    COLUMNS = ("pattern_id", "record_id", "start", "end", "strand", "distance", "cigar", "matched")
    INTERVAL = ("record_id", "start", "end")
    KEY = "end"  # (start is None without an alignment)
    ID_ATTRIBUTES = ("pattern_ids", "record_ids")

    def __init__(self, columns: dict, *, pattern_ids, record_ids, text, starts, cigars,
                 shifts=None):
        self.columns = columns
        # (an engine.columns.Ids, as a batch has them: no string per pair until read)
        self.pattern_ids = pattern_ids if isinstance(pattern_ids, Ids) else tuple(pattern_ids)
        self.record_ids = record_ids if isinstance(record_ids, Ids) else tuple(record_ids)
        self._text = text  # the text records, and where each starts in it
        self._starts = starts
        self._shifts = np.zeros(len(self.record_ids), dtype=np.int64) if shifts is None \
            else np.asarray(shifts, dtype=np.int64)
        self._cigars = cigars  # uint8: every CIGAR's letters end to end

    def __getattr__(self, name):
        columns = self.__dict__.get("columns")
        if columns is not None and name in columns:
            return columns[name]
        raise AttributeError(name)

    def __len__(self) -> int:
        return int(self.columns["end"].shape[0])

    def take(self, index) -> "EditHits":
        return EditHits({name: col[index] for name, col in self.columns.items()},
                        pattern_ids=self.pattern_ids, record_ids=self.record_ids, text=self._text,
                        starts=self._starts, cigars=self._cigars, shifts=self._shifts)

    def cigars(self, lo: int = 0, hi: int | None = None) -> list:
        """CIGAR strings of rows lo..hi-1 (None where a hit has none)."""
        a, b = self.cig_lo[lo:hi], self.cig_hi[lo:hi]
        if not a.size:
            return []
        valid = a[a >= 0]
        first, last = (int(valid.min()), int(b.max())) if valid.size else (0, 0)
        text = self._cigars[first:max(first, last)].tobytes().decode("ascii")
        return [None if x < 0 else text[x - first:y - first] for x, y in zip(a.tolist(), b.tolist())]

    def matched(self, lo: int = 0, hi: int | None = None) -> list:
        """The text of rows lo..hi-1 as read on their strands (None without an alignment)."""
        from engine.edit.cpu_align import matched_strings

        start, aligned = self.start[lo:hi], self.cig_lo[lo:hi] >= 0
        if not start.size:
            return []
        record = self.record[lo:hi]
        base = self._starts[record] - self._shifts[record]
        texts = matched_strings(self._text, np.where(aligned, base + start - 1, 0),
                                np.where(aligned, base + self.end[lo:hi], 0), self.strand[lo:hi] == 1)
        return [t if ok else None for t, ok in zip(texts, aligned.tolist())]

    def block(self, lo: int, hi: int) -> list:
        start = self.start[lo:hi]
        return [labels(self.pattern_ids, self.pattern[lo:hi]),
                labels(self.record_ids, self.record[lo:hi]),
                ["" if s < 0 else s for s in start.tolist()], self.end[lo:hi],
                [STRANDS[s] for s in self.strand[lo:hi].tolist()], self.distance[lo:hi],
                ["" if c is None else c for c in self.cigars(lo, hi)],
                ["" if m is None else m for m in self.matched(lo, hi)]]

    def record_block(self, lo: int, hi: int) -> list:
        """:meth:`block` with None, not the CSV's empty text, where a hit has no alignment."""
        return [[None if c == "" else c for c in cells] if isinstance(cells, list) else cells
                for cells in self.block(lo, hi)]

    def make_row(self, cells: tuple) -> Hit:
        pattern_id, record_id, start, end, strand, distance, cigar, matched = cells
        aligned = cigar != ""
        return Hit(pattern_id, record_id, strand, None if start == "" else start, end, distance,
                   cigar if aligned else None, matched if aligned else None)

    def numeric(self, name: str):
        if name == "start":
            return np.where(self.start >= 0, self.start, np.nan)  # NaN: no alignment
        return getattr(self, name) if name in ("end", "distance") else None

    def frame_columns(self) -> dict:
        import pandas as pd

        n = len(self)
        cigars, matched = [], []
        for a in range(0, n, BLOCK):
            cigars += self.cigars(a, a + BLOCK)
            matched += self.matched(a, a + BLOCK)
        start = pd.array(self.start, dtype="Int64")  # <NA> where a hit has no alignment
        start[self.start < 0] = pd.NA
        return {"pattern_id": categorical(self.pattern, self.pattern_ids),
                "record_id": categorical(self.record, self.record_ids), "start": start,
                "end": self.end, "strand": pd.Categorical.from_codes(self.strand, list(STRANDS)),
                "distance": self.distance, "cigar": np.array(cigars, dtype=object),
                "matched": np.array(matched, dtype=object)}


@dataclass(frozen=True)
class PairDistance:
    """Global edit distance of a pattern to a text record.

    ``distance`` is None when it is above k; ``cigar`` is set when alignments
    were asked for (``align=True``).
    """

    pattern_id: str
    record_id: str
    distance: int | None
    cigar: str | None = None


@dataclass(frozen=True)
class ScoreProfile:
    """The best distance along a text record for one pattern on one strand (search mode).

    Attributes
    ----------
    pattern_id, record_id, strand
        Which search this is (``strand`` ``-``: the reverse complement, at its
        ends on the forward text).
    bin_width : int
        Ends per bin: bin i covers the 1-based ends ``1 + i * bin_width`` to
        ``(i + 1) * bin_width`` (the last bin may be shorter).
    length : int
        Length of the record.
    cap : int
        k + 1, or m + 1 when no k was given (no distance reaches it then).
    values : numpy.ndarray of int32
        Per bin, the smallest C[m,j] over its ends j, capped at ``cap`` (so
        ``cap`` means "more than k edits everywhere in this bin"); -1 for a bin
        not scanned before a cancel. At most about 4096 bins.
    """

    pattern_id: str
    record_id: str
    strand: str
    bin_width: int
    length: int
    cap: int
    values: np.ndarray = field(compare=False, repr=False)
