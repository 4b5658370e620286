"""Live throughput against time: cells/s, and comparisons/s for families that count them."""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtWidgets import QVBoxLayout

from app.views import ResultView
from app.views.plotting import BLUE, ORANGE, GrowingSeries


class ThroughputView(ResultView):
    """Rates are measured between consecutive progress reports (what the kernels did in
    that slice); the dashed line is the run's average so far."""

    title = "Throughput"

    def __init__(self, metric: str = "cells"):
        super().__init__()
        self.widget = pg.GraphicsLayoutWidget()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.widget)
        self.series = GrowingSeries(3)  # elapsed, cells/s, comparisons/s
        self._last = None
        self._curves = {}
        self._means = {}
        self._plots = {}
        self.set_metric(metric)

    def set_metric(self, metric: str) -> None:
        self.widget.clear()
        self._curves.clear()
        self._means.clear()
        self._plots.clear()
        rows = [("cells", "DP cells per second", "cells/s", BLUE)]
        if metric == "comparisons":
            rows.append(("comparisons", "symbol comparisons per second", "cmp/s", ORANGE))
        first = None
        for index, (key, title, units, color) in enumerate(rows):
            plot = self.widget.addPlot(row=index, col=0)
            plot.setTitle(title, size="10pt")
            plot.setLabel("left", units=units)
            plot.setLabel("bottom", "solve time", units="s")
            plot.showGrid(x=True, y=True, alpha=0.15)
            plot.setClipToView(True)
            plot.setDownsampling(mode="peak")
            plot.setMenuEnabled(False)
            if first is None:
                first = plot
            else:
                plot.setXLink(first)
            self._curves[key] = plot.plot(pen=pg.mkPen(color, width=2))
            self._means[key] = plot.plot(pen=pg.mkPen(color, width=1, style=pg.QtCore.Qt.PenStyle.DashLine))
            self._plots[key] = plot
        self.metric = metric

    def reset(self, job) -> None:
        self.series.clear()
        self._last = None
        for curve in list(self._curves.values()) + list(self._means.values()):
            curve.setData([], [])

    def add(self, progress) -> None:
        """Record one progress report (every report, not only the drawn ones)."""
        if progress.phase != "running":
            return
        last = self._last
        t0, cells0, comps0 = (last.elapsed, last.cells, last.comparisons) if last else (0.0, 0, 0)
        dt = progress.elapsed - t0
        if dt <= 1e-6:
            return
        self.series.append(progress.elapsed, (progress.cells - cells0) / dt,
                           (progress.comparisons - comps0) / dt)
        self._last = progress

    def show_progress(self, progress) -> None:
        self._draw()

    def show_result(self, result) -> None:
        self._draw()

    def _draw(self) -> None:
        t = self.series.column(0)
        if not t.size:
            return
        for index, key in ((1, "cells"), (2, "comparisons")):
            if key not in self._curves:
                continue
            self._curves[key].setData(t, self.series.column(index), skipFiniteCheck=True)
            last = self._last
            total = last.cells if key == "cells" else last.comparisons
            mean = total / last.elapsed if last.elapsed > 0 else 0.0
            self._means[key].setData([0, t[-1]], [mean, mean])

    def has_data(self) -> bool:
        return self.series.size > 0
