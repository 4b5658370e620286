"""The results table: a model over the adapter's rows and a sort/filter proxy.

Rows arrive while a job runs (``Progress.partial`` grows by appending), so the
model appends only the new rows instead of resetting; the final result
replaces them once. Filters act on the columns whose role is 'length',
'start' and 'end' (1-based, inclusive, as in the CSV).

A columnar result (:class:`engine.columns.ColumnTable`: kmismatch and edit hits,
kdiff candidates) is never turned into a list of rows: :meth:`ResultsModel.data`
reads the columns a block of rows at a time, and the proxy sorts and filters
with numpy index arrays, so ten million hits scroll like ten.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Callable, Sequence

import numpy as np
from PySide6.QtCore import (QAbstractProxyModel, QAbstractTableModel, QEvent, QModelIndex, QSize, Qt,
                            QTimer, Signal)
from PySide6.QtWidgets import (QAbstractItemView, QHeaderView, QStyledItemDelegate, QTableView,
                               QToolTip)

from app.families import Column
from engine.columns import ColumnTable

SORT_ROLE = Qt.ItemDataRole.UserRole + 1


#: Rows the table holds at most for a result of row objects (a columnar result shows every
#: row); the CSV export always has every row.
TABLE_LIMIT = 200_000

#: Rows of a columnar result made at a time for display, and blocks kept.
VIEW_BLOCK = 256
VIEW_BLOCKS_KEPT = 64


def cell_data(column: Column, value, role):
    """One cell of any table model (results, library): display text (floats to 4
    significant digits, None as blank), the raw value for sorting, right-aligned
    numbers, and the whole text as a tip when it is long."""
    if role == Qt.ItemDataRole.DisplayRole:
        if column.kind == "float" and isinstance(value, (int, float)):
            return f"{value:.4g}"
        return "" if value is None else str(value)
    if role == SORT_ROLE:
        return value
    if role == Qt.ItemDataRole.TextAlignmentRole:
        if column.kind in ("int", "float"):
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None
    if role == Qt.ItemDataRole.ToolTipRole and column.kind == "str" and len(str(value)) > 30:
        return str(value)
    return None


#: The roles :func:`cell_data` answers (Qt asks a painted cell for others too: font, colours...).
CELL_ROLES = frozenset({Qt.ItemDataRole.DisplayRole, SORT_ROLE, Qt.ItemDataRole.TextAlignmentRole,
                        Qt.ItemDataRole.ToolTipRole})


#: The flags of a results model's cells (QAbstractTableModel's for a valid index).
CELL_FLAGS = (Qt.ItemFlag.ItemIsSelectable | Qt.ItemFlag.ItemIsEnabled
              | Qt.ItemFlag.ItemNeverHasChildren)


def column_header(columns: Sequence[Column], section: int, role):
    """A horizontal header cell: the column's title, and its tip."""
    if 0 <= section < len(columns):
        if role == Qt.ItemDataRole.DisplayRole:
            return columns[section].header or columns[section].title
        if role == Qt.ItemDataRole.ToolTipRole:
            return columns[section].tip or None
    return None


