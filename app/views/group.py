"""The Group page: primer pairs that amplify every genome of a group and nothing outside it.

Top, the two sets (inclusion: the group to detect; exclusion: the backgrounds no primer may
come within k edits of), each a list of files and genome stores (*Add…*, drag and drop,
*Remove*), and the parameters of ``primerscope group``. *Find group pairs* runs
:func:`app.group.group_run` on the page's own worker runner; *Cancel* keeps the pairs
verified so far. Below: the ranked pairs, the coverage matrix (each inclusion genome ×
each pair: the product's size, or missing) and the conservation track along the reference
with the chosen pair drawn on it. *Export* writes the command line's CSV, JSON and BED;
*Add to library* keeps the chosen pairs' primers.
"""

from __future__ import annotations

import os

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QAbstractTableModel, QItemSelectionModel, QModelIndex, Qt, Signal
from PySide6.QtGui import QBrush, QColor, QFont, QPen
from PySide6.QtWidgets import (QAbstractItemView, QComboBox, QDoubleSpinBox, QFileDialog, QFrame,
                               QGridLayout, QHBoxLayout, QHeaderView, QLabel, QLineEdit,
                               QListWidget, QListWidgetItem, QMenu, QProgressBar, QPushButton,
                               QScrollArea, QSpinBox, QSplitter, QStackedWidget, QStyle,
                               QStyledItemDelegate,
                               QStyleOptionViewItem, QTableView, QToolButton, QVBoxLayout,
                               QWidget)

from engine.jobs import Progress

from app import group
from app.inputs import FILE_FILTER
from app.primers import short_id
from app.settings import load_json, save_json
from app.table import ResultsFilter, ResultsModel, table_view
from app.views import ResultView
from app.views.plotting import BLUE, GREEN, GREY, PURPLE, RED

SETTINGS_KEY = "group/page"
#: The page's fields and their defaults (``primerscope group``'s).
DEFAULTS = {"k": 3, "include_edits": 1, "include_3prime_exact": 3, "min_coverage": 1.0,
            "product_size": "100-300", "num_return": 10}
#: The track before a run's seeds are counted.
TRACK_IDLE = "No run yet: the reference's conservation and the chosen pair appear here."
TRACK_RUNNING = ("Counting the seeds the inclusion genomes share: the conservation along the "
                 "reference appears here next.")
#: A missing product in the coverage matrix: a pale grey cell with a red cross.
MISSING_BACKGROUND = QColor(236, 236, 236)
MISSING_TEXT = QColor(RED)
#: Product sizes from the smallest to the largest of the size range: light to dark blue.
SIZE_MAP = pg.ColorMap([0.0, 1.0], [(222, 235, 247), (33, 113, 181)])


def _spin(lo: int, hi: int, tip: str) -> QSpinBox:
    box = QSpinBox()
    box.setRange(lo, hi)
    box.setKeyboardTracking(False)
    box.setToolTip(tip)
    return box


class _DropList(QListWidget):
    """A list that takes files dropped on it (``dropped(paths)``)."""

    dropped = Signal(list)

    def __init__(self):
        super().__init__()
        self.setAcceptDrops(True)
        self.setDragDropMode(QAbstractItemView.DragDropMode.DropOnly)
        self.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)

    def dragEnterEvent(self, event) -> None:
        if event.mimeData().hasUrls():
            event.acceptProposedAction()
        else:
            super().dragEnterEvent(event)

    def dragMoveEvent(self, event) -> None:
        if event.mimeData().hasUrls():
            event.acceptProposedAction()
        else:
            super().dragMoveEvent(event)

    def dropEvent(self, event) -> None:
        paths = [url.toLocalFile() for url in event.mimeData().urls() if url.isLocalFile()]
        if paths:
            event.acceptProposedAction()
            self.dropped.emit(paths)


