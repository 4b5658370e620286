"""Matrix heatmap details: full-matrix coordinates for downsampled snapshots, hover values,
'not computed' cells, and the closest-match DP used by the kdiff candidate view."""

from __future__ import annotations

import numpy as np

from app.closest import closest_match, window_matrix
from app.views.matrix import MatrixPlot, MatrixScale
from engine.jobs import drive
from engine.kdiff.reference import longest_prefix_within
from engine.sequences import Record, encode, reverse_complement


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


def test_window_matrix_and_closest_match_agree_with_the_oracle():
    rng = np.random.default_rng(7)
    background = Record("bg", rng.choice(np.array([1, 2, 4, 8], dtype=np.uint8), 3000))
    pattern = background.codes[1200:1230].copy()
    pattern[[3, 17]] = np.where(pattern[[3, 17]] == 1, 2, 1)  # two substitutions
    match = drive(closest_match(pattern, [background], "forward", limit=2, lower_bound=2))
    assert match.distance == 2 and match.strand == "+"
    assert 1199 <= match.start - 1 <= 1203 and match.end == 1230
    # The window's bottom-right cell is the semi-global distance; the oracle agrees that
    # nothing in the background is closer (the whole pattern occurs within 2, not within 1).
    D = window_matrix(pattern, encode(match.window))
    assert D[-1, -1] == 2
    assert longest_prefix_within(pattern, [background.codes], 3) == len(pattern)
    assert longest_prefix_within(pattern, [background.codes], 2) < len(pattern)


def test_closest_match_on_the_reverse_strand_reports_forward_coordinates():
    forward = encode("TTTTTTTTTTGGGACCCATGCAAAAAAAAAA")
    record = Record("r", forward)
    probe = reverse_complement(forward[10:23])  # positions 11..23 as read on the other strand
    match = drive(closest_match(probe, [record], "both"))  # a window at 1 edit comes first
    assert (match.strand, match.start, match.end, match.distance) == ("-", 11, 23, 0)
