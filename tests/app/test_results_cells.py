"""The results table's model/view shortcuts (issue #33's slider repaints a million rows): the
proxy reads the source's cells without source indexes, computed values are kept per row, and
the row numbers' header measures two sections. Each must say exactly what Qt's own path says."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QHeaderView, QTableView

from app.families import Column, adapter
from app.results import ResultsPanel
from app.table import SORT_ROLE, ResultsFilter, ResultsModel, RowNumbers
from engine.kdiff.candidates import CandidateTable

R = Qt.ItemDataRole
#: What a painted cell is asked (QStyledItemDelegate), what tips and sorting ask.
ROLES = (R.DisplayRole, R.FontRole, R.TextAlignmentRole, R.ForegroundRole, R.CheckStateRole,
         R.DecorationRole, R.BackgroundRole, R.ToolTipRole, SORT_ROLE)


def _candidates(n: int, seed: int = 2) -> CandidateTable:
    rng = np.random.default_rng(seed)
    codes = rng.choice(np.array([1, 2, 4, 8], np.uint8), n + 64)
    return CandidateTable(np.zeros(n, np.int32), np.arange(n), rng.integers(10, 30, n),
                          target_ids=("chr",), texts=(codes,))


def _same_cells(proxy, source) -> int:
    """Asserts every shown cell's data and flags are the source's at the mapped index."""
    for r in range(proxy.rowCount()):
        for c in range(proxy.columnCount()):
            index = proxy.index(r, c)
            mapped = source.index(proxy.mapToSource(index).row(), c)
            for role in ROLES:
                assert proxy.data(index, role) == source.data(mapped, role), (r, c, role)
            assert proxy.flags(index) == source.flags(mapped)
    return proxy.rowCount()


def test_the_proxy_shows_the_sources_cells_sorted_filtered_and_computed(qtbot):
    panel = ResultsPanel()
    qtbot.addWidget(panel)
    kdiff = adapter("kdiff")
    panel.set_columns(kdiff.columns)
    table = _candidates(300)
    panel.model.set_computed([Column("twice", "int"), Column("odd", "str")],
                             lambda c: (2 * c.length, "yes" if c.start % 2 else None))
    panel.model.replace(kdiff.items(table), kdiff.rows)
    assert panel.model.item(17) == table[17]  # (made from the block kept for display)
    assert _same_cells(panel.proxy, panel.model) == 300
    panel.proxy.sort(3, Qt.SortOrder.DescendingOrder)
    panel.set_filters(length=(12, 20))
    shown = _same_cells(panel.proxy, panel.model)
    assert 0 < shown == int(((table.length >= 12) & (table.length <= 20)).sum())
    lengths = [panel.proxy.data(panel.proxy.index(r, 3), SORT_ROLE) for r in range(shown)]
    assert lengths == sorted(lengths, reverse=True)
    twice = len(kdiff.columns)
    assert [panel.proxy.data(panel.proxy.index(r, twice), SORT_ROLE) for r in range(shown)] == \
        [2 * n for n in lengths]


def test_a_source_with_its_own_data_is_asked_through_it(qtbot):
    """A ResultsModel subclass that overrides data() (the pairs view's "none" dimers) keeps
    saying its own through the proxy."""

    class Shouting(ResultsModel):
        def data(self, index, role=R.DisplayRole):
            value = super().data(index, role)
            return value.upper() if role == R.DisplayRole and isinstance(value, str) else value

    kdiff = adapter("kdiff")
    model, proxy = Shouting(), ResultsFilter()
    proxy.setSourceModel(model)
    model.set_columns(kdiff.columns)
    model.replace(kdiff.items(_candidates(20)), kdiff.rows)
    assert proxy.data(proxy.index(0, 0)) == "CHR"
    assert _same_cells(proxy, model) == 20


def test_row_numbers_are_as_wide_as_qts_own_header_makes_them(qtbot):
    """RowNumbers measures the first and last rows only; the width is still Qt's: the same
    as a plain QHeaderView's (which measures 200 rows), for each count of rows."""
    kdiff = adapter("kdiff")
    model, proxy = ResultsModel(), ResultsFilter()
    proxy.setSourceModel(model)
    model.set_columns(kdiff.columns)
    view = QTableView()
    qtbot.addWidget(view)
    view.setVerticalHeader(RowNumbers(view))
    view.setModel(proxy)
    plain = QHeaderView(Qt.Orientation.Vertical)
    qtbot.addWidget(plain)
    plain.setModel(proxy)
    widths = []
    for n in (7, 1_234, 123_456, 3):
        model.replace(kdiff.items(_candidates(n)), kdiff.rows)
        assert view.verticalHeader().sizeHint() == plain.sizeHint(), n
        widths.append(view.verticalHeader().sizeHint().width())
    assert widths[2] > widths[1] > widths[0] == widths[3]  # wider with more digits
    assert view.verticalHeader().sectionsClickable()  # (clicking a number selects its row)