class GenomeList(QWidget):
    """One set of genomes: files or stores, one genome each (a draft's contigs are one genome).

    ``changed`` when the list changes; ``ask_files()`` (the window's file dialog) gives the
    paths *Add…* adds."""

    changed = Signal()

    def __init__(self, title: str, tip: str, ask_files=None):
        super().__init__()
        self._ask_files = ask_files
        self.title = QLabel(f"<b>{title}</b>")
        self.title.setToolTip(tip)
        self.title.setWordWrap(True)  # (the page fits beside the left panel on other tabs)
        self.list = _DropList()
        self.list.setToolTip(tip + " Drop files here, or Add….")
        self.list.dropped.connect(self.add_paths)
        self.list.itemSelectionChanged.connect(self._update_buttons)
        self.add_button = QPushButton("Add…")
        self.add_button.setToolTip("Add sequence files or genome stores (.psg): one genome each")
        self.add_button.clicked.connect(self.add_dialog)
        self.remove_button = QPushButton("Remove")
        self.remove_button.setToolTip("Remove the selected genomes from the list")
        self.remove_button.clicked.connect(self.remove_selected)
        head = QHBoxLayout()
        head.addWidget(self.title, 1)
        head.addWidget(self.add_button)
        head.addWidget(self.remove_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addLayout(head)
        layout.addWidget(self.list, 1)
        self._update_buttons()

    def paths(self) -> list[str]:
        return [self.list.item(i).data(Qt.ItemDataRole.UserRole) for i in range(self.list.count())]

    def names(self) -> list[str]:
        from engine.primers.group import genome_name

        return [genome_name(p) for p in self.paths()]

    def add_paths(self, paths) -> int:
        """Add files not listed yet; returns how many were added."""
        from engine.primers.group import genome_name

        have = set(self.paths())
        added = 0
        for path in paths:
            path = os.path.abspath(path)
            if path in have:
                continue
            have.add(path)
            item = QListWidgetItem(genome_name(path))
            item.setData(Qt.ItemDataRole.UserRole, path)
            item.setToolTip(path)
            self.list.addItem(item)
            added += 1
        if added:
            self.changed.emit()
        self._update_buttons()
        return added

    def set_paths(self, paths) -> None:
        self.list.clear()
        self.add_paths(paths)
        self.changed.emit()

    def remove_selected(self) -> None:
        rows = sorted((self.list.row(i) for i in self.list.selectedItems()), reverse=True)
        for row in rows:
            self.list.takeItem(row)
        if rows:
            self.changed.emit()
        self._update_buttons()

    def add_dialog(self) -> None:
        paths = self._ask_files() if self._ask_files is not None else []
        if paths:
            self.add_paths(paths)

    def _update_buttons(self) -> None:
        self.remove_button.setEnabled(bool(self.list.selectedItems()))


class CoverageModel(QAbstractTableModel):
    """The coverage matrix: a row per inclusion genome, a column per pair (its rank); a cell
    holds the product's size in that genome, coloured by where it lies in the size range,
    or a red cross on grey where the pair gives no product there."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.result = None

    def set_result(self, result) -> None:
        self.beginResetModel()
        self.result = result
        self.endResetModel()

    def rowCount(self, parent=QModelIndex()) -> int:
        return 0 if self.result is None or parent.isValid() else len(self.result.genomes)

    def columnCount(self, parent=QModelIndex()) -> int:
        return 0 if self.result is None or parent.isValid() else len(self.result.pairs)

    def product(self, row: int, col: int):
        return self.result.pairs[col].products[row]

    def data(self, index, role=Qt.ItemDataRole.DisplayRole):
        if not index.isValid() or self.result is None:
            return None
        product = self.product(index.row(), index.column())
        if role == Qt.ItemDataRole.DisplayRole:
            return "✗" if product is None else str(product.size)
        if role == Qt.ItemDataRole.BackgroundRole:
            if product is None:
                return QBrush(MISSING_BACKGROUND)
            fraction = group.size_fraction(product.size, self.result.settings.product_size)
            return QBrush(SIZE_MAP.map(fraction, mode="qcolor"))
        if role == Qt.ItemDataRole.ForegroundRole:
            if product is None:
                return QBrush(MISSING_TEXT)
            fraction = group.size_fraction(product.size, self.result.settings.product_size)
            return QBrush(QColor("white" if fraction > 0.55 else "black"))
        if role == Qt.ItemDataRole.ToolTipRole:
            return (f"Pair {index.column() + 1} in "
                    + group.product_text(self.result.genomes[index.row()], product))
        if role == Qt.ItemDataRole.TextAlignmentRole:
            return int(Qt.AlignmentFlag.AlignCenter)
        if role == Qt.ItemDataRole.FontRole and product is None:
            font = QFont()
            font.setBold(True)
            return font
        return None

    def headerData(self, section, orientation, role=Qt.ItemDataRole.DisplayRole):
        if self.result is None:
            return None
        if orientation == Qt.Orientation.Horizontal:
            pair = self.result.pairs[section] if section < len(self.result.pairs) else None
            if role == Qt.ItemDataRole.DisplayRole:
                return str(section + 1)
            if role == Qt.ItemDataRole.ToolTipRole and pair is not None:
                return (f"Pair {section + 1}: {pair.left.sequence} + {pair.right.sequence}, "
                        f"coverage {pair.coverage:.0%}")
        else:
            name = self.result.genomes[section] if section < len(self.result.genomes) else ""
            if role == Qt.ItemDataRole.DisplayRole:
                return name + (" (ref.)" if name == self.result.reference else "")
            if role == Qt.ItemDataRole.ToolTipRole:
                covered = sum(p.products[section] is not None for p in self.result.pairs)
                return f"{name}: a product of {covered} of {len(self.result.pairs)} pairs"
        return None


class _PositionAxis(pg.AxisItem):
    """Positions along a genome as bases with thousands separators (pyqtgraph writes a
    5 Mb record's ticks as 1e+06, 2e+06, ...)."""

    def tickStrings(self, values, scale, spacing):
        return [f"{v * scale:,.0f}" for v in values]


class _FillLayout(QVBoxLayout):
    """The page's layout inside its scroll area: it fills the room it is given and scrolls
    only below its minimum (word-wrapped labels would make the scroll area size it by their
    height for its width, from the tables' and the plot's preferred heights: a scroll bar)."""

    def hasHeightForWidth(self) -> bool:
        return False


class _FramedSelection(QStyledItemDelegate):
    """Cells keep their colour when selected (it is the product size): the chosen pair's
    column is framed instead of painted over."""

    def paint(self, painter, option, index) -> None:
        selected = bool(option.state & QStyle.StateFlag.State_Selected)
        plain = QStyleOptionViewItem(option)
        plain.state &= ~QStyle.StateFlag.State_Selected
        super().paint(painter, plain, index)
        if selected:
            painter.save()
            painter.setPen(QPen(QColor(RED), 2))
            painter.drawRect(option.rect.adjusted(1, 1, -1, -1))
            painter.restore()


class GroupView(ResultView):
    """Signals ``designed(result)`` when a run ends, ``running_changed`` when one starts, ends
    or is being cancelled, ``library_add_requested(entries, source, links)`` and
    ``save_requested(text, title, name, pattern)`` (the window writes the file).

    ``ask_files(title)`` opens the window's file dialog; ``pair_settings()`` gives Primer3's
    settings (None: ``primerscope group``'s defaults); ``job_options()`` the backend and
    threads of the run panel ({} for the engine's choice)."""

    title = "Group"
    #: The toolbar's Run and Cancel run and cancel this page's job while it is shown.
    runs_own_job = True
    designed = Signal(object)
    #: The run started, ended or is being cancelled (the window's Run/Cancel follow it).
    running_changed = Signal()
    library_add_requested = Signal(object, str, object)
    save_requested = Signal(str, str, str, str)

    def __init__(self, settings=None, ask_files=None, pair_settings=None, job_options=None):
        super().__init__()
        from app.worker import JobRunner

        self._settings = settings
        self._ask_files = ask_files or (lambda title: [])
        self._pair_settings = pair_settings or (lambda: None)
        self._job_options = job_options or (lambda: {})
        self.result = None
        self.job = None
        self._shown = None  # (pairs, conservation records) of the result shown
        self._curve_key = None
        self._selected = None
        self._run_state = None  # (running, cancellable) last signalled by running_changed
        self._build_inputs()
        self._build_controls()
        self._build_results()
        self._build_track()
        body = QSplitter(Qt.Orientation.Vertical)
        body.addWidget(self.upper)
        body.addWidget(self.track)
        body.setStretchFactor(0, 3)
        body.setStretchFactor(1, 2)
        body.setChildrenCollapsible(False)
        body.setSizes([300, 200])
        self.body = body
        content = QWidget()
        layout = _FillLayout(content)
        layout.setContentsMargins(4, 4, 4, 0)
        layout.setSpacing(3)
        layout.addLayout(self.inputs_row)
        layout.addLayout(self.run_row)
        layout.addWidget(self.error)
        layout.addWidget(body, 1)
        # The tabs share one stack, as large as its largest page: in a scroll area this page
        # never makes the other tabs (and the table under them) larger than they need.
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setWidget(content)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.addWidget(scroll)
        self.scroll = scroll
        self.runner = JobRunner(self)
        self.runner.progress.connect(self._on_progress)
        self.runner.finished.connect(self._on_finished)
        self.runner.failed.connect(self._on_failed)
        saved = load_json(settings, SETTINGS_KEY, {}) if settings is not None else {}
        self._on_lists_changed()
        self.set_values(saved if isinstance(saved, dict) else {})
        self._update_buttons()

    # -- building ----------------------------------------------------------------------------------
    def _build_inputs(self) -> None:
        self.include = GenomeList(
            "Inclusion genomes (the group)",
            "The genomes every pair must amplify: at least two; each a file or a store, a draft's "
            "contigs are one genome (a product never spans two contigs).",
            lambda: self._ask_files("Add inclusion genomes"))
        self.exclude = GenomeList(
            "Exclusion genomes (backgrounds)",
            "Near relatives and hosts: each primer must be at least k edits from every substring "
            "of every one of them, on both strands.",
            lambda: self._ask_files("Add exclusion genomes"))
        self.include.changed.connect(self._on_lists_changed)
        self.exclude.changed.connect(self._on_lists_changed)
        self.k = _spin(1, 20, "Exclusion margin k: each primer is at least k edits (substitutions "
                              "and indels) from every substring of every exclusion genome")
        self.include_edits = _spin(0, 10, "Inclusion tolerance J: each primer may bind an "
                                          "inclusion genome with up to J edits (default 1)")
        self.three_prime = _spin(0, 15, "The 3′-most bases of each primer that must match an "
                                        "inclusion genome exactly (default 3)")
        self.min_coverage = QDoubleSpinBox()
        self.min_coverage.setRange(1, 100)
        self.min_coverage.setDecimals(0)
        self.min_coverage.setSuffix(" %")
        self.min_coverage.setKeyboardTracking(False)
        self.min_coverage.setToolTip("Least share of the inclusion genomes a pair must give a "
                                     "product in (100 %: every genome)")
        self.product_size = QLineEdit()
        self.product_size.setMaximumWidth(90)
        self.product_size.setToolTip("Product size range in bp, A-B, in every inclusion genome")
        self.num_return = _spin(1, 1000, "How many pairs to return, best first")
        self.reference = QComboBox()
        self.reference.setToolTip("The inclusion genome pairs are designed and ranked on (Primer3's "
                                  "penalty) and whose coordinates the pairs and the BED use")
        self.reference.setMinimumContentsLength(12)
        self.reference.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        params = QGridLayout()
        params.setHorizontalSpacing(6)
        params.setVerticalSpacing(2)
        cells = (("k (exclusion)", self.k), ("J (inclusion)", self.include_edits),
                 ("3′ exact", self.three_prime), ("Coverage ≥", self.min_coverage),
                 ("Product (bp)", self.product_size), ("Pairs", self.num_return))
        for box in (self.k, self.include_edits, self.three_prime, self.min_coverage,
                    self.num_return):
            box.setMaximumWidth(70)
        for i, (text, widget) in enumerate(cells):
            label = QLabel(text)
            label.setToolTip(widget.toolTip())
            params.addWidget(label, i // 2, 2 * (i % 2))
            params.addWidget(widget, i // 2, 2 * (i % 2) + 1)
        params.addWidget(QLabel("Reference"), 3, 0)
        params.addWidget(self.reference, 3, 1, 1, 3)
        self.params_box = QWidget()
        self.params_box.setLayout(params)
        self.inputs_row = QHBoxLayout()
        self.inputs_row.addWidget(self.include, 3)
        self.inputs_row.addWidget(self.exclude, 3)
        self.inputs_row.addWidget(self.params_box, 0)
        for lst in (self.include, self.exclude):
            lst.list.setMinimumHeight(72)
            lst.list.setMaximumHeight(96)

    def _build_controls(self) -> None:
        self.run_button = QPushButton("Find group pairs")
        self.run_button.setToolTip("Find pairs that amplify the inclusion genomes and stay k edits "
                                   "from every exclusion genome (as primerscope group)")
        self.run_button.clicked.connect(lambda: self.run())
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setToolTip("Stop; the pairs verified so far are kept")
        self.cancel_button.clicked.connect(self.cancel)
        self.progress = QProgressBar()
        self.progress.setRange(0, 1000)
        self.progress.setFixedWidth(110)
        self.progress.setFormat("")
        self.status = QLabel("Add at least two inclusion genomes and the exclusion genomes, then "
                             "Find group pairs (or Demo ▸ Group: Klebsiella pneumoniae vs E. coli).")
        self.status.setWordWrap(True)
        self.add_button = QPushButton("Add to library")
        self.add_button.setToolTip("Add the primers of the selected pairs (all, when none is "
                                   "selected) to the primer library")
        self.add_button.clicked.connect(lambda: self.add_to_library())
        self.export_button = QToolButton()
        self.export_button.setText("Export")
        self.export_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        menu = QMenu(self.export_button)
        menu.addAction("Pairs as CSV (as primerscope group -o)…", lambda: self.export("csv"))
        menu.addAction("Pairs as JSON (as primerscope group --json)…", lambda: self.export("json"))
        menu.addAction("Amplicons as BED (reference coordinates)…", lambda: self.export("bed"))
        self.export_button.setMenu(menu)
        self.run_row = QHBoxLayout()
        for widget in (self.run_button, self.cancel_button, self.progress):
            self.run_row.addWidget(widget)
        self.run_row.addWidget(self.status, 1)
        self.run_row.addWidget(self.export_button)
        self.run_row.addWidget(self.add_button)
        self.error = QLabel()
        self.error.setObjectName("error")
        self.error.setWordWrap(True)
        self.error.setVisible(False)

    def _build_results(self) -> None:
        self.model = ResultsModel(self)
        self.model.set_columns(group.PAIR_COLUMNS)
        self.proxy = ResultsFilter(self)
        self.table = table_view(self.model, self.proxy)
        header = self.table.horizontalHeader()
        for col, column in enumerate(group.PAIR_COLUMNS):
            header.resizeSection(col, 180 if column.title in ("forward", "reverse") else
                                 120 if column.title == "missing in" else
                                 80 if column.kind == "str" else 62)
        self.table.selectionModel().currentRowChanged.connect(self._on_current_changed)
        self.coverage = CoverageModel(self)
        self.matrix = QTableView()
        self.matrix.setModel(self.coverage)
        self.matrix.setItemDelegate(_FramedSelection(self.matrix))
        self.matrix.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectColumns)
        self.matrix.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.matrix.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.matrix.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        self.matrix.horizontalHeader().setDefaultSectionSize(44)
        self.matrix.verticalHeader().setDefaultSectionSize(20)
        self.matrix.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        self.matrix.selectionModel().currentColumnChanged.connect(self._on_matrix_column)
        self.matrix_label = QLabel()
        self.matrix_label.setWordWrap(True)
        self._matrix_caption()
        right = QWidget()
        layout = QVBoxLayout(right)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addWidget(self.matrix_label)
        layout.addWidget(self.matrix, 1)
        upper = QSplitter(Qt.Orientation.Horizontal)
        upper.addWidget(self.table)
        upper.addWidget(right)
        upper.setStretchFactor(0, 3)
        upper.setStretchFactor(1, 2)
        upper.setChildrenCollapsible(False)
        upper.setSizes([700, 500])
        self.upper = upper

    def _build_track(self) -> None:
        self.widget = pg.PlotWidget(axisItems={"bottom": _PositionAxis("bottom")})
        plot = self.plot = self.widget.getPlotItem()
        plot.setMenuEnabled(False)
        plot.setLabel("bottom", "position in the reference record (1-based)")
        plot.setLabel("left", "conserved")
        plot.showGrid(x=True, y=True, alpha=0.15)
        plot.setClipToView(True)
        plot.setDownsampling(auto=True, mode="peak")
        plot.setYRange(0, 1.22, padding=0)
        plot.getAxis("left").setTicks([[(0, "0"), (0.5, "½"), (1, "all")]])
        self.curve = plot.plot(pen=pg.mkPen(BLUE, width=1), fillLevel=0,
                               brush=pg.mkBrush(0, 114, 178, 60))
        self.amplicon = pg.LinearRegionItem((0, 1), orientation="vertical", movable=False,
                                            brush=pg.mkBrush(0, 158, 115, 70),
                                            pen=pg.mkPen(GREEN, width=1))
        self.amplicon.setZValue(-10)
        self.amplicon.setVisible(False)
        plot.addItem(self.amplicon)
        self.others = pg.ScatterPlotItem(size=7, symbol="t", pen=pg.mkPen(GREY),
                                         brush=pg.mkBrush(255, 255, 255, 220))
        self.others.sigClicked.connect(self._on_point_clicked)
        plot.addItem(self.others)
        self.f_site = plot.plot(pen=pg.mkPen(RED, width=6))
        self.r_site = plot.plot(pen=pg.mkPen(PURPLE, width=6))
        paper = pg.mkBrush(255, 255, 255, 220)
        self.f_label = pg.TextItem("F", color=RED, anchor=(1, 0.5), fill=paper)
        self.r_label = pg.TextItem("R", color=PURPLE, anchor=(0, 0.5), fill=paper)
        for item in (self.f_label, self.r_label):
            item.setVisible(False)
            plot.addItem(item)
        self.record_combo = QComboBox()
        self.record_combo.setToolTip("Reference record shown")
        self.record_combo.currentIndexChanged.connect(lambda _: self._draw_track())
        self.record_combo.setVisible(False)
        self.whole_button = QPushButton("Whole record")
        self.whole_button.setToolTip("Show the whole reference record (a chosen pair zooms to it)")
        self.whole_button.clicked.connect(self.show_whole)
        self.caption = QLabel()
        self.caption.setWordWrap(True)
        head = QHBoxLayout()
        head.addWidget(self.caption, 1)
        head.addWidget(self.record_combo)
        head.addWidget(self.whole_button)
        self.track = QWidget()
        layout = QVBoxLayout(self.track)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addLayout(head)
        # Before a run the plot would show bare placeholder axes: a note instead.
        self.track_empty = QLabel(TRACK_IDLE)
        self.track_empty.setObjectName("empty")
        self.track_empty.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.track_stack = QStackedWidget()
        self.track_stack.addWidget(self.track_empty)
        self.track_stack.addWidget(self.widget)
        layout.addWidget(self.track_stack, 1)
        self.widget.setMinimumHeight(110)
        self._caption_idle()
        self.whole_button.setEnabled(False)

    # -- fields ------------------------------------------------------------------------------------
    def values(self) -> dict:
        return {"k": self.k.value(), "include_edits": self.include_edits.value(),
                "include_3prime_exact": self.three_prime.value(),
                "min_coverage": round(self.min_coverage.value() / 100, 4),
                "product_size": self.product_size.text().strip(),
                "num_return": self.num_return.value(),
                "reference": self.reference.currentData() or "",
                "include": self.include.paths(), "exclude": self.exclude.paths()}

    def set_values(self, values: dict) -> None:
        v = dict(DEFAULTS)
        v.update({key: value for key, value in (values or {}).items() if key in DEFAULTS
                  and isinstance(value, (type(DEFAULTS[key]), int))
                  and not isinstance(value, bool)})
        for box, key in ((self.k, "k"), (self.include_edits, "include_edits"),
                         (self.three_prime, "include_3prime_exact"),
                         (self.num_return, "num_return")):
            box.setValue(int(v[key]))
        self.min_coverage.setValue(100 * float(v["min_coverage"]))
        self.product_size.setText(str(v["product_size"]))
        for lst, key in ((self.include, "include"), (self.exclude, "exclude")):
            paths = (values or {}).get(key)
            if isinstance(paths, list):
                lst.set_paths([p for p in paths if isinstance(p, str) and os.path.exists(p)])
        reference = (values or {}).get("reference")
        if isinstance(reference, str):
            index = self.reference.findData(reference)
            if index >= 0:
                self.reference.setCurrentIndex(index)

    def workspace_state(self) -> dict:
        """What File ▸ Save workspace keeps of the page: its lists and fields."""
        return self.values()

    def restore_workspace(self, state) -> list[str]:
        """A saved workspace's lists and fields; returns what could not be restored (files
        that are gone: the lists keep the others, and the page says which are missing)."""
        if not isinstance(state, dict):
            return ["the Group page's fields are not readable"]
        if self.runner.running:
            return ["the Group page was running: its lists and fields were left as they were"]
        missing = [p for key in ("include", "exclude") if isinstance(state.get(key), list)
                   for p in state[key] if isinstance(p, str) and not os.path.exists(p)]
        self.set_values(state)
        if not missing:
            self.error.setVisible(False)
            return []
        problem = "Group page: missing " + ", ".join(missing)
        self._show_error(f"Not found, so not in the lists (from the workspace): "
                         f"{', '.join(missing)}.")
        return [problem]

    def _on_lists_changed(self) -> None:
        """The reference combo offers the inclusion genomes (first: the engine's default)."""
        current = self.reference.currentData()
        self.reference.blockSignals(True)
        self.reference.clear()
        names = self.include.names()
        self.reference.addItem(f"first ({names[0]})" if names else "first inclusion genome", "")
        for name in names:
            self.reference.addItem(name, name)
        index = self.reference.findData(current) if current else 0
        self.reference.setCurrentIndex(max(0, index))
        self.reference.blockSignals(False)
        self._update_buttons()

    def load_demo(self, asked: bool = True) -> bool:
        """The Klebsiella demo into the lists (app.group_demo), or one line saying what is
        missing and how to build it: an error when ``asked`` (Demo ▸ Group), else the
        page's status (``primerscope gui --demo`` loads it when it is there). True when
        loaded."""
        from app import group_demo

        found = group_demo.inputs()
        if found is None:
            if asked:
                self._show_error(group_demo.status())
            else:
                self.status.setText(group_demo.status())
            return False
        include, exclude = found
        self.error.setVisible(False)
        self.include.set_paths(include)
        self.exclude.set_paths(exclude)
        self.set_values({"k": 3, "include_edits": 1, "include_3prime_exact": 3,
                         "min_coverage": 1.0, "product_size": "100-300", "num_return": 10})
        self.status.setText(f"Demo loaded: {len(include)} Klebsiella genomes against "
                            f"{len(exclude)} E. coli genomes. Press Find group pairs (or Run, "
                            "Ctrl+R): a long run on a small machine (minutes of seeds, then "
                            "Primer3 in every conserved window); Cancel keeps the pairs "
                            "verified so far.")
        return True

    # -- running -----------------------------------------------------------------------------------
    def run(self) -> bool:
        """Start a group run on the lists and fields; False (and why) if it could not start."""
        if self.runner.running:
            return False
        values = self.values()
        include, exclude = values["include"], values["exclude"]
        if len(include) < 2:
            self._show_error("Inclusion genomes: add at least two (Add…, or drop files on the list).")
            return False
        if not exclude:
            self._show_error("Exclusion genomes: add at least one background (Add…, or drop files "
                             "on the list).")
            return False
        try:
            settings = group.settings_from(values, self._pair_settings())
        except ValueError as err:
            self._show_error(str(err))
            return False
        if self._settings is not None:
            save_json(self._settings, SETTINGS_KEY, values)
        k = values["k"]
        options = dict(self._job_options())
        self.error.setVisible(False)
        self.status.setText(f"Reading {len(include)} inclusion and {len(exclude)} exclusion "
                            "genomes…")
        self.progress.setRange(0, 0)
        self._shown = None
        self.track_empty.setText(TRACK_RUNNING)

        def work(token):
            return (yield from group.group_run(include, exclude, k, settings,
                                               options.get("threads"), token,
                                               options.get("backend")))

        self.runner.start(work)
        self._update_buttons()
        return True

    def cancel(self) -> None:
        if self.runner.running:
            self.runner.cancel()
            self.status.setText("Cancelling… (the pairs verified so far are kept)")
            self._update_buttons()

    def _on_progress(self, item) -> None:
        if isinstance(item, group.GroupStarted):
            self.job = item.job
            self.status.setText("Finding group pairs…")
            return
        if not isinstance(item, Progress):
            return
        if item.phase == "compiling":
            self.progress.setRange(0, 0)
            self.status.setText("Compiling kernels… (first run only; cached on disk afterwards)")
            return
        self.progress.setRange(0, 1000)
        self.progress.setValue(int(1000 * item.fraction))
        self.progress.setFormat(f"{100 * item.fraction:.0f}%")
        cancelling = self.runner.cancel_token is not None and self.runner.cancel_token.cancelled
        if not cancelling:
            what = item.message or "finding group pairs"
            self.status.setText(f"{what[0].upper()}{what[1:]}…")
        from engine.primers.group import GroupResult

        partial = item.partial  # (a stage's own Progress carries its own partial: not shown)
        if isinstance(partial, GroupResult) and self._shown_key(partial) != self._shown:
            # the conservation track once the seeds are counted (Primer3 then takes long),
            # then the pairs verified so far, as they come
            self.show_group(partial)

    def _on_finished(self, result) -> None:
        self.progress.setRange(0, 1000)
        self.progress.setValue(0)
        self.progress.setFormat("")
        self.show_group(result)
        self._update_buttons()
        self.designed.emit(result)

    def _on_failed(self, message: str) -> None:
        self.progress.setRange(0, 1000)
        self.progress.setValue(0)
        self.status.setText("The group run failed.")
        self.track_empty.setText(TRACK_IDLE)
        self._show_error(message)
        self._update_buttons()

    # -- showing -----------------------------------------------------------------------------------
    def show_group(self, result) -> None:
        """Show a GroupResult (a partial one while running): table, matrix, track, status.

        Not ResultView.show_result: the window hands that every kdiff run's result, and this
        page shows only its own runs."""
        self.result = result
        self._shown = self._shown_key(result)
        self._selected = None
        rows = group.pair_rows(result)
        self.model.replace(list(result.pairs), lambda _: rows)
        self.table.setColumnHidden(group.PAIR_COLUMNS.index(
            next(c for c in group.PAIR_COLUMNS if c.title == "record")),
            len({p.record for p in result.pairs}) <= 1)
        self.coverage.set_result(result)
        self.matrix.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self._matrix_caption()
        records = list(result.conservation) or sorted({p.record for p in result.pairs})
        self.record_combo.blockSignals(True)
        self.record_combo.clear()
        for rid in records:
            self.record_combo.addItem(short_id(rid), rid)
        self.record_combo.blockSignals(False)
        self.record_combo.setVisible(len(records) > 1)
        self._draw_track()
        self.show_whole()
        if result.complete or not self.runner.running:
            self.status.setText(group.summary(result))
        if result.pairs:
            self.table.selectionModel().setCurrentIndex(
                self.proxy.index(0, 0), QItemSelectionModel.SelectionFlag.ClearAndSelect
                | QItemSelectionModel.SelectionFlag.Rows)
        self._update_buttons()

    @staticmethod
    def _shown_key(result) -> tuple[int, int]:
        return len(result.pairs), len(result.conservation)

    def _matrix_caption(self) -> None:
        result = self.result
        if result is None or not result.pairs:
            self.matrix_label.setText("Coverage: each inclusion genome (rows) × each pair (columns, "
                                      "by rank): the product's size, or a red ✗ where it has none.")
            return
        lo, hi = result.settings.product_size
        light, dark = (SIZE_MAP.map(x, mode="qcolor").name() for x in (0.0, 1.0))
        missing = sum(q is None for p in result.pairs for q in p.products)
        self.matrix_label.setText(
            f"Coverage (genomes × pairs): product size, <span style='background:{light}'>"
            f"&nbsp;{lo}&nbsp;</span>…<span style='background:{dark};color:white'>&nbsp;{hi}"
            f"&nbsp;</span> bp; <b style='color:{MISSING_TEXT.name()}'>✗</b> no product "
            f"({missing} of {len(result.pairs) * len(result.genomes)} cells).")

    def current_record(self) -> str | None:
        return self.record_combo.currentData() if self.record_combo.count() else None

    def _caption_idle(self) -> None:
        self.caption.setText("Conservation along the reference: the share of inclusion genomes "
                             "that share it, with the chosen pair's primers and product.")

    def _draw_track(self) -> None:
        record = self.current_record()
        result = self.result
        self.track_stack.setCurrentWidget(self.track_empty if record is None else self.widget)
        self.whole_button.setEnabled(record is not None)
        values = None if result is None or record is None else result.conservation.get(record)
        key = (record, id(values))
        if key != self._curve_key:  # (a genome's track is millions of points: drawn once)
            self._curve_key = key
            if values is not None and len(values):
                self.curve.setData(np.arange(1, len(values) + 1, dtype=np.float32), values)
            else:
                self.curve.setData([], [])
        mine = [p for p in result.pairs if p.record == record] if result is not None else []
        self.others.setData([{"pos": ((p.left.start + p.right.end) / 2, 1.15), "data": p}
                             for p in mine])
        if result is not None and record is not None:
            self.caption.setText(
                f"Conservation along {result.reference} {short_id(record)}: share of the "
                f"{len(result.genomes)} inclusion genomes sharing a seed there; ▼ each pair "
                f"(click one); <span style='color:{RED}'>■</span> forward, "
                f"<span style='color:{PURPLE}'>■</span> reverse, "
                f"<span style='color:{GREEN}'>■</span> the chosen pair's product.")
        else:
            self._caption_idle()
        self._draw_selected()

    def _record_length(self, record) -> int:
        values = self.result.conservation.get(record) if self.result is not None else None
        if values is not None and len(values):
            return len(values)
        ends = [p.right.end for p in self.result.pairs if p.record == record] if self.result else []
        return max(ends, default=1)

    def show_whole(self) -> None:
        record = self.current_record()
        if record is None:
            return
        self.plot.setXRange(1, self._record_length(record), padding=0.01)

    def _draw_selected(self) -> None:
        p = self._selected
        shown = p is not None and p.record == self.current_record()
        for item in (self.amplicon, self.f_label, self.r_label):
            item.setVisible(shown)
        if not shown:
            self.f_site.setData([], [])
            self.r_site.setData([], [])
            return
        self.amplicon.setRegion((p.left.start - 0.5, p.right.end + 0.5))
        self.f_site.setData([p.left.start, p.left.end], [1.05, 1.05])
        self.r_site.setData([p.right.start, p.right.end], [1.05, 1.05])
        self.f_label.setText(f"F {p.left.start:,} →")
        self.r_label.setText(f"← R {p.right.end:,}")
        self.f_label.setPos(p.left.start, 1.05)
        self.r_label.setPos(p.right.end, 1.05)

    def _on_point_clicked(self, _item, points, *_) -> None:
        if len(points):
            self.select_pair(points[0].data())

    def select_pair(self, pair) -> bool:
        """Select a pair in the table (as clicking its row does)."""
        row = self.model.row_of(pair)
        if row < 0:
            return False
        index = self.proxy.mapFromSource(self.model.index(row, 0))
        self.table.selectionModel().setCurrentIndex(
            index, QItemSelectionModel.SelectionFlag.ClearAndSelect
            | QItemSelectionModel.SelectionFlag.Rows)
        self.table.scrollTo(index)
        return True

    def _on_current_changed(self, current, _previous) -> None:
        if current.isValid():
            self.show_pair(self.model.item(self.proxy.mapToSource(current).row()))

    def _on_matrix_column(self, current, _previous) -> None:
        if current.isValid() and self.result is not None and current.column() < len(self.result.pairs):
            pair = self.result.pairs[current.column()]
            if pair is not self._selected:
                self.select_pair(pair)

    def show_pair(self, pair) -> None:
        """The pair on the track (zoomed to its product, with context) and in the matrix."""
        self._selected = pair
        if pair.record != self.current_record():
            index = self.record_combo.findData(pair.record)
            if index >= 0:
                self.record_combo.setCurrentIndex(index)
        self._draw_selected()
        size = pair.right.end - pair.left.start + 1
        self.plot.setXRange(max(1, pair.left.start - 4 * size), pair.right.end + 4 * size,
                            padding=0)
        col = self.result.pairs.index(pair) if self.result is not None else -1
        if col >= 0 and self.matrix.currentIndex().column() != col:
            self.matrix.selectionModel().setCurrentIndex(
                self.coverage.index(0, col), QItemSelectionModel.SelectionFlag.ClearAndSelect
                | QItemSelectionModel.SelectionFlag.Columns)

    # -- exports and the library -------------------------------------------------------------------
    def chosen_pairs(self) -> list:
        """The selected pairs, or every pair when none is selected."""
        rows = sorted({self.proxy.mapToSource(i).row()
                       for i in self.table.selectionModel().selectedRows()})
        if rows:
            return [self.model.item(r) for r in rows]
        return list(self.result.pairs) if self.result is not None else []

    def add_to_library(self) -> bool:
        chosen = self.chosen_pairs()
        if not chosen:
            return False
        self.library_add_requested.emit(group.library_entries(self.result, chosen),
                                        "the Group page", group.library_links(chosen))
        return True

    def export(self, fmt: str) -> None:
        if self.result is None:
            return
        text, title, name, pattern = {
            "csv": (group.csv_text, "Export group pairs as CSV", "group.csv", "CSV files (*.csv)"),
            "json": (group.json_text, "Export group pairs as JSON", "group.json",
                     "JSON files (*.json)"),
            "bed": (group.bed_text, "Export group amplicons as BED", "group.bed",
                    "BED files (*.bed)"),
        }[fmt]
        self.save_requested.emit(text(self.result), title, name, pattern + ";;All files (*)")

    def exportable(self) -> bool:
        """The window's *Export results as CSV* writes this page's pairs (results_csv)."""
        return self.result is not None and bool(self.result.pairs) and not self.runner.running

    def results_csv(self) -> str:
        return group.csv_text(self.result)

    # -- ResultView --------------------------------------------------------------------------------
    def _show_error(self, message: str) -> None:
        self.error.setText(message)
        self.error.setVisible(True)

    def cancellable(self) -> bool:
        """A run is going and has not been asked to stop."""
        token = self.runner.cancel_token
        return self.runner.running and token is not None and not token.cancelled

    def _update_buttons(self) -> None:
        running = self.runner.running
        has = self.result is not None and bool(self.result.pairs)
        self.run_button.setEnabled(not running)
        self.progress.setVisible(running)
        self.cancel_button.setEnabled(self.cancellable())
        for widget in (self.add_button, self.export_button):
            widget.setEnabled(has and not running)
        for widget in (self.include, self.exclude, self.params_box):
            widget.setEnabled(not running)
        state = (running, self.cancellable())
        if state != self._run_state:
            self._run_state = state
            self.running_changed.emit()

    def has_data(self) -> bool:
        return not self.runner.running

    def is_empty(self) -> bool:
        return False  # the page holds its own inputs: it always shows them

    def runners(self) -> list:
        return [self.runner]

    def shutdown(self) -> None:
        """The window closes or changes family: stop the run, and keep the lists and fields
        for the next session (not only those of the last run)."""
        self.runner.shutdown()
        if self._settings is not None:
            save_json(self._settings, SETTINGS_KEY, self.values())


def page(host) -> GroupView:
    """The Group page of a main window ``host``: its file dialog, the Pairs view's Primer3
    settings (conditions, Tm, the primer filters; not its regions, which are the pair design
    target's) and the run panel's threads."""
    import dataclasses

    def ask_files(title: str) -> list[str]:
        start = host.settings.value("last_dir", os.path.expanduser("~"))
        paths, _ = QFileDialog.getOpenFileNames(host, title, start, FILE_FILTER)
        if paths:
            host.settings.setValue("last_dir", os.path.dirname(paths[0]))
        return paths

    def pair_settings():
        from engine.primers.primer3_design import Regions

        pairs_view = host.view_titled("Pairs")
        if pairs_view is None:
            return None
        return dataclasses.replace(pairs_view.design_settings(), regions=Regions())

    def job_options() -> dict:
        return {"threads": host.params.choice().threads}

    # (the window connects the page's files and library signals as it does every view's)
    return GroupView(host.settings, ask_files, pair_settings, job_options)
