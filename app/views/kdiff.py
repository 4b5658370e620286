"""kdiff views: the specificity profile along the target and one candidate's D matrix.

Positions are the loaded records' own (a region's records keep their numbering:
``Record.offset``); the engine's profiles are indexed from the region's first base.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QFont, QFontDatabase
from PySide6.QtWidgets import (QCheckBox, QComboBox, QHBoxLayout, QLabel, QPlainTextEdit,
                               QPushButton, QSlider, QVBoxLayout)

from app.primers import short_id
from app.views import ResultView
from app.views.matrix import MatrixPanel
from app.views.plotting import BLUE, GREY, ORANGE, RED, SequenceBand
from app.worker import JobRunner

#: Above this many highlighted candidates, highlight as a thick line instead of dots.
SCATTER_LIMIT = 3000


class _Profile:
    """Candidate length per start of one target record, appended while the job runs."""

    def __init__(self):
        self.x = np.zeros(1024)
        self.y = np.zeros(1024)
        self.items: list = []

    def append(self, candidate) -> None:
        n = len(self.items)
        if n == self.x.size:
            self.x = np.concatenate([self.x, np.zeros(n)])
            self.y = np.concatenate([self.y, np.zeros(n)])
        self.x[n], self.y[n] = candidate.start, candidate.length
        self.items.append(candidate)


class SpecificityView(ResultView):
    """Candidate length per start position (short means specific).

    Highlighted: the candidates the table's filters let through, or, with no
    filter, the shortest candidates of the record. Click a point to select it.
    """

    title = "Specificity profile"

    def __init__(self):
        super().__init__()
        self.record_combo = QComboBox()
        self.record_combo.setToolTip("Target record shown")
        self.record_combo.currentIndexChanged.connect(lambda _: (self._fit_x(), self._redraw_all()))
        self.caption = QLabel()
        self.caption.setWordWrap(True)
        top = QHBoxLayout()
        self.record_label = QLabel("Target record:")
        top.addWidget(self.record_label)
        top.addWidget(self.record_combo, 1)
        self.widget = pg.PlotWidget()
        self.plot = self.widget.getPlotItem()
        self.plot.setMenuEnabled(False)
        self.plot.setLabel("bottom", "start position in the target (1-based)")
        self.plot.setLabel("left", "candidate length (bp)")
        self.plot.showGrid(x=True, y=True, alpha=0.15)
        self.plot.setClipToView(True)
        self.plot.setDownsampling(mode="peak")
        self.curve = self.plot.plot(pen=pg.mkPen(BLUE, width=1.2), name="candidate length")
        self.band = SequenceBand(self.plot)  # the target's soft-masked stretches and gaps
        self.widget.setToolTip(SequenceBand.TIP)
        self.marks = pg.ScatterPlotItem(size=7, pen=pg.mkPen(None), brush=pg.mkBrush(ORANGE))
        self.mark_line = self.plot.plot(pen=pg.mkPen(ORANGE, width=3), connect="finite")
        self.plot.addItem(self.marks)
        self.selected_line = pg.InfiniteLine(angle=90, pen=pg.mkPen(RED, width=1.5, style=Qt.PenStyle.DashLine))
        self.selected_line.setVisible(False)
        self.plot.addItem(self.selected_line)
        self.selected_dot = pg.ScatterPlotItem(size=13, symbol="o", pen=pg.mkPen(RED, width=2),
                                               brush=pg.mkBrush(None))
        self.plot.addItem(self.selected_dot)
        self.scan_line = pg.InfiniteLine(angle=90, pen=pg.mkPen(GREY, width=1))
        self.scan_line.setVisible(False)
        self.plot.addItem(self.scan_line)
        self.widget.scene().sigMouseClicked.connect(self._on_click)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(top)
        layout.addWidget(self.widget, 1)
        layout.addWidget(self.caption)
        self._profiles: dict[str, _Profile] = {}
        self._job_targets: tuple = ()
        self._lengths: dict[str, tuple[int, int]] = {}  # id -> (offset, length)
        self._seen = 0
        self._highlight: list | None = None
        self._selected = None
        self._prepared: dict = {}  # id(CandidateTable) -> (table, profiles): the k slider's
        self._stale = False  # candidates shown while hidden: drawn when shown
        self._set_record_choices([])

    # -- data ---------------------------------------------------------------------------------
    def reset(self, job) -> None:
        self._profiles = {}
        self._prepared = {}
        self._seen = 0
        self._selected = None
        self._job_targets = tuple(job.inputs["target"]) if job is not None else ()
        self._lengths = {r.id: (r.offset, len(r)) for r in self._job_targets}
        targets = [r.id for r in self._job_targets]
        for rid in targets:
            self._profiles[rid] = _Profile()
        self._set_record_choices(targets)
        self._fit_x()
        self._redraw_all()

    def _fit_x(self) -> None:
        """The whole record on the x axis from the start: axes do not re-tick as the scan advances."""
        offset, length = self._lengths.get(self.current_record(), (0, 0))
        if length:
            self.plot.enableAutoRange(x=False)
            self.plot.setXRange(offset + 1, offset + length, padding=0.01)
        else:
            self.plot.enableAutoRange(x=True)

    def _set_record_choices(self, ids) -> None:
        self.record_combo.blockSignals(True)
        self.record_combo.clear()
        for rid in ids:
            self.record_combo.addItem(rid, rid)
        self.record_combo.blockSignals(False)
        self.record_combo.setVisible(len(ids) > 1)
        self.record_label.setVisible(len(ids) > 1)

    def _add(self, candidates) -> None:
        new = candidates[self._seen:]
        for c in new:
            self._profiles.setdefault(c.target_id, _Profile()).append(c)
        self._seen = len(candidates)

    def show_progress(self, progress) -> None:
        if progress.partial is None:
            return
        self._add(progress.partial)
        self._draw_curve()
        record = self.current_record()
        profile = self._profiles.get(record)
        if profile is not None and profile.items:
            self.scan_line.setPos(profile.items[-1].start)
            self.scan_line.setVisible(True)

    def show_result(self, result) -> None:
        from engine.kdiff.candidates import CandidateTable

        if isinstance(result.candidates, CandidateTable):
            # Columns: the profile reads them, and the objects made while the run drew go
            # now, not at the k slider's first move (a million took ~0.3 s to free).
            self._profiles = self.prepare(result.candidates)
            self._seen = len(result.candidates)
        else:
            if len(result.candidates) < self._seen or not self._profiles:
                self.reset_from(result)
            self._add(result.candidates)
        self.scan_line.setVisible(False)
        self._redraw_all()

    def reset_from(self, result) -> None:
        self._profiles = {rid: _Profile() for rid in result.profiles}
        self._seen = 0

    def current_record(self) -> str | None:
        if self.record_combo.count():
            return self.record_combo.currentData()
        return next(iter(self._profiles), None)

    # -- drawing --------------------------------------------------------------------------------
    def _redraw_all(self) -> None:
        self._stale = False
        self._draw_band()
        self._draw_curve()
        self._draw_highlight()
        self._draw_selected()

    def _draw_band(self) -> None:
        """The shown target's soft-masked stretches and gaps, just under length 0."""
        record = next((r for r in self._job_targets if r.id == self.current_record()), None)
        self.band.show(record, -1.0)

    def _draw_curve(self) -> None:
        profile = self._profiles.get(self.current_record())
        if profile is None or not profile.items:
            self.curve.setData([], [])
            self.caption.setText("Candidate length per start position appears here while kdiff runs. "
                                 "Short candidates are specific: they differ from the whole background "
                                 "by at least k edits.")
            return
        n = len(profile.items)
        self.curve.setData(profile.x[:n], profile.y[:n], skipFiniteCheck=True)

    def highlight(self, items) -> None:
        self._highlight = None if items is None else list(items)
        self._draw_highlight()

    def _draw_highlight(self) -> None:
        record = self.current_record()
        profile = self._profiles.get(record)
        if profile is None or not profile.items:
            self.marks.setData([], [])
            self.mark_line.setData([], [])
            return
        if self._highlight is None:  # from the profile's columns: no object per candidate
            lengths = profile.y[:len(profile.items)]
            shortest = int(lengths.min())
            chosen = np.flatnonzero(lengths == shortest)
            x, y = profile.x[chosen].astype(float), lengths[chosen].astype(float)
            why = f"the shortest candidates ({shortest} bp)"
        else:
            chosen = [c for c in self._highlight if c.target_id == record]
            why = "candidates the table's filters let through"
            x = np.array([c.start for c in chosen], dtype=float)
            y = np.array([c.length for c in chosen], dtype=float)
        if len(chosen) <= SCATTER_LIMIT:
            self.marks.setData(x, y)
            self.mark_line.setData([], [])
        else:
            self.marks.setData([], [])
            gaps = np.r_[False, np.diff(x) != 1]
            xs = np.insert(x, np.flatnonzero(gaps), np.nan)
            ys = np.insert(y, np.flatnonzero(gaps), np.nan)
            self.mark_line.setData(xs, ys)
        self.caption.setText(f"{len(profile.items):,} candidates in {record}. Highlighted: {why} "
                             f"({len(chosen):,}). Click a point or a table row to see the candidate's "
                             f"D matrix and its closest match in the background.")

    def select(self, item) -> None:
        self._selected = item
        if item is not None and item.target_id != self.current_record():
            index = self.record_combo.findData(item.target_id)
            if index >= 0:
                self.record_combo.setCurrentIndex(index)
        self._draw_selected()

    def _draw_selected(self) -> None:
        item = self._selected
        if item is None or item.target_id != self.current_record():
            self.selected_line.setVisible(False)
            self.selected_dot.setData([], [])
            return
        self.selected_line.setPos(item.start)
        self.selected_line.setVisible(True)
        self.selected_dot.setData([item.start], [item.length])

    def show_candidates(self, table) -> None:
        """Every candidate at once from a CandidateTable's columns (the k slider): the
        profile arrays are its columns, the items the table itself (rows made when read).
        While the view is hidden (the slider is on the Landscape tab) it is drawn when next
        shown: a million points drawn unseen cost each move several ms."""
        self._profiles = self.prepare(table)
        self._seen = len(table)
        if self.isVisible():
            self._redraw_all()
        else:
            self._stale = True

    def showEvent(self, event) -> None:
        super().showEvent(event)
        if self._stale:
            self._redraw_all()

    def prepare(self, table) -> dict:
        """The per-record profiles of a CandidateTable, made once and kept (the k slider's
        tables are made after the run: moving it only draws)."""
        kept = self._prepared.get(id(table))
        if kept is not None and kept[0] is table:
            return kept[1]
        profiles = {}
        for i, rid in enumerate(table.target_ids):
            # (one record: the table itself, no copy)
            part = table if len(table.target_ids) == 1 else table.take(
                np.flatnonzero(table.target == i))
            profile = profiles.setdefault(rid, _Profile())
            profile.x, profile.y, profile.items = part.start.astype(float), \
                part.length.astype(float), part
        if len(self._prepared) > 64:
            self._prepared.clear()
        self._prepared[id(table)] = (table, profiles)
        return profiles

    def _on_click(self, event) -> None:
        if event.button() != Qt.MouseButton.LeftButton:
            return
        pos = event.scenePos()
        if not self.plot.sceneBoundingRect().contains(pos):
            return
        profile = self._profiles.get(self.current_record())
        if profile is None or not profile.items:
            return
        x = self.plot.vb.mapSceneToView(pos).x()
        n = len(profile.items)
        index = int(np.clip(np.searchsorted(profile.x[:n], x), 0, n - 1))
        if index > 0 and abs(profile.x[index - 1] - x) < abs(profile.x[index] - x):
            index -= 1
        self.item_activated.emit(profile.items[index])

    def has_data(self) -> bool:
        return any(p.items for p in self._profiles.values())


