"""A DP-matrix heatmap: one ImageItem fed with setImage(autoLevels=False), a colour bar,
a hover read-out of i, j and the value, and an optional traceback path on top.

Matrices are drawn in their full coordinates even when the data is a
downsampled snapshot (``full_shape``), so axes, hover and path always speak of
real rows and columns. Cell (i, j) is centred on (x=j, y=i); row 0 is at the top.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRectF, Signal
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from app.views.plotting import RED

#: Cells up to this count get their value written in them.
CELL_TEXT_LIMIT = 900
#: Axes up to this many cells get one tick per cell, labelled with the sequence letter.
LETTER_TICK_LIMIT = 80


class MatrixPlot(pg.GraphicsLayoutWidget):
    """The heatmap itself; ``hovered`` carries the read-out text."""

    hovered = Signal(str)

    def __init__(self, row_label: str = "i", col_label: str = "j", value_label: str = "value",
                 colormap: str = "viridis"):
        super().__init__()
        self.plot = self.addPlot(row=0, col=0)
        self.plot.invertY(True)
        self.plot.setLabel("left", row_label)
        self.plot.setLabel("bottom", col_label)
        self.plot.setMenuEnabled(False)
        self.image = pg.ImageItem(axisOrder="row-major")
        self.plot.addItem(self.image)
        self.colorbar = pg.ColorBarItem(colorMap=pg.colormap.get(colormap), values=(0, 1),
                                        interactive=False, width=14, label=value_label)
        self.colorbar.setImageItem(self.image, insert_in=self.plot)
        self.path = pg.PlotDataItem(pen=pg.mkPen(RED, width=2.5))
        self.plot.addItem(self.path)
        self._texts: list[pg.TextItem] = []
        self._data: np.ndarray | None = None
        self._full = (0, 0)
        self._origin = (0, 0)
        self._fit_pending = True
        self.scene().sigMouseMoved.connect(self._on_mouse_moved)

    def clear(self) -> None:
        self._data = None
        self.image.clear()
        self.path.setData([], [])
        self._clear_texts()
        self._fit_pending = True
        self.plot.getAxis("left").setTicks(None)
        self.plot.getAxis("bottom").setTicks(None)

    def has_data(self) -> bool:
        return self._data is not None

    def set_matrix(self, data: np.ndarray, full_shape: tuple[int, int] | None = None,
                   levels: tuple[float, float] | None = None, origin: tuple[int, int] = (0, 0),
                   row_letters: str = "", col_letters: str = "") -> None:
        """Show ``data`` standing for a ``full_shape`` matrix whose first cell is ``origin``.

        The caller hands over an array it no longer writes (``setImage`` keeps a
        reference). ``levels`` default to the data's range.
        """
        rows, cols = full_shape or data.shape
        first = self._data is None or self._full != (rows, cols) or self._origin != origin
        self._data, self._full, self._origin = data, (rows, cols), origin
        if levels is None:
            lo, hi = (float(data.min()), float(data.max())) if data.size else (0.0, 1.0)
            levels = (lo, hi if hi > lo else lo + 1)
        self.image.setImage(data, autoLevels=False, levels=levels)
        self.colorbar.setLevels(levels)
        if first:
            r0, c0 = origin
            self.image.setRect(QRectF(c0 - 0.5, r0 - 0.5, cols, rows))
            self._set_letter_ticks(row_letters, col_letters)
        small = data.shape == (rows, cols) and data.size <= CELL_TEXT_LIMIT
        self._write_cells(data if small else None)
        if first or self._fit_pending:
            self.plot.autoRange(padding=0.02)
            self._fit_pending = False

    def set_path(self, rows, cols) -> None:
        """Traceback path through cell centres (full-matrix coordinates)."""
        self.path.setData(np.asarray(cols, dtype=float), np.asarray(rows, dtype=float))

    def _set_letter_ticks(self, row_letters: str, col_letters: str) -> None:
        r0, c0 = self._origin
        for axis, letters, first in (("left", row_letters, r0), ("bottom", col_letters, c0)):
            if letters and len(letters) <= LETTER_TICK_LIMIT:
                major = [(first + k, f"{ch}") for k, ch in enumerate(letters)]
                self.plot.getAxis(axis).setTicks([major])
            else:
                self.plot.getAxis(axis).setTicks(None)

    def _clear_texts(self) -> None:
        for item in self._texts:
            self.plot.removeItem(item)
        self._texts = []

    def _write_cells(self, data: np.ndarray | None) -> None:
        self._clear_texts()
        if data is None:
            return
        r0, c0 = self._origin
        lo, hi = self.colorbar.levels()
        mid = (lo + hi) / 2
        for (i, j), value in np.ndenumerate(data):
            color = "k" if value > mid else "w"  # readable on viridis' dark and light ends
            text = pg.TextItem(str(int(value)), color=color, anchor=(0.5, 0.5))
            text.setPos(c0 + j, r0 + i)
            self.plot.addItem(text)
            self._texts.append(text)

    def cell_at(self, x: float, y: float):
        """(i, j, value, block) under view point (x, y), or None outside the matrix."""
        if self._data is None:
            return None
        rows, cols = self._full
        r0, c0 = self._origin
        i, j = int(np.floor(y + 0.5)) - r0, int(np.floor(x + 0.5)) - c0
        if not (0 <= i < rows and 0 <= j < cols):
            return None
        h, w = self._data.shape
        a, b = min(h - 1, i * h // rows), min(w - 1, j * w // cols)
        block = (rows / h, cols / w)
        return i + r0, j + c0, self._data[a, b].item(), block

    def _on_mouse_moved(self, pos) -> None:
        if not self.plot.sceneBoundingRect().contains(pos):
            return
        point = self.plot.vb.mapSceneToView(pos)
        cell = self.cell_at(point.x(), point.y())
        if cell is None:
            self.hovered.emit("")
            return
        i, j, value, (bh, bw) = cell
        text = f"i = {i:,}   j = {j:,}   value = {value:,}"
        if bh > 1 or bw > 1:
            text += f"   (one pixel = {bh:.0f} x {bw:.0f} cells)"
        self.hovered.emit(text)


class MatrixPanel(QWidget):
    """A MatrixPlot with its hover read-out and a caption underneath."""

    def __init__(self, row_label: str, col_label: str, value_label: str = "value",
                 hint: str = "Move the mouse over the matrix to read i, j and the value."):
        super().__init__()
        self.matrix = MatrixPlot(row_label, col_label, value_label)
        self.readout = QLabel(hint)
        self.readout.setObjectName("readout")
        self._hint = hint
        self.matrix.hovered.connect(lambda text: self.readout.setText(text or self._hint))
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.matrix, 1)
        layout.addWidget(self.readout)
