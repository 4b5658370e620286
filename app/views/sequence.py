"""A zoomable view of a target sequence, as Primer3Plus's result page and Benchling draw one.

Along the record's own numbering (x: 1-based positions; base p spans p-0.5..p+0.5):

- both strands as letters once a base is wide enough on screen for one, else a density
  track (GC content per bin, over both strand rows);
- gaps (runs of N) and soft-masked stretches (lower-case letters, or intervals a caller
  passes as ``"masked"``) as bands under the strands;
- the chosen pair's primers as arrows on their strands (forward above, reverse below) and
  its amplicon shaded;
- other candidates as thin marks on their strands; clicking one emits
  ``candidate_clicked(payload)``;
- region intervals (``"amplify"``, ``"exclude"``, ``"include"``...) as coloured bands on top.

The small API the Pairs page and the kdiff results call:
:meth:`SequenceView.set_sequence`, :meth:`~SequenceView.set_pair`,
:meth:`~SequenceView.set_candidates`, :meth:`~SequenceView.set_intervals`, and
:meth:`~SequenceView.zoom_to`. Wheel and drag zoom and pan along x only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF, Qt, Signal
from PySide6.QtGui import QColor, QFont
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from app.views import ResultView
from app.views.plotting import BLUE, GREEN, GREY, ORANGE, PURPLE, RED

#: Rows of the track (y): forward strand letters on [0, 1], reverse on [-1, 0].
FORWARD_ROW, REVERSE_ROW = 0.5, -0.5
PRIMER_ROWS = {"+": (1.08, 1.5), "-": (-1.5, -1.08)}
CANDIDATE_ROWS = {"+": (1.58, 1.78), "-": (-1.78, -1.58)}
MASK_ROWS = {"masked": (-1.0, 1.0), "gap": (-1.0, 1.0)}
INTERVAL_ROW = (1.86, 2.2)
Y_RANGE = (-1.9, 2.25)
#: Colours of the interval kinds (others: grey).
INTERVAL_COLOURS = {"amplify": GREEN, "exclude": RED, "include": BLUE}
#: Pixels a base needs on screen before its letter is drawn.
LETTER_PIXELS = 8.0
_COMPLEMENT = str.maketrans("ACGTUMRWSYKVHDBNacgtumrwsykvhdbn", "TGCAAKYWSRMBDHVNtgcaakywsrmbdhvn")


@dataclass(frozen=True)
class Mark:
    """One candidate on the track: ``start..end`` (1-based, inclusive, record numbering) on
    ``strand`` ('+' or '-'), and what a click on it hands back."""

    start: int
    end: int
    strand: str = "+"
    payload: Any = None


def runs(flags: np.ndarray) -> list[tuple[int, int]]:
    """0-based half-open (start, stop) of the runs of True in ``flags``."""
    if not flags.size:
        return []
    padded = np.concatenate([[False], flags, [False]]).astype(np.int8)
    edges = np.flatnonzero(np.diff(padded))
    return list(zip(edges[0::2].tolist(), edges[1::2].tolist()))


def gc_density(text_bytes: np.ndarray, first: int, last: int, bins: int) -> tuple[np.ndarray, np.ndarray]:
    """GC fraction of ``bins`` equal bins over 0-based positions first..last-1 (x: bin centres,
    0-based); N and other codes count as not GC."""
    gc = np.isin(text_bytes[first:last], np.frombuffer(b"GCgcSs", dtype=np.uint8))
    bins = max(1, min(bins, last - first))
    edges = np.linspace(first, last, bins + 1).astype(np.int64)
    sums = np.add.reduceat(gc.astype(np.int32), edges[:-1] - first) if gc.size else np.zeros(bins)
    widths = np.maximum(1, np.diff(edges))
    return (edges[:-1] + edges[1:]) / 2.0, sums / widths


class _Letters(pg.GraphicsObject):
    """Both strands' letters, drawn in device pixels for the visible bases only."""

    def __init__(self, view: "SequenceView"):
        super().__init__()
        self.view = view
        self.shown = False  # whether the last paint drew letters (tests)

    def boundingRect(self) -> QRectF:
        view = self.view
        return QRectF(view.offset + 0.5, -1.0, max(1, len(view.text)), 2.0)

    def paint(self, painter, *args) -> None:
        view = self.view
        transform = painter.transform()
        base_w = abs(transform.m11())
        self.shown = bool(view.text) and base_w >= LETTER_PIXELS
        if not self.shown:
            return
        (x0, x1), _ = view.plot.vb.viewRange()
        first = max(0, int(np.floor(x0 - view.offset - 1)))
        last = min(len(view.text), int(np.ceil(x1 - view.offset)) + 1)
        painter.save()
        painter.resetTransform()
        font = QFont("monospace")
        font.setStyleHint(QFont.StyleHint.Monospace)
        font.setPixelSize(int(max(8, min(base_w * 0.9, 14))))
        painter.setFont(font)
        row_h = abs(transform.m22())
        normal, masked = QColor("#202020"), QColor("#9a9a9a")
        for i in range(first, last):
            letter = view.text[i]
            painter.setPen(masked if letter.islower() or letter in "Nn" else normal)
            for row, base in ((FORWARD_ROW, letter), (REVERSE_ROW, letter.translate(_COMPLEMENT))):
                centre = transform.map(QPointF(view.offset + i + 1, row))
                painter.drawText(QRectF(centre.x() - base_w / 2, centre.y() - row_h / 2, base_w, row_h),
                                 Qt.AlignmentFlag.AlignCenter, base.upper())
        painter.restore()


