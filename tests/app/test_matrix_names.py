"""The patterns x records heatmap names its rows and columns (the polish pass): every row has a
label or a thinned one, column names never overlap, and the hover read-out names both in full."""

from __future__ import annotations

import numpy as np
from PySide6.QtGui import QFont, QFontMetrics

from app.views.hits import PairsView


def _labels(axis):
    levels = axis._tickLevels
    assert levels, "the axis shows numbers, not names"
    return levels[0]


def test_many_patterns_and_long_record_names_are_labelled_without_overlap(qtbot):
    patterns = [f"NM_002449.4:{100 * i + 1}-{100 * i + 20}" for i in range(60)]
    records = [f"NM_00{1135625 + 7919 * j}.{j}" for j in range(9)]
    values = np.arange(60 * 9).reshape(60, 9) % 5
    view = PairsView(lambda result, job: (values, patterns, records, 4), "mismatches")
    qtbot.addWidget(view)
    view.resize(700, 400)
    view.show()
    view.reset(object())
    view.show_result(object())
    qtbot.wait(50)
    matrix = view.panel.matrix
    per_row, per_col = matrix.cell_pixels()
    metrics = QFontMetrics(matrix.plot.getAxis("left").style.get("tickFont") or QFont())
    rows = _labels(matrix.plot.getAxis("left"))
    assert rows[0] == (0, patterns[0]) and len(rows) >= 5
    spacing = (rows[1][0] - rows[0][0]) * per_row
    assert spacing >= metrics.height(), "row names overlap"
    cols = _labels(matrix.plot.getAxis("bottom"))
    assert len(cols) >= 3
    step = cols[1][0] - cols[0][0]
    for position, text in cols:
        assert metrics.horizontalAdvance(text) < step * per_col, (text, per_col)
        full = records[position]
        if text != full:  # shortened in the middle: a head and a tail of the name are kept
            head, _, tail = text.partition("…")
            assert head and tail and full.startswith(head) and full.endswith(tail), (text, full)
    # The hover read-out: the cell's pattern and record in full.
    point = matrix.plot.vb.mapViewToScene(matrix.plot.vb.mapToView(matrix.plot.vb.rect().center()))
    texts = []
    matrix.hovered.connect(texts.append)
    matrix._on_mouse_moved(point)
    i, j, _, _ = matrix.cell_at(*matrix.plot.vb.mapSceneToView(point).toTuple())
    assert texts and f"pattern: {patterns[i]}" in texts[-1] and f"text record: {records[j]}" in texts[-1]
