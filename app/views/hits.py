"""Hits along the text, per pattern (kmismatch, edit search), and the profile along the text.

The adapter turns a result or a partial result into :class:`HitColumns`
(numpy columns), so the view never touches hit objects one by one; it plots at
most ``MAX_POINTS`` hits (the best-scoring first) and bins the rest into the
profile. Redrawing is throttled while a job runs: sorting hundreds of
thousands of hits 30 times a second would only take time from the job.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import pyqtgraph as pg
from PySide6.QtGui import QFontMetrics
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QVBoxLayout

from app.views import ResultView
from app.views.plotting import BLUE

MAX_POINTS = 20_000
PROFILE_BINS = 2000
REDRAW_SECONDS = 0.25
LABEL_HEIGHT = 14  # pixels per pattern name on the y axis


@dataclass(frozen=True)
class HitColumns:
    """Hits as columns: ``record`` and ``pattern`` index ``record_ids``/``pattern_ids``;
    ``start`` is the 1-based position plotted (a hit's start, or its end for edit search, whose
    hits are end positions) in the loaded record's coordinates, which begin after
    ``record_offsets`` (a region's first base); ``score`` is mismatches or edit distance
    (lower is better)."""

    record_ids: tuple[str, ...]
    record_lengths: tuple[int, ...]
    pattern_ids: tuple[str, ...]
    record: np.ndarray
    pattern: np.ndarray
    start: np.ndarray
    score: np.ndarray
    record_offsets: tuple[int, ...] = ()

    def offset(self, index: int) -> int:
        return self.record_offsets[index] if self.record_offsets else 0

    def __len__(self) -> int:
        return int(self.start.shape[0])


@dataclass(frozen=True)
class Profile:
    """A per-position curve along one record from the engine (e.g. best distance per bin)."""

    x: np.ndarray  # 1-based bin starts
    y: np.ndarray
    label: str


class HitsView(ResultView):
    """Top: each hit at its position (x) and pattern (y), coloured by score.
    Bottom: the profile along the record: hits per bin, or the engine's own profile."""

    title = "Hits"

    def __init__(self, columns_of, profile_of=None, score_label: str = "mismatches",
                 max_score_of=None, best_profile: bool = False, position: str = "start"):
        super().__init__()
        self._columns_of = columns_of
        self._profile_of = profile_of
        self._max_score_of = max_score_of or (lambda job: None)
        self._best_profile = best_profile
        self.position = position
        self.score_label = score_label
        self.record_combo = QComboBox()
        self.record_combo.currentIndexChanged.connect(lambda _: self._draw())
        self.record_label = QLabel("Text record:")
        top = QHBoxLayout()
        top.addWidget(self.record_label)
        top.addWidget(self.record_combo, 1)
        self.widget = pg.GraphicsLayoutWidget()
        self.hits_plot = self.widget.addPlot(row=0, col=0)
        self.hits_plot.setLabel("left", "pattern")
        self.hits_plot.showGrid(x=True, alpha=0.15)
        self.hits_plot.setMenuEnabled(False)
        self.hits_plot.invertY(True)
        self.scatter = pg.ScatterPlotItem(size=7, pen=pg.mkPen(None))
        self.hits_plot.addItem(self.scatter)
        self.selected = pg.ScatterPlotItem(size=15, pen=pg.mkPen("#D55E00", width=2), brush=None)
        self.hits_plot.addItem(self.selected)
        self.profile_plot = self.widget.addPlot(row=1, col=0)
        self.profile_plot.setLabel("bottom", "position in the text record (1-based)")
        self.profile_plot.showGrid(x=True, y=True, alpha=0.15)
        self.profile_plot.setMenuEnabled(False)
        self.profile_plot.setXLink(self.hits_plot)
        self.widget.ci.layout.setRowStretchFactor(0, 3)
        self.widget.ci.layout.setRowStretchFactor(1, 2)
        self.profile_curve = self.profile_plot.plot(pen=pg.mkPen(BLUE, width=1.5), stepMode="center",
                                                    fillLevel=0, brush=pg.mkBrush(86, 180, 233, 90))
        self.caption = QLabel()
        self.caption.setWordWrap(True)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(top)
        layout.addWidget(self.widget, 1)
        layout.addWidget(self.caption)
        self.cmap = pg.colormap.get("plasma")
        self._job = None
        self._cols: HitColumns | None = None
        self._result = None
        self._last_draw = 0.0
        self._selected_item = None
        self.reset(None)

    def reset(self, job) -> None:
        self._job = job
        self._cols = None
        self._result = None
        self.scatter.setData([], [])
        self.selected.setData([], [])
        self.profile_curve.setData([], [])
        records = [(r.id, len(r)) for r in job.inputs["text"]] if job is not None else []
        self.record_combo.blockSignals(True)
        self.record_combo.clear()
        for rid, length in records:
            self.record_combo.addItem(f"{rid} ({length:,} bp)", rid)
        self.record_combo.blockSignals(False)
        self.record_combo.setVisible(len(records) > 1)
        self.record_label.setVisible(len(records) > 1)
        self.caption.setText("Hits appear here while the job runs: each dot is a hit at its "
                             f"position, on its pattern's row, coloured by {self.score_label}.")

    def show_progress(self, progress) -> None:
        if progress.partial is None or self._job is None:
            return
        now = time.perf_counter()
        if now - self._last_draw < REDRAW_SECONDS:
            return
        self._last_draw = now
        self._cols = self._columns_of(progress.partial, self._job)
        self._draw()

    def show_result(self, result) -> None:
        self._result = result
        if self._job is None:
            return
        self._cols = self._columns_of(result, self._job)
        if len(self._cols) and self.record_combo.count() > 1:  # open on the busiest record
            busiest = int(np.bincount(self._cols.record, minlength=self.record_combo.count()).argmax())
            self.record_combo.blockSignals(True)
            self.record_combo.setCurrentIndex(busiest)
            self.record_combo.blockSignals(False)
        self._draw()

    def _record_index(self) -> int:
        return max(0, self.record_combo.currentIndex())

    def _draw(self) -> None:
        cols = self._cols
        if cols is None or self._job is None:
            return
        rec = self._record_index()
        rid, length, offset = cols.record_ids[rec], cols.record_lengths[rec], cols.offset(rec)
        mine = np.flatnonzero(cols.record == rec)
        total = mine.size
        if total > MAX_POINTS:  # the best-scoring hits first
            mine = mine[np.argsort(cols.score[mine], kind="stable")[:MAX_POINTS]]
        worst = self._max_score_of(self._job)
        if worst is None:
            worst = int(cols.score.max()) if len(cols) else 1
        scores = cols.score[mine]
        colors = self.cmap.map(np.clip(scores / max(1, worst), 0, 1) * 0.85, mode="qcolor")
        self.scatter.setData(cols.start[mine].astype(float), cols.pattern[mine].astype(float),
                             brush=colors)
        n_patterns = len(cols.pattern_ids)
        if n_patterns <= 30:
            # As many names as fit the plot's height (a small window shows every other one...).
            step = max(1, -(-n_patterns * LABEL_HEIGHT // max(1, int(self.hits_plot.vb.height()))))
            ticks = [(i, p) for i, p in enumerate(cols.pattern_ids) if i % step == 0]
            self.hits_plot.getAxis("left").setTicks([ticks])
            # Both left axes as wide as the names: the linked x axes then cover the same range.
            metrics = QFontMetrics(self.hits_plot.getAxis("left").font())
            width = max(metrics.horizontalAdvance(p) for _, p in ticks) + 40
        else:
            self.hits_plot.getAxis("left").setTicks(None)
            width = 70
        for plot in (self.hits_plot, self.profile_plot):
            plot.getAxis("left").setWidth(width)
        self.hits_plot.setYRange(-0.7, n_patterns - 0.3, padding=0)
        self.hits_plot.setXRange(offset + 1, offset + length, padding=0.01)
        self.profile_plot.setXRange(offset + 1, offset + length, padding=0.01)
        here = cols.record == rec
        self._draw_profile(rid, length, cols.start[here] - offset, cols.score[here], offset)
        shown = f"{mine.size:,} of {total:,}" if total > mine.size else f"{total:,}"
        self.caption.setText(f"{shown} hits in {rid}, {len(cols):,} in all, at their {self.position} "
                             f"positions; colour: {self.score_label} (dark: fewest). Below: "
                             + self._profile_note)
        self._draw_selected()

    def _draw_profile(self, rid: str, length: int, starts: np.ndarray, scores: np.ndarray,
                      offset: int = 0) -> None:
        """``starts`` count from the record's (or region's) first base; ``offset`` moves the
        curve to the loaded record's coordinates."""
        profile = self._profile_of(self._result, rid) if (self._profile_of and self._result) else None
        if profile is not None:
            width = int(profile.x[1] - profile.x[0]) if len(profile.x) > 1 else 1
            values, note = profile.y.astype(float), f"{profile.label} (from the engine)."
        else:
            bins = max(1, min(PROFILE_BINS, length))
            width = -(-length // bins)
            index = (starts - 1) // width
            nbins = max(-(-length // width), int(index.max()) + 1 if index.size else 0)
            if self._best_profile:  # best score per bin; bins without a hit stay empty
                values = np.full(nbins, np.inf)
                np.minimum.at(values, index, scores.astype(float))
                values[np.isinf(values)] = np.nan
                note = (f"best {self.score_label} of the hits in each {width:,} bp along the record "
                        "(none within k where empty).")
            else:
                values = np.bincount(index, minlength=nbins).astype(float)
                note = f"hits per {width:,} bp along the record."
        self._profile_note = note
        edges = offset + 1 + width * np.arange(values.size + 1, dtype=float)
        if self._best_profile:
            centres = edges[:-1] + width / 2
            self.profile_curve.setData(centres, values, stepMode=None, connect="finite", symbol="o",
                                       symbolSize=4, symbolBrush=BLUE, symbolPen=None)
            self.profile_curve.setFillLevel(None)
            worst = self._max_score_of(self._job)
            top = worst if worst is not None else (np.nanmax(values) if np.isfinite(values).any() else 1)
            self.profile_plot.setYRange(-0.5, top + 0.5, padding=0)
            self.profile_plot.setLabel("left", f"best {self.score_label}")
        else:
            self.profile_curve.setData(edges, values, stepMode="center")
            self.profile_plot.setLabel("left", f"hits per {width:,} bp")

    _profile_note = ""

    def select(self, item) -> None:
        self._selected_item = item
        self._draw_selected()

    def _draw_selected(self) -> None:
        item, cols = self._selected_item, self._cols
        if item is None or cols is None or getattr(item, self.position, None) is None:
            self.selected.setData([], [])
            return
        rec = self._record_index()
        if getattr(item, "record_id", None) != cols.record_ids[rec]:
            self.selected.setData([], [])
            return
        try:
            p = cols.pattern_ids.index(item.pattern_id)
        except ValueError:
            return
        x = item.end if self.position == "end" else item.start
        self.selected.setData([float(x)], [float(p)])

    def has_data(self) -> bool:
        return self._cols is not None and len(self._cols) > 0


class PairsView(ResultView):
    """Best score of each pattern in each text record, as a small heatmap with the numbers."""

    title = "Patterns x records"

    def __init__(self, table_of, score_label: str = "distance"):
        super().__init__()
        from app.views.matrix import MatrixPanel

        self._table_of = table_of
        self.panel = MatrixPanel("pattern", "text record", f"best {score_label}",
                                 hint="Move the mouse over a cell to read its pattern, record and value.")
        self.caption = QLabel()
        self.caption.setWordWrap(True)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.panel, 1)
        layout.addWidget(self.caption)
        self._job = None
        self._filled = False
        self.score_label = score_label

    def reset(self, job) -> None:
        self._job = job
        self._filled = False
        self.panel.matrix.clear_matrix()
        self.caption.setText("")

    def show_result(self, result) -> None:
        if self._job is None:
            return
        table = self._table_of(result, self._job)
        if table is None:
            return
        values, pattern_ids, record_ids, missing = table
        shown = np.where(values < 0, missing, values)
        self.panel.matrix.set_matrix(shown.astype(np.int32), levels=(0, max(1, int(shown.max()))))
        self.panel.matrix.set_names(pattern_ids, record_ids)
        self.panel.matrix.set_decoder(lambda v: "none within k" if v == missing else f"{v:,}")
        self._filled = True
        self.caption.setText(f"Best {self.score_label} of each pattern (rows) in each text record "
                             f"(columns); {missing} means none within k.")

    def has_data(self) -> bool:
        return self._filled