class _Arrows(pg.GraphicsObject):
    """Primers as arrows on their strands: the point at the 3′ end."""

    def __init__(self):
        super().__init__()
        self.items: list[tuple[Mark, QColor]] = []

    def set_items(self, items) -> None:
        self.prepareGeometryChange()
        self.items = list(items)
        self.update()

    def boundingRect(self) -> QRectF:
        if not self.items:
            return QRectF()
        left = min(m.start for m, _ in self.items) - 0.5
        right = max(m.end for m, _ in self.items) + 0.5
        return QRectF(left, PRIMER_ROWS["-"][0], right - left, PRIMER_ROWS["+"][1] - PRIMER_ROWS["-"][0])

    def paint(self, painter, *args) -> None:
        transform = painter.transform()
        painter.save()
        painter.resetTransform()
        for mark, colour in self.items:
            low, high = PRIMER_ROWS[mark.strand]
            a = transform.map(QPointF(mark.start - 0.5, high))
            b = transform.map(QPointF(mark.end + 0.5, low))
            rect = QRectF(a, b).normalized()
            head = min(rect.width() * 0.4, rect.height() * 0.8)
            mid = rect.center().y()
            if mark.strand == "+":  # 5′ left, 3′ right
                points = [rect.topLeft(), QPointF(rect.right() - head, rect.top()),
                          QPointF(rect.right(), mid), QPointF(rect.right() - head, rect.bottom()),
                          rect.bottomLeft()]
            else:
                points = [rect.topRight(), QPointF(rect.left() + head, rect.top()),
                          QPointF(rect.left(), mid), QPointF(rect.left() + head, rect.bottom()),
                          rect.bottomRight()]
            painter.setPen(pg.mkPen(colour.darker(130), width=1))
            painter.setBrush(pg.mkBrush(colour))
            painter.drawPolygon(points)
        painter.restore()


