"""In-silico PCR's sites and products as columns (engine/columns.py): a genome-scale run
(1,000 primers in 100 Mb) has hundreds of thousands of sites, and one Python object per
site or hit would cost more than the GPU's search. A :class:`Site` or :class:`Product`
is made only when a row is read.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.columns import ColumnTable, categorical, labels
from engine.sequences import decode

STRANDS = ("+", "-")


@dataclass(frozen=True)
class Site:
    """A primer's binding site; 1-based inclusive, forward-strand coordinates.

    ``strand`` ``+``: the primer's sequence reads along the forward strand (it extends
    to the right); ``-``: its reverse complement does (it extends to the left).
    """

    primer: str
    record_id: str
    strand: str
    start: int
    end: int
    edits: int
    edits_3prime: int


@dataclass(frozen=True)
class Product:
    """An amplicon: ``forward`` binds at its start (``+``), ``reverse`` at its end (``-``)."""

    forward: str
    reverse: str
    record_id: str
    start: int
    end: int
    forward_edits: int
    reverse_edits: int
    forward_3prime_edits: int
    reverse_3prime_edits: int
    sequence: str | None = None
    #: the product holds an assembly gap (engine.gaps): its sites lie on both sides of one,
    #: so its true size is unknown (``length`` counts the gap's N as given)
    spans_gap: bool = False

    @property
    def length(self) -> int:
        return self.end - self.start + 1

    @property
    def edits(self) -> int:
        return self.forward_edits + self.reverse_edits


#: A site table's columns and their dtypes: primer and record are indices into the table's
#: ``primer_ids`` and ``record_ids``, strand 0 for '+' and 1 for '-', start and end in the
#: record's own (1-based) coordinates.
SITE_DTYPES = {"primer": np.int64, "record": np.int64, "strand": np.int8, "start": np.int64,
               "end": np.int64, "edits": np.int64, "edits_3prime": np.int64}


class _Columns(ColumnTable):
    """A table over ``columns`` (a dict of aligned arrays) with ids for its index columns."""

    def __init__(self, columns: dict, **context):
        self.columns = columns
        self.context = context

    def __getattr__(self, name):
        for part in ("columns", "context"):  # (an unpickled table has neither yet)
            values = self.__dict__.get(part)
            if values is not None and name in values:
                return values[name]
        raise AttributeError(name)

    def __len__(self) -> int:
        return int(next(iter(self.columns.values())).shape[0])

    def take(self, index):
        return type(self)({k: v[index] for k, v in self.columns.items()}, **self.context)

    def numeric(self, name: str):
        column = self.columns.get(name)
        return column if column is not None and name not in ("primer", "record", "strand",
                                                             "forward", "reverse",
                                                             "spans_gap") else None


class PcrSites(_Columns):
    """A read-only sequence of :class:`Site` over columns (:data:`SITE_DTYPES`)."""

    COLUMNS = ("primer", "record_id", "strand", "start", "end", "edits", "edits_3prime")
    INTERVAL = ("record_id", "start", "end")
    ROW = Site

    def __init__(self, columns: dict, *, primer_ids, record_ids):
        super().__init__(columns, primer_ids=tuple(primer_ids), record_ids=tuple(record_ids))

    @classmethod
    def empty(cls, primer_ids, record_ids) -> "PcrSites":
        return cls({k: np.zeros(0, dtype=d) for k, d in SITE_DTYPES.items()},
                   primer_ids=primer_ids, record_ids=record_ids)

    @classmethod
    def from_rows(cls, sites, background) -> "PcrSites":
        """A table of :class:`Site` objects (a hand-made set, as tests build), on the
        background's records (by id: the first record of that id)."""
        sites = list(sites)
        record_index: dict = {}
        for i, r in enumerate(background):
            record_index.setdefault(r.id, i)
        primer_ids = sorted({s.primer for s in sites})
        primer_index = {name: i for i, name in enumerate(primer_ids)}
        cols = {"primer": [primer_index[s.primer] for s in sites],
                "record": [record_index[s.record_id] for s in sites],
                "strand": [STRANDS.index(s.strand) for s in sites],
                "start": [s.start for s in sites], "end": [s.end for s in sites],
                "edits": [s.edits for s in sites], "edits_3prime": [s.edits_3prime for s in sites]}
        return cls({k: np.asarray(cols[k], dtype=d) for k, d in SITE_DTYPES.items()},
                   primer_ids=primer_ids, record_ids=[r.id for r in background])

    def block(self, lo: int, hi: int) -> list:
        return [labels(self.primer_ids, self.primer[lo:hi]),
                labels(self.record_ids, self.record[lo:hi]),
                [STRANDS[s] for s in self.strand[lo:hi].tolist()], self.start[lo:hi],
                self.end[lo:hi], self.edits[lo:hi], self.edits_3prime[lo:hi]]


