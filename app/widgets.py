"""Small widgets the panels share."""

from __future__ import annotations

import re

from PySide6.QtCore import QEvent, QPoint, QRect, QSize, Qt, Signal
from PySide6.QtGui import QPainter, QValidator
from PySide6.QtWidgets import (QHBoxLayout, QLabel, QLayout, QSizePolicy, QSpinBox, QToolButton,
                               QVBoxLayout, QWidget)


class ClampingSpinBox(QSpinBox):
    """A spin box that clamps a typed number beyond its range to the nearest bound, and says so.

    A plain QSpinBox refuses the keystroke that leaves the range, so typing 60000 where
    48,502 is the maximum silently gives 6,000. Here the number is accepted while typed and
    clamped when editing ends; ``clamped(typed, used)`` lets the panel tell the user.
    """

    clamped = Signal(int, int)

    def _number(self, text: str) -> int | None:
        body = text
        if self.prefix() and body.startswith(self.prefix()):
            body = body[len(self.prefix()):]
        if self.suffix() and body.endswith(self.suffix()):
            body = body[:-len(self.suffix())]
        body = re.sub(r"[\s,.'_\u00a0\u202f]", "", body)
        return int(body) if re.fullmatch(r"-?\d+", body) else None

    def validate(self, text: str, pos: int):
        state = super().validate(text, pos)
        verdict = state[0] if isinstance(state, tuple) else state
        if verdict == QValidator.State.Invalid:
            value = self._number(text)
            if value is not None and (value > self.maximum() or value < self.minimum()):
                return QValidator.State.Intermediate, text, pos
        return state

    def fixup(self, text: str) -> str:
        value = self._number(text)
        if value is not None and (value > self.maximum() or value < self.minimum()):
            used = min(max(value, self.minimum()), self.maximum())
            self.clamped.emit(value, used)
            return self.textFromValue(used)
        return super().fixup(text)


class ElidedLabel(QLabel):
    """One line of plain text cut with "…" where its width runs out (the whole text in its
    tip): it never widens the panel it sits in, nor takes a second line."""

    def __init__(self, text: str = "", parent=None):
        super().__init__(text, parent)
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)

    def setText(self, text: str) -> None:
        super().setText(text)
        self.setToolTip(text)

    def minimumSizeHint(self):
        return QSize(0, self.fontMetrics().height())

    def sizeHint(self):
        return QSize(self.fontMetrics().horizontalAdvance(self.text()), self.fontMetrics().height())

    def elided(self) -> str:
        """The text as drawn at the label's width."""
        return self.fontMetrics().elidedText(self.text(), Qt.TextElideMode.ElideRight,
                                             self.contentsRect().width())

    def paintEvent(self, event) -> None:
        painter = QPainter(self)
        painter.setPen(self.palette().color(self.foregroundRole()))
        painter.drawText(self.contentsRect(), int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter),
                         self.elided())


