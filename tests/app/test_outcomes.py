"""What the window says about results (issue 20, defects 5 and 8): each family keeps its last
result and status; empty runs say why; empty tabs say what to do; the answer has its own label;
Help ▸ About gives the version and the guide."""

from __future__ import annotations

from engine.sequences import Record, encode
from tests.app.conftest import load_demo, run


def _small_nw(window):
    window.params.set_family("nw")
    window.input_panels["a"].set_records([Record("a", encode("GATTACAGATTACACCGGTTAACG" * 3))], "test")
    window.input_panels["b"].set_records([Record("b", encode("GCATGCTTACAGATTACCCGGTAACGT" * 3))], "test")
    window.params.set_selection(backend="serial")


def test_switching_family_keeps_each_familys_result_and_status(qtbot, window):
    _small_nw(window)
    nw_result = run(qtbot, window)
    nw_status = window.state_label.text()
    assert nw_status.startswith("Done: score")
    assert f"score {nw_result.score:,}" in window.results.summary.text()  # not only the status bar

    window.params.set_family("kdiff")
    assert window.state_label.text() == "Ready."  # not nw's "Done: score ..."
    assert window.results.model.rowCount() == 0 and not window.results.summary.isVisible()
    load_demo(qtbot, window, "lambda-ecoli")
    window.input_panels["target"].set_region((1, 120))
    window.input_panels["background"].set_region((1, 20_000))
    window.params.set_selection(variant="bitparallel", backend="serial")
    kdiff_result = run(qtbot, window)
    kdiff_rows = window.results.model.rows()
    kdiff_status = window.state_label.text()
    assert kdiff_rows and "candidates" in kdiff_status

    window.params.set_family("kmismatch")  # (it loads the last demo for its own inputs)
    assert "Done" not in window.state_label.text() and window.results.model.rowCount() == 0
    qtbot.waitUntil(lambda: not window.loads.running, timeout=30_000)

    window.params.set_family("kdiff")
    assert window.state_label.text() == kdiff_status
    assert window.results.model.rows() == kdiff_rows
    assert window.controller.result is kdiff_result
    profile = window.family_views[0]
    assert profile.views[0].has_data() and window.pages[0].currentWidget() is profile
    assert window.exports.export_csv  # and it can be exported again
    assert window.export_action.isEnabled()

    window.params.set_family("nw")
    assert window.state_label.text() == nw_status
    assert window.controller.result is nw_result
    assert len(window.results.model.rows()) == nw_result.alignment.columns
    assert f"score {nw_result.score:,}" in window.results.summary.text()


def test_k_beyond_the_target_says_why_nothing_was_found(qtbot, window):
    window.params.set_family("kdiff")
    window.input_panels["target"].set_records([Record("short", encode("ACGTACGTAC"))], "test")
    window.input_panels["background"].set_records([Record("bg", encode("ACGT" * 50))], "test")
    window.params.set_selection(variant="bitparallel", backend="serial")
    window.params.set_param("k", 20)
    result = run(qtbot, window)
    assert result.candidates == ()
    text = window.state_label.text()
    assert "0 candidates" in text and "k − 1 = 19" in text and "Lower k" in text
    assert ", )" not in text


def test_empty_tabs_show_a_note_instead_of_axes(qtbot, window):
    from app.views.group import GroupView
    from app.views.kdiff import LandscapeView

    window.params.set_family("kdiff")
    # (the Landscape tab shows its 'Every k' box, the way to a landscape, and says what to do;
    # the Group page holds its own inputs)
    own = (LandscapeView, GroupView)
    assert window.pages and all(
        page.currentWidget() is (page.view if isinstance(page.view, own) else page.note)
        for page in window.pages)
    assert "Run" in window.pages[0].note.text()
    load_demo(qtbot, window, "lambda-ecoli")
    window.input_panels["target"].set_region((1, 120))
    window.input_panels["background"].set_region((1, 20_000))
    window.params.set_selection(variant="bitparallel", backend="serial")
    run(qtbot, window)
    assert window.pages[0].currentWidget() is window.pages[0].view  # the profile
    compare = window.pages[-1]
    assert compare.view is window.compare_view and compare.currentWidget() is compare.note


def test_about_names_the_version_and_the_guide():
    from app.window import about_text, version

    text = about_text()
    assert version() in text and version() != "unknown (not installed)"
    assert "gui.md" in text
