"""Columnar results (issue #16): aligned numpy columns, a row object made only when read.

A genome-wide search easily finds millions of hits; one Python object per hit
costs more time and memory than the search itself. A family's large result
(kmismatch hits, edit hits, kdiff candidates) is a :class:`ColumnTable`: a
read-only sequence of the family's row objects over numpy columns that the
backend filled, so existing callers (``len``, indexing, iteration, ``==``)
keep working while the writers, the GUI's table and ``to_pandas()`` read the
columns a block at a time.
"""

from __future__ import annotations

import copy
from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence

import numpy as np

from engine.spreadsheet import spreadsheet_cell

#: Rows made at a time when iterating, writing or filling a table block.
BLOCK = 1 << 16

#: The interval conventions of ``to_pandas(coords=...)``/``to_records(coords=...)``:
#: the CSV's 1-based inclusive positions, or BED's (pyranges, bioframe) ``chrom, start,
#: end``, 0-based half-open, first.
COORDS = ("one-based", "bed")


def blank(value):
    """A CSV cell: "" for None (an empty cell), else the value."""
    return "" if value is None else value


def _minus_one(column):
    """A column of 1-based starts as 0-based (an empty cell stays empty)."""
    if isinstance(column, list):
        return [None if v is None else v - 1 for v in column]
    return column - 1


def with_coords(data: dict, coords: str, interval: tuple | None = None, others=(),
                what: str = "this result") -> dict:
    """A result's columns (name -> column, 1-based inclusive as in its CSV) in ``coords``.

    ``interval`` is (id column, start column, end column) of each row's interval: with
    ``"bed"`` they come first as ``chrom, start, end`` (start 0-based; the id column and a
    column named ``start``/``end`` are not repeated), and each (start, end) pair of
    ``others`` gets a 0-based start too. The one place the conventions are written: every
    result's ``to_pandas`` and ``to_records`` go through here.
    """
    if coords not in COORDS:
        raise ValueError(f"coords must be one of {', '.join(COORDS)}, got {coords!r}")
    if coords == "one-based":
        return dict(data)
    if interval is None:
        raise ValueError(f"{what} has no intervals: use coords='one-based'")
    chrom, start, end = interval
    out = {"chrom": data[chrom], "start": _minus_one(data[start]), "end": data[end]}
    starts = {s for s, _e in others}
    kept = starts | {e for _s, e in others}
    for name, column in data.items():
        if name == chrom or (name in (start, end) and name not in kept):
            continue
        out[name] = _minus_one(column) if name in starts else column
    return out


class Tabular(ABC):
    """``to_pandas``/``to_records`` for a result that is not a :class:`ColumnTable`: it
    gives :meth:`table`, its rows as columns in 1-based coordinates with the interval
    columns, and both go through :func:`with_coords`."""

    @abstractmethod
    def table(self) -> tuple[dict, tuple | None, tuple]:
        """(name -> column, the (id, start, end) interval or None, other (start, end) pairs)."""

    def _in(self, coords: str) -> dict:
        data, interval, others = self.table()
        return with_coords(data, coords, interval, others, what=type(self).__name__)

    def to_pandas(self, coords: str = "one-based"):
        """The rows as a pandas DataFrame: 1-based inclusive (``"one-based"``, as the CSV),
        or ``chrom, start, end`` 0-based half-open first (``"bed"``: pyranges, bioframe)."""
        return frame(self._in(coords))

    def to_records(self, coords: str = "one-based") -> list[dict]:
        """The rows of :meth:`to_pandas` as plain dicts (no pandas needed)."""
        return plain_records(self._in(coords))


def frame(data: dict):
    """A pandas DataFrame of columns (pandas is the optional extra ``primerscope[pandas]``)."""
    import pandas as pd

    return pd.DataFrame(data, columns=list(data))


def plain_records(data: dict) -> list[dict]:
    """Columns as one plain dict per row (Python values: no numpy scalars, no pandas)."""
    names = list(data)
    cells = [c.tolist() if isinstance(c, np.ndarray) else list(c) for c in data.values()]
    return [dict(zip(names, row)) for row in zip(*cells)]


