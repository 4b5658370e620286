"""The primer library dock: rows of any results table go into the SQLite file, notes are saved,
exports write the library's own files, a bad import changes nothing, the library is checked as
a panel, and the dock's work runs on the worker thread."""

from __future__ import annotations

import sys
import threading
from types import SimpleNamespace

from Bio import SeqIO

from engine.primers import annotate
from engine.primers.library import Library, LibraryEntry
from engine.sequences import Record, encode

from PySide6.QtWidgets import QApplication

from app import demo
from app import library as app_library
from app.families.common import pattern_entries, span_entry
from tests.app.conftest import cut, load_demo, run


def library_file(tmp_path):
    return tmp_path / "library.sqlite"


def stored(tmp_path) -> dict:
    with Library(library_file(tmp_path)) as lib:  # a connection of its own, as another window's
        return {e.name: e for e in lib.entries()}


def add(qtbot, dock, entries, source="test"):
    with qtbot.waitSignal(dock.added, timeout=120_000) as blocker:
        assert dock.add_entries(entries, source)
    return blocker.args[0]


def lambda_entries():
    lam = demo.records("lambda")[0].text
    return [LibraryEntry("lamF", lam[1000:1020], "forward", "NC_001416.1", 1001, 1020),
            LibraryEntry("lamR", "".join({"A": "T", "C": "G", "G": "C", "T": "A"}[c]
                                         for c in reversed(lam[1300:1322])),
                         "reverse", "NC_001416.1", 1301, 1322, notes="reverse of lamF")]


def test_a_results_row_goes_into_the_sqlite_file(qtbot, window, tmp_path):
    load_demo(qtbot, window, "lambda-ecoli")
    cut(window, "target", 101, 260)
    window.input_panels["background"].set_region((1, 30_000))
    window.params.set_param("k", 4)
    result = run(qtbot, window)
    assert len(result.candidates) > 5
    table = window.results.view
    table.selectRow(3)
    candidate = window.results.model.item(window.results.selected_source_rows()[0])
    menu = window.results.context_menu()
    action = next(a for a in menu.actions() if a.text() == "Add 1 row to the primer library")
    assert action.isEnabled()
    dock = window.library_dock
    with qtbot.waitSignal(dock.added, timeout=120_000) as blocker:
        action.trigger()
    name = blocker.args[0][0]
    entry = stored(tmp_path)[name]
    assert (entry.sequence, entry.orientation, entry.target_id, entry.target_start, entry.target_end,
            entry.k) == (candidate.sequence, "forward", candidate.target_id, candidate.start,
                         candidate.end, 4)
    note = annotate(candidate.sequence)
    assert entry.tm == round(note.tm, 2) and entry.gc_percent == round(note.gc_percent, 2)
    assert entry.background.startswith("NC_008253.1:1-30000") and entry.created
    assert dock.isVisible() and dock.model.rowCount() == 1
    # The same row again: the same oligo, not a second row (issue 32: one oligo, one order).
    with qtbot.waitSignal(dock.added, timeout=120_000) as blocker:
        action.trigger()
    assert blocker.args[0] == [name] and len(stored(tmp_path)) == 1
    assert "already held" in dock.status.text()


def test_notes_are_saved(qtbot, window, tmp_path):
    dock = window.library_dock
    add(qtbot, dock, lambda_entries())
    row = next(r for r in range(dock.model.rowCount()) if dock.model.entry(r).name == "lamF")
    index = dock.model.index(row, app_library.NOTES)
    assert dock.model.flags(index) & dock.model.flags(index).ItemIsEditable
    assert dock.model.setData(index, "ordered 2026-11-26")
    assert stored(tmp_path)["lamF"].notes == "ordered 2026-11-26"
    assert dock.model.data(index) == "ordered 2026-11-26"