#: The pcr CSV's columns (engine.primers.export_pcr), and ``to_pandas``/``to_records``':
#: 1-based inclusive, ``sequence`` last when the run kept sequences.
CSV_COLUMNS = ("forward", "reverse", "record", "start", "end", "length", "forward_edits",
               "reverse_edits", "forward_3prime_edits", "reverse_3prime_edits", "spans_gap")


class PcrProducts(_Columns):
    """A read-only sequence of :class:`Product` over columns (int64: forward and reverse
    index ``primer_ids``, record ``background``; coordinates 1-based in the record's own
    numbering; ``spans_gap`` bool); ``sequence`` is read from the background when a row is
    made (``with_sequence``).
    Its frame and records have the CSV's columns (:data:`CSV_COLUMNS`)."""

    COLUMNS = ("forward", "reverse", "record_id", "start", "end", "forward_edits",
               "reverse_edits", "forward_3prime_edits", "reverse_3prime_edits", "sequence",
               "spans_gap")
    ROW = Product
    INTERVAL = ("record", "start", "end")

    def __init__(self, columns: dict, *, primer_ids, background, with_sequence: bool):
        super().__init__(columns, primer_ids=tuple(primer_ids), background=tuple(background),
                         with_sequence=bool(with_sequence))

    def sequences(self, lo: int, hi: int) -> list:
        """The amplicons of rows lo..hi-1 (forward strand), or Nones without sequences."""
        if not self.with_sequence:
            return [None] * len(range(lo, min(hi, len(self))))
        out = []
        for r, a, b in zip(self.record[lo:hi].tolist(), self.start[lo:hi].tolist(),
                           self.end[lo:hi].tolist()):
            rec = self.background[r]  # a range only: a genome store's record unpacks just that
            out.append(decode(rec.chunk(a - 1 - rec.offset, b - rec.offset)))
        return out

    def block(self, lo: int, hi: int) -> list:
        ids = [r.id for r in self.background]
        return [labels(self.primer_ids, self.forward[lo:hi]),
                labels(self.primer_ids, self.reverse[lo:hi]), labels(ids, self.record[lo:hi]),
                self.start[lo:hi], self.end[lo:hi], self.forward_edits[lo:hi],
                self.reverse_edits[lo:hi], self.forward_3prime_edits[lo:hi],
                self.reverse_3prime_edits[lo:hi], self.sequences(lo, hi),
                self.spans_gap[lo:hi].tolist()]

    def table_columns(self) -> tuple[str, ...]:
        return CSV_COLUMNS + (("sequence",) if self.with_sequence else ())

    def record_block(self, lo: int, hi: int) -> list:
        """The cells of rows lo..hi-1 in :meth:`table_columns` order, as the CSV writes them."""
        fwd, rev, record, start, end, fe, re, f3, r3, seq, gap = self.block(lo, hi)
        cells = [fwd, rev, record, start, end, end - start + 1, fe, re, f3, r3, gap]
        return cells + [seq] if self.with_sequence else cells

    def frame_columns(self) -> dict:
        ids = [r.id for r in self.background]
        out = {"forward": categorical(self.forward, self.primer_ids),
               "reverse": categorical(self.reverse, self.primer_ids),
               "record": categorical(self.record, ids), "start": self.start, "end": self.end,
               "length": self.end - self.start + 1}
        out.update({name: self.columns[name] for name in CSV_COLUMNS[6:]})
        if self.with_sequence:
            out["sequence"] = np.array(self.sequences(0, len(self)), dtype=object)
        return out
