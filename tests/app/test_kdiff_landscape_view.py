"""The k slider of an all-k kdiff run (issue #33): the table, the profile and the exports at
another k equal a separate run at that k, with no recompute. (The redraw's speed, goal 50 ms, is
measured by scripts/probe/landscape_slider.py, not asserted here: a shared CI machine's load
makes a timed test fail for reasons that are not the code's.)"""

from __future__ import annotations

import numpy as np

from app.views.kdiff import LandscapeView, SpecificityView, heatmap_bins
from engine import kdiff
from engine.kdiff.landscape_table import Landscape
from tests.app.conftest import cut, load_demo, run


def _view(window, kind):
    from app.views import SplitView

    for view in window.family_views:
        parts = view.views if isinstance(view, SplitView) else [view]
        for part in parts:
            if isinstance(part, kind):
                return part
    raise AssertionError(f"no {kind.__name__}")


def test_slider_shows_each_k_without_a_rerun(qtbot, window, tmp_path):
    load_demo(qtbot, window, "lambda-ecoli")
    cut(window, "target", 101, 700)
    window.input_panels["background"].set_region((1, 40_000))
    window.params.set_selection(variant="bitparallel", backend="serial")
    window.params.set_param("k", 4)
    inputs = window.inputs()
    view, profile = _view(window, LandscapeView), _view(window, SpecificityView)
    assert run(qtbot, window).landscape is None  # one k unless asked
    view.every_k.setChecked(True)
    try:
        result = run(qtbot, window)
    finally:  # (the family's adapter outlives the window: leave it as found)
        view.every_k.setChecked(False)
    assert result.landscape is not None and result.landscape.k == [1, 2, 3, 4]
    assert view.slider.isEnabled() and view.slider.value() == 4
    cells = result.info.cells
    for k in (2, 1, 3, 4):
        view.set_k(k)
        expected = kdiff.solve(inputs["target"], inputs["background"], k, variant="bitparallel",
                               backend="serial")
        rows = [(c.target_id, c.start, c.end, c.length, c.sequence) for c in expected.candidates]
        assert rows and window.results.model.rows() == rows, k
        record = profile.current_record()
        shown = profile._profiles[record]
        assert shown.y[:len(shown.items)].tolist() == [c.length for c in expected.candidates]
        gui_csv = window.exports.export_csv(str(tmp_path / f"k{k}.csv"), rows="all")
        from engine.primers import export_kdiff as export

        assert open(gui_csv).read() == export.csv_text(expected)
        assert view.redraw_ms is not None  # the slider's own path ran (the probe times it)
    assert window.controller.result.info.cells == cells  # nothing ran again
    written = view.export_tracks(str(tmp_path / "tracks"))
    assert [p for p in written if p.endswith(".bedGraph")] == \
        [str(tmp_path / f"tracks.k{k}.bedGraph") for k in (1, 2, 3, 4)]
    assert open(written[1]).read() == result.landscape.bedgraph_text(2)
    assert view.image.image.shape == (600, 4)


def test_a_megabase_landscape_redraws_each_k(qtbot):
    """A 1 Mb target's landscape (synthetic lengths): the slider's whole redraw path."""
    n, K = 1_000_000, 5
    rng = np.random.default_rng(1)
    lengths = np.sort(rng.integers(10, 40, (n, K)), axis=1).astype(np.int32)
    lengths[rng.random((n, K)) < 0.05] = 0
    codes = rng.integers(1, 16, n + 64).astype(np.uint8)
    land = Landscape(np.zeros(n, np.int32), np.arange(n), lengths, target_ids=("chr",),
                     texts=(codes,))
    profile = SpecificityView()
    qtbot.addWidget(profile)
    profile.show()  # (a hidden profile is drawn when shown, not at each move)
    for k in range(1, K + 1):  # as LandscapeView.show_result does after the run
        profile.prepare(land.candidates(k))
    for k in (1, 3, 5, 2):
        profile.show_candidates(land.candidates(k))
        assert len(profile._profiles["chr"].items) == int(np.count_nonzero(lengths[:, k - 1]))
        assert len(profile.curve.xData) == int(np.count_nonzero(lengths[:, k - 1]))  # drawn


def test_heatmap_bins_take_each_bins_shortest():
    lengths = np.array([[3, 0], [2, 5], [0, 0], [0, 0]], np.int32)
    grid = heatmap_bins(lengths, bins=2)
    assert grid[0].tolist() == [2.0, 5.0]
    assert np.isnan(grid[1]).all()


