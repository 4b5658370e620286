"""Compare backends runs every available variant/backend on one job; the answers agree."""

from __future__ import annotations

import pytest

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


@pytest.mark.alone  # compares a probe's time with a run's: not beside other workers
def test_compare_probes_first_skips_the_slow_runs_and_its_estimates_hold(qtbot, window, monkeypatch):
    """Issue 32: each run is probed before the comparison commits; pathological runs are
    offered to be skipped; the probes' estimates are what the runs then take."""
    import random

    from app import run_controller

    window.params.set_family("nw")
    rng = random.Random(5)
    a = Record("a", encode("".join(rng.choice("ACGT") for _ in range(12_000))))
    b = Record("b", encode("".join(rng.choice("ACGT") for _ in range(12_000))))
    window.input_panels["a"].set_records([a], "test")
    window.input_panels["b"].set_records([b], "test")
    # Any run slower than the fastest of its variant counts as pathological here (on nw none
    # really is).
    monkeypatch.setattr(run_controller, "SLOW_FACTOR", 1.0)
    monkeypatch.setattr(run_controller, "SLOW_RUN_S", 0.0)
    asked = []
    window.choose_sink = lambda title, text, options: asked.append((text, options)) or "skip"
    with qtbot.waitSignal(window.compare_finished, timeout=600_000) as blocker:
        assert window.controller.compare()
        qtbot.waitUntil(lambda: window.controller._compare_phase == "probing", timeout=5000)
        assert not window.pages[-1].view.is_empty()  # the tab says what runs, not "Nothing to show"
    rows = blocker.args[0]
    assert asked, "no question about the slow runs"
    text, options = asked[0]
    assert set(options) == {"skip", "all"} and "Pathologically slow" in text
    skipped = [r for r in window.compare_view.rows if r.skipped is not None]
    ran = {r.label for r in rows}
    assert skipped and not ran & {r.label for r in skipped}
    assert all(r.label in text for r in skipped)
    assert ran and all(r.complete for r in rows)
    estimates = dict(zip((s.variant + "/" + s.backend + (f"/{s.parallel}" if s.parallel else "")
                          for s in window.controller._compare_selections),
                         window.controller._compare_plan))
    for row in rows:  # truthful: the run took about what its probe said
        estimate = next(v for k, v in estimates.items() if row.label.startswith(k))
        assert estimate / 3 <= row.seconds <= estimate * 3, (row.label, estimate, row.seconds)
    assert "Skipped" in window.compare_view.caption.text()


def test_a_compiling_comparison_names_the_run_it_compiles(qtbot, window, monkeypatch):
    """Issue 32, item 6: while kernels compiled the status named the last single run's
    variant, not the compared run being compiled."""
    import threading

    from app import run_controller
    from app.jobs import CompareStep
    from app.warmup import COMPILING
    from engine.jobs import Progress

    real = run_controller.compare_backends
    release = threading.Event()

    def compiling_second(adapter, inputs, choice, token, selections):
        gen = real(adapter, inputs, choice, token, selections)
        while True:
            try:
                step = next(gen)
            except StopIteration as stop:
                return stop.value  # the rows
            yield step
            if step.index == 1 and step.progress is None and step.finished is None:
                yield CompareStep(1, step.total, step.label, Progress(0, 1, 0, 0, 0.0, phase="compiling"))
                release.wait(60)  # stands for the compile, until the test has read the status

    monkeypatch.setattr(run_controller, "compare_backends", compiling_second)
    window.params.set_family("nw")
    a = Record("a", encode("GATTACAGATTACACCGGTTAACG" * 4))
    window.input_panels["a"].set_records([a], "test")
    window.input_panels["b"].set_records([a], "test")
    second = combinations(registry.family("nw"))[1]
    with qtbot.waitSignal(window.compare_finished, timeout=120_000):
        assert window.controller.compare()
        qtbot.waitUntil(lambda: window.controller._compare_phase == "running"
                        and COMPILING in window.state_label.text(), timeout=60_000)
        said = window.state_label.text()
        release.set()
    assert said.startswith(f"nw {second.variant}/{second.backend}"), said