class ColumnTable(Sequence):
    """Base of a columnar result.

    A subclass sets :attr:`COLUMNS` (the CSV's and the table's columns, in order)
    and gives ``__len__``, :meth:`take` (the same table over some rows: a slice
    or an index array), :meth:`block` (the cells of rows lo..hi-1, one list or
    array per column in :attr:`COLUMNS` order, as the CSV writes them) and
    :attr:`ROW` (the row type, made from one tuple of those cells) or :meth:`make_row`.
    """

    COLUMNS: tuple[str, ...] = ()
    #: (id, start, end) columns of each row's interval (:func:`with_coords`), or None.
    INTERVAL: tuple[str, str, str] | None = None
    #: the column (and row attribute) that narrows :meth:`find`'s search
    KEY = "start"
    ROW: type | None = None
    #: the columns :meth:`numeric` gives whole, as the table stores them
    NUMERIC: tuple[str, ...] = ()
    #: the attributes that hold the ids of its text columns (record and pattern ids: a
    #: tuple or :class:`Ids` each), which :meth:`for_spreadsheet` escapes
    ID_ATTRIBUTES: tuple[str, ...] = ()
    __hash__ = None  # equality is by rows

    def __len__(self) -> int:
        raise NotImplementedError

    def take(self, index) -> "ColumnTable":
        raise NotImplementedError

    def block(self, lo: int, hi: int) -> list:
        raise NotImplementedError

    def make_row(self, cells: tuple):
        return self.ROW(*cells)

    def record_block(self, lo: int, hi: int) -> list:
        """:meth:`block` for :meth:`to_records` (a subclass gives None for an empty cell)."""
        return self.block(lo, hi)

    # -- the sequence of rows ---------------------------------------------------------------
    def __getitem__(self, index):
        if isinstance(index, slice):
            return self.take(index)
        if isinstance(index, np.ndarray) and index.ndim == 1 and index.dtype != object:
            return self.take(np.flatnonzero(index) if index.dtype == bool else index)
        i = range(len(self))[index]  # IndexError and negative indices as for a tuple
        return self.make_row(next(self.tuples(i, i + 1)))

    def __iter__(self) -> Iterator:
        for cells in self.tuples():
            yield self.make_row(cells)

    def __eq__(self, other):
        if isinstance(other, ColumnTable):
            return len(self) == len(other) and all(a == b for a, b in zip(self.tuples(),
                                                                           other.tuples()))
        if isinstance(other, (tuple, list)):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other))
        return NotImplemented

    def __repr__(self) -> str:
        return f"<{type(self).__name__}: {len(self):,} rows>"

    # -- columns ----------------------------------------------------------------------------
    def tuples(self, lo: int = 0, hi: int | None = None) -> Iterator[tuple]:
        """Rows lo..hi-1 as tuples of cells in :attr:`COLUMNS` order, made a block at a time."""
        hi = len(self) if hi is None else min(hi, len(self))
        for a in range(lo, hi, BLOCK):
            cells = [c.tolist() if isinstance(c, np.ndarray) else c
                     for c in self.block(a, min(hi, a + BLOCK))]
            yield from zip(*cells)

    def for_spreadsheet(self) -> "ColumnTable":
        """The table as a CSV that a spreadsheet may open writes it: ids a spreadsheet would
        run as formulas with a leading ``'`` (:func:`spreadsheet_ids`). Escaped once per id,
        not per row; the table itself when no id needs it."""
        escaped = {name: spreadsheet_ids(getattr(self, name)) for name in self.ID_ATTRIBUTES}
        changed = {name: ids for name, ids in escaped.items() if ids is not getattr(self, name)}
        if not changed:
            return self
        table = copy.copy(self)  # (the same columns: only the id tables differ)
        table.__dict__.update(changed)
        return table

    def column(self, index: int, lo: int = 0, hi: int | None = None):
        """The cells of column ``index`` for rows lo..hi-1: an array where the table has the
        column as numbers (:meth:`numeric`; NaN for an empty cell), else a list."""
        hi = len(self) if hi is None else min(hi, len(self))
        numbers = self.numeric(self.COLUMNS[index])
        if numbers is not None:
            return numbers[lo:hi]
        out: list = []
        for a in range(lo, hi, BLOCK):
            cells = self.block(a, min(hi, a + BLOCK))[index]
            out += cells.tolist() if isinstance(cells, np.ndarray) else cells
        return out

    def numeric(self, name: str) -> np.ndarray | None:
        """The whole column ``name`` as numbers where the table stores it so (else None)."""
        return getattr(self, name) if name in self.NUMERIC else None

    def find(self, row) -> int:
        """The index of the first row equal to ``row`` (-1 if none), narrowed by a column."""
        try:
            indices = self.find_candidates(row)
        except AttributeError:  # not a row of this table
            return -1
        for i in indices:
            if self[int(i)] == row:
                return int(i)
        return -1

    def __contains__(self, row) -> bool:
        return self.find(row) >= 0

    def index(self, row, start: int = 0, stop: int | None = None) -> int:
        found = self.find(row)
        if found < 0 or found < start or (stop is not None and found >= stop):
            raise ValueError(f"{row!r} is not in the table")
        return found

    def find_candidates(self, row):
        """Indices that may hold ``row``: those whose :attr:`KEY` column holds its value."""
        return np.flatnonzero(getattr(self, self.KEY) == getattr(row, self.KEY))

    def table_columns(self) -> tuple[str, ...]:
        """The columns of :meth:`to_pandas` and :meth:`to_records` (the CSV's):
        :attr:`COLUMNS`, unless a subclass's CSV differs from its rows' fields (then it
        gives :meth:`record_block` and :meth:`frame_columns` in these columns too)."""
        return self.COLUMNS

    def to_pandas(self, coords: str = "one-based"):
        """A pandas DataFrame with :meth:`table_columns` (pandas is the optional extra
        ``primerscope[pandas]``): numeric columns straight from the arrays, id columns
        as categoricals where the ids are unique. ``coords``: :func:`with_coords`."""
        data = self.frame_columns()
        return frame(with_coords({name: data[name] for name in self.table_columns()}, coords,
                                 self.INTERVAL, what=type(self).__name__))

    def to_records(self, coords: str = "one-based") -> list[dict]:
        """One plain dict per row, the columns of :meth:`to_pandas` (no pandas needed)."""
        n = len(self)
        names = self.table_columns()
        data = {name: [] for name in names}
        for a in range(0, n, BLOCK):
            for name, cells in zip(names, self.record_block(a, min(n, a + BLOCK))):
                data[name] += cells.tolist() if isinstance(cells, np.ndarray) else list(cells)
        return plain_records(with_coords(data, coords, self.INTERVAL, what=type(self).__name__))

    def frame_columns(self) -> dict:
        """name -> array-like of the whole column (for :meth:`to_pandas`); subclasses give
        their numeric columns directly, the rest comes from :meth:`block`."""
        n = len(self)
        out = {name: [] for name in self.COLUMNS}
        for a in range(0, n, BLOCK):
            for name, cells in zip(self.COLUMNS, self.block(a, min(n, a + BLOCK))):
                out[name].append(np.asarray(cells if isinstance(cells, np.ndarray)
                                            else np.array(cells, dtype=object)))
        return {name: (np.concatenate(parts) if parts else np.zeros(0, dtype=object))
                for name, parts in out.items()}