class CandidateView(ResultView):
    """The selected candidate's D matrix against the background window of its closest match.

    The closest match is searched on a worker thread (:func:`engine.kdiff.iter_closest_match`);
    selecting another candidate cancels the search in progress.
    """

    title = "Candidate"

    def __init__(self):
        super().__init__()
        self.panel = MatrixPanel("i: prefix (bp)", "j: background window",
                                 "edit distance D")
        self.text = QPlainTextEdit()
        self.text.setReadOnly(True)
        self.text.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        font = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        font.setStyleHint(QFont.StyleHint.Monospace)
        self.text.setFont(font)
        self.text.setMaximumHeight(64)  # three alignment lines: the matrix keeps the room
        self.status = QLabel("Select a candidate (table or profile) to see its D matrix.")
        self.status.setWordWrap(True)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.status)
        layout.addWidget(self.panel, 1)
        layout.addWidget(self.text)
        self.runner = JobRunner(self)
        self.runner.progress.connect(self._on_progress)
        self.runner.finished.connect(self._on_finished)
        self.runner.failed.connect(self._on_failed)
        self._job = None
        self._pending = None
        self._current = None   # the candidate whose closest match is searched or shown
        self._selected = None  # the candidate selected in the table
        self.match = None

    def runners(self) -> list:
        return [self.runner]

    def reset(self, job) -> None:
        self._job = job
        self._pending = self._selected = None
        self.runner.cancel()
        self.match = None
        self.panel.matrix.clear_matrix()
        self.text.clear()
        self.status.setText("Select a candidate (table or profile) to see its D matrix.")

    def select(self, item) -> None:
        if self._job is None:
            return
        if item is None:  # the filters hide the selected candidate: show no stale matrix
            self._selected = self._pending = None
            self.runner.cancel()
            self.match = None
            self.panel.matrix.clear_matrix()
            self.text.clear()
            self.status.setText("No candidate selected (the filters hide the one that was). "
                                "Select one in the table or the profile.")
            return
        self._selected = item
        if self.runner.running:
            self._pending = item
            self.runner.cancel()
            return
        self._start(item)

    def _start(self, item) -> None:
        from engine.gaps import GAP_MIN
        from engine.kdiff import iter_closest_match

        job = self._job
        target = {r.id: r for r in job.inputs["target"]}.get(item.target_id)
        if target is None:
            return
        codes = target.codes[item.start - 1 - target.offset:item.end - target.offset]
        k, strands = job.params["k"], job.params["strands"]
        backgrounds = job.inputs["background"]
        self._current = item
        self.status.setText(f"Searching the background for the closest match of {item.target_id} "
                            f"{item.start:,}–{item.end:,} ({item.length} bp)…")
        gap_min = job.params.get("gap_min", GAP_MIN)  # (the job's background is masked so)
        self.runner.start(lambda token: iter_closest_match(codes, backgrounds, k, strands=strands,
                                                           cancel=token, gap_min=gap_min))

    def _on_progress(self, fraction) -> None:
        item = self._current
        self.status.setText(f"Searching the background for the closest match of {item.start:,}–"
                            f"{item.end:,}… {100 * fraction:.0f}%")

    def _on_finished(self, match) -> None:
        if self._pending is not None:
            item, self._pending = self._pending, None
            self._start(item)
            return
        if match is None or self._selected is None:
            return
        item = self._current
        shift = {r.id: r.offset for r in self._job.inputs["background"]}.get(match.record_id, 0)
        match = replace(match, start=match.start + shift, end=match.end + shift)  # record coordinates
        self.match = match
        rows, cols = zip(*match.path)
        self.panel.matrix.clear_matrix()
        self.panel.matrix.set_matrix(match.matrix, row_letters="-" + item.sequence,
                                     col_letters="-" + match.window)
        self.panel.matrix.set_path(rows, cols)
        where = f"{short_id(match.record_id)} {'forward' if match.strand == '+' else 'reverse complement'}"
        self.status.setText(
            f"Candidate {short_id(item.target_id)} {item.start:,}–{item.end:,} ({item.length} bp) comes closest "
            f"to {where} {match.start:,}–{match.end:,} with {match.distance} edits "
            f"(k = {self._job.params['k']}). Rows 0..{item.length}: candidate prefixes; "
            f"columns: that window of the background; red: the alignment.")
        self.text.setPlainText(alignment_lines(short_id(item.target_id), match, item.start))

    def _on_failed(self, message: str) -> None:
        self.status.setText(f"Could not search the closest match: {message}")

    def has_data(self) -> bool:
        return self.match is not None


    def alignment_text(self) -> str:
        """The closest match of the selected candidate (nothing while another one's is shown)."""
        if self.match is None or self._current != self._selected:
            return ""
        return self.text.toPlainText()

    def shutdown(self) -> None:
        self.runner.shutdown()


