"""Exports and the results table (issue 20, defects 6 and 7).

Exports: new files get 0666 minus the umask; the CSV is the rows shown (filters, order, every
shown column) or all rows as the CLI writes them; alignments never mix candidates; the
off-target table exports. Table: the selection follows its rows through sorting and filtering
and stays in view, several rows can be selected, Ctrl+C and the context menu copy them.
"""

from __future__ import annotations

import csv
import io
import os
import re
from types import SimpleNamespace

from PySide6.QtCore import QItemSelectionModel, Qt
from PySide6.QtGui import QKeySequence
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

from engine.kdiff import Candidate
from tests.app.conftest import load_demo, run


def _kdiff_slice(qtbot, window):
    load_demo(qtbot, window, "lambda-ecoli")
    window.input_panels["target"].set_region((101, 260))
    window.input_panels["background"].set_region((1, 30_000))
    window.params.set_selection(variant="bitparallel", backend="serial")
    window.params.set_param("k", 4)
    tools = window.results.tools
    with qtbot.waitSignal(tools.annotated, timeout=120_000):
        result = run(qtbot, window)
    return result


def _mode(path) -> int:
    return os.stat(path).st_mode & 0o777


def test_exports_follow_the_umask_and_the_table(qtbot, window, tmp_path):
    result = _kdiff_slice(qtbot, window)
    panel = window.results
    old = os.umask(0o027)
    try:
        all_rows = window.exports.export_csv(str(tmp_path / "all.csv"), rows="all")
        panel.set_filters(length=(None, 16))
        shown = panel.proxy.rowCount()
        assert 0 < shown < len(result.candidates)
        # Asked when the table differs from the CLI's file: the rows shown, as shown.
        asked = []
        window.choose_sink = lambda title, text, options: asked.append(options) or "shown"
        shown_rows = window.exports.export_csv(str(tmp_path / "shown.csv"))
        picture = window.exports.save_picture(str(tmp_path / "tab.svg"))
        alignments = window.exports.export_alignments(str(tmp_path / "al.txt")) if \
            window.exports.alignment_text() else None
    finally:
        os.umask(old)
    for path in (all_rows, shown_rows, picture, alignments):
        if path:
            assert _mode(path) == 0o640, path
    assert open(all_rows).read() == window.adapter.csv_text(result)
    assert asked and set(asked[0]) == {"shown", "all"}
    text = open(shown_rows, encoding="utf-8").read()
    assert text.isascii()  # the command line's names: no byte-order mark needed
    table = list(csv.reader(io.StringIO(text)))
    cli = next(csv.reader(io.StringIO(window.adapter.csv_text(result))))
    assert table[0][:5] == cli
    from engine.primers import Annotation
    assert table[0][5:] == list(Annotation.COLUMNS)  # the annotation columns, named as --annotate
    for row in table[1:]:  # two decimals, as the command line writes them (not 16 digits)
        assert all(re.fullmatch(r"-?\d+\.\d\d", v) for v in (row[5], row[6]) if v), row
    assert len(table) == shown + 1
    assert all(int(row[3]) <= 16 for row in table[1:])


def test_alignments_never_mix_candidates(qtbot):
    from app.views.offtarget import OffTargetView

    view = OffTargetView(lambda: ("serial", None, None))
    qtbot.addWidget(view)
    a, b = Candidate("t", 38, 55, "ACGT" * 4 + "AC"), Candidate("t", 942, 960, "TTGCA" * 3 + "TTGC")
    view.reset(SimpleNamespace(inputs={"background": []}, params={"k": 3}))
    view.select(a)
    view.report = SimpleNamespace(candidate=a, sites=())  # as if a's search had run
    assert "38-55" in view.alignment_text()
    view.select(b)  # b selected: a's sites are no longer what the view stands for
    assert view.alignment_text() == ""


