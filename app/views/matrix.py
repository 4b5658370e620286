"""A DP-matrix heatmap: one ImageItem fed with setImage(autoLevels=False), a colour bar,
a hover read-out of i, j and the value, and an optional traceback path on top.

Matrices are drawn in their full coordinates even when the data is a
downsampled snapshot (``full_shape``), so axes, hover and path always speak of
real rows and columns. Cell (i, j) is centred on (x=j, y=i); row 0 is at the top.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF, Qt, Signal
from PySide6.QtGui import QColor, QFont, QFontMetrics
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from app.views import ResultView
from app.views.plotting import RED

#: Cells up to this count get their value written in them.
CELL_TEXT_LIMIT = 900
#: Axes up to this many cells get one tick per cell, labelled with the sequence letter.
LETTER_TICK_LIMIT = 80
#: Widest a row's name on the axis (pixels); the hover read-out has it in full.
NAME_PIXELS = 180
#: Narrowest a column's shortened name (pixels): about five characters and the ellipsis.
MIN_NAME_PIXELS = 48


def _font(pixels: int) -> QFont:
    font = QFont()
    font.setPixelSize(pixels)
    return font


class CellValues(pg.GraphicsObject):
    """Every cell's value written in it, in one item (cheaper than a TextItem per cell).

    Text is drawn in device pixels at the cells' centres, and only while cells
    are large enough on screen to be read.
    """

    def __init__(self, text=lambda value: str(int(value)), min_cell: float = 11):
        super().__init__()
        self._data: np.ndarray | None = None
        self._origin = (0, 0)
        self._mid = 0.0
        self._text = text  # value -> what the cell says
        self._min_cell = min_cell  # cells smaller than this on screen (pixels) stay blank

    def set_values(self, data: np.ndarray | None, origin=(0, 0), mid: float = 0.0) -> None:
        self.prepareGeometryChange()
        self._data, self._origin, self._mid = data, origin, mid
        self.update()

    def fits(self, cell_w: float, cell_h: float) -> QFont | None:
        """The font that writes every value inside its cell of that on-screen size, or None
        when no readable font does (the values would run into each other)."""
        if self._data is None or min(cell_w, cell_h) < self._min_cell:
            return None
        longest = max((self._text(v) for v in np.ravel(self._data)), key=len, default="0")
        font = _font(int(max(7, min(cell_h * 0.6, 15))))
        while QFontMetrics(font).horizontalAdvance(longest) > cell_w * 0.92:
            if font.pixelSize() <= 7:
                return None
            font = _font(font.pixelSize() - 1)
        return font

    def boundingRect(self) -> QRectF:
        if self._data is None:
            return QRectF()
        rows, cols = self._data.shape
        return QRectF(self._origin[1] - 0.5, self._origin[0] - 0.5, cols, rows)

    def paint(self, painter, *args) -> None:
        if self._data is None:
            return
        transform = painter.transform()
        cell_w = abs(transform.m11()) + abs(transform.m21())
        cell_h = abs(transform.m22()) + abs(transform.m12())
        font = self.fits(cell_w, cell_h)
        if font is None:
            return
        painter.save()
        painter.resetTransform()
        painter.setFont(font)
        dark, light = QColor("black"), QColor("white")
        r0, c0 = self._origin
        for (i, j), value in np.ndenumerate(self._data):
            centre = transform.map(QPointF(c0 + j, r0 + i))
            painter.setPen(dark if value > self._mid else light)  # viridis: light at the top
            painter.drawText(QRectF(centre.x() - cell_w / 2, centre.y() - cell_h / 2, cell_w, cell_h),
                             Qt.AlignmentFlag.AlignCenter, self._text(value))
        painter.restore()


class MatrixPlot(pg.GraphicsLayoutWidget):
    """The heatmap itself; ``hovered`` carries the read-out text."""

    hovered = Signal(str)

    def __init__(self, row_label: str = "i", col_label: str = "j", value_label: str = "value",
                 colormap: str = "viridis"):
        super().__init__()
        self.plot = self.addPlot(row=0, col=0)
        self.plot.invertY(True)
        self._titles = (row_label, col_label)
        self._axis_titles = {"left": row_label, "bottom": col_label}
        self.set_axis_labels(row_label, col_label)
        self.plot.setMenuEnabled(False)
        self.image = pg.ImageItem(axisOrder="row-major")
        self.plot.addItem(self.image)
        cmap = pg.colormap.get(colormap)
        # The image gets its own look-up table (see set_matrix); the bar is its legend.
        self._base_lut = cmap.getLookupTable(nPts=256, alpha=True)
        self.colorbar = pg.ColorBarItem(colorMap=cmap, values=(0, 1), interactive=False, width=14,
                                        label=value_label)
        self.addItem(self.colorbar, row=0, col=1)
        self.path = pg.PlotDataItem(pen=pg.mkPen(RED, width=2.5))
        self.values = CellValues()
        self.plot.addItem(self.values)
        self.plot.addItem(self.path)
        self._data: np.ndarray | None = None
        self._full = (0, 0)
        self._origin = (0, 0)
        self._fit_pending = True
        self._read = None  # stored value -> what the hover read-out says
        self._letters = ("", "")  # the sequences along the rows and columns, if short
        self._shown_letters = None
        self._names: tuple[list, list] | None = None  # the rows' and columns' names, if named
        self._show_scales(False)
        self.scene().sigMouseMoved.connect(self._on_mouse_moved)
        # Letters are drawn only while a cell is tall (wide) enough for one: else they smear
        # into each other and the axis shows numbers instead.
        self.plot.vb.sigResized.connect(lambda *_: self._refresh_ticks())
        self.plot.vb.sigRangeChanged.connect(lambda *_: self._refresh_ticks())

    def set_decoder(self, read, to_score=None) -> None:
        """Snapshots store scaled values: ``read(value) -> str`` for the hover read-out and
        ``to_score(value) -> float`` for the colour bar's tick labels."""
        self._read = read
        axis = self.colorbar.axis
        if to_score is None:
            axis.tickStrings = type(axis).tickStrings.__get__(axis)
        else:  # the bar's positions stay in stored units; its labels speak in scores
            axis.tickStrings = lambda values, scale, spacing: [f"{to_score(v):,.0f}" for v in values]

    # Not named clear(): GraphicsLayoutWidget binds the layout's clear() on each instance.
    def clear_matrix(self) -> None:
        self._data = None
        self.set_decoder(None)
        self.image.clear()
        self.path.setData([], [])
        self.values.set_values(None)
        self._fit_pending = True
        self._letters = ("", "")
        self._shown_letters = None
        self._names = None
        self.plot.getAxis("left").setTicks(None)
        self.plot.getAxis("bottom").setTicks(None)
        self._show_scales(False)

    def _show_scales(self, shown: bool) -> None:
        """Axis numbers and the colour bar only over a matrix: empty axes' 0..1 mean nothing."""
        for name in ("left", "bottom"):
            self.plot.getAxis(name).setStyle(showValues=shown)
        self.colorbar.setVisible(shown)

    def scales_shown(self) -> bool:
        return self.colorbar.isVisible()

    def has_data(self) -> bool:
        return self._data is not None

    def set_matrix(self, data: np.ndarray, full_shape: tuple[int, int] | None = None,
                   levels: tuple[float, float] | None = None, origin: tuple[int, int] = (0, 0),
                   row_letters: str = "", col_letters: str = "", empty: int | None = None) -> None:
        """Show ``data`` (non-negative integers) standing for a ``full_shape`` matrix whose
        first cell is ``origin``.

        The caller hands over an array it no longer writes (``setImage`` keeps a
        reference). ``levels`` default to the range of the values; cells equal to
        ``empty`` (not computed yet) are drawn light grey.

        Integer frames go through a look-up table indexed by the stored value
        itself (levels 0..len-1), which keeps uint16 snapshots on pyqtgraph's fast
        path and lets 'not computed' have its own colour.
        """
        rows, cols = full_shape or data.shape
        first = self._data is None or self._full != (rows, cols) or self._origin != origin
        self._data, self._full, self._origin = data, (rows, cols), origin
        if levels is None:
            filled = data[data != empty] if empty is not None else data
            lo, hi = (int(filled.min()), int(filled.max())) if filled.size else (0, 1)
            levels = (lo, hi if hi > lo else lo + 1)
        top = 65535 if data.dtype == np.uint16 else int(max(levels[1], data.max() if data.size else 0))
        lo, hi = levels
        index = np.clip((np.arange(top + 1) - lo) * 255 // max(1, hi - lo), 0, 255)
        lut = self._base_lut[index]
        if empty is not None and 0 <= empty <= top:
            lut[empty] = (225, 225, 225, 255)
        self.image.setImage(data, autoLevels=False, levels=(0, top), lut=lut)
        self.colorbar.setLevels(levels)
        self._show_scales(True)
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
        self._letters = (row_letters if len(row_letters) <= LETTER_TICK_LIMIT else "",
                         col_letters if len(col_letters) <= LETTER_TICK_LIMIT else "")
        self._shown_letters = None
        self._show_letter_ticks()

    def set_names(self, row_names, col_names) -> None:
        """Name the rows and columns (a small matrix of named things): the axes show the names
        that fit, every n-th one and shortened in the middle where they would overlap, and
        the hover read-out names the cell's row and column in full."""
        self._names = (list(row_names), list(col_names))
        self._refresh_ticks()

    def set_axis_labels(self, row_label: str, col_label: str) -> None:
        """Name the axes; a name longer than its axis is shortened (in full in its tooltip)."""
        self._axis_titles = {"left": row_label, "bottom": col_label}
        self._shown_titles: dict[str, str] = {}
        self._fit_axis_labels()

    def _fit_axis_labels(self) -> None:
        rect = self.plot.vb.boundingRect()
        for name, room in (("left", rect.height()), ("bottom", rect.width())):
            axis, full = self.plot.getAxis(name), self._axis_titles[name]
            if room <= 1:  # not laid out yet: the whole name, fitted at the first resize
                shown = full
            else:
                metrics = QFontMetrics(axis.label.font())
                shown = metrics.elidedText(full, Qt.TextElideMode.ElideRight, int(room) - 4)
            if self._shown_titles.get(name) != shown:
                self._shown_titles[name] = shown
                axis.setLabel(shown)
                axis.setToolTip(full if shown != full else "")

    def axis_label_shown(self, name: str) -> str:
        """The text on the axis now ("left" or "bottom"): the name, or as much as fits."""
        return self._shown_titles.get(name, "")

    def _refresh_ticks(self) -> None:
        self._fit_axis_labels()
        if self._names is None:
            self._show_letter_ticks()
            return
        metrics = QFontMetrics(self.plot.getAxis("left").style.get("tickFont") or QFont())
        per_row, per_col = self.cell_pixels()
        r0, c0 = self._origin
        rows, cols = self._names
        # Rows: every step-th name, a line of text apart; at most NAME_PIXELS wide.
        step = max(1, int(np.ceil(metrics.height() * 1.1 / max(per_row, 1e-9))))
        self.plot.getAxis("left").setTicks([[
            (r0 + i, metrics.elidedText(str(rows[i]), Qt.TextElideMode.ElideMiddle, NAME_PIXELS))
            for i in range(0, len(rows), step)]])
        # Columns: whole names where they fit; else the fewest skipped that leave each name
        # MIN_NAME_PIXELS, shortened in the middle (where record names differ) to its room.
        gap = metrics.horizontalAdvance("  ")
        widest = max((metrics.horizontalAdvance(str(c)) for c in cols), default=0)
        step = 1 if per_col >= widest + gap else max(
            1, int(np.ceil((MIN_NAME_PIXELS + gap) / max(per_col, 1e-9))))
        room = max(1, int(per_col * step - gap))
        self.plot.getAxis("bottom").setTicks([[
            (c0 + j, metrics.elidedText(str(cols[j]), Qt.TextElideMode.ElideMiddle, room))
            for j in range(0, len(cols), step)]])

    def letters_shown(self) -> tuple[bool, bool]:
        """Whether the rows' and the columns' letters are on the axes now (tests)."""
        return tuple(bool(on) for on in (self._shown_letters or (False, False)))

    def _show_letter_ticks(self) -> None:
        r0, c0 = self._origin
        per_cell = self.cell_pixels()
        room = self.letter_room()
        shown = tuple(bool(letters) and size >= need
                      for letters, size, need in zip(self._letters, per_cell, room))
        if shown == getattr(self, "_shown_letters", None):
            return
        self._shown_letters = shown
        for axis, letters, first, on in (("left", self._letters[0], r0, shown[0]),
                                         ("bottom", self._letters[1], c0, shown[1])):
            if on:
                self.plot.getAxis(axis).setTicks([[(first + k, ch) for k, ch in enumerate(letters)]])
            else:
                self.plot.getAxis(axis).setTicks(None)

    def letter_room(self) -> tuple[float, float]:
        """Pixels a row (column) needs for its letter to stand clear of the next one's."""
        metrics = QFontMetrics(self.plot.getAxis("left").style.get("tickFont") or QFont())
        return metrics.height() * 0.9, metrics.horizontalAdvance("W") * 1.3

    def cell_pixels(self) -> tuple[float, float]:
        """On-screen (height, width) of one cell, in pixels."""
        vb = self.plot.vb
        (x0, x1), (y0, y1) = vb.viewRange()
        rect = vb.boundingRect()
        return (rect.height() / max(1e-9, abs(y1 - y0)), rect.width() / max(1e-9, abs(x1 - x0)))

    def _write_cells(self, data: np.ndarray | None) -> None:
        lo, hi = self.colorbar.levels()
        self.values.set_values(data, self._origin, (lo + hi) / 2)

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
        shown = self._read(value) if self._read is not None else f"{value:,}"
        if self._names is not None:
            (row_title, col_title), (rows, cols) = self._titles, self._names
            text = f"{row_title}: {rows[i]}   {col_title}: {cols[j]}   value = {shown}"
        else:
            text = f"i = {i:,}   j = {j:,}   value = {shown}"
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


class LiveMatrixView(ResultView):
    """The DP matrix while it is being filled (``Progress.snapshot``), then the traceback path.

    The adapter says how to read the snapshot: ``scale(job) -> MatrixScale``
    (levels and how a stored value reads as a score) and ``path(result)`` (rows
    and columns of the path, or None).
    """

    title = "DP matrix"

    def __init__(self, scale, path, row_label="i: sequence A", col_label="j: sequence B"):
        super().__init__()
        self.panel = MatrixPanel(row_label, col_label, "score")
        self.caption = QLabel("The matrix appears here while the job runs "
                              "(downsampled tiles when it is larger than the view).")
        self.caption.setWordWrap(True)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.panel, 1)
        layout.addWidget(self.caption)
        self._scale_of, self._path_of = scale, path
        self.scale: MatrixScale | None = None
        self._job = None
        self._filled = False

    def reset(self, job) -> None:
        self._job = job
        self._filled = False
        self.panel.matrix.clear_matrix()
        self.scale = self._scale_of(job) if job is not None else None
        if job is not None:
            a, b = job.inputs["a"][0], job.inputs["b"][0]
            self.panel.matrix.set_axis_labels(f"i: {a.id} ({len(a):,} bp)", f"j: {b.id} ({len(b):,} bp)")
            self.panel.matrix.set_decoder(self.scale.read, self.scale.to_score)
            self.panel.matrix.colorbar.setLabel("left", self.scale.label)

    def _show(self, snapshot, shape) -> None:
        if snapshot is None or self.scale is None:
            return
        self.panel.matrix.set_matrix(snapshot, shape, self.scale.levels, empty=self.scale.empty)
        self._filled = True
        h, w = snapshot.shape
        rows, cols = shape
        note = self.scale.caption(snapshot)
        if (h, w) != tuple(shape):
            self.caption.setText(f"{rows:,} x {cols:,} cells shown as {h:,} x {w:,} tiles. {note}")
        else:
            self.caption.setText(f"{rows:,} x {cols:,} cells. {note}")

    def show_progress(self, progress) -> None:
        self._show(progress.snapshot, progress.snapshot_shape)

    def show_result(self, result) -> None:
        self._show(getattr(result, "snapshot", None), getattr(result, "snapshot_shape", None))
        path = self._path_of(result)
        if path is not None and self._filled:
            rows, cols = path
            self.panel.matrix.set_path(rows, cols)

    def has_data(self) -> bool:
        return self._filled


class MatrixScale:
    """How a family's snapshot values read: colour levels, stored value -> score, labels.

    ``empty`` is the stored value of a cell not computed yet (None if there is none);
    ``empty_note`` says how such cells look, shown only while the matrix has one.
    """

    def __init__(self, levels, to_score=lambda v: v, label="score", note="", empty=None,
                 empty_note=""):
        self.levels, self.to_score, self.label, self.note, self.empty = levels, to_score, label, note, empty
        self.empty_note = empty_note

    def caption(self, snapshot) -> str:
        """The note under the matrix for this snapshot: the grey cells named while there are any."""
        grey = self.empty is not None and self.empty_note and bool((snapshot == self.empty).any())
        return " ".join(t for t in (self.empty_note if grey else "", self.note) if t)

    def read(self, value) -> str:
        if self.empty is not None and value == self.empty:
            return "not computed yet"
        return f"{self.to_score(value):,.0f}"
