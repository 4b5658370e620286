"""The sequence view (issue 32): gaps and soft-masked stretches found as a plain scan finds them,
letters only when zoomed in, the pair's amplicon shaded, click-to-select, and its place in the
kdiff results."""

from __future__ import annotations

import re

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from app.views.sequence import Mark, SequenceView, gc_density
from tests.app.conftest import load_demo, run


def _runs(text: str, pattern: str, offset: int) -> list[tuple[int, int]]:
    return [(offset + m.start() + 1, offset + m.end()) for m in re.finditer(pattern, text)]


@given(text=st.text(alphabet="ACGTacgtNn", min_size=1, max_size=300), offset=st.integers(0, 10_000))
@settings(deadline=None, max_examples=40)
def test_gaps_and_masks_are_the_runs_a_plain_scan_finds(qapp, text, offset):
    view = SequenceView()
    view.set_sequence("r", text, offset)
    assert view.gaps() == _runs(text, "[Nn]+", offset)
    assert view.masked() == _runs(text, "[acgt]+", offset)


@given(text=st.text(alphabet="ACGTN", min_size=1, max_size=400), bins=st.integers(1, 50))
@settings(deadline=None, max_examples=40)
def test_gc_density_is_the_gc_fraction_of_each_bin(text, bins):
    codes = np.frombuffer(text.encode(), dtype=np.uint8)
    centres, gc = gc_density(codes, 0, len(text), bins)
    edges = np.linspace(0, len(text), min(bins, len(text)) + 1).astype(int)
    for value, a, b in zip(gc, edges[:-1], edges[1:]):
        chunk = text[a:b]
        assert value == (sum(ch in "GC" for ch in chunk) / max(1, len(chunk)))


def test_letters_when_zoomed_in_density_when_out_and_the_pair_and_clicks(qtbot):
    view = SequenceView()
    qtbot.addWidget(view)
    view.resize(900, 200)
    view.show()
    text = "ACGT" * 500
    view.set_sequence("rec", text, 1000)
    qtbot.wait(20)
    assert not view.letters_visible()
    assert len(view.density.getData()[0]) > 10  # the density track stands in for the letters
    view.set_pair((1100, 1119), (1300, 1319))
    qtbot.wait(20)
    assert view.amplicon.isVisible() and view.amplicon.getRegion() == (1099.5, 1319.5)
    x0, x1 = view.visible_range()
    assert x0 < 1100 and 1319 < x1 < 1500  # zoomed to the amplicon
    view.zoom_to(1100, 1160)
    qtbot.wait(20)
    assert view.letters_visible()
    assert view.density.getData()[0] is None or len(view.density.getData()[0]) == 0
    view.grab()  # paints the letters
    assert view.letters.shown
    clicked, positions = [], []
    view.candidate_clicked.connect(clicked.append)
    view.position_clicked.connect(positions.append)
    view.set_candidates([Mark(1150, 1169, "+", "fwd"), Mark(1200, 1219, "-", "rev")])
    view.click_at(1160, 1.7)
    view.click_at(1210, -1.7)
    view.click_at(1210, 1.7)  # no forward candidate there: the base
    assert clicked == ["fwd", "rev"]
    assert positions == [1210]
    view.set_intervals("exclude", [(1130, 1140)])
    assert "exclude: 1" in view.caption.text()


def test_kdiff_results_show_the_sequence_and_a_click_selects_the_row(qtbot, window):
    window.params.set_family("kdiff")
    load_demo(qtbot, window, "lambda-ecoli")
    run(qtbot, window)
    view = window.view_titled("Sequence")
    window.show_view(view)
    assert view.has_data()
    target = window.inputs()["target"][0]
    assert view.track.text == target.text and view.track.offset == target.offset
    marks = view.track.candidates
    assert marks  # the shortest candidates
    shortest = min(c.length for c in window.controller.result.candidates)
    assert all(m.payload.length == shortest for m in marks)
    chosen = marks[len(marks) // 2]
    view.track.click_at((chosen.start + chosen.end) / 2, 1.7)
    selected = [window.results.model.item(r) for r in window.results.selected_source_rows()]
    assert selected == [chosen.payload]
    assert view.track.pair[0] == Mark(chosen.start, chosen.end, "+")
