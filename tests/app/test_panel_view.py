"""The Panel view: the heatmap holds the engine's matrices, hovering reads a cell out, 3′-end
dimers are framed, cross-products are listed, and the check runs on the worker thread."""

from __future__ import annotations

import threading

import numpy as np
from PySide6.QtCore import QPointF

from engine.primers import panel
from engine.sequences import Record, encode

from app import demo
from app import panel as app_panel
from app.pairs import panel_primers, product_rows
from app.views.panel import PanelView
from tests.engine.primers.brute import rc


def lambda_primers() -> list[tuple[str, str]]:
    """Two pairs from lambda, a primer that is its own 3′ dimer, and an IUPAC primer (no
    thermodynamics: NaN)."""
    lam = demo.records("lambda")[0].text
    return [("F1", lam[1000:1021]), ("R1", rc(lam[1200:1221])), ("F2", lam[5000:5020]),
            ("R2", rc(lam[5250:5272])), ("dimer", "ACGTACGTACGTACGTACGT"),
            ("iupac", "ACGTNNACGTRYACGTACGA")]


def records(primers):
    return [Record(n, encode(s)) for n, s in primers]


def check(qtbot, view, primers, source="test"):
    failures = []
    view.runner.failed.connect(failures.append)
    with qtbot.waitSignal(view.checked, timeout=300_000, raising=False) as blocker:
        assert view.check(primers, source)
    assert not failures, failures
    assert blocker.signal_triggered
    return blocker.args[0]


def test_heatmap_values_equal_the_engines_matrices(qtbot):
    view = PanelView()
    qtbot.addWidget(view)
    view.resize(900, 600)
    view.show()
    primers = lambda_primers()
    result = check(qtbot, view, primers)
    want = panel.solve(records(primers))
    for key, attribute in (("dg", "dimer_dg"), ("tm", "dimer_tm"), ("end", "end_dg")):
        view.matrix_combo.setCurrentIndex(view.matrix_combo.findData(key))
        np.testing.assert_array_equal(view.image.image, getattr(want, attribute))  # NaN == NaN
        np.testing.assert_array_equal(view.matrix(), getattr(result, attribute))
    assert np.isnan(view.image.image[5]).all()  # the IUPAC primer: Primer3 cannot score it
    framed = {(round(x - 0.5), round(y - 0.5)) for x, y in zip(*view.marks.getData())}
    n = len(primers)
    assert framed == {(j, i) for i in range(n) for j in range(n) if want.end_dimer[i, j]}
    assert framed  # the palindrome binds itself at its 3′ end
    assert "3′-end dimer" in view.status.text() and "6 primers, 21 pairs" in view.status.text()
    ticks = view.plot.getAxis("left")._tickLevels[0]
    assert [t[1] for t in ticks] == [f"{i + 1}. {name}" for i, (name, _) in enumerate(primers)]


def test_hover_reads_out_the_cell(qtbot):
    view = PanelView()
    qtbot.addWidget(view)
    view.resize(900, 600)
    view.show()
    result = check(qtbot, view, lambda_primers())
    qtbot.wait(50)
    for i, j in ((0, 1), (4, 4), (3, 5)):
        scene = view.plot.vb.mapViewToScene(QPointF(j + 0.5, i + 0.5))
        view.widget.scene().sigMouseMoved.emit(scene)
        assert view.readout.text() == app_panel.cell_text(result, i, j)
    text = view.readout.text()
    assert text.startswith("R2 × iupac: heterodimer ΔG –")  # no thermodynamics for IUPAC codes
    dg = result.dimer_dg[0, 1]
    scene = view.plot.vb.mapViewToScene(QPointF(1.5, 0.5))
    view.widget.scene().sigMouseMoved.emit(scene)
    assert f"F1 × R1: heterodimer ΔG {dg:.2f} kcal/mol" in view.readout.text()


def test_cross_products_in_the_background(qtbot):
    lam = demo.records("lambda")[0]
    primers = lambda_primers()[:4]
    view = PanelView(lambda: ([lam], "lambda"))
    qtbot.addWidget(view)
    result = check(qtbot, view, primers)
    want = panel.solve(records(primers), [lam])
    assert result.has_background and result.products == want.products
    assert len(result.products) >= 2  # each pair amplifies its own product
    assert view.model.rows() == product_rows(want.products)
    assert "cross-products in lambda" in view.header.text()
    view.background_box.setChecked(False)
    with qtbot.waitSignal(view.checked, timeout=120_000) as blocker:
        assert view.check_again()
    assert not blocker.args[0].has_background and view.model.rowCount() == 0


def test_the_check_runs_on_the_worker_thread(qtbot, monkeypatch):
    seen = []
    real = panel.iter_solve

    def iter_solve(*a, **kw):
        seen.append(threading.current_thread())
        return (yield from real(*a, **kw))

    monkeypatch.setattr(panel, "iter_solve", iter_solve)
    view = PanelView()
    qtbot.addWidget(view)
    check(qtbot, view, lambda_primers()[:3])
    assert seen and seen[0] is not threading.main_thread()


def test_pairs_checked_as_a_panel_in_the_window(qtbot, window):
    """From the Pairs view's Check as panel to the Panel tab, with the run's background."""
    from tests.app.test_pairs_view import design, slice_case

    view = slice_case(qtbot, window)
    result = design(qtbot, view)
    panel_view = window.view_titled("Panel")
    view.table.selectAll()
    with qtbot.waitSignal(panel_view.checked, timeout=300_000) as blocker:
        assert view.check_panel()
    checked = blocker.args[0]
    assert window.current_view() is panel_view
    distinct = panel_primers(result.pairs)  # pairs may share a primer (as Primer3's do)
    assert list(checked.primers) == distinct and checked.has_background
    assert checked.dimer_dg.shape == (len(distinct), len(distinct)) and view.result is result


def test_a_new_check_clears_the_last_panels_hover_text(qtbot):
    """Issue 32 (stale views): the read-out named a cell of the panel checked before."""
    view = PanelView()
    qtbot.addWidget(view)
    view.resize(900, 600)
    view.show()
    check(qtbot, view, lambda_primers())
    qtbot.wait(50)
    view.widget.scene().sigMouseMoved.emit(view.plot.vb.mapViewToScene(QPointF(5.5, 5.5)))
    assert view.readout.text().startswith("iupac × itself"), view.readout.text()
    check(qtbot, view, lambda_primers()[:2])  # iupac is gone
    assert view.readout.text() == "Hover a cell to read its values."
