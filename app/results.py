"""The results panel: filter row (length, positions, text) over the sortable results table.

A family may add tools under the filter row (:meth:`ResultsPanel.set_tools`; kdiff's primer
tools): computed columns after the standard ones (:class:`ComputedColumnsModel`) and a filter
of its own (:class:`ToolFilter`). ``model.rows()`` stays the standard columns, as in the CSV.
"""

from __future__ import annotations

from typing import Callable

from PySide6.QtCore import QItemSelectionModel, QModelIndex, Qt, Signal
from PySide6.QtWidgets import (QAbstractItemView, QHBoxLayout, QHeaderView, QLabel, QLineEdit,
                               QPushButton, QSpinBox, QTableView, QVBoxLayout, QWidget)

from app.table import SORT_ROLE, ResultsFilter, ResultsModel, as_numbers


class ComputedColumnsModel(ResultsModel):
    """The results model plus columns computed from each row's item (``values(item) -> tuple``).

    Computed values may be None (not known yet, or not defined): shown empty, sorted last.
    """

    def __init__(self, parent=None):
        super().__init__(parent)
        self.computed: tuple = ()
        self._values: Callable | None = None

    def set_computed(self, columns, values: Callable | None) -> None:
        self.beginResetModel()
        self.computed, self._values = tuple(columns), values
        self.endResetModel()

    def computed_changed(self) -> None:
        """The computed values changed (the table repaints and re-sorts)."""
        if self.computed and self.rowCount():
            first = len(self.columns)
            self.dataChanged.emit(self.index(0, first),
                                  self.index(self.rowCount() - 1, first + len(self.computed) - 1))

    def column_values(self, col: int):
        if col < len(self.columns):
            return super().column_values(col)
        j = col - len(self.columns)  # computed: values change, so never kept
        values = [self._values(self.item(r))[j] for r in range(self.rowCount())]
        return as_numbers(values) if self.computed[j].kind in ("int", "float") else values

    def all_columns(self) -> tuple:
        return self.columns + self.computed

    def columnCount(self, parent=QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self.columns) + len(self.computed)

    def data(self, index, role=Qt.ItemDataRole.DisplayRole):
        if not index.isValid() or index.column() < len(self.columns):
            return super().data(index, role)
        column = self.computed[index.column() - len(self.columns)]
        value = self._values(self.item(index.row()))[index.column() - len(self.columns)]
        if role == Qt.ItemDataRole.DisplayRole:
            if value is None:
                return ""
            return f"{value:.4g}" if column.kind == "float" else str(value)
        if role == SORT_ROLE:
            return value
        if role == Qt.ItemDataRole.TextAlignmentRole:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None

    def headerData(self, section, orientation, role=Qt.ItemDataRole.DisplayRole):
        first = len(self.columns)
        if orientation == Qt.Orientation.Horizontal and first <= section < first + len(self.computed):
            column = self.computed[section - first]
            if role == Qt.ItemDataRole.DisplayRole:
                return column.title
            if role == Qt.ItemDataRole.ToolTipRole:
                return column.tip or None
            return None
        return super().headerData(section, orientation, role)


class ToolFilter(ResultsFilter):
    """The results filter plus an optional ``keep(item) -> bool`` set by the panel's tools
    (:class:`ResultsFilter` applies it after its own filters)."""

    def set_keep(self, keep: Callable | None) -> None:
        self.beginFilterChange()
        self.keep = keep
        self.endFilterChange()

    def active(self) -> bool:
        return self.keep is not None or super().active()


def _any_spin(tip: str) -> QSpinBox:
    """A spin box whose lowest value reads 'any' and means no bound."""
    box = QSpinBox()
    box.setRange(0, 1_000_000_000)
    box.setSpecialValueText("any")
    box.setGroupSeparatorShown(True)
    box.setKeyboardTracking(False)
    box.setToolTip(tip)
    box.setMinimumWidth(90)
    return box


