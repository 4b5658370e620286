"""The Panel view: a primer set checked as one multiplex panel.

The heterodimer matrix (ΔG, Tm, or the 3′-end ΔG of each row's 3′ end on each column) is
a heatmap, one ``ImageItem`` pixel per pair of primers; hovering a cell reads out both
primers' values; 3′-end dimers are framed in red. With a background, the table below lists the
in-silico PCR products of the whole set. The check (:func:`app.panel.check_run`,
``engine.primers.panel``) runs on the view's own worker runner.

Primer sets come from the Pairs view and from the primer library (*Check as panel*).
"""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (QCheckBox, QComboBox, QHBoxLayout, QLabel, QMenu, QPushButton,
                               QSplitter, QToolButton, QVBoxLayout, QWidget)

from engine.jobs import Progress

from app import panel
from app.pairs import PRODUCT_COLUMNS, product_rows
from app.table import ResultsFilter, ResultsModel, table_view
from app.views import ResultView
from app.views.matrix import CellValues
from app.views.plotting import RED

#: Cells get their value written in them (where it fits on screen) up to this many primers.
LABEL_LIMIT = 40


class PanelView(ResultView):
    """Signals ``checked(result)`` when a check ends and ``save_requested(text, title, name,
    pattern)`` (the window's exports write the file).

    ``background()`` returns the background records to look for cross-products in and a
    label for them, or None; ``backend_choice()`` the (backend, threads, Dask scheduler or None)
    of the parameters.
    """

    title = "Panel"
    empty_hint = ("No panel checked yet. Check primers as a multiplex panel from the Pairs tab or "
                  "from the primer library (View ▸ Primer library): Check as panel.")
    checked = Signal(object)
    save_requested = Signal(str, str, str, str)

    def __init__(self, background=None, backend_choice=None):
        super().__init__()
        from app.worker import JobRunner

        self._background = background or (lambda: None)
        self._backend_choice = backend_choice or (lambda: ("serial", None, None))
        self.request: panel.PanelRequest | None = None
        self.result = None
        self._build()
        self.runner = JobRunner(self)
        self.runner.progress.connect(self._on_progress)
        self.runner.finished.connect(self._on_finished)
        self.runner.failed.connect(self._on_failed)
        self._update_buttons()

    def _build(self) -> None:
        self.header = QLabel()
        self.header.setWordWrap(True)
        self.matrix_combo = QComboBox()
        for key, (text, *_) in panel.MATRICES.items():
            self.matrix_combo.addItem(text, key)
        self.matrix_combo.setToolTip("The matrix the heatmap shows")
        self.matrix_combo.currentIndexChanged.connect(lambda _: self._draw())
        self.background_box = QCheckBox("Cross-products in the background")
        self.background_box.setChecked(True)
        self.background_box.setToolTip("Also run the in-silico PCR of the whole set against the "
                                       "kdiff background (Check again to apply)")
        self.again_button = QPushButton("Check again")
        self.again_button.setToolTip("Check the same primers again (with or without the background)")
        self.again_button.clicked.connect(lambda: self.check_again())
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.clicked.connect(self.cancel)
        self.export_button = QToolButton()
        self.export_button.setText("Export")
        self.export_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        menu = QMenu(self.export_button)
        menu.addAction("Every pair of primers as CSV (as primerscope panel -o)…",
                       lambda: self.export(None))
        for key, (text, *_) in panel.MATRICES.items():
            menu.addAction(f"{text} matrix as CSV…", lambda k=key: self.export(k))
        self.export_button.setMenu(menu)
        controls = QHBoxLayout()
        for widget in (QLabel("Show"), self.matrix_combo, self.background_box, self.again_button,
                       self.cancel_button, self.export_button):
            controls.addWidget(widget)
        controls.addStretch(1)
        self.status = QLabel()
        self.status.setWordWrap(True)
        self.error = QLabel()
        self.error.setObjectName("error")
        self.error.setWordWrap(True)
        self.error.setVisible(False)

        self.widget = pg.PlotWidget()
        plot = self.plot = self.widget.getPlotItem()
        plot.setMenuEnabled(False)
        plot.invertY(True)
        plot.setAspectLocked(True)
        plot.hideButtons()
        self.image = pg.ImageItem()
        plot.addItem(self.image)
        self.colormap = pg.colormap.get("viridis")
        self.bar = pg.ColorBarItem(values=(-10, 0), colorMap=self.colormap, interactive=False,
                                   width=14)
        self.bar.setImageItem(self.image, insert_in=plot)
        # 3′-end dimers: a frame around the cell (its value stays readable)
        self.marks = pg.ScatterPlotItem(size=0.9, pxMode=False, symbol="s",
                                        pen=pg.mkPen(RED, width=3), brush=pg.mkBrush(None))
        plot.addItem(self.marks)
        # Values written in the cells only while they fit there (12 primers at 1280x720 do
        # not at one decimal): else the hover read-out gives them.
        self.values = CellValues(lambda v: "–" if math.isnan(v) else f"{v:.1f}", min_cell=14)
        plot.addItem(self.values)
        self.widget.scene().sigMouseMoved.connect(self._on_hover)
        self.readout = QLabel("Hover a cell to read its values.")
        self.readout.setWordWrap(True)
        self.readout.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        left = QWidget()
        layout = QVBoxLayout(left)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.widget, 1)
        layout.addWidget(self.readout)

        self.products_label = QLabel()
        self.products_label.setWordWrap(True)
        self.model = ResultsModel(self)
        self.model.set_columns(PRODUCT_COLUMNS)
        self.proxy = ResultsFilter(self)
        self.table = table_view(self.model, self.proxy)
        right = QWidget()
        layout = QVBoxLayout(right)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.products_label)
        layout.addWidget(self.table, 1)
        body = QSplitter(Qt.Orientation.Horizontal)
        body.addWidget(left)
        body.addWidget(right)
        body.setSizes([520, 440])

        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 0)
        layout.addWidget(self.header)
        layout.addLayout(controls)
        layout.addWidget(self.status)
        layout.addWidget(self.error)
        layout.addWidget(body, 1)

    # -- running -----------------------------------------------------------------------------------
    def check(self, primers, source: str) -> bool:
        """Check ``primers`` ((name, sequence) pairs) as a panel; False if it could not start."""
        self.request = panel.PanelRequest(tuple((str(n), str(s)) for n, s in primers), source)
        return self.check_again()

    def check_again(self) -> bool:
        if self.request is None or self.runner.running:
            return False
        background = self._background() if self.background_box.isChecked() else None
        records, label = background if background else ((), "")
        request = panel.PanelRequest(self.request.primers, self.request.source, tuple(records), label)
        self.request = request
        from app.primers import edit_backend

        backend, threads, scheduler = self._backend_choice()
        backend, threads, _ = edit_backend(backend, threads)
        scheduler = scheduler if backend == "dask" and records else None
        n = len(request.primers)
        self.header.setText(f"<b>Panel</b>: {n} primer{'s' if n != 1 else ''} from {request.source}"
                            + (f", cross-products in {label}" if records else ", no background")
                            + ".")
        self.error.setVisible(False)
        self.status.setText("Checking the panel…")
        self.runner.start(lambda token: panel.check_run(request, backend, threads, token, scheduler))
        self._update_buttons()
        return True

    def cancel(self) -> None:
        if self.runner.running:
            self.runner.cancel()
            self.status.setText("Cancelling…")

    def _on_progress(self, item) -> None:
        if isinstance(item, Progress) and not self.runner.cancel_token.cancelled:
            if item.phase == "compiling":
                self.status.setText("Compiling the search kernels… (first run only)")
            else:
                what = item.message or "checking"
                self.status.setText(f"{what[0].upper()}{what[1:]}… {100 * item.fraction:.0f}%")

    def _on_finished(self, result) -> None:
        self.show_panel(result)
        self._update_buttons()
        self.checked.emit(result)

    def _on_failed(self, message: str) -> None:
        self.status.setText("The panel check failed.")
        self.error.setText(message)
        self.error.setVisible(True)
        self._update_buttons()

    # -- showing -----------------------------------------------------------------------------------
    def show_panel(self, result) -> None:
        self.result = result
        self.readout.setText("Hover a cell to read its values.")  # not the last panel's cell
        self.status.setText(panel.summary(result))
        products = result.products
        rows = product_rows(products)
        self.model.replace(products, lambda _: rows)
        if result.has_background:
            self.products_label.setText(f"In-silico PCR of the whole set: {len(products)} "
                                        f"product{'s' if len(products) != 1 else ''} in "
                                        f"{self.request.background_label if self.request else 'the background'}.")
        else:
            self.products_label.setText("No background: tick Cross-products and Check again to run "
                                        "the set's in-silico PCR.")
        names = [n for n, _ in result.primers]
        left = self.plot.getAxis("left")
        left.setTicks([[(i + 0.5, f"{i + 1}. {name}") for i, name in enumerate(names)]])
        self.plot.getAxis("bottom").setTicks([[(j + 0.5, str(j + 1)) for j in range(len(names))]])
        flagged = [(j + 0.5, i + 0.5) for i in range(len(names)) for j in range(len(names))
                   if result.end_dimer[i, j]]
        self.marks.setData([p[0] for p in flagged], [p[1] for p in flagged])
        self._draw()
        self.plot.setRange(xRange=(0, len(names)), yRange=(0, len(names)), padding=0.02)

    def matrix_key(self) -> str:
        return self.matrix_combo.currentData()

    def matrix(self) -> np.ndarray | None:
        """The matrix the heatmap shows (the engine's own array)."""
        if self.result is None:
            return None
        return getattr(self.result, panel.MATRICES[self.matrix_key()][1])

    def _draw(self) -> None:
        values = self.matrix()
        if values is None:
            self.image.clear()
            self.values.set_values(None)
            return
        data = np.asarray(values, dtype=float)
        finite = data[np.isfinite(data)]
        lo, hi = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)
        if hi <= lo:
            hi = lo + 1.0
        _, _, unit, short = panel.MATRICES[self.matrix_key()]
        self.image.setImage(data, autoLevels=False, levels=(lo, hi))
        self.image.setRect(0, 0, data.shape[1], data.shape[0])
        self.bar.setLevels((lo, hi))
        self.bar.axis.setLabel(f"{short} ({unit})")
        # CellValues centres cell (i, j) on (j, i) + origin: these cells span [j, j+1).
        self.values.set_values(data if data.shape[0] <= LABEL_LIMIT else None, (0.5, 0.5),
                               (lo + hi) / 2)

    def cell_at(self, scene_pos) -> tuple[int, int] | None:
        if self.result is None or not self.plot.sceneBoundingRect().contains(scene_pos):
            return None
        point = self.plot.vb.mapSceneToView(scene_pos)
        i, j = math.floor(point.y()), math.floor(point.x())
        n = len(self.result.primers)
        return (i, j) if 0 <= i < n and 0 <= j < n else None

    def _on_hover(self, scene_pos) -> None:
        cell = self.cell_at(scene_pos)
        if cell is not None:
            self.readout.setText(panel.cell_text(self.result, *cell))

    def export(self, matrix: str | None) -> None:
        if self.result is None:
            return
        name = f"panel-{matrix}.csv" if matrix else "panel.csv"
        self.save_requested.emit(panel.csv_text(self.result, matrix), "Export the panel", name,
                                 "CSV files (*.csv);;All files (*)")

    # -- ResultView ----------------------------------------------------------------------------------
    def _update_buttons(self) -> None:
        running = self.runner.running
        self.again_button.setEnabled(not running and self.request is not None)
        self.cancel_button.setEnabled(running)
        self.export_button.setEnabled(not running and self.result is not None)

    def has_data(self) -> bool:
        return not self.runner.running

    def is_empty(self) -> bool:
        return self.request is None

    def runners(self) -> list:
        return [self.runner]

    def shutdown(self) -> None:
        self.runner.shutdown()
