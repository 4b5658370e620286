"""First-use compile waits (issue 32): said as "compiling (once)", reported apart from the
search time, and compiled ahead by ``python -m app.warmup``."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time

from engine.jobs import Progress

from app import run_controller
from app.warmup import COMPILING, CompileClock, plan, warm
from tests.app.conftest import load_demo, run


def test_the_compile_clock_counts_only_the_compiling_phase():
    clock = CompileClock()
    clock.see(Progress(0, 10, 0, 0, 0.0, phase="compiling"))
    time.sleep(0.2)
    clock.see(Progress(1, 10, 0, 0, 0.1))
    time.sleep(0.1)
    clock.see(Progress(2, 10, 0, 0, 0.2))
    assert 0.19 <= clock.total() < 0.29
    assert clock.note().startswith("+ 0.2") and clock.note().endswith(COMPILING)
    assert CompileClock().note() == ""


def compiling_then(wait):
    """run_controller.run_job as a first run: it starts, reports the 'compiling' phase, runs
    ``wait()`` in the compile's place, then goes on as the real run."""
    real = run_controller.run_job

    def run_job(adapter, inputs, choice, token):
        gen = real(adapter, inputs, choice, token)
        yield next(gen)  # JobStarted
        yield Progress(0, 1, 0, 0, 0.0, phase="compiling")
        wait()
        return (yield from gen)

    return run_job


def test_a_compiling_run_says_so_and_reports_compile_time_apart(qtbot, window, monkeypatch):
    said = []
    compiling_first = compiling_then(lambda: time.sleep(0.6))  # stands for the compile

    monkeypatch.setattr(run_controller, "run_job", compiling_first)
    window.params.set_family("kdiff")
    load_demo(qtbot, window, "lambda-ecoli")
    window.state_label.windowTitleChanged.connect(said.append)  # (kept alive with the label)
    timer_texts = []
    window.controller._draw_timer.timeout.connect(lambda: timer_texts.append(window.state_label.text()))
    result = run(qtbot, window)
    assert any(COMPILING in t and "bitparallel" in t for t in timer_texts), timer_texts[:5]
    status = window.state_label.text()
    match = re.search(r"in ([\d.]+) s \(.*, \+ ([\d.]+) s compiling \(once\)\)\.", status)
    assert match, status
    solve, compiling = float(match.group(1)), float(match.group(2))
    assert compiling >= 0.55  # the compile, not in the search time
    assert abs(solve - float(f"{result.info.seconds:.3g}")) < 1e-9


def test_the_warmup_plan_runs_the_pages_jobs_without_error(window):
    window.params.set_family("kdiff")
    state = window.params.state()
    tasks = plan("kdiff", state)
    assert [t["task"] for t in tasks] == ["run", "offtarget", "pairs"]
    assert tasks[0]["variant"] == state["variant"] and tasks[0]["backend"] == state["backend"]
    assert plan("kdiff", dict(state, backend="dask")) == []  # no cluster started on a guess
    for family in ("kmismatch", "nw"):
        window.params.set_family(family)
        out = warm(plan(family, window.params.state()))
        assert out and all(line["error"] == "" for line in out), out
    out = warm(tasks)
    assert [line["task"] for line in out] == ["run", "offtarget", "pairs"]
    assert all(not o["error"] for o in out), out
    assert out[2]["found"] > 0  # pairs found, so the in-silico PCR's kernels ran too


def test_python_m_app_warmup_prints_a_line_per_task_and_refuses_bad_input():
    tasks = [{"task": "offtarget", "backend": "serial", "threads": None}]
    done = subprocess.run([sys.executable, "-m", "app.warmup", json.dumps(tasks)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert len(lines) == 1 and lines[0]["task"] == "offtarget" and lines[0]["error"] == ""
    bad = subprocess.run([sys.executable, "-m", "app.warmup", "{not json"],
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1


def test_the_window_warms_once_per_selection(qtbot, window, monkeypatch):
    from app import warmup

    window.params.set_family("nw")
    state = window.params.state()
    runner = warmup.Warmup(window)
    assert runner.start("nw", state)
    assert not runner.start("nw", state)  # running
    assert runner.wait(300_000)
    assert [line["task"] for line in runner.log] == ["run"] and not runner.log[0]["error"], runner.log
    assert not runner.start("nw", state)  # done already
    # The window starts it after a delay, and again for a selection chosen meanwhile.
    started = []
    monkeypatch.setattr(warmup, "WARMUP_DELAY_MS", 0)
    monkeypatch.setattr(warmup.Warmup, "start",
                        lambda self, family, state: started.append((family, state["variant"])) and False)
    window.start_warmup()
    qtbot.waitUntil(lambda: bool(started), timeout=5000)
    assert started[0] == ("nw", state["variant"])


def test_an_empty_tab_says_the_run_is_under_way_not_load_and_run(qtbot, window, monkeypatch):
    """Issue 32 (polish): while a run compiled, the Specificity tab said "Nothing to show yet.
    Load inputs … and press Run" over inputs that were loaded and a Run that was running."""
    from app.views import EMPTY_HINT, RUNNING_HINT

    release = []

    def until_released():  # stands for the compile, until the test has looked
        while not release:
            time.sleep(0.01)

    compiling_first = compiling_then(until_released)

    monkeypatch.setattr(run_controller, "run_job", compiling_first)
    window.params.set_family("kdiff")
    load_demo(qtbot, window, "lambda-ecoli")
    page = window.tabs.widget(0)
    assert page.note.text() == EMPTY_HINT
    with qtbot.waitSignal(window.run_finished, timeout=300_000):
        assert window.controller.run()
        qtbot.waitUntil(lambda: COMPILING in window.state_label.text(), timeout=60_000)
        assert page.currentWidget() is page.note and page.note.text() == RUNNING_HINT
        release.append(True)
    assert page.currentWidget() is page.view  # the candidates
    assert all(p.note.text() != RUNNING_HINT for p in window.pages)