class ResultsPanel(QWidget):
    """Signals ``selected(item)`` for the current row and ``filtered()`` when filters change."""

    selected = Signal(object)
    filtered = Signal()

    def __init__(self, parent=None):
        super().__init__(parent)
        self.model = ComputedColumnsModel(self)
        self.proxy = ToolFilter(self)
        self.tools = None
        self.proxy.setSourceModel(self.model)
        self.proxy.setDynamicSortFilter(True)

        self.length_min = _any_spin("Shortest length shown (bp)")
        self.length_max = _any_spin("Longest length shown (bp)")
        self.pos_from = _any_spin("Show rows that start at or after this position (1-based)")
        self.pos_to = _any_spin("Show rows that end at or before this position (1-based)")
        self.text = QLineEdit()
        self.text.setPlaceholderText("record or sequence contains…")
        self.text.setClearButtonEnabled(True)
        clear = QPushButton("Clear filters")
        clear.clicked.connect(self.clear_filters)
        self.count = QLabel()
        row = QHBoxLayout()
        self.length_label = QLabel("Length")
        row.addWidget(self.length_label)
        row.addWidget(self.length_min)
        self.length_dash = QLabel("–")
        row.addWidget(self.length_dash)
        row.addWidget(self.length_max)
        row.addSpacing(12)
        self.pos_label = QLabel("Positions")
        row.addWidget(self.pos_label)
        row.addWidget(self.pos_from)
        self.pos_dash = QLabel("–")
        row.addWidget(self.pos_dash)
        row.addWidget(self.pos_to)
        row.addSpacing(12)
        row.addWidget(self.text, 1)
        row.addWidget(clear)
        row.addWidget(self.count)

        self.view = QTableView()
        self.view.setModel(self.proxy)
        self.view.setSortingEnabled(True)
        self.view.sortByColumn(-1, Qt.SortOrder.AscendingOrder)  # engine order until a header is clicked
        self.view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.view.setAlternatingRowColors(True)
        self.view.verticalHeader().setDefaultSectionSize(22)
        self.view.horizontalHeader().setStretchLastSection(True)
        self.view.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        self.view.horizontalHeader().setResizeContentsPrecision(200)  # fit widths on 200 rows
        self.view.selectionModel().currentRowChanged.connect(self._on_current_changed)

        for box in (self.length_min, self.length_max, self.pos_from, self.pos_to):
            box.valueChanged.connect(self._apply_filters)
        self.text.textChanged.connect(self._apply_filters)
        self.model.rowsInserted.connect(self._show_count)
        self.model.modelReset.connect(self._show_count)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(row)
        layout.addWidget(self.view, 1)
        self._show_count()

    def set_tools(self, tools) -> None:
        """Put a family's tools under the filter row (None: remove them and what they added).

        Tools may offer ``clear_filters()`` (the Clear filters button) and ``table_item(item)``
        (the row item that stands for a result item, e.g. its merged region's).
        """
        if self.tools is not None:
            self.layout().removeWidget(self.tools)
            self.tools = None
            self.model.set_computed((), None)
            self.proxy.set_keep(None)
        if tools is not None:
            self.layout().insertWidget(1, tools)
            self.tools = tools

    def refilter(self) -> None:
        """Tools changed what their filter keeps or the computed columns' values."""
        self._show_count()
        self.filtered.emit()

    def set_columns(self, columns) -> None:
        self.model.set_columns(columns)
        has = {c.role for c in columns}
        for widget in (self.length_label, self.length_min, self.length_dash, self.length_max):
            widget.setVisible("length" in has)
        for widget in (self.pos_label, self.pos_from, self.pos_dash, self.pos_to):
            widget.setVisible("start" in has)
        self.view.sortByColumn(-1, Qt.SortOrder.AscendingOrder)
        self._resize_columns()

    def _resize_columns(self) -> None:
        header = self.view.horizontalHeader()
        for col, column in enumerate(self.model.all_columns()):
            computed = col >= len(self.model.columns)  # short numbers: narrower, more of them show
            header.resizeSection(col, 76 if computed else 90 if column.kind != "str" else 220)

    def fit_columns(self) -> None:
        """Text columns as wide as their content (up to 320 px), the last one stretching."""
        header = self.view.horizontalHeader()
        for col, column in enumerate(self.model.all_columns()[:-1]):
            if column.kind == "str":
                self.view.resizeColumnToContents(col)
                header.resizeSection(col, min(header.sectionSize(col), 320))

    def clear_filters(self) -> None:
        if self.tools is not None and hasattr(self.tools, "clear_filters"):
            self.tools.clear_filters()
        for box in (self.length_min, self.length_max, self.pos_from, self.pos_to):
            box.blockSignals(True)
            box.setValue(0)
            box.blockSignals(False)
        self.text.blockSignals(True)
        self.text.clear()
        self.text.blockSignals(False)
        self._apply_filters()

    def set_filters(self, length=(None, None), position=(None, None), text: str = "") -> None:
        """Set the filters from code (0/None means no bound)."""
        values = (length[0], length[1], position[0], position[1])
        for box, value in zip((self.length_min, self.length_max, self.pos_from, self.pos_to), values):
            box.blockSignals(True)
            box.setValue(value or 0)
            box.blockSignals(False)
        self.text.blockSignals(True)
        self.text.setText(text)
        self.text.blockSignals(False)
        self._apply_filters()

    def _apply_filters(self, *_):
        bound = lambda box: box.value() or None  # noqa: E731 -- 0 reads 'any'
        self.proxy.set_filters((bound(self.length_min), bound(self.length_max)),
                               (bound(self.pos_from), bound(self.pos_to)), self.text.text().strip())
        self._show_count()
        self.filtered.emit()

    def _show_count(self, *_):
        held, shown, total = self.model.rowCount(), self.proxy.rowCount(), self.model.total
        text = f"{shown:,} of {held:,} rows" if shown != held else f"{held:,} rows"
        if total > held:
            text += f" (the first {held:,} of {total:,}; Export CSV writes all)"
        self.count.setText(text)

    def _on_current_changed(self, current, _previous) -> None:
        if not current.isValid():
            return
        source = self.proxy.mapToSource(current)
        self.selected.emit(self.model.item(source.row()))

    def select_item(self, item) -> bool:
        """Select the row of ``item`` (a raw result item); False if the filters hide it."""
        if self.tools is not None and hasattr(self.tools, "table_item"):
            item = self.tools.table_item(item)
        row = self.model.row_of(item)
        if row < 0:
            return False
        index = self.proxy.mapFromSource(self.model.index(row, 0))
        if not index.isValid():
            return False
        self.view.selectionModel().setCurrentIndex(
            index, QItemSelectionModel.SelectionFlag.ClearAndSelect
            | QItemSelectionModel.SelectionFlag.Rows)
        self.view.scrollTo(index)
        return True

