"""The results panel: the run's summary, a filter row (length, positions, text) and the
sortable results table.

A family may add tools under the filter row (:meth:`ResultsPanel.set_tools`; kdiff's primer
tools): computed columns after the standard ones (:class:`ComputedColumnsModel`) and a filter
of its own (:class:`ToolFilter`). ``model.rows()`` stays the standard columns, as in the CSV.

Rows can be selected several at a time; the selection follows its rows through sorting and
filtering (and is scrolled back into view), Ctrl+C copies the selected rows as tab-separated
text, and the context menu copies or exports them, or adds the primers they hold to the primer
library (what a row holds is the family adapter's to say).
"""

from __future__ import annotations

from typing import Callable

from PySide6.QtCore import QEvent, QItemSelection, QItemSelectionModel, QModelIndex, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (QAbstractItemView, QApplication, QFrame, QHBoxLayout, QHeaderView,
                               QLabel, QLineEdit, QMenu, QPushButton, QScrollArea, QSizePolicy,
                               QSpinBox, QTableView, QVBoxLayout, QWidget)

from app.exports import rows_tsv
from app.table import (SORT_ROLE, ElidedTipDelegate, ResultsFilter, ResultsModel, RowNumbers,
                       as_numbers)


#: Source rows whose computed values are kept (a few screens of rows; then made again).
COMPUTED_ROWS_KEPT = 4096

RIGHT_ALIGNED = int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)