#: Columns of the landscape heatmap at most (starts are binned, each bin its shortest length).
HEATMAP_BINS = 2000


def heatmap_bins(lengths: np.ndarray, bins: int = HEATMAP_BINS) -> np.ndarray:
    """(bins x k) of a record's (starts x k) lengths: each bin's shortest candidate (the most
    specific start in it), NaN where no start of the bin has one at that k."""
    n = lengths.shape[0]
    edges = np.linspace(0, n, min(bins, n) + 1).astype(np.int64)[:-1]
    big = np.iinfo(np.int32).max
    shortest = np.minimum.reduceat(np.where(lengths > 0, lengths, big), edges, axis=0)
    return np.where(shortest == big, np.nan, shortest.astype(float))


class LandscapeView(ResultView):
    """The uniqueness landscape of an all-k run (issue #33): a k slider that shows the
    table, the profile and the exports at another k from the one scan's answer, and a
    heatmap of the candidate length over starts x k. ``show_k(k)`` redraws the family's
    table and profile; ``export_tracks(prefix=None)`` writes one track per k."""

    title = "Landscape"

    def __init__(self, show_k, export_tracks, prepare=None, want_every_k=None, every_k=False,
                 shown_k=None):
        super().__init__()
        self._show_k, self._export_tracks, self._prepare = show_k, export_tracks, prepare
        self._shown_k = shown_k  # the k the family shows now (None: the run's)
        self.every_k = QCheckBox("Every k up to k in the next run")
        self.every_k.setToolTip("One scan at k also gives every smaller k (the slider below); "
                                "on the CPU it costs about 1.1 times one k (measured 1.03-1.10x), "
                                "on CUDA about 2.5 times (lambda vs E. coli at k = 8). "
                                "Serial, multicore, Dask or CUDA's bitparallel (without "
                                "neighbours), coarse form.")
        self.every_k.setChecked(every_k)
        if want_every_k is not None:
            self.every_k.toggled.connect(want_every_k)
        self._land = None
        # The last slider move's callback time (the table and plots repaint after it, in the
        # event loop: scripts/probe/landscape_slider.py times both). Not shown: the label
        # said "redrawn in 0 ms" while the repaint still took ~17 ms.
        self.redraw_ms: float | None = None
        self.slider = QSlider(Qt.Orientation.Horizontal)
        self.slider.setMinimum(1)
        self.slider.setEnabled(False)
        self.slider.setToolTip("Show the candidates at this k (from the one run: no recompute)")
        self.slider.valueChanged.connect(self._on_k)
        self.k_label = QLabel()
        self.record_combo = QComboBox()
        self.record_combo.currentIndexChanged.connect(lambda _: self._draw_heatmap())
        self.export_button = QPushButton("Export tracks…")
        self.export_button.setToolTip("One bedGraph per k (and bigWig with pyBigWig installed)")
        self.export_button.clicked.connect(lambda: self._export_tracks())
        self.export_button.setEnabled(False)
        top = QHBoxLayout()
        top.addWidget(self.every_k)
        self.k_title = QLabel("k:")
        top.addWidget(self.k_title)
        top.addWidget(self.slider, 1)
        top.addWidget(self.k_label)
        top.addWidget(self.record_combo)
        top.addWidget(self.export_button)
        self.widget = pg.PlotWidget()
        self.plot = self.widget.getPlotItem()
        self.plot.setMenuEnabled(False)
        self.plot.setLabel("bottom", "start position in the target (1-based)")
        self.plot.setLabel("left", "k (edits)")
        self.image = pg.ImageItem(axisOrder="col-major")  # (bins x k): x the starts, y the k
        self.image.setColorMap(pg.colormap.get("viridis"))
        self.plot.addItem(self.image)
        self.bar = pg.ColorBarItem(colorMap=pg.colormap.get("viridis"), label="candidate length (bp)",
                                   interactive=False)
        self.bar.setImageItem(self.image, insert_in=self.plot)
        self.k_line = pg.InfiniteLine(angle=0, pen=pg.mkPen(RED, width=1.5))
        self.plot.addItem(self.k_line)
        self.caption = QLabel(BEFORE_A_RUN)
        self.caption.setWordWrap(True)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(top)
        layout.addWidget(self.widget, 1)
        layout.addWidget(self.caption)
        layout.addStretch(0)
        self._show_plot(False)

    def _show_plot(self, shown: bool) -> None:
        """The heatmap and its slider only with a landscape: bare axes would look like a
        result; without one the caption says how to get one."""
        for widget in (self.widget, self.k_title, self.slider, self.k_label, self.export_button):
            widget.setVisible(shown)
        if not shown:
            self.record_combo.setVisible(False)
        self.caption.setAlignment(Qt.AlignmentFlag.AlignLeft | (
            Qt.AlignmentFlag.AlignVCenter if shown else Qt.AlignmentFlag.AlignTop))
        self.layout().setStretch(3, 0 if shown else 1)

    def shows_note(self) -> bool:
        return False  # the "Every k" box must stay in reach: it is how a landscape is asked for

    def reset(self, job) -> None:
        self._land = None
        self.slider.setEnabled(False)
        self.export_button.setEnabled(False)
        self.image.clear()
        self.k_label.setText("")
        self._show_plot(False)
        self.caption.setText("kdiff is running…")

    def show_result(self, result) -> None:
        land = getattr(result, "landscape", None)
        self._land = land
        self.slider.setEnabled(land is not None)
        self.export_button.setEnabled(land is not None)
        self._show_plot(land is not None)
        if land is None:
            self.caption.setText(one_k_caption(result.k))
            return
        self.record_combo.blockSignals(True)
        self.record_combo.clear()
        for rid in land.target_ids:
            self.record_combo.addItem(rid)
        self.record_combo.setVisible(len(land.target_ids) > 1)
        self.record_combo.blockSignals(False)
        k = (self._shown_k() if self._shown_k is not None else None) or result.k
        self.slider.blockSignals(True)
        self.slider.setMaximum(len(land.k))
        self.slider.setValue(k)
        self.slider.blockSignals(False)
        self._label(k)
        self._draw_heatmap()
        for each in land.k:  # each k's candidates made now, after the run, not at a slider move
            table = land.candidates(each)
            if self._prepare is not None:
                self._prepare(table)
        if k != result.k:  # (shown again, e.g. back from another family: the profile too)
            self._show_k(k)
        self.caption.setText(f"Candidate length per start and k (1..{len(land.k)}), from one "
                             "scan: short (dark) is specific, white has no candidate. Move the "
                             "slider to show another k in the table, the profile and the exports.")

    def set_k(self, k: int) -> None:
        self.slider.setValue(k)

    def _label(self, k: int) -> None:
        n = int(np.count_nonzero(self._land.length_at(k)))
        self.k_label.setText(f"k = {k} ({n:,} candidates)")
        self.k_line.setPos(k)

    def _on_k(self, k: int) -> None:
        import time

        t0 = time.perf_counter()
        self._show_k(k)
        self.redraw_ms = 1000 * (time.perf_counter() - t0)
        self._label(k)

    def _draw_heatmap(self) -> None:
        land = self._land
        if land is None:
            return
        t = max(0, self.record_combo.currentIndex())
        rows = np.flatnonzero(land.target == t)
        if rows.size == 0:
            self.image.clear()
            return
        grid = heatmap_bins(land.lengths[rows])
        first = float(land.start[rows[0]])
        self.image.setImage(grid, autoLevels=False)
        finite = grid[np.isfinite(grid)]
        if finite.size:
            self.bar.setLevels((float(finite.min()), float(finite.max())))
        self.image.setRect(first - 0.5, 0.5, float(rows.size), float(len(land.k)))

    def export_tracks(self, prefix: str | None = None) -> list[str]:
        return self._export_tracks(prefix)

    def has_data(self) -> bool:
        return self._land is not None


