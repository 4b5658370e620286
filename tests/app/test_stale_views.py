"""Views never keep showing what the filters hid (issue 32): the candidate's D matrix, the
profile's red circle and the sequence track's selection go when their row is filtered out."""

from __future__ import annotations

from tests.app.conftest import load_demo, run


def test_filtering_out_the_selected_candidate_clears_its_views(qtbot, window):
    window.params.set_family("kdiff")
    load_demo(qtbot, window, "lambda-ecoli")
    run(qtbot, window)
    assert window.select_best()
    profile, candidate = window.view_titled("Specificity").views
    qtbot.waitUntil(lambda: candidate.match is not None, timeout=120_000)
    assert candidate.panel.matrix.scales_shown()
    item = candidate._selected
    assert profile.selected_line.isVisible() and len(profile.selected_dot.data) == 1
    # A length filter that the selected (shortest) candidate does not pass.
    window.results.set_filters(length=(item.length + 1, None))
    qtbot.wait(50)
    assert not profile.selected_line.isVisible() and len(profile.selected_dot.data) == 0
    assert candidate.match is None and not candidate.panel.matrix.has_data()
    assert not candidate.panel.matrix.scales_shown()  # no axis numbers over an empty matrix
    assert "filters hide" in candidate.status.text()
    assert window.view_titled("Sequence").track.pair == (None, None)
    # Back: clearing the filters and selecting again shows it again.
    window.results.clear_filters()
    assert window.results.select_item(item)
    qtbot.waitUntil(lambda: candidate.match is not None, timeout=120_000)
    assert profile.selected_line.isVisible()