def test_exports_write_the_librarys_files(qtbot, window, tmp_path):
    load_demo(qtbot, window, "lambda-ecoli")  # the target the primers were designed on
    dock = window.library_dock
    add(qtbot, dock, lambda_entries())
    with Library(library_file(tmp_path)) as lib:
        want = {"csv": lib.csv_text(), "order": lib.order_sheet_text()}
    for fmt in ("csv", "order", "genbank"):
        path = tmp_path / f"export.{fmt}"
        with qtbot.waitSignal(dock.exported, timeout=120_000):
            assert dock.export(fmt, str(path)) == str(path)
        if fmt in want:
            assert path.read_text() == want[fmt]
    assert (tmp_path / "export.order").read_text().splitlines()[0] == "Name,Sequence,Scale,Purification"
    record = SeqIO.read(tmp_path / "export.genbank", "genbank")
    assert record.id == "NC_001416.1" and len(record.seq) == 48_502
    sites = {f.qualifiers["label"][0]: (int(f.location.start), int(f.location.end), f.location.strand)
             for f in record.features if f.type == "primer_bind"}
    assert sites == {"lamF": (1000, 1020, 1), "lamR": (1300, 1322, -1)}


def test_a_malformed_import_changes_nothing(qtbot, window, tmp_path):
    dock = window.library_dock
    add(qtbot, dock, lambda_entries())
    bad = tmp_path / "bad.csv"
    bad.write_text("name,sequence,colour\np1,ACGTACGTACGTACGTAC,red\n")
    assert dock.import_csv(str(bad)) == 0
    assert dock.error.isVisible() and "unknown column 'colour'" in dock.error.text()
    assert set(stored(tmp_path)) == {"lamF", "lamR"}
    good = tmp_path / "good.csv"
    good.write_text("name,sequence,notes\np1,ACGTACGTACGTACGTAC,from a CSV\n")
    assert dock.import_csv(str(good)) == 1
    assert stored(tmp_path)["p1"].notes == "from a CSV" and dock.model.rowCount() == 3


def test_a_held_sequence_gets_no_second_name(qtbot, window, tmp_path):
    """One sequence, one name, as on the command line: an import that names a held sequence
    anew (any case) is refused naming the entry that has it, and nothing is imported; an add
    from a results table takes the held oligo and says so."""
    dock = window.library_dock
    add(qtbot, dock, lambda_entries())
    lam_f = lambda_entries()[0].sequence
    for text, words in ((f"name,sequence\np1,GGGGCCCCAAAATTTTGG\nmyF,{lam_f.lower()}\n",
                         "primer 'myF': the library already has its sequence, as 'lamF'"),
                        ("name,sequence\np1,GGGGCCCCAAAATTTTGG\np2,GGGGCCCCAAAATTTTGG\n",
                         "primers 'p1' and 'p2' have the same sequence")):
        path = tmp_path / "again.csv"
        path.write_text(text)
        assert dock.import_csv(str(path)) == 0
        assert dock.error.isVisible() and words in dock.error.text()
        assert "\n" not in dock.error.text() and set(stored(tmp_path)) == {"lamF", "lamR"}
    assert add(qtbot, dock, [LibraryEntry("myF", lam_f)]) == ["lamF"]
    assert set(stored(tmp_path)) == {"lamF", "lamR"} and "already held: lamF" in dock.status.text()


def test_the_library_is_checked_as_a_panel(qtbot, window):
    window.params.set_family("nw")  # the Panel view is kdiff's: the window switches
    dock = window.library_dock
    add(qtbot, dock, lambda_entries())
    dock.table.clearSelection()
    assert dock.check_panel()
    panel_view = window.view_titled("Panel")
    assert window.params.family == "kdiff" and window.current_view() is panel_view
    qtbot.waitUntil(lambda: panel_view.result is not None, timeout=120_000)
    assert [n for n, _ in panel_view.result.primers] == ["lamF", "lamR"]
    assert "2 primers from the primer library, no background" in panel_view.header.text()


def test_the_docks_work_runs_on_the_worker_thread(qtbot, window, tmp_path, monkeypatch):
    seen = {}
    real_thermo, real_export = app_library._with_thermo, app_library._export

    def with_thermo(*a):
        seen["thermo"] = threading.current_thread()
        return (yield from real_thermo(*a))

    def export(*a):
        seen["export"] = threading.current_thread()
        return (yield from real_export(*a))

    monkeypatch.setattr(app_library, "_with_thermo", with_thermo)
    monkeypatch.setattr(app_library, "_export", export)
    dock = window.library_dock
    add(qtbot, dock, [LibraryEntry("p", "ACGTTGCAACGTAGCATGCA")])
    with qtbot.waitSignal(dock.exported, timeout=60_000):
        dock.export("csv", str(tmp_path / "out.csv"))
    assert set(seen) == {"thermo", "export"}
    assert all(t is not threading.main_thread() for t in seen.values())