#: The Landscape tab before any run.
BEFORE_A_RUN = ("Tick 'Every k up to k in the next run' and run kdiff (Ctrl+R): "
                "every k from 1 to k comes from the one scan, and a slider here shows the table, "
                "the profile and the exports at any of them at once, under a heatmap of "
                "candidate length per start and k.")


def one_k_caption(k: int) -> str:
    """What the Landscape tab says after a run that computed one k: how to get the landscape
    and what it costs (docs/benchmarks.md, issue 33: 1.03-1.10x one k's CPU time, 2.52x on
    CUDA for W4k8)."""
    return (f"This run computed k = {k} only, so there is no landscape to show. To see every k "
            f"from 1 to {k} (a slider and a heatmap), tick 'Every k up to k in the next run' "
            "above and run again (Ctrl+R). On the CPU that run costs about 1.1 times one k "
            "(measured 1.03-1.10x), on CUDA about 2.5 times (lambda against E. coli at k = 8). "
            "It runs on the serial, multicore and Dask backends with the "
            "coarse form and on CUDA's bitparallel without neighbours; CUDA's conventional and "
            "alternative kernels and the fine forms compute one k.")


def alignment_lines(candidate_label: str, match, candidate_start: int) -> str:
    """Three lines: candidate, match bars, background (positions as read on each strand)."""
    bars = "".join("|" if a != "-" and b != "-" and _match(a, b) else " "
                   for a, b in zip(match.aligned_candidate, match.aligned_background))
    cand_end = candidate_start + sum(ch != "-" for ch in match.aligned_candidate) - 1
    if match.strand == "+":
        b_first, b_last = match.start, match.end
    else:
        b_first, b_last = match.end, match.start  # read right to left on the forward strand
    label_b = f"{short_id(match.record_id)} ({match.strand})"
    width = max(len(candidate_label), len(label_b))
    pos_width = max(len(str(candidate_start)), len(str(b_first)))
    return "\n".join([
        f"{candidate_label:<{width}} {candidate_start:>{pos_width}} {match.aligned_candidate} {cand_end}",
        f"{'':<{width}} {'':>{pos_width}} {bars}",
        f"{label_b:<{width}} {b_first:>{pos_width}} {match.aligned_background} {b_last}",
    ])


def _match(a: str, b: str) -> bool:
    from engine.sequences import IUPAC_CODES

    return (IUPAC_CODES[a] & IUPAC_CODES[b]) != 0