class SequenceView(QWidget):
    """The target as a zoomable track (module docstring). Signals ``candidate_clicked(payload)``
    and ``position_clicked(int)`` (a base elsewhere on the track)."""

    candidate_clicked = Signal(object)
    position_clicked = Signal(int)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.record_id = ""
        self.text = ""
        self.offset = 0
        self._bytes = np.zeros(0, dtype=np.uint8)
        self.pair: tuple[Mark | None, Mark | None] = (None, None)
        self.candidates: list[Mark] = []
        self._starts = np.zeros(0)
        self.intervals: dict[str, list[tuple[int, int]]] = {}

        self.widget = pg.PlotWidget()
        self.plot = self.widget.getPlotItem()
        self.plot.setMenuEnabled(False)
        self.plot.hideButtons()
        self.plot.hideAxis("left")
        self.plot.setLabel("bottom", "position in the target (1-based)")
        self.plot.vb.setMouseEnabled(x=True, y=False)
        self.plot.setYRange(*Y_RANGE, padding=0)
        self.plot.vb.sigXRangeChanged.connect(lambda *_: self._draw_density())

        self.amplicon = pg.LinearRegionItem(orientation="vertical", movable=False,
                                            brush=pg.mkBrush(QColor(0, 158, 115, 45)),
                                            pen=pg.mkPen(QColor(0, 158, 115, 160)))
        self.amplicon.setZValue(-20)
        self.amplicon.setVisible(False)
        self.plot.addItem(self.amplicon)
        self.mask_bars = {kind: pg.BarGraphItem(x0=[], x1=[], y0=[], y1=[], pen=pg.mkPen(None),
                                                brush=pg.mkBrush(colour))
                          for kind, colour in (("masked", QColor(150, 150, 150, 70)),
                                               ("gap", QColor(60, 60, 60, 120)))}
        for bar in self.mask_bars.values():
            bar.setZValue(-10)
            self.plot.addItem(bar)
        self.axis_line = pg.InfiniteLine(pos=0, angle=0, pen=pg.mkPen(GREY, width=1))
        self.plot.addItem(self.axis_line)
        self.density = pg.PlotDataItem(pen=pg.mkPen(BLUE, width=1.2), fillLevel=-1.0,
                                       brush=pg.mkBrush(QColor(0, 114, 178, 50)))
        self.plot.addItem(self.density)
        self.letters = _Letters(self)
        self.plot.addItem(self.letters)
        self.candidate_bars = pg.BarGraphItem(x0=[], x1=[], y0=[], y1=[], pen=pg.mkPen(None),
                                              brush=pg.mkBrush(QColor(90, 90, 90, 170)))
        self.plot.addItem(self.candidate_bars)
        self.interval_bars: list = []
        self.arrows = _Arrows()
        self.plot.addItem(self.arrows)
        self.widget.scene().sigMouseClicked.connect(self._on_click)

        self.caption = QLabel()
        self.caption.setObjectName("help")
        self.caption.setWordWrap(True)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.widget, 1)
        layout.addWidget(self.caption)
        self._caption()

    # -- the API -------------------------------------------------------------------------------------
    def set_sequence(self, record_id: str, text: str, offset: int = 0) -> None:
        """Show ``text`` (the target or a region of it; lower case: soft-masked, N: gaps) whose
        first base is position ``offset + 1`` of record ``record_id``. Clears the pair, the
        candidates and the intervals, and shows the whole sequence."""
        self.record_id, self.text, self.offset = record_id, text, int(offset)
        self._bytes = np.frombuffer(text.encode("ascii", "replace"), dtype=np.uint8)
        self.pair = (None, None)
        self.candidates = []
        self._starts = np.zeros(0)
        self.intervals = {}
        self._draw_masks()
        self._draw_pair()
        self._draw_candidates()
        self._draw_intervals()
        self.plot.vb.setLimits(xMin=self.offset + 0.5 - 5, xMax=self.offset + len(text) + 0.5 + 5,
                               minXRange=8)
        self.zoom_to(self.offset + 1, self.offset + max(1, len(text)))
        self._caption()

    def set_pair(self, forward: tuple[int, int] | None, reverse: tuple[int, int] | None,
                 zoom: bool = True) -> None:
        """The chosen pair: each primer's site as (start, end), 1-based inclusive, in the
        record's numbering (the reverse primer binds the minus strand at the amplicon's end);
        the amplicon is shaded from the forward's start to the reverse's end. None: no pair.
        ``zoom`` brings the amplicon into view."""
        self.pair = (Mark(*forward, "+") if forward else None, Mark(*reverse, "-") if reverse else None)
        self._draw_pair()
        if zoom and forward and reverse:
            start, end = forward[0], reverse[1]
            pad = max(10, (end - start) // 10)
            self.zoom_to(start - pad, end + pad)
        self._caption()

    def set_candidates(self, marks: Sequence[Mark]) -> None:
        """Other candidates (primers, candidate regions) as thin marks; a click on one emits
        ``candidate_clicked`` with its payload."""
        self.candidates = sorted(marks, key=lambda m: (m.start, m.end))
        self._starts = np.array([(m.start + m.end) / 2 for m in self.candidates], dtype=float)
        self._draw_candidates()
        self._caption()

    def set_intervals(self, kind: str, intervals: Sequence[tuple[int, int]]) -> None:
        """Intervals of one ``kind`` (1-based inclusive, record numbering): ``"masked"`` (soft-
        masked stretches a caller knows of, drawn with the lower-case ones), or region kinds
        (``"amplify"``, ``"exclude"``, ``"include"``, any other) drawn as bands on top."""
        self.intervals[kind] = [(int(a), int(b)) for a, b in intervals]
        if kind == "masked":
            self._draw_masks()
        else:
            self._draw_intervals()
        self._caption()

    def zoom_to(self, start: float, end: float) -> None:
        """Show positions start..end."""
        self.plot.setXRange(start - 0.5, end + 0.5, padding=0)

    # -- what it shows (tests, captions) ---------------------------------------------------------
    def gaps(self) -> list[tuple[int, int]]:
        """Runs of N as (start, end), 1-based inclusive, record numbering."""
        return [(self.offset + a + 1, self.offset + b) for a, b in runs(np.isin(self._bytes, (78, 110)))]

    def masked(self) -> list[tuple[int, int]]:
        """Soft-masked stretches: lower-case runs (not N) and the ``"masked"`` intervals."""
        lower = (self._bytes >= 97) & (self._bytes <= 122) & (self._bytes != 110)
        found = [(self.offset + a + 1, self.offset + b) for a, b in runs(lower)]
        return sorted(set(found) | set(self.intervals.get("masked", [])))

    def visible_range(self) -> tuple[float, float]:
        (x0, x1), _ = self.plot.vb.viewRange()
        return x0, x1

    def base_pixels(self) -> float:
        x0, x1 = self.visible_range()
        return self.plot.vb.width() / max(1e-9, x1 - x0)

    def letters_visible(self) -> bool:
        return bool(self.text) and self.base_pixels() >= LETTER_PIXELS

    # -- drawing -----------------------------------------------------------------------------------
    def _draw_masks(self) -> None:
        for kind, spans in (("masked", self.masked()), ("gap", self.gaps())):
            low, high = MASK_ROWS[kind]
            bar = self.mask_bars[kind]
            x0 = np.array([a - 0.5 for a, _ in spans], dtype=float)
            x1 = np.array([b + 0.5 for _, b in spans], dtype=float)
            bar.setOpts(x0=x0, x1=x1, y0=np.full(len(spans), low), y1=np.full(len(spans), high))

    def _draw_density(self) -> None:
        """GC content per bin while the letters do not fit (about one bin per 3 pixels)."""
        if not self.text or self.letters_visible():
            self.density.setData([], [])
            return
        x0, x1 = self.visible_range()
        first = int(np.clip(np.floor(x0 - self.offset - 0.5), 0, len(self.text)))
        last = int(np.clip(np.ceil(x1 - self.offset + 0.5), first, len(self.text)))
        if last - first < 2:
            self.density.setData([], [])
            return
        bins = max(2, int(self.plot.vb.width() // 3))
        centres, gc = gc_density(self._bytes, first, last, bins)
        self.density.setData(centres + self.offset + 0.5, gc * 2.0 - 1.0)

    def _draw_pair(self) -> None:
        forward, reverse = self.pair
        items = [(m, QColor(c)) for m, c in ((forward, ORANGE), (reverse, PURPLE)) if m is not None]
        self.arrows.set_items(items)
        if forward is not None and reverse is not None:
            self.amplicon.setRegion((forward.start - 0.5, reverse.end + 0.5))
            self.amplicon.setVisible(True)
        else:
            self.amplicon.setVisible(False)

    def _draw_candidates(self) -> None:
        marks = self.candidates
        rows = np.array([CANDIDATE_ROWS[m.strand] for m in marks], dtype=float).reshape(-1, 2)
        self.candidate_bars.setOpts(x0=np.array([m.start - 0.5 for m in marks], dtype=float),
                                    x1=np.array([m.end + 0.5 for m in marks], dtype=float),
                                    y0=rows[:, 0], y1=rows[:, 1])

    def _draw_intervals(self) -> None:
        for bar in self.interval_bars:
            self.plot.removeItem(bar)
        self.interval_bars = []
        for kind, spans in self.intervals.items():
            if kind == "masked" or not spans:
                continue
            colour = QColor(INTERVAL_COLOURS.get(kind, GREY))
            colour.setAlpha(150)
            bar = pg.BarGraphItem(x0=[a - 0.5 for a, _ in spans], x1=[b + 0.5 for _, b in spans],
                                  y0=[INTERVAL_ROW[0]] * len(spans), y1=[INTERVAL_ROW[1]] * len(spans),
                                  pen=pg.mkPen(None), brush=pg.mkBrush(colour))
            self.plot.addItem(bar)
            self.interval_bars.append(bar)

    def _caption(self) -> None:
        if not self.text:
            self.caption.setText("The target's sequence appears here: wheel or drag to zoom and pan; "
                                 "letters show once zoomed in.")
            return
        parts = [f"{self.record_id} {self.offset + 1:,}–{self.offset + len(self.text):,}"]
        forward, reverse = self.pair
        if forward and reverse:
            parts.append(f"pair: F {forward.start:,}–{forward.end:,}, R {reverse.start:,}–{reverse.end:,}, "
                         f"amplicon {reverse.end - forward.start + 1:,} bp (shaded)")
        if self.candidates:
            parts.append(f"{len(self.candidates):,} candidates (grey marks: click one)")
        gaps, masked = self.gaps(), self.masked()
        if gaps:
            parts.append(f"{len(gaps)} gap(s) (dark)")
        if masked:
            parts.append(f"{len(masked)} soft-masked stretch(es) (grey)")
        for kind, spans in self.intervals.items():
            if kind != "masked" and spans:
                parts.append(f"{kind}: {len(spans)}")
        parts.append("blue: GC content when zoomed out")
        self.caption.setText("; ".join(parts) + ".")

    # -- clicks -------------------------------------------------------------------------------------
    def _on_click(self, event) -> None:
        if event.button() != Qt.MouseButton.LeftButton:
            return
        pos = event.scenePos()
        if not self.plot.sceneBoundingRect().contains(pos):
            return
        point = self.plot.vb.mapSceneToView(pos)
        self.click_at(point.x(), point.y())

    def click_at(self, x: float, y: float) -> None:
        """What a click at view point (x, y) does: the nearest candidate on that strand's
        mark row (within 6 pixels), else the base under it."""
        strand = "+" if y >= 0 else "-"
        on_marks = [i for i, m in enumerate(self.candidates) if m.strand == strand
                    and m.start - 0.5 <= x <= m.end + 0.5]
        if not on_marks and self.candidates:
            tolerance = 6 / max(1e-9, self.base_pixels())
            near = [i for i, m in enumerate(self.candidates) if m.strand == strand
                    and m.start - 0.5 - tolerance <= x <= m.end + 0.5 + tolerance]
            on_marks = near
        rows = CANDIDATE_ROWS[strand]
        if on_marks and rows[0] - 0.3 <= y <= rows[1] + 0.3:
            best = min(on_marks, key=lambda i: abs(self._starts[i] - x))
            self.candidate_clicked.emit(self.candidates[best].payload)
            return
        position = int(np.floor(x + 0.5))
        if self.offset < position <= self.offset + len(self.text):
            self.position_clicked.emit(position)


class KdiffSequenceView(ResultView):
    """The kdiff results' target as a :class:`SequenceView`: the record shown in the profile,
    the highlighted candidates (the shortest, or those the filters keep) as marks, the
    selected candidate drawn as a forward primer; clicking a mark selects its row."""

    title = "Sequence"

    def __init__(self):
        super().__init__()
        self.track = SequenceView()
        self.track.candidate_clicked.connect(self.item_activated)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.track)
        self._targets: dict = {}
        self._result = None
        self._highlight = None
        self._selected = None

    def reset(self, job) -> None:
        self._targets = {r.id: r for r in job.inputs["target"]} if job is not None else {}
        self._result = None
        self._selected = None
        first = next(iter(self._targets.values()), None)
        if first is not None:
            self.track.set_sequence(first.id, first.text, first.offset)

    def show_result(self, result) -> None:
        self._result = result
        self._mark()

    def highlight(self, items) -> None:
        self._highlight = None if items is None else list(items)
        self._mark()

    def _mark(self) -> None:
        if self._result is None:
            return
        record = self.track.record_id
        if self._highlight is not None:
            chosen = [c for c in self._highlight if c.target_id == record]
        else:
            mine = [c for c in self._result.candidates if c.target_id == record]
            shortest = min((c.length for c in mine), default=0)
            chosen = [c for c in mine if c.length == shortest]
        self.track.set_candidates([Mark(c.start, c.end, "+", c) for c in chosen[:20_000]])

    def select(self, item) -> None:
        self._selected = item
        if item is None:
            self.track.set_pair(None, None, zoom=False)
            return
        if item.target_id != self.track.record_id and item.target_id in self._targets:
            record = self._targets[item.target_id]
            self.track.set_sequence(record.id, record.text, record.offset)
            self._mark()
        self.track.set_pair((item.start, item.end), None, zoom=False)
        pad = max(15, item.length)
        self.track.zoom_to(item.start - pad, item.end + pad)

    def has_data(self) -> bool:
        return bool(self.track.text)
