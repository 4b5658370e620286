"""The Pairs view: specific primer pairs for the target, designed on the worker thread.

Left, the target as a track: the shortest specific primer at each 5′ end for both
orientations (the kdiff profile pair design uses), the primer lengths Primer3 may choose,
and the selected pair's sites and amplicon; beside it, as a tab, the target's bases
(:class:`app.views.sequence.SequenceView`) with the selected pair's primers on their strands,
every pair's primers as marks to click, the regions, gaps and soft-masked stretches. Right, the pair table (the CSV's rows) and,
for the selected pair, its in-silico PCR products in the background.

*Design pairs* runs :func:`app.pairs.design_run` (``engine.primers.pairs``) on the
inputs, k, variant and backend of the kdiff run panel, on the view's own worker runner
(Primer3 itself in a child process, so the window never waits on it). Primer3 is told
the reaction conditions and the primer filters' bounds shown with the view (Primer3's
defaults while the filters are off), and the regions drawn on the track (*Regions*).
*Cancel* keeps the pairs finished so far, or the previous design's when re-designing.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QItemSelectionModel, Qt, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (QApplication, QCheckBox, QComboBox, QDialog, QDoubleSpinBox,
                               QFormLayout,
                               QHBoxLayout, QLabel, QLineEdit, QMenu, QPlainTextEdit,
                               QProgressBar, QPushButton, QSpinBox, QSplitter, QStackedWidget,
                               QTabWidget,
                               QToolButton, QVBoxLayout, QWidget)

from engine.jobs import Progress

from app import pairs
from app.exports import names_tsv
from app.primers import no_structure, short_id
from app.settings import load_json, save_json
from app.table import ResultsFilter, ResultsModel, table_view
from app.views import ResultView
from app.views.plotting import BLUE, GREEN, GREY, ORANGE, PURPLE, RED, SequenceBand
from app.views.sequence import Mark, SequenceView

SETTINGS_KEY = "pairs/design"
#: The view's fields and their defaults (Primer3's, and the CLI's for the PCR).
DEFAULTS = {"product_ranges": "100-300", "tm_opt": 60.0, "max_tm_diff": 5.0, "num_return": 5,
            "max_edits": 3, "min_three_prime_distance": 3, "avoid_masked": False}
#: Primer3's regions drawn on the track: kind -> (label, colour, the view's values key).
REGION_KINDS = {"amplify": ("amplify", (0, 158, 115), "amplify"),
                "exclude": ("exclude", (213, 94, 0), "exclude"),
                "include": ("include", (0, 114, 178), "include")}
#: Pair table columns hidden at first (the CSV keeps them): the view stays narrow.
HIDDEN = {"F end", "R start", "compl. any Tm (°C)", "compl. 3′ Tm (°C)", "product Tm (°C)",
          "closest record", "closest start", "closest end", "closest F", "closest R"}
#: The pair table's shown order (the CSV's stays): what a person reads first, the two primers
#: with their Tm and the product size, fits 1280 px across without a sideways scroll; the
#: rest follows and scrolls.
FIRST_COLUMNS = ("target", "rank", "product (bp)", "forward", "F Tm (°C)", "reverse", "R Tm (°C)",
                 "off-target", "penalty", "F start", "R end", "F GC %", "R GC %")


#: Dimer Tm columns: Primer3 reports 0 when it finds no structure, and a structure that melts
#: at or below 0 °C does not form in a PCR: both read "none" (the CSV keeps the number).
NO_STRUCTURE_COLUMNS = {"compl. any Tm (°C)", "compl. 3′ Tm (°C)", "dimer Tm (°C)"}


class _DimerModel(ResultsModel):
    """A ResultsModel that shows "none" for a dimer Tm without a dimer (see
    :data:`NO_STRUCTURE_COLUMNS`); sorting and the rows keep the numbers."""

    def data(self, index, role=Qt.ItemDataRole.DisplayRole):
        if role == Qt.ItemDataRole.DisplayRole and index.isValid() \
                and self.columns[index.column()].title in NO_STRUCTURE_COLUMNS:
            if no_structure(self.row_values(index.row())[index.column()]):
                return "none"
        return super().data(index, role)


class _LengthAxis(pg.AxisItem):
    """Primer lengths either side of zero: forward above, reverse (mirrored) below."""

    def tickStrings(self, values, scale, spacing):
        return [f"{abs(v * scale):g}" for v in values]


def _double(lo: float, hi: float, step: float, tip: str) -> QDoubleSpinBox:
    box = QDoubleSpinBox()
    box.setRange(lo, hi)
    box.setSingleStep(step)
    box.setDecimals(1)
    box.setKeyboardTracking(False)
    box.setToolTip(tip)
    return box


def _int(lo: int, hi: int, tip: str) -> QSpinBox:
    box = QSpinBox()
    box.setRange(lo, hi)
    box.setKeyboardTracking(False)
    box.setToolTip(tip)
    return box


class PairsView(ResultView):
    """Signals ``designed(result)`` when a design ends, ``library_add_requested(entries,
    source, links)`` (links: the pairs, by their primers' sequences), ``panel_requested(primers, source)`` and ``save_requested(text, title, name,
    pattern)`` (the window's exports write the file).

    ``job_inputs()`` returns the target, background, k, selection and threads of the kdiff
    panels, or raises ValueError saying what is missing.
    """

    title = "Pairs"
    empty_hint = ("Load a target and a background (File or Demo menu, e.g. Demo ▸ Primer pairs: "
                  "lambda vs E. coli 536) to design specific primer pairs here.")
    designed = Signal(object)
    library_add_requested = Signal(object, str, object)
    panel_requested = Signal(object, str)
    save_requested = Signal(str, str, str, str)

    def __init__(self, job_inputs, settings=None, ask=None, has_inputs=None, primer_settings=None,
                 library_selection=None):
        super().__init__()
        from app.worker import JobRunner

        self._job_inputs = job_inputs
        # () -> (Conditions, Filters or None): the reaction conditions and the primer filters'
        # bounds shown with this view (None: the filters are off, Primer3's defaults apply).
        self._primer_settings = primer_settings or (lambda: (None, None))
        self.region_items: list[tuple[str, pg.LinearRegionItem]] = []
        # () -> [(name, sequence)]: the primers selected in the primer library (Check primers)
        self._library_selection = library_selection or (lambda: [])
        self.check_dialog: CheckDialog | None = None
        self._has_inputs = has_inputs or (lambda: True)
        self._settings = settings
        self._ask = ask or (lambda title, text: True)
        self.result = None
        self.job = None
        self._offsets: dict[str, int] = {}
        self._targets: dict = {}  # id -> the target record designed for (its band)
        self._background = ""
        self._selected = None
        self._build_controls()
        self._build_track()
        self._build_tables()
        # The track and the selected pair's products side by side over the pair table, which
        # gets the whole width: beside the track it hid the reverse primer and the Tm at 1280 px.
        top = QSplitter(Qt.Orientation.Horizontal)
        top.addWidget(self.track)
        top.addWidget(self.products_pane)
        top.setStretchFactor(0, 3)
        top.setStretchFactor(1, 2)
        top.setSizes([510, 340])
        top.setChildrenCollapsible(False)
        self.body = QSplitter(Qt.Orientation.Vertical)
        self.body.addWidget(top)
        self.body.addWidget(self.table)
        self.body.setStretchFactor(0, 3)
        self.body.setStretchFactor(1, 2)
        self.body.setSizes([290, 200])
        self.body.setChildrenCollapsible(False)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 0)
        layout.addLayout(self.controls)
        layout.addWidget(self.error)
        layout.addWidget(self.body, 1)
        self.runner = JobRunner(self)
        self.runner.progress.connect(self._on_progress)
        self.runner.finished.connect(self._on_finished)
        self.runner.failed.connect(self._on_failed)
        self.set_values(load_json(settings, SETTINGS_KEY, {}) if settings is not None else {})
        self._show_regions()
        self._update_buttons()

    # -- building ----------------------------------------------------------------------------------
    def _build_controls(self) -> None:
        self.ranges = QLineEdit()
        self.ranges.setToolTip("Product size ranges in Primer3's syntax, tried in order: a later "
                               "range only fills what the earlier ones left (e.g. 100-300 301-600)")
        self.ranges.setMaximumWidth(130)
        self.tm_opt = _double(0, 120, 0.5, "Optimal primer Tm, °C (Primer3: 60); the lowest and "
                                           "highest are the primer filters' Tm bounds")
        self.tm_diff = _double(0, 100, 0.5, "Largest Tm difference between the two primers, °C "
                                            "(Primer3: 5)")
        self.num_return = _int(1, 1000, "Pairs per target record, best first (Primer3: 5)")
        self.max_edits = _int(0, 10, "In-silico PCR: a primer binds where it matches within this "
                                     "many edits (both strands; 3′ rule: no edit in its last 5 bases)")
        self.distance = _int(-1, 1000, "Two returned pairs share no primer, and their primers' 3′ "
                                       "ends lie at least this many bases apart (Primer3's "
                                       "PRIMER_MIN_THREE_PRIME_DISTANCE); 'shared': pairs may "
                                       "share primers")
        self.distance.setSpecialValueText("shared")
        self.avoid_masked = QCheckBox("Avoid soft-masked 3′ ends")
        self.avoid_masked.setToolTip("Leave out primers whose 3′-most 5 bases touch a soft-masked "
                                     "(lower-case) base of the target, as primerscope pairs "
                                     "--avoid-masked; matching stays case-blind")
        self.regions_button = QToolButton()
        self.regions_button.setText("Regions")
        self.regions_button.setToolTip("Primer3's regions, drawn on the target track: drag a "
                                       "region's edges or body to place it")
        self.regions_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        regions_menu = QMenu(self.regions_button)
        regions_menu.addAction("Add a region to amplify (every product contains it)",
                               lambda: self.add_region("amplify"))
        regions_menu.addAction("Add a region no primer may overlap",
                               lambda: self.add_region("exclude"))
        regions_menu.addAction("Set the region primers and products must lie in",
                               lambda: self.add_region("include"))
        regions_menu.addSeparator()
        regions_menu.addAction("Clear the regions", self.clear_regions)
        self.regions_button.setMenu(regions_menu)
        # The biology of a pair (product size, Tm) sits in the first panel beside k and strands
        # (ParamsPanel.set_biology): the window moves this widget there; alone it is row 1's.
        self.biology = QWidget()
        self.biology.setVisible(False)  # until this view shows (hideEvent)
        biology = QFormLayout(self.biology)
        biology.setContentsMargins(0, 0, 0, 0)
        tm_row = QHBoxLayout()
        for widget in (self.tm_opt, QLabel("°C  ΔTm ≤"), self.tm_diff, QLabel("°C")):
            tm_row.addWidget(widget)
        tm_row.addStretch(1)
        biology.addRow("Product sizes (bp)", self.ranges)
        biology.addRow("Primer Tm opt.", tm_row)
        row1 = QHBoxLayout()
        row1.addWidget(self.biology)
        for widget in (QLabel("Pairs"), self.num_return, QLabel("3′ apart ≥"), self.distance,
                       QLabel("PCR edits ≤"), self.max_edits):
            row1.addWidget(widget)
        row1.addSpacing(12)
        self.used = QLabel()  # what Primer3 is told: the filters' bounds and the conditions
        self.used.setObjectName("help")
        self.used.setWordWrap(True)
        self.regions_label = QLabel()
        self.regions_label.setObjectName("help")
        self.regions_label.setWordWrap(True)

        self.design_button = QPushButton("Design pairs")
        self.design_button.setToolTip("Design specific pairs for the target (the k, variant and "
                                      "backend set on the left): kdiff on both orientations, "
                                      "Primer3's choice, the in-silico PCR of each pair")
        self.design_button.clicked.connect(lambda: self.run())
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setToolTip("Stop the design; the pairs finished so far are kept")
        self.cancel_button.clicked.connect(self.cancel)
        self.progress = QProgressBar()
        self.progress.setRange(0, 1000)
        self.progress.setFixedWidth(110)
        self.progress.setTextVisible(True)
        self.progress.setFormat("")
        self.status = QLabel("Design specific primer pairs for the target: press Design pairs.")
        self.status.setWordWrap(True)
        self.add_button = QPushButton("Add to library")
        self.add_button.setToolTip("Add the primers of the selected pairs to the primer library "
                                   "(select several with Shift or Ctrl; Ctrl+A: all)")
        self.add_button.clicked.connect(lambda: self.add_to_library())
        self.panel_button = QPushButton("Check as panel")
        self.panel_button.setToolTip("Check the primers of the selected pairs as one multiplex "
                                     "panel (select several with Shift or Ctrl; Ctrl+A: all)")
        self.panel_button.clicked.connect(lambda: self.check_panel())
        self.export_button = QToolButton()
        self.export_button.setText("Export")
        self.export_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        menu = QMenu(self.export_button)
        menu.addAction("Pairs as CSV (as primerscope pairs -o)…", lambda: self.export("csv"))
        menu.addAction("Pairs as BED12…", lambda: self.export("bed"))
        self.export_button.setMenu(menu)
        row2 = QHBoxLayout()
        row2.addWidget(self.design_button)
        row2.addWidget(self.cancel_button)
        row2.addWidget(self.progress)
        row2.addWidget(self.status, 1)
        self.check_button = QPushButton("Check primers…")
        self.check_button.setToolTip("Check primers you have (pasted, or from the library) against "
                                     "the background: where each can prime, what they amplify, "
                                     "their dimers (as primerscope check)")
        self.check_button.clicked.connect(lambda: self.open_check())
        for widget in (self.add_button, self.panel_button, self.export_button, self.check_button):
            row2.addWidget(widget)
        self.controls = QVBoxLayout()
        self.controls.setSpacing(2)
        # The regions share row 1 (the biology is in the first panel): one row less at 720 px.
        row1.addWidget(self.regions_button)
        row1.addWidget(self.regions_label, 1)
        row1.addWidget(self.avoid_masked)
        self.controls.addLayout(row1)
        self.controls.addWidget(self.used)
        self.controls.addLayout(row2)
        self.error = QLabel()
        self.error.setObjectName("error")
        self.error.setWordWrap(True)
        self.error.setVisible(False)

    def _build_track(self) -> None:
        self.record_combo = QComboBox()
        self.record_combo.setToolTip("Target record shown")
        self.record_combo.currentIndexChanged.connect(lambda _: self._draw_track())
        self.record_combo.setVisible(False)
        self.widget = pg.PlotWidget(axisItems={"left": _LengthAxis("left")})
        plot = self.plot = self.widget.getPlotItem()
        plot.setMenuEnabled(False)
        plot.setLabel("bottom", "position in the target (1-based)")
        plot.setLabel("left", "shortest specific primer (nt)")
        plot.showGrid(x=True, y=True, alpha=0.15)
        plot.setClipToView(True)
        plot.setDownsampling(mode="peak")
        self.bands = []
        for _ in range(2):  # the lengths Primer3 may use, either side of zero
            band = pg.LinearRegionItem((18, 27), orientation="horizontal", movable=False,
                                       brush=pg.mkBrush(0, 0, 0, 22), pen=pg.mkPen(None))
            band.setZValue(-20)
            plot.addItem(band)
            self.bands.append(band)
        plot.addItem(pg.InfiniteLine(0, angle=0, pen=pg.mkPen(GREY, width=1)))
        self.amplicon = pg.LinearRegionItem((0, 1), orientation="vertical", movable=False,
                                            brush=pg.mkBrush(0, 158, 115, 60),
                                            pen=pg.mkPen(GREEN, width=1))
        self.amplicon.setZValue(-10)
        self.amplicon.setVisible(False)
        plot.addItem(self.amplicon)
        self.band = SequenceBand(plot)  # the target's soft-masked stretches and gaps
        self.widget.setToolTip(SequenceBand.TIP)
        self.fwd_curve = plot.plot(pen=pg.mkPen(BLUE, width=1.2), connect="finite")
        self.rev_curve = plot.plot(pen=pg.mkPen(ORANGE, width=1.2), connect="finite")
        self.others = pg.ScatterPlotItem(size=8, pen=pg.mkPen(GREY), brush=pg.mkBrush(255, 255, 255, 200))
        self.others.sigClicked.connect(self._on_point_clicked)
        plot.addItem(self.others)
        self.f_site = plot.plot(pen=pg.mkPen(RED, width=5))
        self.r_site = plot.plot(pen=pg.mkPen(PURPLE, width=5))
        self.f_arrow = pg.ArrowItem(angle=180, headLen=14, tailLen=0, brush=RED, pen=pg.mkPen(RED))
        self.r_arrow = pg.ArrowItem(angle=0, headLen=14, tailLen=0, brush=PURPLE, pen=pg.mkPen(PURPLE))
        paper = pg.mkBrush(255, 255, 255, 220)
        self.f_label = pg.TextItem("F", color=RED, anchor=(0, 1), fill=paper)
        self.r_label = pg.TextItem("R", color=PURPLE, anchor=(1, 0), fill=paper)
        for item in (self.f_arrow, self.r_arrow, self.f_label, self.r_label):
            item.setVisible(False)
            plot.addItem(item)
        self.caption = QLabel()
        self.caption.setWordWrap(True)
        self.track = QWidget()
        layout = QVBoxLayout(self.track)
        layout.setContentsMargins(0, 0, 0, 0)
        # Before a design the plot would show empty placeholder axes (0.2-0.8): a note instead,
        # until there is a track or a region to place on it.
        self.track_empty = QLabel("No design yet. Design pairs to see the target's track here; "
                                  "Regions ▸ adds Primer3's regions on it.")
        self.track_empty.setObjectName("empty")
        self.track_empty.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.track_empty.setWordWrap(True)
        self.track_stack = QStackedWidget()
        self.track_stack.addWidget(self.track_empty)
        self.track_stack.addWidget(self.widget)
        # The bases themselves, as Primer3Plus's result page and Benchling show a pair.
        self.sequence = SequenceView()
        self.sequence.candidate_clicked.connect(self.select_pair)
        self.track_tabs = QTabWidget()
        self.track_tabs.setDocumentMode(True)
        self.track_tabs.addTab(self.track_stack, "Profile")
        self.track_tabs.addTab(self.sequence, "Sequence")
        self.track_tabs.setTabToolTip(1, "The target's bases with the selected pair's primers on "
                                         "their strands; click another pair's primer to select it")
        self.track_tabs.currentChanged.connect(lambda i: self.caption.setVisible(i == 0))
        layout.addWidget(self.record_combo)
        layout.addWidget(self.track_tabs, 1)
        layout.addWidget(self.caption)
        self._caption_idle()
        self._show_track()

    def _show_track(self) -> None:
        """The plot once there is something on it (a design's track, or a region), else the note."""
        drawn = self._spec() is not None or bool(self.region_items)
        self.track_stack.setCurrentWidget(self.widget if drawn else self.track_empty)

    def _build_tables(self) -> None:
        self.model = _DimerModel(self)
        self.model.set_columns(pairs.PAIR_COLUMNS)
        self.proxy = ResultsFilter(self)
        self.table = table_view(self.model, self.proxy)
        header = self.table.horizontalHeader()
        titles = [column.title for column in pairs.PAIR_COLUMNS]
        for col, column in enumerate(pairs.PAIR_COLUMNS):
            header.resizeSection(col, 190 if column.title in ("forward", "reverse") else
                                 110 if column.kind == "str" else 62)
            self.table.setColumnHidden(col, column.title in HIDDEN)
        for place, title in enumerate(FIRST_COLUMNS):
            header.moveSection(header.visualIndex(titles.index(title)), place)
        self.table.selectionModel().currentRowChanged.connect(self._on_current_changed)
        self.table.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.table.customContextMenuRequested.connect(
            lambda pos: self.context_menu().exec(self.table.viewport().mapToGlobal(pos)))
        copy = QAction("Copy", self.table)
        copy.setShortcut(QKeySequence.StandardKey.Copy)
        copy.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)
        copy.triggered.connect(self.copy_selection)
        self.table.addAction(copy)
        self.products_label = QLabel("Click a pair to see its in-silico PCR products in the background.")
        self.products_label.setWordWrap(True)
        self.products_model = ResultsModel(self)
        self.products_model.set_columns(pairs.PRODUCT_COLUMNS)
        self.products_proxy = ResultsFilter(self)
        self.products_table = table_view(self.products_model, self.products_proxy)
        header = self.products_table.horizontalHeader()
        for col, column in enumerate(pairs.PRODUCT_COLUMNS):
            header.resizeSection(col, 150 if column.kind == "str" else 62)
        self.products_pane = QWidget()
        layout = QVBoxLayout(self.products_pane)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.products_label)
        layout.addWidget(self.products_table, 1)

    # -- fields ------------------------------------------------------------------------------------
    def values(self) -> dict:
        """The view's fields and its regions (genome coordinates, 1-based inclusive)."""
        regions = {"amplify": [], "exclude": [], "include": None}
        for kind, start, end in self.regions():
            if kind == "include":
                regions["include"] = [start, end]
            else:
                regions[kind].append([start, end])
        return {"product_ranges": self.ranges.text().strip(), "tm_opt": self.tm_opt.value(),
                "max_tm_diff": self.tm_diff.value(), "num_return": self.num_return.value(),
                "max_edits": self.max_edits.value(),
                "min_three_prime_distance": self.distance.value(),
                "avoid_masked": self.avoid_masked.isChecked(), **regions}

    def design_settings(self):
        """The PairSettings a design would use now (ValueError: why none); shows them."""
        conditions, bounds = self._primer_settings()
        settings = pairs.settings_from(self.values(), conditions, bounds)
        # (Strands is the candidate search's: a pair's primers are specific on both strands.)
        self.used.setText("Specificity on both strands; " + pairs.settings_summary(settings.design) + (
            " (set in the primer filters and Conditions)" if bounds is not None else
            " (Primer3's defaults: the primer filters are off; Conditions as set)"))
        return settings

    def showEvent(self, event) -> None:  # the filters may have changed on another tab
        super().showEvent(event)
        self.biology.setVisible(True)
        try:
            self.design_settings()
        except ValueError as err:
            self.used.setText(str(err))

    def hideEvent(self, event) -> None:
        """The pairs' product sizes and Tm (in the first panel, see ParamsPanel.set_biology)
        show only with this view: the other tabs do not use them."""
        super().hideEvent(event)
        self.biology.setVisible(False)

    # -- regions on the track ----------------------------------------------------------------------
    def add_region(self, kind: str, span: tuple[int, int] | None = None):
        """A region item on the track (an included region replaces the one there): at ``span``
        (genome coordinates), or over the middle fifth of what the track shows."""
        if kind == "include":
            for k, item in [r for r in self.region_items if r[0] == "include"]:
                self.plot.removeItem(item)
                self.region_items.remove((k, item))
        if span is None:
            (lo, hi), _ = self.plot.viewRange()
            width = max(1.0, (hi - lo) / 5)
            span = (round(lo + 2 * width), round(lo + 3 * width))
        label, (r, g, b), _ = REGION_KINDS[kind]
        item = pg.LinearRegionItem((span[0] - 0.5, span[1] + 0.5), orientation="vertical",
                                   brush=pg.mkBrush(r, g, b, 45), pen=pg.mkPen(r, g, b, width=2),
                                   hoverBrush=pg.mkBrush(r, g, b, 80))
        item.setZValue(-15)
        item.setToolTip(f"{label}: drag the edges or the body")
        pg.InfLineLabel(item.lines[0], label, position=0.95, color=(r, g, b), anchors=[(0, 0), (0, 0)])
        item.sigRegionChanged.connect(self._show_regions)
        self.plot.addItem(item)
        self.region_items.append((kind, item))
        self._show_regions()
        self._show_track()
        return item

    def clear_regions(self) -> None:
        for _, item in self.region_items:
            self.plot.removeItem(item)
        self.region_items = []
        self._show_regions()
        self._show_track()

    def regions(self) -> list[tuple[str, int, int]]:
        """(kind, start, end) of each region on the track: whole bases, 1-based inclusive."""
        out = []
        for kind, item in self.region_items:
            lo, hi = item.getRegion()
            start, end = max(1, round(lo + 0.5)), round(hi - 0.5)
            out.append((kind, start, max(start, end)))
        return out

    def _show_regions(self, *_) -> None:
        parts = [f"{kind} {start:,}–{end:,}" for kind, start, end in self.regions()]
        for kind in REGION_KINDS:
            self.sequence.set_intervals(kind, [(a, b) for k, a, b in self.regions() if k == kind])
        self.regions_label.setText("; ".join(parts) if parts else
                                   "No Primer3 regions: Regions ▸ adds one to drag on the track.")

    def set_values(self, values: dict) -> None:
        v = dict(DEFAULTS)
        v.update({key: value for key, value in (values or {}).items() if key in DEFAULTS
                  and isinstance(value, type(DEFAULTS[key]))})
        self.ranges.setText(v["product_ranges"])
        for box, key in ((self.tm_opt, "tm_opt"), (self.tm_diff, "max_tm_diff"),
                         (self.num_return, "num_return"), (self.max_edits, "max_edits"),
                         (self.distance, "min_three_prime_distance")):
            box.setValue(v[key])
        self.avoid_masked.setChecked(v["avoid_masked"])

    # -- running -----------------------------------------------------------------------------------
    def run(self) -> bool:
        """Design pairs for the loaded target; False if it could not start."""
        if self.runner.running:
            return False
        try:
            inputs = self._job_inputs()
        except ValueError as err:
            self._show_error(str(err))
            return False
        values = self.values()
        if self._settings is not None:
            save_json(self._settings, SETTINGS_KEY, {k: v for k, v in values.items() if k in DEFAULTS})
        try:
            settings = self.design_settings()
        except ValueError as err:
            self._show_error(str(err))
            return False
        self._offsets = {r.id: r.offset for r in inputs["target"]}
        self._targets = {r.id: r for r in inputs["target"]}
        self._background = pairs.records_label(inputs["background"])
        self.error.setVisible(False)
        self.status.setText("Starting the pair design…")
        self.progress.setValue(0)
        self.progress.setFormat("")

        def work(token):
            return (yield from pairs.design_run(inputs["target"], inputs["background"], inputs["k"],
                                                settings, inputs["selection"], inputs["threads"],
                                                token, inputs.get("scheduler"),
                                                inputs.get("gap_min")))

        self.runner.start(work)
        self._update_buttons()
        return True

    def cancel(self) -> None:
        if self.runner.running:
            self.runner.cancel()
            self.status.setText("Cancelling… (the pairs finished so far are kept)")
            self._update_buttons()

    def _on_progress(self, item) -> None:
        if self.runner.cancel_token is not None and self.runner.cancel_token.cancelled:
            return
        if isinstance(item, pairs.PairsStarted):
            self.job = item.job
            label = f"kdiff {item.job.variant}/{item.job.backend}"
            self.status.setText(f"Designing pairs (k = {item.job.params['k']}, specificity by {label})…")
        elif isinstance(item, Progress):
            if item.phase == "compiling":
                self.progress.setRange(0, 0)
                self.status.setText("Compiling kernels… (first run only; cached on disk afterwards)")
                return
            self.progress.setRange(0, 1000)
            self.progress.setValue(int(1000 * item.fraction))
            self.progress.setFormat(f"{100 * item.fraction:.0f}%")
            what = item.message or "designing"
            self.status.setText(f"{what[0].upper()}{what[1:]}…")

    def _on_finished(self, result) -> None:
        self.progress.setRange(0, 1000)
        if not result.info.complete and self.result is not None and self.result.info.complete:
            n = len(self.result.pairs)  # a cancelled re-design: the previous design stays
            self.status.setText(f"Cancelled after {result.info.seconds:.2g} s: the previous "
                                f"design's {n} pair{'s' if n != 1 else ''} are kept.")
        else:
            self.show_pairs(result)
        self._update_buttons()
        self.designed.emit(result)

    def _on_failed(self, message: str) -> None:
        self.progress.setRange(0, 1000)
        self.progress.setValue(0)
        self.progress.setFormat("")
        self.status.setText("The pair design failed.")
        self._show_error(message)
        self._update_buttons()

    # -- showing -----------------------------------------------------------------------------------
    def show_pairs(self, result) -> None:
        """Show a :class:`engine.primers.pairs.PairsResult` (the track, the tables, the status)."""
        self.result = result
        self._selected = None
        rows = pairs.pair_rows(result)
        self.model.replace(result.pairs, lambda _: rows)
        self.table.setColumnHidden(0, len({p.target_id for p in result.pairs}) <= 1)
        ids = [s.target_id for s in result.specificity]
        self.record_combo.blockSignals(True)
        self.record_combo.clear()
        for rid in ids:
            self.record_combo.addItem(short_id(rid), rid)
        self.record_combo.blockSignals(False)
        self.record_combo.setVisible(len(ids) > 1)
        design = result.settings.design
        self.bands[0].setRegion((design.len_min, design.len_max))
        self.bands[1].setRegion((-design.len_max, -design.len_min))
        self._draw_track()
        self.products_model.clear()
        self.status.setText(self._status_text(result))
        if result.pairs:
            self.table.selectionModel().setCurrentIndex(
                self.proxy.index(0, 0), QItemSelectionModel.SelectionFlag.ClearAndSelect
                | QItemSelectionModel.SelectionFlag.Rows)
        else:
            self.products_label.setText("No pair to show products for.")

    def _status_text(self, result) -> str:
        info, n = result.info, len(result.pairs)
        ph = result.phase_seconds
        split = f"kdiff {ph['kdiff']:.2g} s, Primer3 {ph['primer3']:.2g} s, PCR {ph['pcr']:.2g} s"
        if not info.complete:
            return f"Cancelled after {info.seconds:.2g} s: kept {n} pair{'s' if n != 1 else ''}."
        if n == 0:
            from engine.primers.export_pairs import why_none

            why = why_none(result).replace("(--explain lists each position's reason)", "")
            return f"{why[0].upper()}{why[1:].rstrip()} ({info.seconds:.2g} s: {split})."
        off = sum(1 for p in result.pairs if p.offtarget_products)
        return (f"{n} pair{'s' if n != 1 else ''} at k = {result.k} in {info.seconds:.2g} s ({split}); "
                f"{off} with an off-target product.")

    def current_record(self) -> str | None:
        if self.record_combo.count():
            return self.record_combo.currentData()
        return None

    def _spec(self):
        if self.result is None:
            return None
        record = self.current_record()
        return next((s for s in self.result.specificity if s.target_id == record), None)

    def _caption_idle(self) -> None:
        self.caption.setText("The target's track appears here: the shortest primer that is specific "
                             "at each 5′ end, for forward (→) and reverse (←) primers, with the "
                             "chosen pair's sites and amplicon.")

    def _draw_track(self) -> None:
        spec = self._spec()
        if spec is None:
            for curve in (self.fwd_curve, self.rev_curve):
                curve.setData([], [])
            self.others.setData([], [])
            self.band.show(None, 0)
            self.sequence.set_sequence("", "", 0)
            self._draw_selected()
            self._caption_idle()
            self._show_track()
            return
        self._show_track()
        offset = self._offsets.get(spec.target_id, 0)
        x = offset + 1 + np.arange(len(spec.left), dtype=float)
        fwd = np.where(spec.left > 0, spec.left, np.nan).astype(float)
        rev = -np.where(spec.right > 0, spec.right, np.nan).astype(float)
        self.fwd_curve.setData(x, fwd, connect="finite")
        self.rev_curve.setData(x, rev, connect="finite")
        design = self.result.settings.design
        self.plot.enableAutoRange(x=False, y=False)
        self.plot.setXRange(x[0] if len(x) else 0, x[-1] if len(x) else 1, padding=0.01)
        top = design.len_max + 15
        self.plot.setYRange(-top, top, padding=0)
        self.band.show(self._targets.get(spec.target_id), -top + 2)
        mine = [p for p in self.result.pairs if p.target_id == spec.target_id]
        points = [{"pos": (p.left.start, p.left.length), "data": p} for p in mine]
        points += [{"pos": (p.right.end, -p.right.length), "data": p} for p in mine]
        self.others.setData(points)
        self._draw_sequence(spec.target_id, mine)
        specific = int(np.count_nonzero((spec.left > 0) & (spec.left <= design.len_max)))
        specific_r = int(np.count_nonzero((spec.right > 0) & (spec.right <= design.len_max)))
        self.caption.setText(
            f"Per 5′ end, the shortest primer k = {self.result.k} edits from the background: "
            f"<span style='color:{BLUE}'>■</span> forward (up), "
            f"<span style='color:{ORANGE}'>■</span> reverse (down); grey: Primer3's lengths "
            f"({design.len_min}–{design.len_max} nt); <span style='color:{GREEN}'>■</span> the "
            f"selected pair's amplicon; circles: every pair's primers (click one).")
        self.caption.setToolTip(
            f"{specific:,} forward and {specific_r:,} reverse 5′ ends have a specific primer of "
            f"at most {design.len_max} nt in {short_id(spec.target_id)}. A specific primer differs "
            f"by at least k edits from every substring of the background, on both strands.")
        self._draw_selected()

    def _draw_sequence(self, record_id: str, mine: list) -> None:
        """The Sequence tab: the designed record's bases, its soft-masked stretches, the
        regions, and every pair's primers as marks on their strands (a click selects the pair)."""
        record = self._targets.get(record_id)
        if record is None:
            self.sequence.set_sequence("", "", 0)
            return
        from app.primers import sequence_bands

        self.sequence.set_sequence(record.id, record.text, record.offset)
        masked, _ = sequence_bands(record)  # gaps: the N runs the view finds in the text
        self.sequence.set_intervals("masked", [(int(a), int(b)) for a, b in masked])
        self._show_regions()
        self.sequence.set_candidates([Mark(p.left.start, p.left.end, "+", p) for p in mine]
                                     + [Mark(p.right.start, p.right.end, "-", p) for p in mine])

    def _draw_selected(self) -> None:
        p = self._selected
        shown = p is not None and p.target_id == self.current_record()
        for item in (self.amplicon, self.f_arrow, self.r_arrow, self.f_label, self.r_label):
            item.setVisible(shown)
        if not shown:
            self.f_site.setData([], [])
            self.r_site.setData([], [])
            self.sequence.set_pair(None, None, zoom=False)
            return
        self.sequence.set_pair((p.left.start, p.left.end), (p.right.start, p.right.end))
        self.amplicon.setRegion((p.left.start - 0.5, p.right.end + 0.5))
        fy, ry = p.left.length, -p.right.length
        self.f_site.setData([p.left.start, p.left.end], [fy, fy])
        self.r_site.setData([p.right.start, p.right.end], [ry, ry])
        self.f_arrow.setPos(p.left.end, fy)
        self.r_arrow.setPos(p.right.start, ry)
        # Names over the amplicon's corners, clear of the curves (the band ends at len_max).
        clear = (self.result.settings.design.len_max + 5) if self.result is not None else 32
        self.f_label.setText(f"F {p.left.start:,} ({p.left.length} nt) →")
        self.r_label.setText(f"← R {p.right.end:,} ({p.right.length} nt)")
        self.f_label.setPos(p.left.start, clear)
        self.r_label.setPos(p.right.end, -clear)

    def _on_point_clicked(self, _item, points, *_) -> None:
        if len(points):
            self.select_pair(points[0].data())

    def select_pair(self, pair) -> bool:
        """Select a pair in the table (as clicking its row does)."""
        for row in range(self.model.rowCount()):
            if self.model.item(row) is pair:
                index = self.proxy.mapFromSource(self.model.index(row, 0))
                self.table.selectionModel().setCurrentIndex(
                    index, QItemSelectionModel.SelectionFlag.ClearAndSelect
                    | QItemSelectionModel.SelectionFlag.Rows)
                self.table.scrollTo(index)
                return True
        return False

    def _on_current_changed(self, current, _previous) -> None:
        if not current.isValid():
            return
        pair = self.model.item(self.proxy.mapToSource(current).row())
        self.show_products(pair)

    def show_products(self, pair) -> None:
        """The pair on the track and its in-silico PCR products in the table below."""
        self._selected = pair
        if pair.target_id != self.current_record():
            index = self.record_combo.findData(pair.target_id)
            if index >= 0:
                self.record_combo.setCurrentIndex(index)
        self._draw_selected()
        rows = pairs.product_rows(pair.products)
        self.products_model.replace(pair.products, lambda _: rows)
        f, r = pairs.primer_names(pair)
        edits = self.result.settings.pcr.max_edits if self.result is not None else None
        text = (f"Pair {pair.rank}: {f} + {r}, {pair.product_size} bp in the target "
                f"({pair.left.start:,}–{pair.right.end:,}). ")
        closest = pair.closest_offtarget
        if closest is None:
            text += (f"No product in the background ({self._background}) within {edits} edits "
                     "per primer.")
        else:
            n = pair.offtarget_products
            text += (f"{n} product{'s' if n != 1 else ''} in the background; the closest: "
                     f"{short_id(closest.record_id)} {closest.start:,}–{closest.end:,}, "
                     f"{closest.length} bp, {closest.edits} edits"
                     f"{' (across an assembly gap: its size is unknown)' if closest.spans_gap else ''}.")
        self.products_label.setText(text)

    # -- the pairs' primers elsewhere ---------------------------------------------------------------
    def chosen_pairs(self) -> list:
        """The selected pairs, or every pair when none is selected."""
        rows = sorted({self.proxy.mapToSource(i).row() for i in self.table.selectionModel().selectedRows()})
        if rows:
            return [self.model.item(r) for r in rows]
        return list(self.result.pairs) if self.result is not None else []

    def add_to_library(self) -> bool:
        chosen = self.chosen_pairs()
        if not chosen:
            return False
        entries = pairs.library_entries(chosen, self.result.k, self._background)
        self.library_add_requested.emit(entries, "the Pairs view", pairs.library_links(chosen))
        return True

    def check_panel(self) -> bool:
        chosen = self.chosen_pairs()
        if not chosen:
            return False
        self.panel_requested.emit(pairs.panel_primers(chosen),
                                  f"{len(chosen)} pair{'s' if len(chosen) != 1 else ''} of the Pairs view")
        return True

    def export(self, fmt: str) -> None:
        if self.result is None:
            return
        if fmt == "bed":
            self.save_requested.emit(pairs.bed_text(self.result), "Export pairs as BED", "pairs.bed",
                                     "BED files (*.bed);;All files (*)")
        else:
            self.save_requested.emit(pairs.csv_text(self.result), "Export pairs as CSV", "pairs.csv",
                                     "CSV files (*.csv);;All files (*)")

    def exportable(self) -> bool:
        """The window's *Export results as CSV* writes this view's pairs (see results_csv)."""
        return self.result is not None and bool(self.result.pairs) and not self.runner.running

    def results_csv(self) -> str:
        """The pairs as ``primerscope pairs -o OUT.csv`` writes them."""
        return pairs.csv_text(self.result)

    def copy_selection(self) -> None:
        chosen = self.chosen_pairs()
        named = []
        for p in chosen:
            f, r = pairs.primer_names(p)
            named += [(f, p.left.sequence), (r, p.right.sequence)]
        if named:
            QApplication.clipboard().setText(names_tsv(named))

    def context_menu(self) -> QMenu:
        menu = QMenu(self)
        count = len(self.table.selectionModel().selectedRows())
        what = f"{count} pair{'s' if count != 1 else ''}"
        for text, slot in ((f"Add {what} to the primer library", self.add_to_library),
                           (f"Check {what} as a panel", self.check_panel),
                           (f"Copy the primers of {what}", self.copy_selection)):
            menu.addAction(text, slot).setEnabled(count > 0)
        return menu

    def open_check(self, text: str | None = None) -> "CheckDialog":
        """The *Check primers* dialog (one per view), with ``text`` in its box when given;
        the selected pairs' primers when nothing was typed yet."""
        if self.check_dialog is None:
            self.check_dialog = CheckDialog(self)
            self.check_dialog.save_requested.connect(self.save_requested)
        if text is None and not self.check_dialog.box.toPlainText().strip():
            chosen = self.chosen_pairs()
            text = "\n".join(f"{n} {s}" for n, s in pairs.panel_primers(chosen)) if chosen else None
        if text is not None:
            self.check_dialog.box.setPlainText(text)
        self.check_dialog.show()
        self.check_dialog.raise_()
        return self.check_dialog

    # -- ResultView ----------------------------------------------------------------------------------
    def _show_error(self, message: str) -> None:
        self.error.setText(message)
        self.error.setVisible(True)

    def _update_buttons(self) -> None:
        running = self.runner.running
        has = self.result is not None and bool(self.result.pairs)
        self.design_button.setEnabled(not running)
        self.progress.setVisible(running)
        self.cancel_button.setEnabled(running and not self.runner.cancel_token.cancelled)
        for widget in (self.add_button, self.panel_button, self.export_button):
            widget.setEnabled(has and not running)
        for widget in (self.ranges, self.tm_opt, self.tm_diff, self.num_return, self.max_edits,
                       self.distance, self.avoid_masked, self.regions_button):
            widget.setEnabled(not running)

    def has_data(self) -> bool:
        return not self.runner.running  # the design waits for its button

    def is_empty(self) -> bool:
        """Nothing designed and nothing to design with (the tab says what to load)."""
        return self.result is None and not self.runner.running and not self._has_inputs()

    def runners(self) -> list:
        return [self.runner] + ([self.check_dialog.runner] if self.check_dialog else [])

    def shutdown(self) -> None:
        self.runner.shutdown()
        if self.check_dialog is not None:
            self.check_dialog.runner.shutdown()


