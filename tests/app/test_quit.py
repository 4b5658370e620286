"""Quitting while work runs (issue 20, defect 1): the window asks first, stops every runner
(follow-up work included), starts nothing after it closed, and the process exits cleanly."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from tests.app.conftest import load_demo

#: Closes the window (Ctrl+Q) in the middle of a kdiff run, then lets the event loop deliver
#: whatever was queued (the run's "finished" used to start the primer annotations then).
SCRIPT = r"""
import json, sys
from PySide6.QtCore import QSettings, Qt, QTimer
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QApplication
from app.window import MainWindow, application

app = application()
window = MainWindow(QSettings(sys.argv[1], QSettings.Format.IniFormat))
asked = []
window.ask_sink = lambda title, text: asked.append(text) or True
window.error_sink = lambda *a: print("error:", a, file=sys.stderr)
window.show()
state = {}

def loaded():
    if window.controller.mode != "idle" or state.get("started"):
        return
    window.input_panels["target"].set_region((1, 4000))
    window.input_panels["background"].set_region((1, 300_000))
    window.params.set_selection(variant="conventional", backend="serial")
    state["started"] = window.controller.run()
    poll.start()

def check():
    if window.results.model.rowCount() >= 2:
        poll.stop()
        quit_action = next(a for a in window.findChildren(type(window.run_action))
                           if a.shortcut() == QKeySequence("Ctrl+Q"))
        quit_action.trigger()  # Ctrl+Q: asks, cancels, waits for the worker
        state["closed"] = not window.isVisible()
        QTimer.singleShot(1500, app.quit)  # queued signals are delivered meanwhile

poll = QTimer()
poll.setInterval(50)
poll.timeout.connect(check)
window.inputs_loaded.connect(loaded)
window.load_demo("lambda-ecoli")
QTimer.singleShot(240_000, lambda: app.exit(3))
status = app.exec()
tools = window.results.tools
print(json.dumps({"asked": asked, "closed": state.get("closed"), "status": status,
                  "alive": [len(r._alive) for _, r in window.followup_runners()]
                           + [len(window.controller.runner._alive)]}))
"""


def test_quit_during_a_run_asks_then_exits_cleanly(tmp_path):
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    done = subprocess.run([sys.executable, "-c", SCRIPT, str(tmp_path / "s.ini")], capture_output=True,
                          text=True, timeout=300, env=env)
    assert "QThread: Destroyed" not in done.stderr
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["status"] == 0 and report["closed"]
    assert len(report["asked"]) == 1 and "a job is running" in report["asked"][0].lower()
    assert report["alive"] and not any(report["alive"])


def test_saying_no_keeps_the_window_and_its_run(qtbot, window):
    load_demo(qtbot, window, "lambda-ecoli")
    window.input_panels["target"].set_region((1, 4000))
    window.input_panels["background"].set_region((1, 300_000))
    window.params.set_selection(variant="conventional", backend="serial")
    asked = []
    window.ask_sink = lambda title, text: asked.append(text) and False
    assert window.controller.run()
    assert not window.close()
    assert asked and window.isVisible() and window.controller.mode == "running"
    with qtbot.waitSignal(window.run_finished, timeout=10_000):
        window.controller.cancel()


def test_nothing_starts_after_close(qtbot, window):
    """A "finished" still queued when the window closes must not start follow-up work."""
    from types import SimpleNamespace

    window.close()
    tools = window.results.tools
    tools.show_result(SimpleNamespace(candidates=[]))  # what a late "finished" would do
    assert not tools.runner.running and not tools.runner._alive
    assert window.controller.run() is False
