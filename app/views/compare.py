"""Compare backends: the same job on every variant/backend, as a speed-up bar chart.

Speed-ups are over the slowest complete run (as the seed studies plot their
parallel versions over a sequential baseline); bars fill in as runs finish.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtWidgets import QLabel, QVBoxLayout

from app.views import ResultView
from app.views.plotting import BLUE, GREY, RED


class CompareView(ResultView):
    title = "Compare backends"
    empty_hint = ("Run ▸ Compare backends (Ctrl+B) runs the loaded job on every available variant "
                  "and backend, after a short probe of each, and shows their speed-ups here.")

    def __init__(self):
        super().__init__()
        self.widget = pg.PlotWidget()
        self.plot = self.widget.getPlotItem()
        self.plot.setMenuEnabled(False)
        self.plot.showGrid(x=True, alpha=0.2)
        self.plot.setLabel("bottom", "speed-up over the slowest run (x)")
        self.plot.invertY(True)
        self.caption = QLabel("Run > Compare backends runs the current job on every available "
                              "variant and backend and shows the speed-ups here.")
        self.caption.setWordWrap(True)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.widget, 1)
        layout.addWidget(self.caption)
        self.rows = []
        self._texts = []
        self.running = ""  # what a comparison in progress is doing ("" when none is)

    def reset(self, job) -> None:
        self.rows = []
        self._draw()

    def set_running(self, text: str) -> None:
        """A comparison is probing or running (the tab shows it, not 'Nothing to show yet');
        "" when it has ended."""
        self.running = text
        self._draw()

    def add_row(self, row) -> None:
        self.rows.append(row)
        self._draw()

    def _draw(self) -> None:
        self.plot.clear()
        self._texts = []
        done = [r for r in self.rows if r.complete and r.seconds > 0]
        if not done:
            self.plot.getAxis("left").setTicks([[]])
            self.plot.getAxis("bottom").setTicks([[]])  # no numbers that mean nothing yet
            if self.running:
                self.caption.setText(self.running)
            return
        self.plot.getAxis("bottom").setTicks(None)
        slowest = max(r.seconds for r in done)
        speedups = np.array([slowest / r.seconds for r in done])
        ys = np.arange(len(done))
        brushes = [pg.mkBrush(RED if r.agrees is False else BLUE) for r in done]
        bars = pg.BarGraphItem(x0=np.zeros(len(done)), y=ys, height=0.6, width=speedups,
                               brushes=brushes, pen=pg.mkPen(GREY))
        self.plot.addItem(bars)
        for y, r, s in zip(ys, done, speedups):
            mark = "" if r.agrees is not False else "  (answer differs!)"
            text = pg.TextItem(f" {s:.1f}x  ({r.seconds:.3g} s){mark}", color="k", anchor=(0, 0.5))
            text.setPos(s, y)
            self.plot.addItem(text)
            self._texts.append(text)
        self.plot.getAxis("left").setTicks([[(int(y), r.label) for y, r in zip(ys, done)]])
        self.plot.setXRange(0, speedups.max() * 1.35, padding=0)
        self.plot.setYRange(-0.6, len(done) - 0.4, padding=0)
        disagree = [r.label for r in done if r.agrees is False]
        cancelled = [r.label for r in self.rows if not r.complete and r.skipped is None]
        skipped = [f"{r.label} (about {r.skipped:,.0f} s)" if r.skipped != float("inf")
                   else f"{r.label} (no slice ended within the probe)"
                   for r in self.rows if r.skipped is not None]
        notes = [f"{len(done)} runs of the same job; solve times exclude kernel compilation."]
        if self.running:
            notes.insert(0, self.running)
        if disagree:
            notes.append("These gave a different answer from the first run: " + ", ".join(disagree))
        else:
            notes.append("All runs gave the same answer.")
        if cancelled:
            notes.append("Cancelled: " + ", ".join(cancelled))
        if skipped:
            notes.append("Skipped as pathologically slow here, by their probes' estimates: "
                         + ", ".join(skipped) + ".")
        self.caption.setText(" ".join(notes))

    def has_data(self) -> bool:
        return bool(self.rows)

    def is_empty(self) -> bool:
        return not self.rows and not self.running