class CheckDialog(QDialog):
    """*Check primers*: primers typed, pasted or taken from the library, checked against the
    Pairs view's background (``primerscope check``: the panel check with a background) on
    the view's backend, the PCR edits and the reaction conditions it designs with. Tables:
    per primer, its sites, the products, the dimers; *Export* writes the check's CSV."""

    save_requested = Signal(str, str, str, str)

    def __init__(self, view: PairsView):
        super().__init__(view)
        from app.worker import JobRunner

        self.view = view
        self.result = None
        self.setWindowTitle("Check primers")
        self.resize(900, 560)
        self.box = QPlainTextEdit()
        self.box.setPlaceholderText("One primer a line (NAME SEQUENCE, NAME=SEQUENCE or SEQUENCE), "
                                    "FASTA, or a CSV/pairs CSV pasted whole")
        self.box.setMaximumHeight(110)
        self.library_button = QPushButton("From the library")
        self.library_button.setToolTip("The primers selected in the primer library (View ▸ Primer "
                                       "library)")
        self.library_button.clicked.connect(self.from_library)
        self.run_button = QPushButton("Check")
        self.run_button.clicked.connect(lambda: self.run())
        self.export_button = QPushButton("Export CSV…")
        self.export_button.clicked.connect(self.export)
        self.status = QLabel("Paste primers, then Check.")
        self.status.setWordWrap(True)
        self.tabs = QTabWidget()
        self.models = {}
        for key, title, columns in (("summary", "Primers", pairs.CHECK_SUMMARY_COLUMNS),
                                    ("sites", "Sites", pairs.CHECK_SITE_COLUMNS),
                                    ("products", "Products", pairs.PRODUCT_COLUMNS),
                                    ("dimers", "Dimers", pairs.CHECK_DIMER_COLUMNS)):
            model = _DimerModel(self)
            model.set_columns(columns)
            self.models[key] = model
            self.tabs.addTab(table_view(model, ResultsFilter(self)), title)
        buttons = QHBoxLayout()
        for widget in (self.library_button, self.run_button, self.export_button):
            buttons.addWidget(widget)
        buttons.addWidget(self.status, 1)
        layout = QVBoxLayout(self)
        layout.addWidget(self.box)
        layout.addLayout(buttons)
        layout.addWidget(self.tabs, 1)
        self.runner = JobRunner(self)
        self.runner.finished.connect(self._on_finished)
        self.runner.failed.connect(self._on_failed)
        self._update_buttons()

    def from_library(self) -> bool:
        chosen = self.view._library_selection()
        if not chosen:
            self.status.setText("Select primers in the primer library first (View ▸ Primer library).")
            return False
        self.box.setPlainText("\n".join(f"{n} {s}" for n, s in chosen))
        return True

    def run(self) -> bool:
        """Check the box's primers; False (and why, in the status) if it could not start."""
        from engine.primers import panel, pcr
        from engine.primers.primer_sets import parse_text

        from app.primers import edit_backend

        if self.runner.running:
            return False
        try:
            primers = parse_text(self.box.toPlainText())
            inputs = self.view._job_inputs()
            conditions, _ = self.view._primer_settings()
            settings = panel.PanelSettings(conditions or panel.Conditions(), -5.0,
                                           pcr.PcrSettings(max_edits=self.view.max_edits.value()))
        except ValueError as err:
            self.status.setText(str(err))
            return False
        selection = inputs["selection"]
        backend, threads, _ = edit_backend(selection.backend, inputs["threads"])
        scheduler = inputs.get("scheduler") if backend == "dask" else None
        background = inputs["background"]
        self.status.setText(f"Checking {len(primers)} primers against "
                            f"{pairs.records_label(background)}…")
        self.runner.start(lambda token: pairs.check_run(primers, background, settings, backend,
                                                        threads, token, scheduler))
        self._update_buttons()
        return True

    def _on_finished(self, result) -> None:
        self.result = result
        tables = pairs.check_tables(result)
        for key, model in self.models.items():
            rows = tables[key]
            model.replace(rows, list)
        n = len(result.primers)
        self.status.setText(f"{n} primers: {len(tables['sites'])} sites, {len(result.products)} "
                            f"products, {int(result.end_dimer.sum() + result.end_dimer.trace()) // 2} "
                            f"3′-end dimers" + ("" if result.info.complete else " (cancelled)"))
        self._update_buttons()

    def _on_failed(self, message: str) -> None:
        self.status.setText(message)
        self._update_buttons()

    def export(self) -> None:
        if self.result is not None:
            self.save_requested.emit(pairs.check_csv_text(self.result), "Export the check as CSV",
                                     "check.csv", "CSV files (*.csv);;All files (*)")

    def _update_buttons(self) -> None:
        running = self.runner.running
        self.run_button.setEnabled(not running)
        self.export_button.setEnabled(self.result is not None and not running)
