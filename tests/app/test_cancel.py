"""Cancel mid-run: partial results stay (table, export), within 0.5 s, and the window stays usable."""

from __future__ import annotations

import time

import pytest

from tests.app.conftest import load_demo, run


@pytest.mark.alone  # a latency bound: run it with -n 0, not beside other workers
def test_cancel_keeps_partial_results_and_window_usable(qtbot, window, tmp_path):
    load_demo(qtbot, window, "lambda-ecoli")
    # conventional + opt1 is the slow variant: this job runs for minutes unless cancelled.
    window.input_panels["target"].set_region((1, 5000))
    window.input_panels["background"].set_region((1, 400_000))
    window.params.set_selection(variant="conventional", backend="serial")
    finished = []
    window.run_finished.connect(finished.append)
    assert window.controller.run()
    qtbot.waitUntil(lambda: window.results.model.rowCount() >= 3, timeout=120_000)
    assert window.controller.mode == "running" and not finished

    started = time.perf_counter()
    with qtbot.waitSignal(window.run_finished, timeout=5_000):
        window.controller.cancel()
    latency = time.perf_counter() - started
    print(f"\ncancel took effect after {latency * 1000:.0f} ms")
    assert latency < 0.5

    result = finished[0]
    assert not result.info.complete
    assert len(result.candidates) >= 3
    assert window.results.model.rows() == [(c.target_id, c.start, c.end, c.length, c.sequence)
                                           for c in result.candidates]
    assert "Cancelled" in window.state_label.text()
    path = window.exports.export_csv(str(tmp_path / "partial.csv"), rows="all")
    assert len(open(path).read().splitlines()) == len(result.candidates) + 1

    # Still usable: a small job runs to completion afterwards.
    assert window.controller.mode == "idle" and window.run_action.isEnabled()
    window.input_panels["target"].set_region((1, 60))
    window.input_panels["background"].set_region((1, 5000))
    window.params.set_selection(variant="bitparallel")
    again = run(qtbot, window)
    assert again.info.complete and window.results.model.rowCount() == len(again.candidates)


@pytest.mark.alone  # a latency bound: run it with -n 0, not beside other workers
def test_closing_the_window_mid_run_stops_the_worker(qtbot, settings, dialogs):
    from app.window import MainWindow

    win = MainWindow(settings)
    win.show()
    load_demo(qtbot, win, "lambda-ecoli")
    win.params.set_selection(variant="conventional", backend="serial")
    assert win.controller.run()
    qtbot.waitUntil(lambda: win.controller.job is not None, timeout=60_000)
    started = time.perf_counter()
    win.close()  # cancels and waits for the worker thread
    assert time.perf_counter() - started < 2.0
    assert not win.controller.runner._alive