class Ids(Sequence):
    """The ids of many sequences as one column: given strings, or ``prefix`` followed by a
    number (the index, or ``numbers[index]``), made only when read.

    A batch of 200,000 reads and their candidate regions (edit.verify) then needs no string
    per sequence until a row is shown or written.

    >>> Ids.numbered("read", 3)[2], Ids.numbered("read", 2, numbers=[7, 9]).labels([1, 0])
    ('read2', ['read9', 'read7'])
    """

    def __init__(self, names: Sequence[str] = (), *, prefix: str | None = None,
                 count: int = 0, numbers=None):
        if prefix is None:
            self.names, self.prefix, self.numbers = tuple(names), None, None
            self.count = len(self.names)
        else:
            self.names, self.prefix = None, str(prefix)
            self.numbers = None if numbers is None else np.asarray(numbers, dtype=np.int64)
            self.count = int(count) if self.numbers is None else int(self.numbers.shape[0])

    @classmethod
    def numbered(cls, prefix: str, count: int, numbers=None) -> "Ids":
        """``prefix`` + index for ``count`` sequences (``numbers``: + numbers[index])."""
        return cls(prefix=prefix, count=count, numbers=numbers)

    def __len__(self) -> int:
        return self.count

    def __getitem__(self, index):
        if isinstance(index, slice):
            return self.take(np.arange(self.count)[index])
        i = range(self.count)[index]  # IndexError and negative indices as for a tuple
        if self.names is not None:
            return self.names[i]
        return f"{self.prefix}{i if self.numbers is None else int(self.numbers[i])}"

    def __eq__(self, other):
        if isinstance(other, (Ids, tuple, list)):
            return list(self) == list(other)
        return NotImplemented

    __hash__ = None

    def labels(self, codes) -> list:
        """``self[code]`` for every code (a list)."""
        codes = np.asarray(codes, dtype=np.int64)
        if self.names is not None:
            if len(self.names) == 1:
                return [self.names[0]] * int(codes.shape[0])
            table = self.names
            return [table[c] for c in codes.tolist()]
        numbers = codes if self.numbers is None else self.numbers[codes]
        prefix = self.prefix
        return [f"{prefix}{n}" for n in numbers.tolist()]

    def take(self, index) -> "Ids":
        """The ids of some sequences (an index array), in that order."""
        index = np.asarray(index, dtype=np.int64)
        if self.names is not None:
            return Ids(self.labels(index))
        return Ids.numbered(self.prefix, len(index),
                            index if self.numbers is None else self.numbers[index])

    @property
    def unique(self) -> bool:
        if self.names is not None:
            return len(set(self.names)) == len(self.names)
        return self.numbers is None or np.unique(self.numbers).shape[0] == self.count

    def __repr__(self) -> str:
        return f"<Ids: {self.count:,}>"


