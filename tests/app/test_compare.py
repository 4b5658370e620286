"""Compare backends runs every available variant/backend on one job; the answers agree."""

from __future__ import annotations

from app.jobs import combinations
from engine import registry
from engine.sequences import Record, encode


def test_compare_backends_on_a_small_nw_job(qtbot, window):
    window.params.set_family("nw")
    a = Record("a", encode("GATTACAGATTACACCGGTTAACG" * 4))
    b = Record("b", encode("GCATGCTTACAGATTACCCGGTAACGT" * 4))
    window.input_panels["a"].set_records([a], "test")
    window.input_panels["b"].set_records([b], "test")
    with qtbot.waitSignal(window.compare_finished, timeout=300_000) as blocker:
        assert window.controller.compare()
    rows = blocker.args[0]
    expected = combinations(registry.family("nw"))
    assert [r.label for r in rows] == [f"{s.variant}/{s.backend}" for s in expected]
    assert all(r.complete for r in rows)
    assert all(r.agrees is not False for r in rows) and rows[0].agrees is None
    assert window.compare_view.has_data()