class ComputedColumnsModel(ResultsModel):
    """The results model plus columns computed from each row's item (``values(item) -> tuple``).

    Computed values may be None (not known yet, or not defined): shown empty, sorted last.
    """

    def __init__(self, parent=None):
        super().__init__(parent)
        self.computed: tuple = ()
        self._values: Callable | None = None
        self._text: Callable | None = None
        self._computed_rows: dict[int, tuple] = {}  # source row -> values, until they change

    def _set(self, items, rows: list) -> None:
        super()._set(items, rows)
        self._computed_rows.clear()

    def set_computed(self, columns, values: Callable | None, text: Callable | None = None) -> None:
        """``text(j, row_values)``: the shown text of computed column j where it is not the
        number (None: the number)."""
        self.beginResetModel()
        self.computed, self._values, self._text = tuple(columns), values, text
        self._computed_rows.clear()
        self.endResetModel()

    def computed_changed(self) -> None:
        """The computed values changed (the table repaints and re-sorts)."""
        self._computed_rows.clear()
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

    def computed_row(self, source_row: int) -> tuple:
        """The computed values of a source row, made once until the rows or the values
        change: Qt asks a cell for several roles as it paints, and each computed column of
        the row would make the row's item and its values again."""
        row = self._computed_rows.get(source_row)
        if row is None:
            if len(self._computed_rows) >= COMPUTED_ROWS_KEPT:
                self._computed_rows.clear()
            row = self._computed_rows[source_row] = self._values(self.item(source_row))
        return row

    def cell(self, row: int, col: int, role):
        if col < len(self.columns):
            return super().cell(row, col, role)
        if role == Qt.ItemDataRole.TextAlignmentRole:
            return RIGHT_ALIGNED
        if role != Qt.ItemDataRole.DisplayRole and role != SORT_ROLE:
            return None  # (the font, colours, check state... Qt asks for: nothing to compute)
        j = col - len(self.columns)
        row = self.computed_row(row)
        value = row[j]
        if role == SORT_ROLE:
            return value
        if value is None:
            return ""
        shown = self._text(j, row) if self._text is not None else None
        if shown is not None:
            return shown
        return f"{value:.4g}" if self.computed[j].kind == "float" else str(value)

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
        self.change_filter(lambda: setattr(self, "keep", keep))

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
    """Signals ``selected(item)`` for the current row, ``filtered()`` when filters change,
    ``export_selection_requested()`` and ``library_add_requested()`` from the context menu."""

    selected = Signal(object)
    filtered = Signal()
    export_selection_requested = Signal()
    library_add_requested = Signal()

    def __init__(self, parent=None):
        super().__init__(parent)
        self.model = ComputedColumnsModel(self)
        self.proxy = ToolFilter(self)
        self.tools = None
        self.library_what = ""  # what rows give the primer library ('' : nothing)
        self.proxy.setSourceModel(self.model)
        self.proxy.setDynamicSortFilter(True)

        self.length_min = _any_spin("Shortest length shown (bp)")
        self.length_max = _any_spin("Longest length shown (bp)")
        self.pos_from = _any_spin("Show rows that start at or after this position (1-based)")
        self.pos_to = _any_spin("Show rows that end at or before this position (1-based)")
        self.text = QLineEdit()
        # A hint short enough to show whole in kdiff's full filter row at 1280 px; the
        # tooltip says what it matches.
        self.text.setPlaceholderText("filter rows…")
        self.text.setToolTip("Show only rows whose record or sequence contains this text")
        self.text.setClearButtonEnabled(True)
        hint = self.text.fontMetrics().horizontalAdvance(self.text.placeholderText())
        self.text.setMinimumWidth(max(140, hint + 36))
        clear = QPushButton("Clear filters")
        clear.clicked.connect(self.clear_filters)
        self.count = QLabel()
        self.summary = QLabel()
        self.summary.setObjectName("result")
        self.summary.setToolTip("The last run's answer (kept while other families are shown)")
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.summary.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.summary.setVisible(False)
        self.clear_button = clear
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
        self.view.setVerticalHeader(RowNumbers(self.view))  # (cheap to size at a million rows)
        self.view.setModel(self.proxy)
        self.view.setItemDelegate(ElidedTipDelegate(self.view))  # an elided cell's text as a tip
        self.view.setSortingEnabled(True)
        self.view.sortByColumn(-1, Qt.SortOrder.AscendingOrder)  # engine order until a header is clicked
        self.view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.view.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.view.setAlternatingRowColors(True)
        self.view.verticalHeader().setDefaultSectionSize(22)
        self.view.horizontalHeader().setStretchLastSection(True)
        self.view.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        self.view.horizontalHeader().setResizeContentsPrecision(200)  # fit widths on 200 rows
        self.view.selectionModel().currentRowChanged.connect(self._on_current_changed)
        self.view.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.view.customContextMenuRequested.connect(self._context_menu)
        self.copy_action = QAction("&Copy rows", self.view)
        self.copy_action.setShortcut(QKeySequence.StandardKey.Copy)
        self.copy_action.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)
        self.copy_action.triggered.connect(self.copy_selection)
        self.view.addAction(self.copy_action)
        # The selection follows its rows through sorting and filtering: the views keep
        # showing the current row instead of whichever row took its place.
        self._kept: list = []
        self._kept_current = None
        self._filtering = False
        self._scroll = False  # to the selection once it is restored: after a sort or a filter
        self.proxy.filter_about_to_change.connect(lambda: setattr(self, "_scroll", True))
        # (the view sorts first: it connected to the header when sorting was enabled)
        self.view.horizontalHeader().sortIndicatorChanged.connect(self._scroll_to_current)
        self.proxy.filter_about_to_change.connect(self._remember_selection)
        self.proxy.filter_changed.connect(self._restore_selection)
        self.proxy.layoutAboutToBeChanged.connect(self._remember_selection)
        self.proxy.layoutChanged.connect(self._restore_selection)

        for box in (self.length_min, self.length_max, self.pos_from, self.pos_to):
            box.valueChanged.connect(self._apply_filters)
        self.text.textChanged.connect(self._apply_filters)
        self.model.rowsInserted.connect(self._show_count)
        self.model.modelReset.connect(self._show_count)

        # Tools (kdiff's primer tools) are wide: they scroll sideways rather than widen the window.
        self.tools_area = QScrollArea()
        self.tools_area.setWidgetResizable(True)
        self.tools_area.setFrameShape(QFrame.Shape.NoFrame)
        self.tools_area.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.tools_area.setVisible(False)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.summary)
        layout.addLayout(row)
        layout.addWidget(self.tools_area)
        layout.addWidget(self.view, 1)
        self._show_count()

    def set_summary(self, text: str) -> None:
        """The last run's answer (LCS length, NW score, counts), above the table."""
        self.summary.setText(f"<b>{text}</b>" if text else "")
        self.summary.setVisible(bool(text))

    def focus_chain(self) -> list:
        chain = [self.length_min, self.length_max, self.pos_from, self.pos_to, self.text,
                 self.clear_button]
        if self.tools is not None and hasattr(self.tools, "focus_chain"):
            chain += self.tools.focus_chain()
        return chain + [self.view]

    def set_tools(self, tools) -> None:
        """Put a family's tools under the filter row (None: remove them and what they added).

        Tools may offer ``clear_filters()`` (the Clear filters button) and ``table_item(item)``
        (the row item that stands for a result item, e.g. its merged region's).
        """
        if self.tools is not None:
            self.tools_area.takeWidget()
            self.tools = None
            self.model.set_computed((), None)
            self.proxy.set_keep(None)
        if tools is not None:
            self.tools_area.setWidget(tools)
            self.tools = tools
            tools.installEventFilter(self)
            self._fit_tools()
        self.tools_area.setVisible(tools is not None)

    def eventFilter(self, watched, event) -> bool:
        # Tools whose rows wrap (the primer filters) change height with the width: follow them.
        if watched is self.tools and event.type() in (QEvent.Type.LayoutRequest, QEvent.Type.Resize):
            QTimer.singleShot(0, self.tools_area, self._fit_tools)  # (dropped once it is gone)
        return super().eventFilter(watched, event)

    def _fit_tools(self) -> None:
        tools = self.tools
        if tools is None:
            return
        width = self.tools_area.viewport().width()
        bar = (self.tools_area.horizontalScrollBar().sizeHint().height()
               if tools.minimumSizeHint().width() > width else 0)
        height = tools.sizeHint().height() + bar
        if height != self.tools_area.height():
            self.tools_area.setFixedHeight(height)

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
        """Text columns as wide as their content (up to 320 px), number columns as their
        header (its unit included), the last one stretching."""
        header = self.view.horizontalHeader()
        for col, column in enumerate(self.model.all_columns()[:-1]):
            if column.kind == "str":
                self.view.resizeColumnToContents(col)
                header.resizeSection(col, min(header.sectionSize(col), 320))
            else:
                header.resizeSection(col, max(64, header.sectionSizeHint(col)))

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

    # -- selection ---------------------------------------------------------------------------------
    def selected_source_rows(self) -> list[int]:
        """Source rows of the selected table rows, in the table's order."""
        rows = sorted({i.row() for i in self.view.selectionModel().selectedRows()})
        return [self.proxy.mapToSource(self.proxy.index(r, 0)).row() for r in rows]

    def _remember_selection(self, *_) -> None:
        if self._filtering:
            return  # a filter change that also re-lays out the rows: remembered already
        self._filtering = True
        model = self.view.selectionModel()
        current = model.currentIndex()
        # Source rows: sorting and filtering never move a row of the model itself.
        self._kept = self.selected_source_rows()
        self._kept_current = self.proxy.mapToSource(current).row() if current.isValid() else None
        model.blockSignals(True)

    def _restore_selection(self, *_) -> None:
        if not self._filtering:
            return
        self._filtering = False
        model = self.view.selectionModel()
        model.blockSignals(False)
        if not self._kept and self._kept_current is None:
            return
        selection = QItemSelection()
        last = self.model.columnCount() - 1
        flags = QItemSelectionModel.SelectionFlag
        current = QModelIndex()
        for row in set(self._kept) | ({self._kept_current} - {None}):
            if row >= self.model.rowCount():
                continue
            index = self.proxy.mapFromSource(self.model.index(row, 0))
            if index.isValid():
                selection.select(index, index.siblingAtColumn(last))
                if row == self._kept_current:
                    current = index
        model.blockSignals(True)  # the rows are the same: the views have nothing new to show
        model.select(selection, flags.ClearAndSelect)
        if current.isValid():
            model.setCurrentIndex(current, flags.NoUpdate)
        model.blockSignals(False)
        self.view.viewport().update()
        if self._kept_current is not None and not current.isValid():
            self.selected.emit(None)  # the filters hide it: views must not keep showing it
        if current.isValid() and self._scroll:
            self.view.scrollTo(current)
        self._scroll = False

    def _scroll_to_current(self, *_) -> None:
        current = self.view.selectionModel().currentIndex()
        if current.isValid():
            self.view.scrollTo(current)

    def table_rows(self, selected: bool = False) -> tuple[list[str], list[tuple]]:
        """(titles, rows) of what the table shows, in its order: every shown row, or the
        selected ones. Values are raw (numbers unrounded), computed columns included."""
        columns = self.model.all_columns()
        if selected:
            sources = self.selected_source_rows()
        else:
            sources = [self.proxy.mapToSource(self.proxy.index(r, 0)).row()
                       for r in range(self.proxy.rowCount())]
        base = len(self.model.columns)
        out = []
        for r in sources:
            row = tuple(self.model.row_values(r))
            if len(columns) > base:
                row += tuple(self.model.data(self.model.index(r, c), SORT_ROLE)
                             for c in range(base, len(columns)))
            out.append(row)
        return [c.title for c in columns], out

    def copy_selection(self) -> None:
        """The selected rows (with a header line) as tab-separated text on the clipboard."""
        titles, rows = self.table_rows(selected=True)
        if rows:
            QApplication.clipboard().setText(rows_tsv(titles, rows, self.model.all_columns()))

    def set_library_what(self, what: str) -> None:
        """What *Add to primer library* takes from a row ('' : the family's rows hold no primer)."""
        self.library_what = what

    def context_menu(self) -> QMenu:
        """Copy or export the selected rows, or add the primers they hold to the library."""
        menu = QMenu(self)
        count = len(self.view.selectionModel().selectedRows())
        rows = f"{count:,} row{'s' if count != 1 else ''}"
        copy = menu.addAction(f"Copy {rows}", self.copy_selection)
        copy.setShortcut(QKeySequence.StandardKey.Copy)
        export = menu.addAction("Export selected rows as CSV…", self.export_selection_requested.emit)
        menu.addSeparator()
        add = menu.addAction(f"Add {rows} to the primer library", self.library_add_requested.emit)
        add.setToolTip(f"Adds the {self.library_what} of the selected rows" if self.library_what
                       else "These rows hold no primer sequence")
        menu.setToolTipsVisible(True)
        copy.setEnabled(count > 0)
        export.setEnabled(count > 0)
        add.setEnabled(count > 0 and bool(self.library_what))
        return menu

    def _context_menu(self, pos) -> None:
        self.context_menu().exec(self.view.viewport().mapToGlobal(pos))

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

