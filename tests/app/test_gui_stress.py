"""Issue 14, "also cover what was not probed: the GUI": Run, Compare and Export pressed over and
over or during a job never crash and never mix results; an export to a path that cannot be
written shows a message and keeps the results."""

from __future__ import annotations

import os

from tests.app.conftest import load_demo, run


def _small_kdiff(qtbot, window, k: int = 4) -> None:
    """30 x 3,000 bases. Compare runs every form, and the fine-grained conventional ones
    fork and join threads for each row of each start's matrix (the target's length squared),
    each waiting for a core on a busy machine: at 160 x 30,000 the test took 153 s of a full
    run. A press below meets a running job however short it is (a press is handled before
    the job can finish)."""
    load_demo(qtbot, window, "lambda-ecoli")
    window.input_panels["target"].set_region((101, 130))
    window.input_panels["background"].set_region((1, 3_000))
    window.params.set_selection(variant="bitparallel", backend="serial")
    window.params.set_param("k", k)


def _table(window) -> list:
    return window.results.model.rows()


def _rows_of(result) -> list:
    return [(c.target_id, c.start, c.end, c.length, c.sequence) for c in result.candidates]


def test_run_compare_export_pressed_repeatedly_never_mix(qtbot, window, tmp_path):
    _small_kdiff(qtbot, window)
    run(qtbot, window)  # compiles the kernel: the presses below meet a running job, not a compile
    finished, failed = [], []
    window.run_finished.connect(finished.append)
    window.run_failed.connect(failed.append)

    window.params.set_param("k", 3)
    for _ in range(5):  # five quick presses: one job
        window.run_action.trigger()
    assert window.controller.mode == "running"
    assert not window.controller.run() and not window.controller.compare()
    window.compare_action.trigger()
    window.export_action.trigger()  # disabled while running: nothing asked, nothing written
    during = tmp_path / "during.csv"
    assert window.exports.export_csv(str(during), rows="all") is None and not during.exists()
    qtbot.waitUntil(lambda: bool(finished), timeout=120_000)
    qtbot.wait(200)  # later presses, had they queued anything, would have started by now
    assert len(finished) == 1 and not failed and window.controller.mode == "idle"
    first = finished[0]
    assert first.k == 3
    assert _table(window) == _rows_of(first)

    # A new job (k 2), pressed repeatedly with the event loop turning in between (a press after
    # a quick job has ended starts the next one): the table is the last job's result.
    window.params.set_param("k", 2)
    for _ in range(5):
        window.run_action.trigger()
        qtbot.wait(5)
    qtbot.waitUntil(lambda: window.controller.mode == "idle", timeout=120_000)
    qtbot.wait(200)
    runs = len(finished)
    last = finished[-1]
    assert 2 <= runs <= 6 and not failed and all(r.k == 2 for r in finished[1:])
    assert _table(window) == _rows_of(last)
    assert _rows_of(last) != _rows_of(first)

    # Compare, with Run and Export pressed during it: the table keeps the last run's result.
    compared = []
    window.compare_finished.connect(compared.append)
    assert window.controller.compare()
    for _ in range(3):
        window.run_action.trigger()
        window.compare_action.trigger()
        window.export_action.trigger()
    assert not window.controller.run()
    qtbot.waitUntil(lambda: bool(compared), timeout=300_000)
    assert len(finished) == runs and len(compared) == 1 and not failed
    assert all(row.agrees in (None, True) for row in compared[0])
    assert _table(window) == _rows_of(last)
    path = window.exports.export_csv(str(tmp_path / "after.csv"), rows="all")
    assert open(path).read() == window.adapter.csv_text(last)


def _unwritable_paths(tmp_path) -> list[str]:
    directory = tmp_path / "a-directory"
    directory.mkdir()
    plain = tmp_path / "a-file"
    plain.write_text("x")
    paths = [str(directory), str(plain / "under-a-file.csv"), str(tmp_path / "missing" / "x.csv")]
    if os.geteuid() != 0:  # root writes into read-only folders anyway
        locked = tmp_path / "read-only"
        locked.mkdir()
        locked.chmod(0o555)
        paths.append(str(locked / "x.csv"))
    return paths


def test_export_to_an_unwritable_path_shows_a_message_and_keeps_the_results(
        qtbot, window, dialogs, tmp_path):
    _small_kdiff(qtbot, window)
    result = run(qtbot, window)
    rows = _table(window)
    assert rows
    for path in _unwritable_paths(tmp_path):
        before = len(dialogs)
        assert window.exports.export_csv(path, rows="all") is None, path
        assert len(dialogs) == before + 1, path
        title, text = dialogs[-1]
        assert "Cannot write" in title and path in text
        assert _table(window) == rows and window.controller.result is result
        assert window.export_action.isEnabled()
    (tmp_path / "tab.svg").mkdir()
    for export, path in ((window.exports.export_alignments, tmp_path / "a-directory"),
                         (window.exports.save_picture, tmp_path / "tab.svg")):
        before = len(dialogs)
        assert export(str(path)) is None
        assert len(dialogs) == before + 1  # cannot write, or nothing to write: said either way
        assert _table(window) == rows
    # The same export to a good path still works afterwards.
    good = window.exports.export_csv(str(tmp_path / "good.csv"), rows="all")
    assert open(good).read() == window.adapter.csv_text(result)
