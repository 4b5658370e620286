"""Pairwise alignments (lcs, nw): the coloured alignment text and a dot plot with the path.

The adapter gives a :class:`PairwiseAlignment` (aligned strings and one code
per column); the dot plot is computed here from the two sequences: every
position pair where a word of ``w`` bases occurs in both, binned into an image.
"""

from __future__ import annotations

import html
from dataclasses import dataclass

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRectF
from PySide6.QtGui import QFont, QFontDatabase
from PySide6.QtWidgets import QHBoxLayout, QLabel, QSpinBox, QTextBrowser, QVBoxLayout

from app.views import ResultView

#: Columns per block of the alignment text.
BLOCK = 60
#: Alignment columns rendered as coloured text (the export has all of them).
MAX_HTML_COLUMNS = 30_000
#: Word pairs binned into the dot plot at most (beyond that, A positions are sampled).
MAX_DOT_PAIRS = 4_000_000
DOT_BINS = 700

MATCH, MISMATCH, GAP_IN_B, GAP_IN_A = 0, 1, 2, 3  # as engine.nw.alignment's codes (=, X, D, I)
_STYLE = {MATCH: "background:#d5efd5", MISMATCH: "background:#f6c9c4;color:#8a1c0f",
          GAP_IN_B: "color:#999999", GAP_IN_A: "color:#999999"}


@dataclass(frozen=True)
class PairwiseAlignment:
    a_id: str
    b_id: str
    aligned_a: str
    aligned_b: str
    codes: np.ndarray  # one of MATCH, MISMATCH, GAP_IN_B, GAP_IN_A per column
    summary: str = ""


def from_pairs(a_id: str, b_id: str, a_text: str, b_text: str, pairs: np.ndarray) -> PairwiseAlignment:
    """The gapped alignment an LCS stands for: matched pairs in columns, the rest against gaps.

    ``pairs`` holds 1-based (a_pos, b_pos), increasing in both.
    """
    top, bottom, codes = [], [], []
    i = j = 0
    for pi, pj in np.asarray(pairs, dtype=np.int64).tolist():
        if pi - 1 > i:
            top.append(a_text[i:pi - 1])
            bottom.append("-" * (pi - 1 - i))
            codes.append(np.full(pi - 1 - i, GAP_IN_B, dtype=np.uint8))
        if pj - 1 > j:
            top.append("-" * (pj - 1 - j))
            bottom.append(b_text[j:pj - 1])
            codes.append(np.full(pj - 1 - j, GAP_IN_A, dtype=np.uint8))
        top.append(a_text[pi - 1])
        bottom.append(b_text[pj - 1])
        codes.append(np.array([MATCH], dtype=np.uint8))
        i, j = pi, pj
    if i < len(a_text):
        top.append(a_text[i:])
        bottom.append("-" * (len(a_text) - i))
        codes.append(np.full(len(a_text) - i, GAP_IN_B, dtype=np.uint8))
    if j < len(b_text):
        top.append("-" * (len(b_text) - j))
        bottom.append(b_text[j:])
        codes.append(np.full(len(b_text) - j, GAP_IN_A, dtype=np.uint8))
    all_codes = np.concatenate(codes) if codes else np.zeros(0, dtype=np.uint8)
    return PairwiseAlignment(a_id, b_id, "".join(top), "".join(bottom), all_codes)


def plain_text(al: PairwiseAlignment, width: int = BLOCK) -> str:
    """Blocks of ``width`` columns: A, a match line ('|' match, '.' mismatch), B, with positions."""
    lines = [al.summary] if al.summary else []
    name_w = max(len(al.a_id), len(al.b_id))
    pa = pb = 0
    marks = np.array(["|", ".", " ", " "])[al.codes] if al.codes.size else np.array([], dtype=str)
    for lo in range(0, len(al.aligned_a), width):
        a, b = al.aligned_a[lo:lo + width], al.aligned_b[lo:lo + width]
        a_first, b_first = pa + 1, pb + 1
        pa += len(a) - a.count("-")
        pb += len(b) - b.count("-")
        lines += ["", f"{al.a_id:<{name_w}} {a_first:>8} {a} {pa}",
                  f"{'':<{name_w}} {'':>8} {''.join(marks[lo:lo + width])}",
                  f"{al.b_id:<{name_w}} {b_first:>8} {b} {pb}"]
    return "\n".join(lines) + "\n"


