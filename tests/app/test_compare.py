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


def test_compare_leaves_out_the_backends_that_do_not_take_the_job():
    """edit's dask backend runs searches of whole records only (BackendSpec.takes): Compare
    backends offers it for such a search, not for global distances."""
    fam = registry.family("edit")
    search = {s.backend for s in combinations(fam, {"mode": "search", "pairing": "all"})}
    global_ = {s.backend for s in combinations(fam, {"mode": "global", "pairing": "all"})}
    assert "serial" in global_ and "dask" not in global_
    assert registry.backend_status("dask")[0] is ("dask" in search)