def test_offtarget_table_exports(qtbot, window, tmp_path, monkeypatch):
    from PySide6.QtWidgets import QFileDialog

    from app.views.offtarget import OffTargetView

    result = _kdiff_slice(qtbot, window)
    view = next(v for v in window.family_views if isinstance(v, OffTargetView))
    assert window.select_best()
    view.max_edits.setValue(5)
    with qtbot.waitSignal(view.searched, timeout=120_000):
        assert view.run()
    assert view.sites and view.export_button.isEnabled()
    target = tmp_path / "sites.csv"
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a, **k: (str(target), ""))
    view.export_button.click()
    raw = target.read_bytes()
    assert raw.startswith(b"\xef\xbb\xbf")  # "3′ edits": Excel needs the byte-order mark
    table = list(csv.reader(open(target, encoding="utf-8-sig")))
    assert "3′ edits" in table[0]
    assert table[0][:3] == ["record", "start", "end"] and len(table) == len(view.sites) + 1
    first = view.sites[0]
    assert table[1][1:3] == [str(first.start), str(first.end)]
    assert result.info.complete


def test_selection_follows_its_row_through_sort_and_filter(qtbot, window):
    result = _kdiff_slice(qtbot, window)
    panel, view = window.results, window.results.view
    seen = []
    panel.selected.connect(seen.append)
    chosen = sorted(result.candidates, key=lambda c: c.start)[len(result.candidates) // 2]
    assert panel.select_item(chosen) and seen[-1] == chosen
    seen.clear()

    def current():
        index = view.selectionModel().currentIndex()
        return panel.model.item(panel.proxy.mapToSource(index).row())

    def in_view():
        rect = view.visualRect(view.selectionModel().currentIndex())
        return view.viewport().rect().intersects(rect)

    view.sortByColumn(3, Qt.SortOrder.DescendingOrder)  # by length
    assert current() == chosen and in_view()
    view.sortByColumn(1, Qt.SortOrder.DescendingOrder)  # by start, the other way round
    assert current() == chosen and in_view()
    panel.set_filters(length=(chosen.length, chosen.length))
    assert current() == chosen and in_view()
    assert seen == []  # the views kept showing the chosen candidate, not its neighbours
    assert [i.row() for i in view.selectionModel().selectedRows()] == \
        [panel.proxy.mapFromSource(panel.model.index(r, 0)).row() for r in panel.selected_source_rows()]


def test_several_rows_copy_and_export(qtbot, window, tmp_path, monkeypatch):
    _kdiff_slice(qtbot, window)
    panel, view = window.results, window.results.view
    selection = view.selectionModel()
    flags = QItemSelectionModel.SelectionFlag
    for row in (0, 2, 4):
        selection.select(panel.proxy.index(row, 0), flags.Select | flags.Rows)
    assert len(panel.selected_source_rows()) == 3
    view.setFocus()
    QApplication.clipboard().clear()
    QTest.keySequence(view, QKeySequence(QKeySequence.StandardKey.Copy))
    lines = QApplication.clipboard().text().splitlines()
    assert len(lines) == 4 and lines[0].split("\t")[:3] == ["target", "start", "end"]
    expected = [tuple(str(v) for v in panel.model.row_values(r)) for r in panel.selected_source_rows()]
    assert [tuple(line.split("\t")[:5]) for line in lines[1:]] == expected
    menu = panel.context_menu()
    assert [a.text() for a in menu.actions()] == ["Copy 3 rows", "Export selected rows as CSV…", "",
                                                  "Add 3 rows to the primer library"]
    path = window.exports.export_selection(str(tmp_path / "sel.csv"))
    rows = list(csv.reader(io.StringIO(open(path).read())))
    assert len(rows) == 4 and [tuple(r[:5]) for r in rows[1:]] == expected
    # A target id a spreadsheet would run is copied escaped, as the CSV writes it.
    values = panel.model.row_values
    monkeypatch.setattr(panel.model, "row_values", lambda r: ("=1+2", *tuple(values(r))[1:]))
    panel.copy_selection()
    copied = [line.split("\t") for line in QApplication.clipboard().text().splitlines()[1:]]
    assert [c[0] for c in copied] == ["'=1+2"] * 3 and [c[1:5] for c in copied] == \
        [list(row[1:5]) for row in expected]


def test_edit_alignment_text_puts_the_pattern_over_matched_on_both_strands():
    """A ``-`` hit's block showed the pattern's reverse complement over ``matched`` (the text
    as read on that strand), which the CIGAR does not describe: the pattern as given reads
    5'->3' over matched on either strand."""
    from app.families.edit import EditAdapter
    from engine import edit
    from engine.jobs import drive

    pattern = "TTTTCAGAGGGTATTTTAC"
    job = edit.make_job(pattern, "TTGTAAAATACCCTCTGAAAAGTTACGGTTTTCAGAGGGTATTTTACTT",
                        mode="search", k=1)
    res = drive(edit.iter_solve(job))
    blocks = EditAdapter().alignment_text(res, job).split("\n\n")
    assert {h.strand for h in res.hits} == {"+", "-"} and len(blocks) == len(res.hits)
    for h, block in zip(res.hits, blocks):
        top, bars, bottom = (line[8:] for line in block.splitlines()[1:])
        assert top.replace("-", "") == pattern and bottom.replace("-", "") == h.matched
        assert bars.count("|") == len(top) - h.distance, block


#: Record ids a FASTA header may give that a spreadsheet would run as formulas.
FORMULAS = ('=HYPERLINK("x")', "-1+2", "@SUM(A1)")


def test_table_exports_defuse_formula_like_ids(window, tmp_path):
    """Shown or selected rows and a view's own table: ids a spreadsheet would run get a
    leading quote, as in the command line's CSV; a '-' strand and the numbers stay."""
    from app.exports import rows_csv
    from app.families.kmismatch import KmismatchAdapter
    from app.table import ResultsModel
    from app.views.offtarget import SITE_COLUMNS
    from engine.spreadsheet import unquoted_cell

    columns = KmismatchAdapter.columns
    rows = [(FORMULAS[0], FORMULAS[1], 3, 12, "-", 1, "ACGTACGTAC"),
            (FORMULAS[2], "chr1", 5, 14, "+", 0, "ACGTACGTAC")]
    table = list(csv.reader(io.StringIO(rows_csv([c.title for c in columns], rows, columns))))
    assert table[1:] == [["'" + FORMULAS[0], "'" + FORMULAS[1], "3", "12", "-", "1", "ACGTACGTAC"],
                         ["'" + FORMULAS[2], "chr1", "5", "14", "+", "0", "ACGTACGTAC"]]
    model = ResultsModel()
    model.set_columns(SITE_COLUMNS)
    model.replace([(FORMULAS[1], 5, 26, "-", 1, 0, "22=")], list)
    path = window.exports.export_table(model, "sites.csv", str(tmp_path / "sites.csv"))
    table = list(csv.reader(open(path, encoding="utf-8-sig")))
    assert table[1] == ["'-1+2", "5", "26", "-", "1", "0", "22="]
    assert unquoted_cell(table[1][0]) == FORMULAS[1]


def test_the_id_columns_of_every_table_are_user_text():
    """The table columns that hold the command line's ``*_id`` columns are escaped in a CSV
    export, and no other (a strand, a gap or an ``=`` op is a fixed word)."""
    from app import primers
    from app.families import adapter
    from app.views.offtarget import SITE_COLUMNS
    from engine.edit import export as edit_export
    from engine.kmismatch import export as kmismatch_export
    from engine.lcs import export as lcs_export
    from engine.nw import export as nw_export
    from engine.primers import export_kdiff, offtarget

    tables = [(adapter("kdiff").columns, export_kdiff.CSV_COLUMNS),
              (primers.REGION_COLUMNS, export_kdiff.REGION_COLUMNS),
              (adapter("kmismatch").columns, kmismatch_export.CSV_COLUMNS),
              (adapter("edit").table_columns({"mode": "search"}), edit_export.SEARCH_COLUMNS),
              (adapter("edit").table_columns({"mode": "global"}), edit_export.GLOBAL_COLUMNS),
              (adapter("nw").columns, nw_export.CSV_COLUMNS),
              (adapter("lcs").columns, lcs_export.CSV_COLUMNS),
              (SITE_COLUMNS, offtarget.CSV_COLUMNS[:len(SITE_COLUMNS)])]
    for columns, names in tables:
        assert len(columns) == len(names), names
        assert [c.user_text for c in columns] == [n.endswith("_id") for n in names], names
