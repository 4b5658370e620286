"""Long work is announced (issue 20, defect 10): Compare backends shows the ETA of all its runs,
a run estimated past a few minutes asks first and names cheaper settings, and multicore uses
every core by default."""

from __future__ import annotations

import os

from engine.jobs import Progress
from engine.sequences import Record, encode

from app.jobs import CompareStep
from app.params import ParamsPanel
from app.run_controller import LONG_RUN_S
from tests.app.conftest import load_demo, run


def test_threads_default_to_every_core(qtbot, settings):
    panel = ParamsPanel(settings)
    qtbot.addWidget(panel)
    for family in panel.families:
        assert panel.state(family)["threads"] == (os.cpu_count() or 1)


def test_a_long_run_is_announced_with_cheaper_settings(qtbot, window):
    load_demo(qtbot, window, "lambda-ecoli")
    window.input_panels["target"].set_region(None)  # all of lambda against all of E. coli
    window.input_panels["background"].set_region(None)
    window.params.set_selection(variant="bitparallel", backend="serial")
    asked = []
    window.ask_sink = lambda title, text: asked.append(text) and False
    assert window.controller.estimate(window.params.choice(), window.inputs()) > LONG_RUN_S
    assert not window.controller.run()
    assert window.controller.mode == "idle" and len(asked) == 1
    assert "region" in asked[0] and "multicore" in asked[0]
    window.input_panels["target"].set_region((1, 100))  # small: starts without a question
    window.input_panels["background"].set_region((1, 5000))
    run(qtbot, window)
    assert len(asked) == 1


def test_measured_rates_replace_the_rough_default(qtbot, window):
    window.params.set_family("nw")
    window.input_panels["a"].set_records([Record("a", encode("GATTACA" * 1500))], "test")
    window.input_panels["b"].set_records([Record("b", encode("GCATGCT" * 1500))], "test")
    window.params.set_selection(backend="serial")
    choice, inputs = window.params.choice(), window.inputs()
    before = window.controller.estimate(choice, inputs)
    result = run(qtbot, window)
    after = window.controller.estimate(choice, inputs)
    assert after != before
    assert abs(after - result.info.seconds) <= 0.5 * result.info.seconds + 1e-3


def test_compare_shows_the_eta_of_all_runs(qtbot, window):
    controller = window.controller
    controller._begin("comparing")
    controller._compare_plan = [10.0, 20.0, 30.0]  # estimated seconds of each run
    controller._compare_step = CompareStep(0, 3, "a/serial", None)
    controller._latest = Progress(done=50, total=100, cells=10**6, comparisons=0, elapsed=4.0)
    controller._dirty = True
    controller._draw()
    # This run: 4 s more; the two runs to come: 50 s.
    assert window.eta_label.text() == "ETA 54 s for all 3 runs"
    assert "Comparing 1/3" in window.state_label.text()
    controller._end()
