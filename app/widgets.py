"""Small widgets the panels share."""

from __future__ import annotations

import re

from PySide6.QtCore import Signal
from PySide6.QtGui import QValidator
from PySide6.QtWidgets import QSpinBox


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
