"""A table cell shortened with '…' shows its whole text as a tooltip, however short the text
(a 28-30 nt primer in the pairs table had none: the model's own tip starts above 30)."""

from __future__ import annotations

from PySide6.QtCore import QEvent
from PySide6.QtGui import QHelpEvent
from PySide6.QtWidgets import QApplication, QToolTip

from app.families import Column
from app.table import ResultsFilter, ResultsModel, table_view

PRIMER = "ACGTTGCAAGCTTGACCTAGGATCCAGTA"  # 29 nt


def _tip(table, row, col, qtbot) -> str:
    QToolTip.hideText()
    qtbot.waitUntil(lambda: not QToolTip.isVisible(), timeout=2000)
    rect = table.visualRect(table.model().index(row, col))
    pos = rect.center()
    event = QHelpEvent(QEvent.Type.ToolTip, pos, table.viewport().mapToGlobal(pos))
    QApplication.sendEvent(table.viewport(), event)
    return QToolTip.text() if QToolTip.isVisible() else ""


def test_an_elided_cell_has_its_text_as_a_tip_and_a_whole_one_none(qtbot):
    model, proxy = ResultsModel(), ResultsFilter()
    model.set_columns([Column("name"), Column("forward")])
    model.replace([("p1", PRIMER)], lambda items: list(items))
    table = table_view(model, proxy)
    qtbot.addWidget(table)
    table.resize(600, 200)
    table.show()
    qtbot.wait(20)
    table.horizontalHeader().setStretchLastSection(False)
    table.setColumnWidth(1, 90)  # narrower than the primer: shown as 'ACGT…AGTA'
    assert _tip(table, 0, 1, qtbot) == PRIMER
    table.setColumnWidth(1, 400)
    assert _tip(table, 0, 1, qtbot) == ""