def coloured_html(al: PairwiseAlignment, width: int = BLOCK, limit: int = MAX_HTML_COLUMNS) -> str:
    name_w = max(len(al.a_id), len(al.b_id))
    out = ["<pre style='font-family:monospace'>"]
    pa = pb = 0
    columns = min(len(al.aligned_a), limit)
    for lo in range(0, columns, width):
        hi = min(columns, lo + width)
        a, b, codes = al.aligned_a[lo:hi], al.aligned_b[lo:hi], al.codes[lo:hi]
        a_first, b_first = pa + 1, pb + 1
        pa += len(a) - a.count("-")
        pb += len(b) - b.count("-")
        for name, first, text, last in ((al.a_id, a_first, a, pa), (al.b_id, b_first, b, pb)):
            out.append(html.escape(f"{name:<{name_w}} {first:>8} "))
            out.append(_spans(text, codes))
            out.append(html.escape(f" {last}") + "\n")
        out.append("\n")
    if columns < len(al.aligned_a):
        out.append(html.escape(f"… {len(al.aligned_a) - columns:,} more columns; "
                               "File > Export alignments writes them all.\n"))
    out.append("</pre>")
    return "".join(out)


def _spans(text: str, codes: np.ndarray) -> str:
    """Runs of one code become one span (far less HTML than a span per base)."""
    if not len(text):
        return ""
    cuts = np.flatnonzero(np.diff(codes.astype(np.int16))) + 1
    bounds = np.concatenate([[0], cuts, [len(text)]])
    parts = []
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        parts.append(f"<span style='{_STYLE[int(codes[lo])]}'>{html.escape(text[lo:hi])}</span>")
    return "".join(parts)


class AlignmentView(ResultView):
    title = "Alignment"

    def __init__(self, alignment_of):
        super().__init__()
        self._alignment_of = alignment_of
        self.summary = QLabel("The alignment appears here when the job has finished.")
        self.summary.setWordWrap(True)
        self.text = QTextBrowser()
        font = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        font.setStyleHint(QFont.StyleHint.Monospace)
        self.text.setFont(font)
        self.text.setLineWrapMode(QTextBrowser.LineWrapMode.NoWrap)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.summary)
        layout.addWidget(self.text, 1)
        self.alignment: PairwiseAlignment | None = None

    def reset(self, job) -> None:
        self.alignment = None
        self.text.clear()
        self.summary.setText("The alignment appears here when the job has finished.")

    def show_result(self, result) -> None:
        al = self._alignment_of(result)
        if al is None:
            self.summary.setText("No alignment: the job computed the score only, or was cancelled "
                                 "before the traceback.")
            return
        self.alignment = al
        self.summary.setText(al.summary + "   Green: match; red: mismatch; grey: gap.")
        self.text.setHtml(coloured_html(al))

    def has_data(self) -> bool:
        return self.alignment is not None

    def alignment_text(self) -> str:
        return plain_text(self.alignment) if self.alignment is not None else ""


def word_codes(codes: np.ndarray, w: int) -> np.ndarray:
    """Each window of ``w`` bases as an int (2 bits a base); -1 where it holds an ambiguity code."""
    index = np.full(16, -1, dtype=np.int64)
    index[[1, 2, 4, 8]] = [0, 1, 2, 3]
    base = index[np.asarray(codes, dtype=np.uint8)]
    n = base.shape[0] - w + 1
    if n <= 0:
        return np.zeros(0, dtype=np.int64)
    windows = np.lib.stride_tricks.sliding_window_view(base, w)
    values = windows @ (4 ** np.arange(w - 1, -1, -1, dtype=np.int64))
    values[(windows < 0).any(axis=1)] = -1
    return values


