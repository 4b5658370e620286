"""File ▸ Save/Open workspace, and the last workspace restored on start (issue 20, defect 12)."""

from __future__ import annotations

import json

from PySide6.QtCore import QSettings

from app import workspace
from app.window import MainWindow


def _files(tmp_path):
    target = tmp_path / "target.fa"
    target.write_text(">t1 first target\n" + "ACGTTGCAAGCT" * 20 + "\n>t2\n" + "GGCATTACG" * 30 + "\n")
    background = tmp_path / "bg.fa"
    background.write_text(">bg\n" + "TTGACCAGTA" * 100 + "\n")
    return str(target), str(background)


def _shown(window) -> dict:
    return {role: ([r.id for r in p.state().records], sorted(p.state().use), p.state().region)
            for role, p in window.input_panels.items()}


def _open(qtbot, settings, **kw) -> MainWindow:
    win = MainWindow(settings, **kw)
    qtbot.addWidget(win)
    return win


def test_save_and_open_a_workspace(qtbot, window, tmp_path):
    target, background = _files(tmp_path)
    window.params.set_family("kdiff")
    for role, path in (("target", target), ("background", background)):
        with qtbot.waitSignal(window.inputs_loaded, timeout=30_000):
            window.load_files(role, [path])
    window.input_panels["target"].set_region((11, 200))
    window.params.set_param("k", 7)
    saved = _shown(window)
    path = tmp_path / "ws.json"
    workspace.save(window, str(path))
    data = json.loads(path.read_text())
    assert data["family"] == "kdiff" and data["params"]["params"]["k"] == 7
    assert data["inputs"]["target"]["files"] == [target] and data["inputs"]["target"]["region"] == [11, 200]

    other = _open(qtbot, QSettings(str(tmp_path / "other.ini"), QSettings.Format.IniFormat))
    other.params.set_family("nw")
    assert workspace.open_path(other, str(path)) == []
    qtbot.waitUntil(lambda: not other.loads.running and _shown(other) == saved, timeout=30_000)
    assert other.params.family == "kdiff" and other.params.state()["params"]["k"] == 7
    assert other.inputs()["target"][0].offset == 10
    other.close()


def test_the_last_workspace_is_restored_on_start_when_asked(qtbot, settings, dialogs, tmp_path):
    target, background = _files(tmp_path)
    first = _open(qtbot, settings)
    first.params.set_family("kdiff")
    for role, path in (("target", target), ("background", background)):
        with qtbot.waitSignal(first.inputs_loaded, timeout=30_000):
            first.load_files(role, [path])
    first.input_panels["background"].set_region((101, 600))
    saved = _shown(first)
    first.close()
    assert _shown(_open(qtbot, settings)) != saved  # not asked: a fresh start

    first = _open(qtbot, settings)
    qtbot.waitUntil(lambda: not first.loads.running, timeout=30_000)
    first.restore_on_start.setChecked(True)
    for role, path in (("target", target), ("background", background)):
        with qtbot.waitSignal(first.inputs_loaded, timeout=30_000):
            first.load_files(role, [path])
    first.input_panels["background"].set_region((101, 600))
    first.close()
    again = _open(qtbot, settings)
    qtbot.waitUntil(lambda: _shown(again) == saved and not again.loads.running, timeout=30_000)
    again.close()