class ResultsModel(QAbstractTableModel):
    """Rows of the newest result sequence. ``total`` counts every item, even past TABLE_LIMIT.

    Row objects' rows are made once, by the adapter's ``rows``; a :class:`ColumnTable`'s
    cells (its columns are the table's) are read from its columns when shown.
    """

    def __init__(self, parent=None):
        super().__init__(parent)
        self.columns: tuple[Column, ...] = ()
        self._items: Sequence = ()
        self._rows: list[tuple] = []
        self._blocks: OrderedDict[int, list[tuple]] = OrderedDict()
        self._column_cache: dict[int, object] = {}  # column -> column_values(), for the proxy
        self._shown = 0
        self.total = 0

    def set_columns(self, columns: Sequence[Column]) -> None:
        self.beginResetModel()
        self.columns = tuple(columns)
        self._set((), [])
        self.endResetModel()

    def clear(self) -> None:
        self.beginResetModel()
        self._set((), [])
        self.endResetModel()

    def _columnar(self, items) -> bool:
        return isinstance(items, ColumnTable) and len(items.COLUMNS) == len(self.columns)

    def _set(self, items, rows: list) -> None:
        self._items, self._rows, self.total = items, rows, len(items)
        self._blocks.clear()
        self._column_cache.clear()
        self._shown = len(items) if self._columnar(items) else len(rows)

    def extend_to(self, items: Sequence, rows: Callable[[Sequence], list]) -> None:
        """Show ``items``, which extend the shown ones by appending (a growing partial list).

        ``rows(items_slice)`` turns items into table rows in bulk (not called for a
        columnar result).
        """
        old = self._shown
        if len(items) < self.total or self._columnar(items) != self._columnar(self._items):
            self.replace(items, rows)
            return
        columnar = self._columnar(items)
        shown = len(items) if columnar else min(len(items), TABLE_LIMIT)
        self._items, self.total = items, len(items)
        if shown == old:
            return
        self.beginInsertRows(QModelIndex(), old, shown - 1)
        self._column_cache.clear()
        if columnar:
            self._blocks.pop(old // VIEW_BLOCK, None)  # the last block was short
        else:
            self._rows.extend(rows(items[old:shown]))
        self._shown = shown
        self.endInsertRows()

    def settle(self, items: Sequence, rows: Callable[[Sequence], list], extends: bool) -> None:
        """Show the final ``items``: only the new rows are added when the family's result
        ``extends`` its partial lists (same order, more items), else all rows are replaced."""
        if extends and len(items) >= self._shown:
            self.extend_to(items, rows)
        else:
            self.replace(items, rows)

    def replace(self, items: Sequence, rows: Callable[[Sequence], list]) -> None:
        self.beginResetModel()
        self._set(items, [] if self._columnar(items) else list(rows(items[:TABLE_LIMIT])))
        self.endResetModel()

    def item(self, source_row: int):
        if self._columnar(self._items) and 0 <= source_row < self._shown:
            # From the block of rows kept for display (what indexing the table would read).
            return self._items.make_row(self.row_values(source_row))
        return self._items[source_row]

    def row_values(self, source_row: int) -> tuple:
        if not self._columnar(self._items):
            return self._rows[source_row]
        block = source_row // VIEW_BLOCK
        rows = self._blocks.get(block)
        if rows is None:
            lo = block * VIEW_BLOCK
            rows = list(self._items.tuples(lo, min(self._shown, lo + VIEW_BLOCK)))
            self._blocks[block] = rows
            if len(self._blocks) > VIEW_BLOCKS_KEPT:
                self._blocks.popitem(last=False)
        else:
            self._blocks.move_to_end(block)
        return rows[source_row - block * VIEW_BLOCK]

    def rows(self) -> list[tuple]:
        if self._columnar(self._items):
            return list(self._items.tuples(0, self._shown))
        return list(self._rows)

    def items(self) -> list:
        return [self._items[i] for i in range(self._shown)]

    def row_of(self, item) -> int:
        """The source row of ``item``, -1 if it is not shown."""
        if self._columnar(self._items):
            found = self._items.find(item)
            return found if found < self._shown else -1
        return next((r for r in range(self._shown) if self._items[r] == item), -1)

    def column_of(self, role: str) -> int | None:
        for index, column in enumerate(self.columns):
            if column.role == role:
                return index
        return None

    def column_values(self, col: int):
        """Every shown row's value in column ``col``: a numeric array (NaN for an empty
        cell) for int and float columns, else a list (for the proxy's sorting and filters)."""
        if col not in self._column_cache:
            if self._columnar(self._items):
                values = self._items.column(col, 0, self._shown)
            else:
                values = [row[col] for row in self._rows]
            if self.columns[col].kind in ("int", "float"):
                values = as_numbers(values)
            elif not isinstance(values, list):
                values = np.asarray(values).tolist()
            self._column_cache[col] = values
        return self._column_cache[col]

    # -- Qt model interface ----------------------------------------------------------------
    def rowCount(self, parent=QModelIndex()) -> int:
        return 0 if parent.isValid() else self._shown

    def columnCount(self, parent=QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self.columns)

    def data(self, index, role=Qt.ItemDataRole.DisplayRole):
        if not index.isValid():
            return None
        return self.cell(index.row(), index.column(), role)

    def cell(self, row: int, col: int, role):
        """:meth:`data` of a row and column: a proxy asks this without making a source
        index (Qt asks each painted cell for seven roles)."""
        if role not in CELL_ROLES:
            return None
        return cell_data(self.columns[col], self.row_values(row)[col], role)

    def headerData(self, section, orientation, role=Qt.ItemDataRole.DisplayRole):
        if orientation == Qt.Orientation.Horizontal:
            return column_header(self.columns, section, role)
        if orientation == Qt.Orientation.Vertical and role == Qt.ItemDataRole.DisplayRole:
            return section + 1
        return None


def as_numbers(values) -> np.ndarray:
    """Values as float64, NaN where a cell holds no number (empty, None)."""
    if isinstance(values, np.ndarray) and values.dtype.kind in "iuf":
        return values.astype(np.float64)
    return np.array([v if isinstance(v, (int, float)) and not isinstance(v, bool) else np.nan
                     for v in values], dtype=np.float64)


class ResultsFilter(QAbstractProxyModel):
    """Sorts on raw values and keeps rows within a length range and a position range, and
    rows with the text in a text column.

    The rows shown are one numpy array of source rows (None: all, in engine order),
    rebuilt with numpy when the filters, the sort or the source's rows change: no Python
    call per row, as a QSortFilterProxyModel's filterAcceptsRow would make.

    Signals ``filter_about_to_change()`` and ``filter_changed()`` around a change of filters
    (the results panel keeps the selection on its rows through it).
    """

    filter_about_to_change = Signal()
    filter_changed = Signal()

    def __init__(self, parent=None):
        super().__init__(parent)
        self.length_range: tuple[int | None, int | None] = (None, None)
        self.position_range: tuple[int | None, int | None] = (None, None)
        self.text = ""
        self.keep: Callable | None = None  # ToolFilter's per-item test
        self._map: np.ndarray | None = None  # proxy row -> source row; None: the identity
        self._inverse: np.ndarray | None = None
        self._sort: tuple[int, Qt.SortOrder] = (-1, Qt.SortOrder.AscendingOrder)

    # -- what QSortFilterProxyModel offered that the app calls --------------------------------
    def setSortRole(self, role) -> None:
        """Sorting reads the raw values (SORT_ROLE) always."""

    def setDynamicSortFilter(self, enable: bool) -> None:
        """Always dynamic: new rows are sorted and filtered as they come."""

    def setFilterCaseSensitivity(self, sensitivity) -> None:
        """The text filter ignores case always."""

    def beginFilterChange(self) -> None:
        """Filter state changes between this and :meth:`endFilterChange`."""

    def endFilterChange(self) -> None:
        self._rebuild()

    def invalidateFilter(self) -> None:
        self._rebuild()

    # -- filters -------------------------------------------------------------------------------
    def change_filter(self, apply) -> None:
        """Run ``apply()`` (which sets filter state) as one announced filter change."""
        self.filter_about_to_change.emit()
        self.beginFilterChange()
        apply()
        self.endFilterChange()
        self.filter_changed.emit()

    def set_filters(self, length=(None, None), position=(None, None), text: str = "") -> None:
        def apply():
            self.length_range, self.position_range, self.text = tuple(length), tuple(position), text

        self.change_filter(apply)

    def active(self) -> bool:
        return any(v is not None for v in self.length_range + self.position_range) or bool(self.text)

    def filterAcceptsRow(self, source_row: int, source_parent=QModelIndex()) -> bool:
        """Whether a source row passes the filters (one row; the table uses :meth:`_accepted`)."""
        return bool(self._accepted(source_row, source_row + 1)[0]) if self._has_filters() else True

    def _has_filters(self) -> bool:
        return self.keep is not None or self.active()

    def _accepted(self, first: int, stop: int) -> np.ndarray:
        """A mask over source rows first..stop-1: which pass the filters."""
        model: ResultsModel = self.sourceModel()
        rows = slice(first, stop)
        keep = np.ones(stop - first, dtype=bool)
        lo, hi = self.length_range
        col = model.column_of("length")
        if col is not None and (lo is not None or hi is not None):
            length = model.column_values(col)[rows]
            keep &= ~np.isnan(length)  # an empty cell has no length to compare
            if lo is not None:
                keep &= length >= lo
            if hi is not None:
                keep &= length <= hi
        lo, hi = self.position_range
        start_col, end_col = model.column_of("start"), model.column_of("end")
        if start_col is not None and (lo is not None or hi is not None):
            start = model.column_values(start_col)[rows]
            end = model.column_values(end_col)[rows] if end_col is not None else start
            keep &= ~(np.isnan(start) | np.isnan(end))  # a gap or no alignment
            if lo is not None:
                keep &= start >= lo
            if hi is not None:
                keep &= end <= hi
        if self.text:
            needle = self.text.lower()
            found = np.zeros(stop - first, dtype=bool)
            for col, column in enumerate(model.columns):
                if column.kind == "str":
                    seen: dict = {}  # ids repeat: test each distinct value once
                    found |= np.fromiter((seen[v] if v in seen else seen.setdefault(
                        v, needle in str(v).lower()) for v in model.column_values(col)[rows]),
                        dtype=bool, count=stop - first)
            keep &= found
        if self.keep is not None:
            picked = np.flatnonzero(keep)
            keep[picked] = [bool(self.keep(model.item(first + r))) for r in picked.tolist()]
        return keep

    def visible_items(self) -> list:
        """Items the filters let through, in source order."""
        model: ResultsModel = self.sourceModel()
        rows = np.arange(model.rowCount()) if self._map is None else np.sort(self._map)
        return [model.item(int(r)) for r in rows.tolist()]

    # -- sorting ----------------------------------------------------------------------------------
    def sort(self, column: int, order=Qt.SortOrder.AscendingOrder) -> None:
        self._sort = (column, order)
        self._rebuild()

    def _order(self, rows: np.ndarray) -> np.ndarray:
        """Source ``rows`` sorted by the sort column (stable; empty cells last)."""
        column, order = self._sort
        model = self.sourceModel()
        if column < 0 or column >= model.columnCount():
            return rows
        values = model.column_values(column)
        descending = order == Qt.SortOrder.DescendingOrder
        if isinstance(values, np.ndarray):
            key = values[rows]
            picked = np.argsort(-key if descending else key, kind="stable")  # NaN last
        else:
            none = np.fromiter((values[r] is None for r in rows.tolist()), dtype=bool,
                               count=rows.shape[0])
            key = np.array(["" if values[r] is None else str(values[r]) for r in rows.tolist()])
            picked = np.argsort(key, kind="stable")
            if descending:
                picked = picked[::-1]
            picked = np.concatenate([picked[~none[picked]], picked[none[picked]]])
        return rows[picked]

    # -- the mapping ------------------------------------------------------------------------------
    def _rebuild(self) -> None:
        """New rows shown (filters or sort changed): a layout change, as
        QSortFilterProxyModel.invalidate() makes, so selections on rows still shown stay."""
        self.layoutAboutToBeChanged.emit()
        old = self.persistentIndexList()
        sources = [self.mapToSource(i) for i in old]
        self._map, self._inverse = self._mapping(), None
        self.changePersistentIndexList(old, [self.mapFromSource(s) for s in sources])
        self.layoutChanged.emit()

    def _mapping(self) -> np.ndarray | None:
        model = self.sourceModel()
        if model is None or (not self._has_filters() and self._sort[0] < 0):
            return None
        n = model.rowCount()
        rows = np.arange(n, dtype=np.int64)
        if self._has_filters():
            rows = rows[self._accepted(0, n)]
        return self._order(rows)

    def setSourceModel(self, model) -> None:
        self.beginResetModel()
        super().setSourceModel(model)
        model.modelReset.connect(self._source_reset)
        model.rowsAboutToBeInserted.connect(self._source_rows_coming)
        model.rowsInserted.connect(self._source_rows_inserted)
        model.dataChanged.connect(self._source_data_changed)
        self._map, self._inverse = None, None
        self._forwarding = False
        self.endResetModel()

    def _source_reset(self) -> None:
        self.beginResetModel()
        self._map, self._inverse = self._mapping(), None
        self.endResetModel()

    def _source_rows_coming(self, parent, first: int, last: int) -> None:
        self._forwarding = self._map is None  # shown as they are: announce the same rows
        if self._forwarding:
            self.beginInsertRows(QModelIndex(), first, last)

    def _source_rows_inserted(self, parent, first: int, last: int) -> None:
        if self._forwarding:
            self._forwarding = False
            self.endInsertRows()
            return
        rows = np.arange(first, last + 1, dtype=np.int64)
        if self._has_filters():
            rows = rows[self._accepted(first, last + 1)]
        if not rows.size:
            return
        if self._sort[0] < 0:  # appended in engine order
            at = self._map.shape[0]
            self.beginInsertRows(QModelIndex(), at, at + rows.shape[0] - 1)
            self._map, self._inverse = np.concatenate([self._map, rows]), None
            self.endInsertRows()
        else:
            self._rebuild()

    def _source_data_changed(self, top_left, bottom_right, roles=()) -> None:
        if self._sort[0] >= len(self.sourceModel().columns) or self.keep is not None:
            self._rebuild()  # sorted or filtered by values that just changed
        n = self.rowCount()
        if n:
            self.dataChanged.emit(self.index(0, top_left.column()),
                                  self.index(n - 1, bottom_right.column()))

    # -- QAbstractProxyModel --------------------------------------------------------------------
    def rowCount(self, parent=QModelIndex()) -> int:
        if parent.isValid() or self.sourceModel() is None:
            return 0
        return self.sourceModel().rowCount() if self._map is None else int(self._map.shape[0])

    def columnCount(self, parent=QModelIndex()) -> int:
        if parent.isValid() or self.sourceModel() is None:
            return 0
        return self.sourceModel().columnCount()

    def index(self, row: int, column: int, parent=QModelIndex()):
        if parent.isValid() or not (0 <= row < self.rowCount() and 0 <= column < self.columnCount()):
            return QModelIndex()
        return self.createIndex(row, column)

    def parent(self, index=QModelIndex()):
        return QModelIndex()

    def hasChildren(self, parent=QModelIndex()) -> bool:
        return not parent.isValid() and self.rowCount() > 0

    def mapToSource(self, proxy_index):
        if not proxy_index.isValid() or self.sourceModel() is None:
            return QModelIndex()
        row = proxy_index.row()
        if self._map is not None:
            if row >= self._map.shape[0]:
                return QModelIndex()
            row = int(self._map[row])
        return self.sourceModel().index(row, proxy_index.column())

    def mapFromSource(self, source_index):
        if not source_index.isValid():
            return QModelIndex()
        row = source_index.row()
        if self._map is not None:
            if self._inverse is None:
                self._inverse = np.full(self.sourceModel().rowCount(), -1, dtype=np.int64)
                self._inverse[self._map] = np.arange(self._map.shape[0])
            row = int(self._inverse[row]) if row < self._inverse.shape[0] else -1
            if row < 0:
                return QModelIndex()
        return self.index(row, source_index.column())

    def data(self, index, role=Qt.ItemDataRole.DisplayRole):
        """The source's cell, read by row and column: as QAbstractProxyModel.data would,
        without making a source index for each of the roles a painted cell is asked for
        (that and the calls from C++ it takes were most of a repaint of a million rows). A
        source whose own data() says more (a subclass's) is asked through it."""
        if not index.isValid():
            return None
        source = self.sourceModel()
        if type(source).data is not ResultsModel.data:
            return super().data(index, role)
        row = index.row()
        if self._map is not None:
            if row >= self._map.shape[0]:
                return None
            row = int(self._map[row])
        elif row >= source.rowCount():
            return None
        return source.cell(row, index.column(), role)

    def flags(self, index):
        """A results model's flags (QAbstractTableModel's), without making a source index."""
        if type(self.sourceModel()).flags is not ResultsModel.flags:
            return super().flags(index)
        return CELL_FLAGS if index.isValid() else Qt.ItemFlag.NoItemFlags

    def headerData(self, section, orientation, role=Qt.ItemDataRole.DisplayRole):
        if orientation == Qt.Orientation.Vertical:  # row numbers, in the table's order
            return section + 1 if role == Qt.ItemDataRole.DisplayRole else None
        return self.sourceModel().headerData(section, orientation, role)


class RowNumbers(QHeaderView):
    """A vertical header of row numbers (clickable, as QTableView's own) whose size hint
    measures its first and last sections only: QHeaderView's measures 200 (four calls into
    the model each) every time the rows are replaced, as the k slider does on each move. The
    numbers are 1..count, so the last is the widest."""

    def __init__(self, parent=None):
        super().__init__(Qt.Orientation.Vertical, parent)
        self.setSectionsClickable(True)
        self.setHighlightSections(True)
        self._hint: tuple | None = None  # (count, size)

    def sizeHint(self) -> QSize:
        n = self.count()
        if n == 0:
            return super().sizeHint()  # (nothing to measure)
        if self._hint is None or self._hint[0] != n:
            size = QSize(0, 0)
            for section in sorted({0, n - 1}):
                size = size.expandedTo(self.sectionSizeFromContents(section))
            self._hint = (n, size)
        return self._hint[1]

    def changeEvent(self, event) -> None:
        if event.type() in (QEvent.Type.FontChange, QEvent.Type.StyleChange):
            self._hint = None  # measured again in the new font
        super().changeEvent(event)


class ElidedTipDelegate(QStyledItemDelegate):
    """Cells whose text is shortened with '…' to fit their column show it whole as a tooltip
    (a 28-30 nt primer in a narrow column; the model's own tip starts at 30 characters)."""

    def helpEvent(self, event, view, option, index):
        if index.isValid():
            text = index.data(Qt.ItemDataRole.DisplayRole)
            if isinstance(text, str) and text and elided(view, index, text):
                QToolTip.showText(event.globalPos(), text, view, view.visualRect(index))
                return True
        return super().helpEvent(event, view, option, index)


def elided(view: QAbstractItemView, index, text: str) -> bool:
    """Whether ``text`` is too wide for its cell in ``view`` (the delegate then elides it)."""
    margin = 2 * (view.style().pixelMetric(view.style().PixelMetric.PM_FocusFrameHMargin) + 1)
    return view.fontMetrics().horizontalAdvance(text) > view.visualRect(index).width() - margin


def table_view(model: ResultsModel, proxy: ResultsFilter) -> QTableView:
    """A sortable, row-selecting table over ``model`` through ``proxy`` (a view's own table)."""
    table = QTableView()
    proxy.setSourceModel(model)
    table.setModel(proxy)
    table.setSortingEnabled(True)
    table.sortByColumn(-1, Qt.SortOrder.AscendingOrder)
    table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    table.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
    table.setAlternatingRowColors(True)
    table.verticalHeader().setDefaultSectionSize(22)
    header = table.horizontalHeader()
    header.setStretchLastSection(True)
    header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
    header.setTextElideMode(Qt.TextElideMode.ElideRight)
    table.setTextElideMode(Qt.TextElideMode.ElideMiddle)  # a long sequence keeps both ends
    table.setItemDelegate(ElidedTipDelegate(table))
    table.setHorizontalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
    # Columns as narrow as their content each time the rows are replaced: a narrow tab then
    # shows most columns, and scrolls sideways to the rest (none is pushed out of reach).
    proxy.modelReset.connect(lambda: QTimer.singleShot(0, lambda: compact_columns(table)))
    return table


#: The widest a column gets from :func:`compact_columns` (a long text is elided in the middle,
#: its whole value in the tip).
COLUMN_CAP_PX = 220


def compact_columns(table: QTableView, cap: int = COLUMN_CAP_PX) -> None:
    """Each shown column as wide as its header and its widest visible cell, up to ``cap``."""
    header = table.horizontalHeader()
    model = table.model()
    if model is None:
        return
    for col in range(model.columnCount()):
        if table.isColumnHidden(col):
            continue
        width = max(header.sectionSizeHint(col), table.sizeHintForColumn(col))
        header.resizeSection(col, min(width, cap))


def columns_reachable(table: QTableView) -> bool:
    """Whether every shown column can be brought into view: scrolled as far right as the
    table goes, the last shown column ends inside the viewport (the 1280x720 test)."""
    header = table.horizontalHeader()
    shown = [c for c in range(header.count()) if not table.isColumnHidden(c)]
    if not shown:
        return True
    if table.horizontalScrollBarPolicy() == Qt.ScrollBarPolicy.ScrollBarAlwaysOff:
        return header.length() <= table.viewport().width() + 1
    bar = table.horizontalScrollBar()
    before = bar.value()
    bar.setValue(bar.maximum())
    last = max(shown, key=header.sectionPosition)
    right = header.sectionViewportPosition(last) + header.sectionSize(last)
    bar.setValue(before)
    return right <= table.viewport().width() + 1
