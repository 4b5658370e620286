"""The results table: a model over the adapter's rows and a sort/filter proxy.

Rows arrive while a job runs (``Progress.partial`` grows by appending), so the
model appends only the new rows instead of resetting; the final result
replaces them once. Filters act on the columns whose role is 'length',
'start' and 'end' (1-based, inclusive, as in the CSV).
"""

from __future__ import annotations

from typing import Callable, Sequence

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QSortFilterProxyModel, Qt, Signal
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableView

from app.families import Column

SORT_ROLE = Qt.ItemDataRole.UserRole + 1


#: Rows the table holds at most; the CSV export always has every row.
TABLE_LIMIT = 200_000


class ResultsModel(QAbstractTableModel):
    """Rows of the newest result sequence. ``total`` counts every item, even past TABLE_LIMIT."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.columns: tuple[Column, ...] = ()
        self._items: Sequence = ()
        self._rows: list[tuple] = []
        self.total = 0

    def set_columns(self, columns: Sequence[Column]) -> None:
        self.beginResetModel()
        self.columns = tuple(columns)
        self._items, self._rows, self.total = (), [], 0
        self.endResetModel()

    def clear(self) -> None:
        self.beginResetModel()
        self._items, self._rows, self.total = (), [], 0
        self.endResetModel()

    def extend_to(self, items: Sequence, rows: Callable[[Sequence], list]) -> None:
        """Show ``items``, which extend the shown ones by appending (a growing partial list).

        ``rows(items_slice)`` turns items into table rows in bulk.
        """
        old = len(self._rows)
        if len(items) < self.total:
            self.replace(items, rows)
            return
        self._items, self.total = items, len(items)
        shown = min(len(items), TABLE_LIMIT)
        if shown == old:
            return
        self.beginInsertRows(QModelIndex(), old, shown - 1)
        self._rows.extend(rows(items[old:shown]))
        self.endInsertRows()

    def settle(self, items: Sequence, rows: Callable[[Sequence], list], extends: bool) -> None:
        """Show the final ``items``: only the new rows are added when the family's result
        ``extends`` its partial lists (same order, more items), else all rows are replaced."""
        if extends and len(items) >= len(self._rows):
            self.extend_to(items, rows)
        else:
            self.replace(items, rows)

    def replace(self, items: Sequence, rows: Callable[[Sequence], list]) -> None:
        self.beginResetModel()
        self._items, self.total = items, len(items)
        self._rows = list(rows(items[:TABLE_LIMIT]))
        self.endResetModel()

    def item(self, source_row: int):
        return self._items[source_row]

    def row_values(self, source_row: int) -> tuple:
        return self._rows[source_row]

    def rows(self) -> list[tuple]:
        return list(self._rows)

    def items(self) -> list:
        return [self._items[i] for i in range(len(self._rows))]

    def column_of(self, role: str) -> int | None:
        for index, column in enumerate(self.columns):
            if column.role == role:
                return index
        return None

    # -- Qt model interface ----------------------------------------------------------------
    def rowCount(self, parent=QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent=QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self.columns)

    def data(self, index, role=Qt.ItemDataRole.DisplayRole):
        if not index.isValid():
            return None
        value = self._rows[index.row()][index.column()]
        column = self.columns[index.column()]
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

    def headerData(self, section, orientation, role=Qt.ItemDataRole.DisplayRole):
        if orientation == Qt.Orientation.Horizontal and 0 <= section < len(self.columns):
            if role == Qt.ItemDataRole.DisplayRole:
                return self.columns[section].title
            if role == Qt.ItemDataRole.ToolTipRole:
                return self.columns[section].tip or None
        if orientation == Qt.Orientation.Vertical and role == Qt.ItemDataRole.DisplayRole:
            return section + 1
        return None


class ResultsFilter(QSortFilterProxyModel):
    """Sorts on raw values and keeps rows within a length range and a position range.

    Signals ``filter_about_to_change()`` and ``filter_changed()`` around a change of filters
    (the results panel keeps the selection on its rows through it)."""

    filter_about_to_change = Signal()
    filter_changed = Signal()

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setSortRole(SORT_ROLE)
        self.setFilterCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        self.length_range: tuple[int | None, int | None] = (None, None)
        self.position_range: tuple[int | None, int | None] = (None, None)
        self.text = ""

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

    def filterAcceptsRow(self, source_row: int, source_parent) -> bool:
        model: ResultsModel = self.sourceModel()
        values = model.row_values(source_row)
        lo, hi = self.length_range
        col = model.column_of("length")
        if col is not None and (lo is not None or hi is not None):
            value = values[col]
            if not isinstance(value, int):  # an empty cell has no length to compare
                return False
            if (lo is not None and value < lo) or (hi is not None and value > hi):
                return False
        lo, hi = self.position_range
        start_col, end_col = model.column_of("start"), model.column_of("end")
        if start_col is not None and (lo is not None or hi is not None):
            start = values[start_col]
            end = values[end_col] if end_col is not None else start
            if not isinstance(start, int) or not isinstance(end, int):  # a gap or no alignment
                return False
            if (lo is not None and start < lo) or (hi is not None and end > hi):
                return False
        if self.text:
            needle = self.text.lower()
            if not any(needle in str(v).lower() for v, c in zip(values, model.columns) if c.kind == "str"):
                return False
        return True

    def visible_items(self) -> list:
        """Items the filters let through, in source order (cheaper than mapping every row)."""
        model: ResultsModel = self.sourceModel()
        root = QModelIndex()
        return [model.item(r) for r in range(model.rowCount()) if self.filterAcceptsRow(r, root)]


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
    return table