def dot_image(a: np.ndarray, b: np.ndarray, w: int, bins: int = DOT_BINS):
    """2-D histogram of shared words: image[row bin of A, column bin of B], and bin sizes."""
    ka, kb = word_codes(a, w), word_codes(b, w)
    rows, cols = min(bins, max(1, len(a))), min(bins, max(1, len(b)))
    image = np.zeros((rows, cols), dtype=np.float32)
    if not ka.size or not kb.size:
        return image, (len(a) / rows, len(b) / cols)
    order = np.argsort(kb, kind="stable")
    sorted_b = kb[order]
    valid = ka >= 0
    lo = np.searchsorted(sorted_b, ka, side="left")
    hi = np.searchsorted(sorted_b, ka, side="right")
    counts = np.where(valid, hi - lo, 0)
    total = int(counts.sum())
    if total > MAX_DOT_PAIRS:  # repeats: keep an even sample of A positions
        keep = np.zeros(counts.size, dtype=bool)
        keep[::int(np.ceil(total / MAX_DOT_PAIRS))] = True
        counts = np.where(keep, counts, 0)
        total = int(counts.sum())
    ii = np.repeat(np.arange(counts.size), counts)
    starts = np.repeat(lo - (np.cumsum(counts) - counts), counts)
    jj = order[np.arange(total) + starts]
    ri = (ii * rows) // len(a)
    cj = (jj * cols) // len(b)
    np.add.at(image, (ri, cj), 1.0)
    return image, (len(a) / rows, len(b) / cols)


class DotPlotView(ResultView):
    """Shared words of A and B (row i, column j where A[i:i+w] == B[j:j+w]) with the path on top."""

    title = "Dot plot"

    def __init__(self, path_of):
        super().__init__()
        self._path_of = path_of
        self.word = QSpinBox()
        self.word.setRange(4, 31)
        self.word.setValue(11)
        self.word.setToolTip("Word size: a dot marks a word of this many bases found in both sequences")
        self.word.valueChanged.connect(lambda _: self._draw())
        row = QHBoxLayout()
        row.addWidget(QLabel("Word size"))
        row.addWidget(self.word)
        row.addStretch(1)
        self.widget = pg.PlotWidget()
        self.plot = self.widget.getPlotItem()
        self.plot.invertY(True)
        self.plot.setMenuEnabled(False)
        self.image = pg.ImageItem(axisOrder="row-major")
        self.image.setColorMap(pg.ColorMap([0.0, 1.0], [(255, 255, 255), (20, 20, 60)]))
        self.plot.addItem(self.image)
        self.path = pg.PlotDataItem(pen=pg.mkPen(213, 94, 0, 150, width=1.2))  # the dots stay visible
        self.plot.addItem(self.path)
        self.caption = QLabel()
        self.caption.setWordWrap(True)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(row)
        layout.addWidget(self.widget, 1)
        layout.addWidget(self.caption)
        self._job = None
        self._result = None
        self._filled = False

    def reset(self, job) -> None:
        self._job, self._result, self._filled = job, None, False
        self.image.clear()
        self.path.setData([], [])
        if job is not None:
            a, b = job.inputs["a"][0], job.inputs["b"][0]
            self.plot.setLabel("left", f"{a.id} (1-based)")
            self.plot.setLabel("bottom", f"{b.id} (1-based)")
            self._draw()

    def show_result(self, result) -> None:
        self._result = result
        self._draw()

    def _draw(self) -> None:
        if self._job is None:
            return
        a, b = self._job.inputs["a"][0], self._job.inputs["b"][0]
        w = self.word.value()
        image, (bh, bw) = dot_image(a.codes, b.codes, w)
        shown = np.log1p(image)
        self.image.setImage(shown, autoLevels=False, levels=(0, max(1e-6, float(shown.max()))))
        self.image.setRect(QRectF(0.5, 0.5, len(b), len(a)))
        self._filled = True
        path = self._path_of(self._result) if self._result is not None else None
        if path is not None:
            rows, cols = path
            self.path.setData(np.asarray(cols, dtype=float), np.asarray(rows, dtype=float))
        pixel = f"; one pixel: {bh:.1f} x {bw:.1f} bp" if bh > 1 or bw > 1 else ""
        self.caption.setText(f"Dark: words of {w} bases found in both sequences (darker: more){pixel}. "
                             + ("Red: the alignment's path." if path is not None else ""))
        self.plot.autoRange(padding=0.01)

    def has_data(self) -> bool:
        return self._filled