def test_the_every_k_box_stays_in_reach_and_a_one_k_run_says_how_to_get_a_landscape(qtbot):
    """The tab shows the view, not the empty note, so its 'Every k' box can be ticked; after a
    one-k run it says to tick it and re-run and what that costs; after an every-k run, the
    heatmap and the slider."""
    from types import SimpleNamespace

    from app.views import TabPage

    view = LandscapeView(lambda k: None, lambda prefix=None: [])
    page = TabPage(view)
    qtbot.addWidget(page)
    page.resize(1000, 500)
    page.show()
    page.refresh()
    assert page.currentWidget() is view and view.every_k.isVisible()
    view.reset(None)
    view.show_result(SimpleNamespace(landscape=None, k=3))
    page.refresh()
    assert page.currentWidget() is view and view.every_k.isVisible()
    caption = view.caption.text()
    assert "k = 3 only" in caption and "Every k" in caption and "run again" in caption
    assert "1.1 times" in caption and not view.widget.isVisible() and not view.slider.isVisible()
    lengths = np.array([[12, 14, 0], [11, 13, 15], [0, 12, 14]], np.int32)
    land = Landscape(np.zeros(3, np.int32), np.arange(3), lengths, target_ids=("chr",),
                     texts=(np.ones(3 + 64, np.uint8),))
    view.show_result(SimpleNamespace(landscape=land, k=3))
    page.refresh()
    assert view.widget.isVisible() and view.slider.isEnabled() and view.slider.value() == 3
    assert view.image.image.shape == (3, 3)



def test_the_heatmap_has_the_starts_along_x_and_the_k_along_y(qtbot):
    """The pixel under (start, k) in the plot's coordinates is that start's length at k (the
    window sets pyqtgraph's images row-major: a (starts x k) grid drawn so lay on its side)."""
    from types import SimpleNamespace

    from PySide6.QtCore import QPointF

    from app.views.plotting import configure

    lengths = np.array([[12, 14, 0], [11, 13, 15], [0, 12, 14], [10, 16, 17], [9, 0, 20]],
                       np.int32)
    land = Landscape(np.zeros(5, np.int32), np.arange(5), lengths, target_ids=("chr",),
                     texts=(np.ones(5 + 64, np.uint8),))
    configure()  # (as the window does)
    view = LandscapeView(lambda k: None, lambda prefix=None: [])
    qtbot.addWidget(view)
    view.show_result(SimpleNamespace(landscape=land, k=3))
    assert (view.image.width(), view.image.height()) == (5, 3)
    grid = view.image.image
    for start in range(5):
        for k in (1, 2, 3):
            at = view.image.mapFromView(QPointF(start + 1, k))  # (1-based starts)
            cell = grid[int(at.x()), int(at.y())]
            want = lengths[start, k - 1]
            assert (np.isnan(cell) if want == 0 else cell == want), (start, k)


def test_every_k_drops_the_neighbours_flag_instead_of_falling_back_to_one_k(monkeypatch):
    """neighbours (CUDA's default) speeds up one k only and --all-k refuses it: with the box
    ticked the run goes without it, instead of quietly falling back to a one-k run."""
    from types import SimpleNamespace

    from app.families.kdiff import KdiffAdapter
    from engine import kdiff as engine_kdiff

    calls = []

    def make_job(target, background, k, **options):
        calls.append(options)
        if options.get("all_k") and "neighbours" in options["flags"]:
            raise ValueError("kdiff --all-k does not run with the neighbours flag")
        return options

    monkeypatch.setattr(engine_kdiff, "make_job", make_job)
    adapter = KdiffAdapter()
    adapter.every_k = True
    sel = SimpleNamespace(variant="bitparallel", backend="cuda", parallel=None,
                          flags=frozenset({"neighbours", "word32"}))
    choice = SimpleNamespace(selection=sel, params={"k": 3, "strands": "both"}, threads=2,
                             backend_options=dict)
    job = adapter.make_job({"target": "T", "background": "B"}, choice)
    assert job.get("all_k") and job["flags"] == {"word32"}, calls


def _synthetic_every_k_run(window, n: int = 400, K: int = 4):
    """A kdiff --all-k result of ``n`` starts with made-up lengths (as the slider probe's),
    shown through the run controller's own finish path; (landscape, Landscape view)."""
    from dataclasses import replace

    from engine.sequences import load

    rng = np.random.default_rng(3)
    first = rng.integers(9, 16, n)
    lengths = np.concatenate([first[:, None], first[:, None]
                              + np.cumsum(rng.integers(1, 4, (n, K - 1)), axis=1)], axis=1)
    lengths = np.minimum(lengths, n - np.arange(n)[:, None])
    lengths[rng.random((n, K)) < 0.05] = 0
    lengths[n - 40:] = 0
    codes = rng.choice(np.array([1, 2, 4, 8], np.uint8), n)
    land = Landscape(np.zeros(n, np.int32), np.arange(n), lengths.astype(np.int32),
                     target_ids=("chr",), texts=(codes,))
    window.params.set_family("kdiff")
    template = kdiff.solve(load("ACGTTGCAAC"), load("ACGTAGCAAC"), K, backend="serial",
                           all_k=True)
    result = replace(template, candidates=land.candidates(K), landscape=land,
                     profiles={"chr": np.maximum(land.length_at(K) - 1, 0)}, settled={"chr": n})
    window.controller._finish_run(result)
    return land, _view(window, LandscapeView)


