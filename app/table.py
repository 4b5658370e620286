"""The results table: a model over the adapter's rows and a sort/filter proxy.

Rows arrive while a job runs (``Progress.partial`` grows by appending), so the
model appends only the new rows instead of resetting; the final result
replaces them once. Filters act on the columns whose role is 'length',
'start' and 'end' (1-based, inclusive, as in the CSV).
"""

from __future__ import annotations

from typing import Callable, Sequence

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QSortFilterProxyModel, Qt

from app.families import Column

SORT_ROLE = Qt.ItemDataRole.UserRole + 1


class ResultsModel(QAbstractTableModel):
    def __init__(self, parent=None):
        super().__init__(parent)
        self.columns: tuple[Column, ...] = ()
        self._items: list = []
        self._rows: list[tuple] = []

    def set_columns(self, columns: Sequence[Column]) -> None:
        self.beginResetModel()
        self.columns = tuple(columns)
        self._items, self._rows = [], []
        self.endResetModel()

    def clear(self) -> None:
        self.beginResetModel()
        self._items, self._rows = [], []
        self.endResetModel()

    def extend_to(self, items: Sequence, row: Callable) -> None:
        """Show ``items``, which extend the shown ones by appending (a growing partial list)."""
        old = len(self._items)
        if len(items) < old:
            self.replace(items, row)
            return
        if len(items) == old:
            return
        new = items[old:]
        self.beginInsertRows(QModelIndex(), old, old + len(new) - 1)
        self._items.extend(new)
        self._rows.extend(row(item) for item in new)
        self.endInsertRows()

    def replace(self, items: Sequence, row: Callable) -> None:
        self.beginResetModel()
        self._items = list(items)
        self._rows = [row(item) for item in self._items]
        self.endResetModel()

    def item(self, source_row: int):
        return self._items[source_row]

    def row_values(self, source_row: int) -> tuple:
        return self._rows[source_row]

    def rows(self) -> list[tuple]:
        return list(self._rows)

    def items(self) -> list:
        return list(self._items)

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
            if column.kind == "float":
                return f"{value:.4g}"
            return str(value)
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
    """Sorts on raw values and keeps rows within a length range and a position range."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setSortRole(SORT_ROLE)
        self.setFilterCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        self.length_range: tuple[int | None, int | None] = (None, None)
        self.position_range: tuple[int | None, int | None] = (None, None)
        self.text = ""

    def set_filters(self, length=(None, None), position=(None, None), text: str = "") -> None:
        self.beginFilterChange()
        self.length_range, self.position_range, self.text = tuple(length), tuple(position), text
        self.endFilterChange()

    def active(self) -> bool:
        return any(v is not None for v in self.length_range + self.position_range) or bool(self.text)

    def filterAcceptsRow(self, source_row: int, source_parent) -> bool:
        model: ResultsModel = self.sourceModel()
        values = model.row_values(source_row)
        lo, hi = self.length_range
        col = model.column_of("length")
        if col is not None and (lo is not None or hi is not None):
            if (lo is not None and values[col] < lo) or (hi is not None and values[col] > hi):
                return False
        lo, hi = self.position_range
        start_col, end_col = model.column_of("start"), model.column_of("end")
        if start_col is not None and (lo is not None or hi is not None):
            start = values[start_col]
            end = values[end_col] if end_col is not None else start
            if (lo is not None and start < lo) or (hi is not None and end > hi):
                return False
        if self.text:
            needle = self.text.lower()
            if not any(needle in str(v).lower() for v, c in zip(values, model.columns) if c.kind == "str"):
                return False
        return True

    def visible_items(self) -> list:
        model: ResultsModel = self.sourceModel()
        return [model.item(self.mapToSource(self.index(r, 0)).row()) for r in range(self.rowCount())]