def spreadsheet_ids(ids):
    """Ids (names, or an :class:`Ids`) as a spreadsheet-bound CSV writes each
    (:func:`engine.spreadsheet.spreadsheet_cell`); the same object when none needs it.
    Numbered ids are a prefix and digits: the prefix decides."""
    if isinstance(ids, Ids) and ids.names is None:
        prefix = spreadsheet_cell(ids.prefix)
        return ids if prefix == ids.prefix else Ids(prefix=prefix, count=ids.count,
                                                    numbers=ids.numbers)
    names = ids.names if isinstance(ids, Ids) else tuple(ids)
    escaped = tuple(map(spreadsheet_cell, names))
    if escaped == names:
        return ids
    return Ids(escaped) if isinstance(ids, Ids) else escaped


def categorical(codes: np.ndarray, labels: Sequence[str]):
    """Ids as a pandas Categorical over ``labels`` where they are unique, else strings."""
    import pandas as pd

    unique = labels.unique if isinstance(labels, Ids) else len(set(labels)) == len(labels)
    if unique:
        return pd.Categorical.from_codes(np.asarray(codes), categories=list(labels))
    return np.array(list(labels), dtype=object)[codes]


def labels(ids: Sequence[str], codes: np.ndarray) -> list:
    """``ids[code]`` for every code (a list, for the writers): :meth:`Ids.labels`."""
    return (ids if isinstance(ids, Ids) else Ids(ids)).labels(codes)


class ColumnBuffer:
    """Growable aligned columns (amortised doubling) that a runner appends to a slice at a
    time; :meth:`view` gives the rows so far without copying (rows in a view are never
    written again)."""

    def __init__(self, **dtypes):
        self.names = tuple(dtypes)
        self.arrays = {name: np.empty(1024, dtype=d) for name, d in dtypes.items()}
        self.n = 0

    def __len__(self) -> int:
        return self.n

    def append(self, **values) -> None:
        count = len(next(iter(values.values())))
        need = self.n + count
        capacity = next(iter(self.arrays.values())).shape[0]
        if need > capacity:
            capacity = max(need, 2 * capacity)
            for name, old in self.arrays.items():
                new = np.empty(capacity, dtype=old.dtype)
                new[:self.n] = old[:self.n]
                self.arrays[name] = new
        for name in self.names:
            self.arrays[name][self.n:need] = values[name]
        self.n = need

    def view(self) -> dict[str, np.ndarray]:
        return {name: a[:self.n] for name, a in self.arrays.items()}
