"""The results panel: filter row (length, positions, text) over the sortable results table."""

from __future__ import annotations

from PySide6.QtCore import QItemSelectionModel, Qt, Signal
from PySide6.QtWidgets import (QAbstractItemView, QHBoxLayout, QHeaderView, QLabel, QLineEdit,
                               QPushButton, QSpinBox, QTableView, QVBoxLayout, QWidget)

from app.table import ResultsFilter, ResultsModel


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
        self.model = ResultsModel(self)
        self.proxy = ResultsFilter(self)
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
        for col, column in enumerate(self.model.columns):
            header.resizeSection(col, 90 if column.kind != "str" else 220)

    def fit_columns(self) -> None:
        """Text columns as wide as their content (up to 320 px), the last one stretching."""
        header = self.view.horizontalHeader()
        for col, column in enumerate(self.model.columns[:-1]):
            if column.kind == "str":
                self.view.resizeColumnToContents(col)
                header.resizeSection(col, min(header.sectionSize(col), 320))

    def clear_filters(self) -> None:
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
        for row in range(self.model.rowCount()):
            if self.model.item(row) == item:
                index = self.proxy.mapFromSource(self.model.index(row, 0))
                if not index.isValid():
                    return False
                self.view.selectionModel().setCurrentIndex(
                    index, QItemSelectionModel.SelectionFlag.ClearAndSelect
                    | QItemSelectionModel.SelectionFlag.Rows)
                self.view.scrollTo(index)
                return True
        return False

    def select_row(self, proxy_row: int) -> None:
        index = self.proxy.index(proxy_row, 0)
        if index.isValid():
            self.view.selectionModel().setCurrentIndex(
                index, QItemSelectionModel.SelectionFlag.ClearAndSelect
                | QItemSelectionModel.SelectionFlag.Rows)
            self.view.scrollTo(index)
