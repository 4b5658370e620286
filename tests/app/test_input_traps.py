"""Input traps (issue 20, defect 9): GenBank sequence text with its numbers, an empty record in
a multi-FASTA file, a number typed beyond a box's maximum."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from app.inputs import parse_pasted
from engine.sequences import SequenceError
from tests.app.conftest import load_demo

ORIGIN = """ORIGIN
        1 gggcggcgac ctcgcgggtt ttcgctattt atgaaaattt tccggtttaa ggcgtttccg
       61 ttcttcttcg tcataactta atg
//
"""


def test_pasted_genbank_origin_block_loses_its_numbers():
    (record,) = parse_pasted(ORIGIN, "lambda")
    assert record.id == "lambda"
    assert record.text == ("GGGCGGCGACCTCGCGGGTTTTCGCTATTTATGAAAATTTTCCGGTTTAAGGCGTTTCCG"
                           "TTCTTCTTCGTCATAACTTAATG")
    (numbered,) = parse_pasted(ORIGIN.replace("ORIGIN\n", "").replace("//\n", ""))
    assert numbered.text == record.text
    with pytest.raises(SequenceError, match="'1'"):  # a digit inside a sequence is still an error
        parse_pasted("ACGT1ACGT")


def test_an_empty_record_is_skipped_with_a_warning(qtbot, window, dialogs, tmp_path):
    path = tmp_path / "three.fa"
    path.write_text(">a first\nACGTACGT\n>empty nothing here\n>b\nGGCC\n")
    with qtbot.waitSignal(window.inputs_loaded, timeout=30_000):
        window.load_files("background", [str(path)])
    panel = window.input_panels["background"]
    assert [r.id for r in panel.state().records] == ["a", "b"]
    assert not dialogs
    assert panel.warning.isVisibleTo(window) and "empty" in panel.warning.text()
    assert "empty" in panel.warning.text() and "Skipped 1" in window.state_label.text()


def test_a_number_beyond_the_maximum_is_clamped_and_said(qtbot, window):
    load_demo(qtbot, window, "lambda-ecoli")
    panel = window.input_panels["target"]
    panel.region_box.setChecked(True)
    box = panel.region_to
    assert box.maximum() == 48_502
    box.setFocus()
    box.lineEdit().selectAll()
    QTest.keyClicks(box, "60000")
    QTest.keyClick(box, Qt.Key.Key_Return)
    assert box.value() == 48_502  # not 6,000
    assert panel.state().region[1] == 48_502
    assert "60,000" in panel.warning.text() and "48,502" in panel.warning.text()
    assert panel.warning.isVisibleTo(window)
    box.lineEdit().selectAll()
    QTest.keyClicks(box, "30000")
    QTest.keyClick(box, Qt.Key.Key_Return)
    assert box.value() == 30_000 and not panel.warning.isVisibleTo(window)


def test_duplicate_ids_are_noted_in_the_window(qtbot, window, dialogs, tmp_path):
    """What the command line prints as a warning (duplicate ids made unique) reaches the
    window's status line too."""
    path = tmp_path / "dups.fa"
    path.write_text(">x one\nACGTACGT\n>x two\nGGCCAATT\n")
    with qtbot.waitSignal(window.inputs_loaded, timeout=30_000):
        window.load_files("background", [str(path)])
    text = window.state_label.text()
    assert "Loaded 2 record(s)" in text and "Warning:" in text and "duplicate record ids" in text
    assert not dialogs


def test_only_positions_takes_the_command_lines_region_form(qtbot, window, tmp_path):
    """Issue 28: typing chr2:START-END uses that record alone, cut to those positions, as
    --background-region does; a record it lacks, or a bad form, is said and changes nothing."""
    path = tmp_path / "genome.fa"
    path.write_text(">chr1\n" + "ACGT" * 50 + "\n>chr2\n" + "GGCCTTAA" * 100 + "\n")
    with qtbot.waitSignal(window.inputs_loaded, timeout=30_000):
        window.load_files("background", [str(path)])
    panel = window.input_panels["background"]
    panel.region_text.setText("chr2:301-700")
    QTest.keyClick(panel.region_text, Qt.Key.Key_Return)
    chosen = panel.state().selected()
    assert [(r.id, r.offset, len(r)) for r in chosen] == [("chr2", 300, 400)]
    assert (panel.region_from.value(), panel.region_to.value()) == (301, 700)
    assert panel.region_box.isChecked() and not panel.warning.isVisibleTo(window)
    before = panel.state()
    for bad, message in (("chr9:1-10", "no record 'chr9'"), ("chr1:500-600", "lies outside chr1"),
                         ("chr2:x", "region must be")):
        panel.region_text.setText(bad)
        QTest.keyClick(panel.region_text, Qt.Key.Key_Return)
        assert panel.state() == before and message in panel.warning.text()
    panel.region_text.setText("11-20")  # the plain form: those positions of each selected record
    QTest.keyClick(panel.region_text, Qt.Key.Key_Return)
    assert [(r.id, r.offset) for r in panel.state().selected()] == [("chr2", 10)]
