"""Matrix heatmap details: full-matrix coordinates for downsampled snapshots, hover values,
'not computed' cells (the candidate view's closest-match search: tests/engine/kdiff/test_closest.py)."""

from __future__ import annotations

import numpy as np

from app.views.matrix import MatrixPlot, MatrixScale


def test_downsampled_snapshot_reads_in_full_coordinates(qtbot):
    plot = MatrixPlot()
    qtbot.addWidget(plot)
    snapshot = np.arange(16, dtype=np.uint16).reshape(4, 4)
    plot.set_matrix(snapshot, full_shape=(400, 800), empty=0)
    i, j, value, block = plot.cell_at(x=799, y=399)  # last cell of the full matrix
    assert (i, j, value, block) == (399, 799, 15, (100.0, 200.0))
    assert plot.cell_at(x=-3, y=5) is None
    assert plot.image.lut[0].tolist() == [225, 225, 225, 255]  # 'not computed' is grey
    texts = []
    plot.hovered.connect(texts.append)
    scale = MatrixScale(None, lambda v: -100 + (v - 1) * 2, empty=0)
    plot.set_decoder(scale.read, scale.to_score)
    assert scale.read(0) == "not computed yet" and scale.read(3) == "-96"


def test_small_matrix_writes_its_values(qtbot):
    plot = MatrixPlot()
    qtbot.addWidget(plot)
    plot.set_matrix(np.array([[0, 1], [1, 2]], dtype=np.int32), row_letters="-A", col_letters="-C")
    assert plot.values._data is not None and plot.values.boundingRect().width() == 2