def test_other_families_rows_give_their_primers():
    """kmismatch/edit rows give their patterns (each once); lcs/nw rows the stretch of A."""
    patterns = [Record("p1", encode("ACGTACGTAAGGTTCC")), Record("p2", encode("TTGGCCAAGGTTAACC"))]
    hits = [SimpleNamespace(pattern_id=pid) for pid in ("p2", "p1", "p2")]
    assert [(e.name, e.sequence) for e in pattern_entries(hits, patterns)] == \
        [("p2", "TTGGCCAAGGTTAACC"), ("p1", "ACGTACGTAAGGTTCC")]
    lam = demo.records("lambda")[0]
    region = lam.region(101, 200)
    (entry,) = span_entry(region, [120, 135, "", 111])
    assert (entry.name, entry.target_start, entry.target_end) == ("NC_001416.1:111-135", 111, 135)
    assert entry.sequence == lam.text[110:135]


def test_the_dock_leaves_the_window_at_1280_pixels(qtbot, window):
    window.resize(1280, 720)
    window.params.set_family("kdiff")  # the widest views (Pairs, Panel)
    window.library_dock.show()
    qtbot.wait(50)
    assert window.library_dock.isFloating() and window.library_dock.isVisible()
    assert window.width() <= 1280 and window.minimumSizeHint().width() <= 1280


def test_the_dock_opens_clear_of_the_input_boxes(qtbot, window):
    """Issue 32: the dock must not cover the inputs it is used beside."""
    window.resize(1100, 720)  # narrower than the dock's 760 px would clear on its own
    window.params.set_family("kdiff")
    qtbot.wait(50)
    window.library_dock.show()
    qtbot.wait(50)
    left_edge = window.library_dock.frameGeometry().left()
    inputs_right = window.left.mapToGlobal(window.left.rect().topRight()).x()
    assert left_edge > inputs_right


def test_window_and_cli_share_the_default_library(tmp_path, monkeypatch):
    """Primers kept in the window are the ones `primerscope library list` shows: without a
    file chosen in the settings, both use engine.primers.library.default_path()."""
    from PySide6.QtCore import QSettings

    from app.library import library_path
    from engine.primers import library as engine_library

    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    settings = QSettings(str(tmp_path / "fresh.ini"), QSettings.Format.IniFormat)
    assert library_path(settings) == engine_library.default_path()
    if sys.platform.startswith("linux"):
        assert library_path(settings) == tmp_path / "data" / "primerscope" / "library.sqlite"


def test_an_earlier_window_only_library_is_copied_to_the_shared_default(tmp_path, monkeypatch):
    from PySide6.QtCore import QSettings, QStandardPaths

    from app.library import library_path

    legacy_dir = tmp_path / "qt-app-data"
    legacy_dir.mkdir()
    lib = Library(legacy_dir / "library.sqlite")
    lib.add(LibraryEntry(name="old1", sequence="ACGTACGTACGTACGTAC"))
    lib.close()
    real = QStandardPaths.writableLocation
    monkeypatch.setattr(QStandardPaths, "writableLocation", lambda where: str(legacy_dir) if where
                        == QStandardPaths.StandardLocation.AppDataLocation else real(where))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    path = library_path(QSettings(str(tmp_path / "fresh.ini"), QSettings.Format.IniFormat))
    assert [e.name for e in Library(path).entries()] == ["old1"]
    assert (legacy_dir / "library.sqlite").is_file()  # copied, not moved


def test_copied_names_are_escaped_for_a_spreadsheet(qtbot, window, tmp_path):
    """Copy puts "name<TAB>sequence" lines on the clipboard; a name a spreadsheet would run
    as a formula is escaped as the library's CSV export writes it."""
    dock = window.library_dock
    add(qtbot, dock, [LibraryEntry("=SUM(1,2)", "GGGGCCCCAAAATTTTGG"),
                      LibraryEntry("plain", "ACGTACGTTGCAACGTAC")])
    dock.table.selectAll()
    QApplication.clipboard().clear()
    dock.copy_selection()
    lines = sorted(QApplication.clipboard().text().splitlines())
    assert lines == ["'=SUM(1,2)\tGGGGCCCCAAAATTTTGG", "plain\tACGTACGTTGCAACGTAC"]