def _shown(panel, columns=range(5), role=None) -> list[tuple]:
    """What the results table's cells say (its order: sorted and filtered)."""
    from PySide6.QtCore import Qt

    proxy = panel.proxy
    role = Qt.ItemDataRole.DisplayRole if role is None else role
    return [tuple(proxy.data(proxy.index(r, c), role) for c in columns)
            for r in range(proxy.rowCount())]


def _cells(candidates) -> list[tuple]:
    return [(c.target_id, str(c.start), str(c.end), str(c.length), c.sequence) for c in candidates]


def test_the_slider_shows_that_ks_candidates_in_the_tables_cells(qtbot, window):
    """The table's cells (through the view's model, as painted) are the candidates of the
    slider's k after each move, sorted or filtered as the person left the table."""
    from PySide6.QtCore import Qt

    land, view = _synthetic_every_k_run(window)
    panel = window.results
    qtbot.wait(1)  # painted once: rows of the run's k were read
    for k in (2, 4, 1, 3):
        view.set_k(k)
        qtbot.wait(1)
        assert _shown(panel) == _cells(land.candidates(k)), k
        first = panel.proxy.index(0, 0)
        assert panel.model.item(panel.proxy.mapToSource(first).row()) == land.candidates(k)[0]
    panel.view.sortByColumn(3, Qt.SortOrder.DescendingOrder)  # by length, longest first
    panel.set_filters(position=(50, 300))
    for k in (1, 4):
        view.set_k(k)
        qtbot.wait(1)
        kept = [c for c in land.candidates(k) if c.start >= 50 and c.end <= 300]
        kept.sort(key=lambda c: -c.length)  # (stable, as the table sorts)
        assert _shown(panel) == _cells(kept), k
    panel.clear_filters()
    panel.view.sortByColumn(-1, Qt.SortOrder.AscendingOrder)
    assert panel.select_item(land.candidates(4)[7])  # a selection and its row still match
    assert panel.selected_source_rows() == [7]
    c = land.candidates(4)[7]
    assert panel.table_rows(selected=True)[1][0][:5] == (c.target_id, c.start, c.end, c.length,
                                                         c.sequence)


def test_the_annotation_columns_follow_the_slider(qtbot, window):
    """Each k's rows show their own candidates' annotations (none where that k's sequence was
    not annotated), never the row of another k that sat at the same place."""
    from app.primers import annotation_values
    from app.table import SORT_ROLE

    tools = window.results.tools
    with qtbot.waitSignal(tools.annotated, timeout=120_000):
        land, view = _synthetic_every_k_run(window)
    panel = window.results
    first = len(panel.model.columns)
    computed = range(first, first + len(panel.model.computed))

    def expected(k):
        return [annotation_values(tools.annotation(c.sequence)) for c in land.candidates(k)]

    at_k = _shown(panel, computed, SORT_ROLE)  # read (and kept) at the run's k
    assert at_k == expected(4) and any(v is not None for v in at_k[0])
    for k in (3, 4, 1):
        view.set_k(k)
        qtbot.wait(1)
        assert _shown(panel, computed, SORT_ROLE) == expected(k), k
    assert expected(1)[:20] != expected(4)[:20]  # (k = 1's sequences are not annotated)


def test_a_hidden_profile_draws_the_sliders_k_when_shown(qtbot):
    """The slider moves while the profile's tab is hidden: it draws that k once shown."""
    lengths = np.array([[12, 14], [11, 0], [0, 12], [13, 15]], np.int32)
    land = Landscape(np.zeros(4, np.int32), np.arange(4), lengths, target_ids=("chr",),
                     texts=(np.ones(4 + 64, np.uint8),))
    profile = SpecificityView()
    qtbot.addWidget(profile)
    profile.show_candidates(land.candidates(1))
    profile.show_candidates(land.candidates(2))
    assert profile.curve.xData is None or len(profile.curve.xData) == 0  # not drawn hidden
    profile.show()
    qtbot.waitExposed(profile)
    assert profile.curve.xData.tolist() == [1.0, 3.0, 4.0]
    assert profile.curve.yData.tolist() == [14.0, 12.0, 15.0]
    profile.show_candidates(land.candidates(1))  # shown: drawn at once
    assert profile.curve.yData.tolist() == [12.0, 11.0, 13.0]
