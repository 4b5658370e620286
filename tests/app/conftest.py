"""GUI test set-up: offscreen Qt, a private QSettings file per test, patched dialogs."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402



@pytest.fixture
def settings(tmp_path):
    """Private settings; the primer library file is the test's own too."""
    from PySide6.QtCore import QSettings

    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    settings.setValue("library/path", str(tmp_path / "library.sqlite"))
    return settings


@pytest.fixture
def dialogs(monkeypatch):
    """Every QMessageBox the window opens, as (title, text), instead of a modal dialog.

    Questions are answered Yes (a long run starts, a window with work running closes)."""
    from PySide6.QtWidgets import QMessageBox

    shown: list[tuple[str, str]] = []

    def fake_exec(box):
        shown.append((box.windowTitle(), box.text()))
        if box.standardButtons() & QMessageBox.StandardButton.Yes:
            return QMessageBox.StandardButton.Yes
        return int(QMessageBox.StandardButton.Ok)

    monkeypatch.setattr(QMessageBox, "exec", fake_exec)
    return shown


@pytest.fixture
def window(qtbot, settings, dialogs):
    from app.window import MainWindow

    win = MainWindow(settings)
    qtbot.addWidget(win)
    win.resize(1280, 800)
    win.show()
    yield win
    win.close()


def load_demo(qtbot, window, dataset: str, timeout: int = 30_000) -> None:
    with qtbot.waitSignal(window.inputs_loaded, timeout=timeout):
        window.load_demo(dataset)


def run(qtbot, window, timeout: int = 300_000):
    """Run the window's job and return its result (fails the test on a run failure).

    The timeout is generous: on a fresh machine a kernel's first run includes compiling it.
    """
    failures = []
    window.run_failed.connect(failures.append)
    with qtbot.waitSignal(window.run_finished, timeout=timeout, raising=False) as blocker:
        assert window.controller.run(), "the window refused to start the run"
    assert not failures, failures
    assert blocker.signal_triggered, "the run did not finish in time"
    return blocker.args[0]


def cut(window, role: str, start: int, end: int) -> None:
    """Replace a role's records by their positions start..end as records of their own (numbered
    from 1, as the command line numbers a FASTA file of them)."""
    from engine.sequences import Record

    panel = window.input_panels[role]
    records = [Record(r.id, r.codes[start - 1:end].copy(), r.description, "test")
               for r in panel.state().selected()]
    panel.set_records(records, "test")


def write_fasta(path, records) -> str:
    with open(path, "w") as fh:
        for record in records:
            fh.write(f">{record.id}\n{record.text}\n")
    return str(path)
