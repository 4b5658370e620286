"""Result views: pyqtgraph plots fed from the newest Progress (about 30 Hz) and the result.

Every view has the same small interface, so the window can treat the views of
all families alike:

- ``reset(job)`` before a run (``job`` is None until the worker has built it);
- ``show_progress(progress)`` with the newest Progress, at most ~30 times a second;
- ``show_result(result)`` once, complete or cancelled;
- ``select(item)`` when a table row is selected, ``highlight(items)`` with the
  rows the table's filters let through;
- ``has_data()`` (all it will show is there: --screenshot waits for it) and ``is_empty()``
  (nothing to show: the tab shows a note instead of bare axes, unless ``shows_note()`` says
  the view's own controls must stay in reach);
- ``runners()``: the view's own worker runners (work that follows a run), which the window
  counts before quitting;
- ``shutdown()`` when the window closes.

A view asks for a selection through ``item_activated`` (clicking a point).
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QLabel, QStackedWidget, QWidget

#: What an empty tab says.
EMPTY_HINT = ("Nothing to show yet. Load inputs (File or Demo menu, or drop a file on an input box) "
              "and press Run (Ctrl+R).")
#: What it says instead while the window's run starts, compiles or has found nothing yet: not to
#: load inputs that are loaded and press a Run that is running.
RUNNING_HINT = ("Running: this tab fills in as results arrive (the status bar says how far the "
                "run is; Cancel keeps what was found).")


class ResultView(QWidget):
    """Base class of the views; the defaults do nothing, so a view overrides what it shows."""

    title = ""
    empty_hint = EMPTY_HINT
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

    def is_empty(self) -> bool:
        return not self.has_data()

    def shows_note(self) -> bool:
        """The tab shows the empty note instead of the view (a view whose own controls must
        stay reachable while it is empty says False)."""
        return self.is_empty()

    def runners(self) -> list:
        return []

    def alignment_text(self) -> str:
        """Alignments the view shows, as plain text ('' if none)."""
        return ""

    def shutdown(self) -> None:
        """Stop any thread of the view's own (the window is closing)."""


class SplitView(ResultView):
    """Several views side by side (or stacked) in one tab; every call goes to each of them."""

    def __init__(self, title: str, views, orientation=None, sizes=None):
        super().__init__()
        from PySide6.QtCore import Qt
        from PySide6.QtWidgets import QSplitter, QVBoxLayout

        self.title = title
        self.views = list(views)
        self.splitter = QSplitter(orientation or Qt.Orientation.Vertical)
        for view in self.views:
            self.splitter.addWidget(view)
            view.item_activated.connect(self.item_activated)
        if sizes:
            self.splitter.setSizes(list(sizes))
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.splitter)

    def reset(self, job) -> None:
        for view in self.views:
            view.reset(job)

    def show_progress(self, progress) -> None:
        for view in self.views:
            view.show_progress(progress)

    def show_result(self, result) -> None:
        for view in self.views:
            view.show_result(result)

    def select(self, item) -> None:
        for view in self.views:
            view.select(item)

    def highlight(self, items) -> None:
        for view in self.views:
            view.highlight(items)

    def has_data(self) -> bool:
        return all(view.has_data() for view in self.views)

    def is_empty(self) -> bool:
        return all(view.is_empty() for view in self.views)

    def runners(self) -> list:
        return [runner for view in self.views for runner in view.runners()]

    def alignment_text(self) -> str:
        return "\n\n".join(t for t in (view.alignment_text() for view in self.views) if t)

    def shutdown(self) -> None:
        for view in self.views:
            view.shutdown()


class TabPage(QStackedWidget):
    """A tab: its view, or while the view has nothing to show, a note saying what to do."""

    def __init__(self, view: ResultView):
        super().__init__()
        self.view = view
        self.note = QLabel(view.empty_hint)
        self.note.setObjectName("empty")
        self.note.setWordWrap(True)
        self.note.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.note.setMargin(24)
        self.addWidget(self.note)
        self.addWidget(view)
        self.refresh()

    def refresh(self, running: bool = False) -> None:
        """The view, or the note; ``running``: the window's run is under way."""
        generic = self.view.empty_hint == EMPTY_HINT
        self.note.setText(RUNNING_HINT if running and generic else self.view.empty_hint)
        self.setCurrentWidget(self.note if self.view.shows_note() else self.view)
