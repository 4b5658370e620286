"""Result views: pyqtgraph plots fed from the newest Progress (about 30 Hz) and the result.

Every view has the same small interface, so the window can treat the views of
all families alike:

- ``reset(job)`` before a run (``job`` is None until the worker has built it);
- ``show_progress(progress)`` with the newest Progress, at most ~30 times a second;
- ``show_result(result)`` once, complete or cancelled;
- ``select(item)`` when a table row is selected, ``highlight(items)`` with the
  rows the table's filters let through;
- ``has_data()`` and ``plot_items()`` (name -> pyqtgraph item, for PNG/SVG export).

A view asks for a selection through ``item_activated`` (clicking a point).
"""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QWidget


class ResultView(QWidget):
    """Base class of the views; the defaults do nothing, so a view overrides what it shows."""

    title = ""
    item_activated = Signal(object)

    def reset(self, job) -> None:
        pass

    def show_progress(self, progress) -> None:
        pass

    def show_result(self, result) -> None:
        pass

    def select(self, item) -> None:
        pass

    def highlight(self, items) -> None:
        pass

    def has_data(self) -> bool:
        return False

    def plot_items(self) -> dict:
        return {}
