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


def test_nw_names_grey_cells_only_while_there_are_some(qtbot):
    """'Grey: not computed yet.' under the DP matrix while the run fills it, not after."""
    from types import SimpleNamespace

    from app.families.nw import NwAdapter
    from app.views.matrix import LiveMatrixView
    from engine.sequences import Record, encode

    a, b = (Record(name, encode(text), "", "test") for name, text in (("a", "ACGTAC"), ("b", "ACGAC")))
    job = SimpleNamespace(inputs={"a": [a], "b": [b]}, params={"match": 1, "mismatch": -1, "gap": -1})
    view = LiveMatrixView(NwAdapter.scale, lambda result: None)
    qtbot.addWidget(view)
    view.reset(job)
    partial = np.zeros((7, 6), np.int32)
    partial[:3] = 5
    view.show_progress(SimpleNamespace(snapshot=partial, snapshot_shape=(7, 6)))
    assert "Grey: not computed yet." in view.caption.text()
    view.show_result(SimpleNamespace(snapshot=np.full((7, 6), 5, np.int32), snapshot_shape=(7, 6)))
    assert view.caption.text().startswith("7 x 6 cells.") and "Grey" not in view.caption.text()


def test_an_axis_name_longer_than_its_axis_is_shortened_with_a_tooltip(qtbot):
    """The Specificity tab's candidate matrix at 1280x720 is ~110 px tall: its row name was cut
    off mid-word ("candidate prefix ler"); now it fits, or ends in '…' with the name in a tooltip."""
    from PySide6.QtGui import QFontMetrics

    plot = MatrixPlot("i: candidate prefix length of the long name", "j: background window")
    qtbot.addWidget(plot)
    plot.resize(420, 150)
    plot.show()
    plot.set_matrix(np.arange(20, dtype=np.int32).reshape(4, 5))
    qtbot.wait(50)
    left = plot.plot.getAxis("left")
    shown = plot.axis_label_shown("left")
    room = plot.plot.vb.boundingRect().height()
    assert shown.endswith("…") and QFontMetrics(left.label.font()).horizontalAdvance(shown) <= room
    assert left.toolTip() == "i: candidate prefix length of the long name"
    assert plot.axis_label_shown("bottom") == "j: background window" and not plot.plot.getAxis("bottom").toolTip()
    plot.resize(420, 600)
    qtbot.wait(50)
    assert plot.axis_label_shown("left") == "i: candidate prefix length of the long name"