class Section(QWidget):
    """A titled section that folds: a flat arrow button over its content (the *Advanced*
    engine settings). ``toggled(bool)`` says whether it is open now. ``note`` (an
    :class:`ElidedLabel` beside the button) says what the folded content holds; it hides
    while the section is open, as the content then says it."""

    toggled = Signal(bool)

    def __init__(self, title: str, content: QWidget, expanded: bool = False, parent=None):
        super().__init__(parent)
        self.button = QToolButton()
        self.button.setText(title)
        self.button.setCheckable(True)
        self.button.setAutoRaise(True)
        self.button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.button.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Fixed)
        self.note = ElidedLabel()
        self.note.setObjectName("help")
        self.content = content
        header = QHBoxLayout()
        header.setContentsMargins(0, 0, 0, 0)
        header.addWidget(self.button)
        header.addWidget(self.note, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addLayout(header)
        layout.addWidget(content)
        self.button.toggled.connect(self._show)
        self.button.setChecked(expanded)
        self._show(expanded)

    def _show(self, expanded: bool) -> None:
        self.button.setArrowType(Qt.ArrowType.DownArrow if expanded else Qt.ArrowType.RightArrow)
        self.content.setVisible(expanded)
        self.note.setVisible(not expanded)
        self.toggled.emit(expanded)

    def is_expanded(self) -> bool:
        return self.button.isChecked()

    def set_expanded(self, expanded: bool) -> None:
        self.button.setChecked(expanded)


class FlowLayout(QLayout):
    """Items left to right, wrapped onto a new line where the width runs out (Qt's flow
    layout example): a long bar of filters stays inside a narrow window instead of being cut
    at its right edge."""

    def __init__(self, parent=None, spacing: int = 6, line_spacing: int = 2):
        super().__init__(parent)
        self._items: list = []
        self._spacing, self._line_spacing = spacing, line_spacing
        self.setContentsMargins(0, 0, 0, 0)

    def addItem(self, item) -> None:
        self._items.append(item)

    def count(self) -> int:
        return len(self._items)

    def itemAt(self, index: int):
        return self._items[index] if 0 <= index < len(self._items) else None

    def takeAt(self, index: int):
        return self._items.pop(index) if 0 <= index < len(self._items) else None

    def expandingDirections(self):
        return Qt.Orientation(0)

    def height_for(self, width: int) -> int:
        """The height the items take when laid out ``width`` wide."""
        return self._place(QRect(0, 0, width, 0), move=False)

    def setGeometry(self, rect) -> None:
        super().setGeometry(rect)
        self._place(rect, move=True)

    def sizeHint(self):
        width = sum(i.sizeHint().width() + self._spacing for i in self._items if not i.isEmpty())
        return QSize(width, self.height_for(max(1, width)))

    def minimumSize(self):
        size = QSize()
        for item in self._items:
            size = size.expandedTo(item.minimumSize())
        margins = self.contentsMargins()
        return size + QSize(margins.left() + margins.right(), margins.top() + margins.bottom())

    def lines(self, width: int) -> int:
        """How many lines the items take at ``width`` (tests)."""
        return len({y for _, y in self._positions(QRect(0, 0, width, 0))})

    def _positions(self, rect) -> list[tuple[int, int]]:
        margins = self.contentsMargins()
        left, right = rect.x() + margins.left(), rect.right() - margins.right()
        x, y, line_height, out = left, rect.y() + margins.top(), 0, []
        for item in self._items:
            if item.isEmpty():
                out.append((x, y))
                continue
            hint = item.sizeHint()
            if x > left and x + hint.width() - 1 > right:
                x, y, line_height = left, y + line_height + self._line_spacing, 0
            out.append((x, y))
            x += hint.width() + self._spacing
            line_height = max(line_height, hint.height())
        return out

    def _place(self, rect, move: bool) -> int:
        positions = self._positions(rect)
        bottom = rect.y()
        for item, (x, y) in zip(self._items, positions):
            if item.isEmpty():
                continue
            hint = item.sizeHint()
            if move:  # an item wider than a whole line gets the line (a long status text)
                width = min(hint.width(), rect.right() - self.contentsMargins().right() - x + 1)
                item.setGeometry(QRect(QPoint(x, y), QSize(max(1, width), hint.height())))
            bottom = max(bottom, y + hint.height())
        return bottom - rect.y() + self.contentsMargins().bottom()


class FlowBar(QWidget):
    """A widget over a :class:`FlowLayout` that is as tall as its lines at its current width.

    (A layout's height-for-width would make the window's minimum height that of the
    narrowest width, every item on a line of its own.)"""

    def __init__(self, spacing: int = 6, parent=None):
        super().__init__(parent)
        self.flow = FlowLayout(self, spacing=spacing)
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)

    def addWidget(self, widget: QWidget) -> None:
        self.flow.addWidget(widget)

    def sizeHint(self):
        return QSize(self.flow.sizeHint().width(), self._height())

    def minimumSizeHint(self):
        return QSize(self.flow.minimumSize().width(), self._height())

    def _height(self) -> int:
        return self.flow.height_for(max(1, self.width()))

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        height = self._height()
        if height != self.height():
            self.setFixedHeight(height)

    def event(self, event) -> bool:  # a child's size changed (a status text): fit again
        if event.type() == QEvent.Type.LayoutRequest:
            height = self._height()
            if height != self.height():
                self.setFixedHeight(height)
        return super().event(event)
