"""Issue #16: the results table reads a columnar result's columns (no list of row tuples):
ten million kmismatch hits give a table of ten million rows that scrolls to the end, sorts
and filters with numpy."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import Qt

from app.families import adapter
from app.results import ResultsPanel
from engine.kmismatch.hits import HitTable

N = 10_000_000


def ten_million_hits() -> HitTable:
    """A HitTable as the kmismatch runner builds it: 10^7 hits of two 12-mers on two records."""
    rng = np.random.default_rng(1)
    text = rng.choice(np.array([1, 2, 4, 8], dtype=np.uint8), 6_000_000)
    offsets = np.array([0, 4_000_000, 6_000_000], dtype=np.int64)
    windows = np.concatenate([np.arange(0, 4_000_000 - 12), np.arange(4_000_000, 6_000_000 - 12)])
    pos = np.sort(rng.choice(windows, N // 2, replace=False)).repeat(2)
    code = np.tile(np.array([0, 3], dtype=np.int32), N // 2)
    mismatches = rng.integers(0, 5, N).astype(np.int32)
    return HitTable(pos, code, mismatches, pattern_ids=("p0", "p1"), pattern_lengths=(12, 12),
                    record_ids=("chr1", "chr2"), text=text, offsets=offsets)


@pytest.fixture(scope="module")
def hits():
    return ten_million_hits()


def test_ten_million_hits_in_the_table(qtbot, hits):
    ad = adapter("kmismatch")
    panel = ResultsPanel()
    qtbot.addWidget(panel)
    panel.resize(900, 600)
    panel.set_columns(ad.columns)
    panel.model.replace(ad.items(hits), ad.rows)
    model, proxy, view = panel.model, panel.proxy, panel.view
    assert model.rowCount() == N == proxy.rowCount()
    assert model._rows == []  # no row tuples kept for a columnar result
    panel.show()
    view.scrollToBottom()
    qtbot.wait(10)
    last = proxy.index(N - 1, 0)
    assert view.visualRect(last).isValid()  # the last row is on screen
    row = [proxy.data(proxy.index(N - 1, c)) for c in range(7)]
    h = hits[N - 1]
    assert row == [h.pattern_id, h.record_id, str(h.start), str(h.end), h.strand,
                   str(h.mismatches), h.matched]
    assert model.item(N - 2) == hits[N - 2]
    assert len(model._blocks) <= 64  # only the blocks shown were made
    # Sort by start, descending, then filter by position: numpy over the columns.
    proxy.sort(2, Qt.SortOrder.DescendingOrder)
    top = model.item(proxy.mapToSource(proxy.index(0, 0)).row())
    assert top.start == int(hits.start.max())
    panel.set_filters(position=(1_000_000, 1_000_200))
    want = int(((hits.start >= 1_000_000) & (hits.end <= 1_000_200)).sum())
    assert 0 < proxy.rowCount() == want
    shown = [model.item(proxy.mapToSource(proxy.index(r, 0)).row()) for r in range(want)]
    assert all(1_000_000 <= s.start and s.end <= 1_000_200 for s in shown)
    assert [s.start for s in shown] == sorted((s.start for s in shown), reverse=True)
    assert panel.select_item(shown[-1])
    panel.clear_filters()
    proxy.sort(-1)
    assert proxy.rowCount() == N and proxy.mapToSource(proxy.index(N - 1, 0)).row() == N - 1
