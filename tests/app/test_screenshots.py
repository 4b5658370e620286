"""Every tab at 1280x720 (issue 32): a screenshot of each, and nothing clipped sideways: the
primer-filter bar inside the window, every column of the main tables reachable, the Panel's
cell values only where they fit, the matrix letters only where a cell has room for one.

``PRIMERSCOPE_SHOTS=DIR`` keeps the pictures in DIR (a person looks at them); otherwise they
go to the test's temporary directory."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from PySide6.QtWidgets import QAbstractScrollArea, QTableView, QWidget

from app.families import adapter
from app.table import columns_reachable
from engine import registry
from tests.app.conftest import load_demo, run

SIZE = (1280, 720)
#: Twelve primers, as the issue's Panel had (the lambda demo pairs' and some of their own).
TWELVE = [(f"P{i + 1}", seq) for i, seq in enumerate((
    "CTTGAATACCTTGGGGCCGG", "GGCCATCAGATATCGTTCCGT", "TCAGCTCACCCAAAACTTGCT", "CCAAAACTTGCTGTCGCGTAT",
    "CGGATTTGGGGACGAAAACC", "GATAACCGGCCAGATTGCAC", "ATTAAGCGCGGCTCAGGTTA", "TGGCGGTAACTGTAAGCTGG",
    "AGCACCGCCTTCATCAGTTT", "CTGAAAACCGCCGGATATGC", "GTTCGCAGGAAGCTGAAGTG", "ACCGTGATTCCGTCTGACTG"))]


def _shots(tmp_path) -> Path:
    folder = Path(os.environ.get("PRIMERSCOPE_SHOTS") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _right_edge(widget: QWidget, window) -> int:
    return widget.mapTo(window, widget.rect().topRight()).x()


def _check_no_clipping(window, name: str) -> None:
    assert (window.width(), window.height()) == SIZE, name
    hint = window.minimumSizeHint()
    assert hint.width() <= SIZE[0] and hint.height() <= SIZE[1], (name, hint)
    # The primer tools (filter bar, conditions): every control inside the window and not
    # behind a sideways scroll bar.
    tools = window.results.tools
    if tools is not None and window.results.isVisible():
        assert window.results.tools_area.horizontalScrollBar().maximum() == 0, name
        for widget in tools.findChildren(QWidget):
            if widget.isVisibleTo(window) and widget.width() > 0:
                assert _right_edge(widget, window) <= window.width(), (name, widget, widget.objectName())
    # Every visible table: all its columns in view or reachable by scrolling.
    page = window.tabs.currentWidget()
    tables = [t for t in page.findChildren(QTableView) if t.isVisible()]
    if window.results.isVisible():
        tables.append(window.results.view)
    for table in tables:
        assert columns_reachable(table), (name, table)
        assert _right_edge(table, window) <= window.width(), (name, table)
    for area in page.findChildren(QAbstractScrollArea):
        if area.isVisible():
            assert _right_edge(area, window) <= window.width(), (name, area)


#: What a person reads of a pair at once (issue 32): its primers, their Tm, the product size.
PAIR_ESSENTIALS = ("product (bp)", "forward", "F Tm (°C)", "reverse", "R Tm (°C)")


def _pairs_fit(window) -> None:
    """The Pairs tab at 1280x720: the essential columns whole in the table's view without a
    sideways scroll (no sequence cut short), and the first panel, the pairs' product sizes
    and Tm included, without a vertical scroll."""
    from app.pairs import PAIR_COLUMNS

    view = window.view_titled("Pairs")
    table, header = view.table, view.table.horizontalHeader()
    assert view.model.rowCount() > 0
    assert table.horizontalScrollBar().value() == 0
    titles = [c.title for c in PAIR_COLUMNS]
    for title in PAIR_ESSENTIALS:
        col = titles.index(title)
        left, width = header.sectionViewportPosition(col), header.sectionSize(col)
        assert not table.isColumnHidden(col) and 0 <= left, title
        assert left + width <= table.viewport().width(), (title, left, width)
        assert table.sizeHintForColumn(col) <= width, (title, table.sizeHintForColumn(col), width)
    assert window.left.verticalScrollBar().maximum() == 0
    viewport = window.left.viewport()
    for widget in (view.ranges, view.tm_opt, view.tm_diff):
        bottom = widget.mapTo(viewport, widget.rect().bottomLeft()).y()
        assert widget.isVisibleTo(window) and bottom <= viewport.height(), widget


def _every_tab(qtbot, window, folder: Path, family: str) -> list[str]:
    names = []
    for index in range(window.tabs.count()):
        window.tabs.setCurrentIndex(index)
        qtbot.wait(150)  # layouts settle, the flow bars fit their width
        name = f"{family}-{index}-{window.tabs.tabText(index).lower().replace(' ', '-')}"
        assert window.grab().save(str(folder / f"{name}.png"))
        _check_no_clipping(window, name)
        names.append(name)
    return names


@pytest.fixture
def app_style(qapp):
    """The application's style sheet, as ``primerscope gui`` starts with it (bold box titles
    change the widths and so the wrapping): what a person sees is what is measured."""
    from app.window import application

    application()
    yield
    qapp.setStyleSheet("")


def test_every_kdiff_tab_at_1280x720(qtbot, app_style, window, tmp_path):
    from tests.app.test_pairs_view import design, slice_case

    folder = _shots(tmp_path)
    window.resize(*SIZE)
    view = slice_case(qtbot, window)  # the lambda demo, cut small enough to design quickly
    run(qtbot, window)
    window.select_best()
    design(qtbot, view)
    panel = window.view_titled("Panel")
    with qtbot.waitSignal(panel.checked, timeout=300_000):
        assert window.check_panel(TWELVE, "twelve primers")
    window.resize(*SIZE)
    names = _every_tab(qtbot, window, folder, "kdiff")
    assert len(names) == window.tabs.count() >= 7
    pairs_view = window.view_titled("Pairs")
    window.show_view(pairs_view)
    qtbot.wait(150)
    _pairs_fit(window)
    # The Pairs tab's Sequence page: the chosen pair on the target's bases.
    pairs_view.track_tabs.setCurrentWidget(pairs_view.sequence)
    qtbot.wait(150)
    assert window.grab().save(str(folder / "kdiff-pairs-sequence.png"))
    _check_no_clipping(window, "kdiff-pairs-sequence")
    pairs_view.track_tabs.setCurrentIndex(0)
    # The pairs' product sizes and Tm show in the first panel with the Pairs tab only.
    window.show_view(window.view_titled("Specificity"))
    assert not pairs_view.ranges.isVisibleTo(window) and not pairs_view.tm_opt.isVisibleTo(window)
    # The Panel's twelve values: written only where each fits its cell.
    window.show_view(panel)
    qtbot.wait(100)
    rect = panel.plot.vb.mapViewToScene(panel.plot.vb.viewRect()).boundingRect()
    cell = rect.width() / panel.plot.vb.viewRect().width()
    font = panel.values.fits(cell, cell)
    if font is not None:
        from PySide6.QtGui import QFontMetrics

        texts = [f"{v:.1f}" for v in panel.matrix().ravel() if v == v]
        assert max(QFontMetrics(font).horizontalAdvance(t) for t in texts) <= cell
    # The candidate's D matrix: letters only where a row is tall enough for one.
    window.show_view(window.view_titled("Specificity"))
    qtbot.wait(100)
    matrix = window.view_titled("Specificity").views[1].panel.matrix
    rows_shown, cols_shown = matrix.letters_shown()
    height, width = matrix.cell_pixels()
    need_h, need_w = matrix.letter_room()
    assert need_h >= 10 and need_w >= 8
    assert rows_shown == (height >= need_h) and cols_shown == (width >= need_w), (height, width)
    # Pairs and Panel keep their own tables: the candidates' table is out of the way there.
    for title in ("Pairs", "Panel"):
        window.show_view(window.view_titled(title))
        assert not window.results.isVisible()
    window.show_view(window.view_titled("Specificity"))
    assert window.results.isVisible()


@pytest.mark.parametrize("family", [f.name for f in registry.families() if f.name != "kdiff"])
def test_every_tab_of_the_other_families_at_1280x720(qtbot, window, tmp_path, family):
    folder = _shots(tmp_path)
    window.params.set_family(family)
    load_demo(qtbot, window, adapter(family).default_demo)
    window.resize(*SIZE)
    run(qtbot, window)
    window.select_best()
    _every_tab(qtbot, window, folder, family)


def test_a_headless_screenshot_prints_one_line(tmp_path):
    """Qt's offscreen platform notes (missing window features) are not printed, let alone twice."""
    import subprocess
    import sys

    out = tmp_path / "nw.png"
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    done = subprocess.run([sys.executable, "-m", "app", "gui", "--family", "nw", "--screenshot", str(out)],
                          capture_output=True, text=True, timeout=300, env=env,
                          cwd=Path(__file__).resolve().parents[2])
    assert done.returncode == 0, done.stderr
    assert done.stderr.strip().splitlines() == [f"primerscope: screenshot saved to {out}"]
    assert out.stat().st_size > 10_000
