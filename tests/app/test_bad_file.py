"""A file that cannot be read is explained in a dialog, and what was loaded stays loaded."""

from __future__ import annotations

import gzip

import pytest

from app.inputs import parse_pasted
from engine.sequences import SequenceError


def _load(qtbot, window, role, path):
    done = []
    window.inputs_loaded.connect(lambda: done.append(True))
    window.load_files(role, [str(path)])
    qtbot.waitUntil(lambda: not window.loads.running, timeout=30_000)
    return bool(done)


def test_bad_character_dialog_names_record_position_and_character(qtbot, window, dialogs, tmp_path):
    good = tmp_path / "good.fa"
    good.write_text(">first\nACGTACGTNN\n>second\nGGGG\n")
    assert _load(qtbot, window, "target", good)
    before = window.input_panels["target"].state()
    assert [r.id for r in before.records] == ["first", "second"]
    assert "first" in window.input_panels["target"].tree.topLevelItem(0).text(0)
    assert window.input_panels["target"].tree.topLevelItem(0).text(1) == "10"

    bad = tmp_path / "protein.fa"
    bad.write_text(">ok\nACGT\n>prot\nACGTMEFLQ\n")
    assert not _load(qtbot, window, "target", bad)
    assert len(dialogs) == 1
    title, text = dialogs[0]
    assert "protein.fa" in title
    assert "record 'prot'" in text and "position 6" in text and "'E'" in text
    assert "kept" in text
    assert window.input_panels["target"].state() == before
    assert window.inputs()["target"][0].id == "first"


@pytest.mark.parametrize("content, expected", [
    (b"", "empty"),
    (b"\x1f\x8b\x08\x00garbage", "gzip"),
    (b">gap\nACG-T\n", "gap"),
])
def test_other_bad_files_are_explained(qtbot, window, dialogs, tmp_path, content, expected):
    path = tmp_path / "input.fa"
    path.write_bytes(content)
    assert not _load(qtbot, window, "background", path)
    assert dialogs and expected in dialogs[-1][1].lower()
    assert window.input_panels["background"].state().records == ()


def test_gzip_fasta_loads(qtbot, window, tmp_path):
    path = tmp_path / "seq.fa.gz"
    path.write_bytes(gzip.compress(b">z\nACGTTGCA\n"))
    assert _load(qtbot, window, "background", path)
    assert [len(r) for r in window.inputs()["background"]] == [8]
    assert str(path) in window.recent_files()[0]


def test_pasted_text_is_checked_like_a_file():
    records = parse_pasted(">a desc\nACGT\nAC\n>b\nNNNN\n")
    assert [(r.id, len(r)) for r in records] == [("a", 6), ("b", 4)]
    assert len(parse_pasted("acgt acgt\nACGT", "mine")[0]) == 12
    with pytest.raises(SequenceError, match="position 5.*'1'"):
        parse_pasted("ACGT1ACGT")


def test_drop_and_paste_load_records(qtbot, window, tmp_path):
    from PySide6.QtCore import QMimeData, QPointF, Qt, QUrl
    from PySide6.QtGui import QDropEvent

    from app.inputs import PasteDialog

    path = tmp_path / "dropped.fasta"
    path.write_text(">dropped\nACGTACGT\n")
    panel = window.input_panels["target"]
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(path))])
    event = QDropEvent(QPointF(5, 5), Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton,
                       Qt.KeyboardModifier.NoModifier)
    with qtbot.waitSignal(window.inputs_loaded, timeout=30_000):
        panel.dropEvent(event)
    assert [r.id for r in window.inputs()["target"]] == ["dropped"]

    dialog = PasteDialog("Background")
    qtbot.addWidget(dialog)
    dialog.text.setPlainText("ACGU ACGT")
    dialog._accept()
    assert dialog.result() == PasteDialog.DialogCode.Accepted
    assert [(r.id, r.text) for r in dialog.records] == [("pasted", "ACGTACGT")]
    bad = PasteDialog("Background")
    qtbot.addWidget(bad)
    bad.text.setPlainText(">x\nACGTE\n")
    bad._accept()
    assert "position 5" in bad.error.text() and not bad.records
