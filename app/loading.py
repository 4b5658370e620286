"""The load queue: files and demo data sets are read one at a time on a worker thread.

Reading E. coli takes most of a second, so loading never runs on the GUI thread; loads
asked for while one runs wait their turn, in order. A load that fails leaves what the
panels hold untouched (its ``on_done`` is never called); so does a cancelled one.
"""

from __future__ import annotations

import os
from typing import Callable

from PySide6.QtCore import QObject, Signal

from app.jobs import call
from app.worker import JobRunner


#: Files larger than this (in all) are parsed in a child process: the parse's long C calls
#: (decode, join, the code lookup) hold the GIL, and in a thread they would freeze the window.
CHILD_PROCESS_BYTES = 32 << 20


def read_files(paths: list[str]):
    """``engine.sequences.load_files_noting(paths)`` (records, skipped ids, the warnings'
    texts): in a child process for large files (genome stores excepted: they map, they do
    not parse), in this thread otherwise."""
    from engine.sequences import load_files_noting as load_files

    sizes = [os.path.getsize(p) for p in paths if os.path.isfile(p)]
    if sum(sizes) < CHILD_PROCESS_BYTES or any(str(p).endswith(".psg") for p in paths):
        return load_files(paths)
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    # spawn, not fork: the window's process has Qt's threads.
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        return pool.submit(load_files, list(paths)).result()


class LoadQueue(QObject):
    """Signals ``message(str)`` as a load starts, ``failed(title, message)``, and ``idle()``
    when the queue has run dry."""

    message = Signal(str)
    failed = Signal(str, str)
    idle = Signal()

    def __init__(self, parent=None):
        super().__init__(parent)
        self.runner = JobRunner(self)
        self.runner.finished.connect(self._on_loaded)
        self.runner.failed.connect(self._on_failed)
        self.pending: list[tuple] = []
        self._loading: tuple | None = None
        self._dropped = False

    @property
    def running(self) -> bool:
        return self.runner.running or bool(self.pending)

    @property
    def cancellable(self) -> bool:
        return bool(self.pending) or (self.runner.running and not self._dropped)

    def cancel(self) -> None:
        """Drop the waiting loads and the one running: its records never reach the panels
        (the read itself ends in the background; the next load waits for it)."""
        if not self.cancellable:
            return
        self.pending.clear()
        self._dropped = self.runner.running
        self.runner.cancel()
        self.message.emit("Loading cancelled: the sequences loaded before are kept.")
        self.idle.emit()

    def add(self, message: str, function: Callable[[], object], on_done: Callable[[object], None],
            error_title: str) -> None:
        """Run ``function()`` on the worker thread, then ``on_done(value)`` on the GUI thread."""
        self.pending.append((message, function, on_done, error_title))
        if not self.runner.running:
            self._next()

    def shutdown(self) -> None:
        self.pending.clear()
        self.runner.shutdown()

    def _next(self) -> None:
        dropped, self._dropped = self._dropped, False
        if not self.pending or self.runner.closed:
            self._loading = None
            if not dropped:  # cancel() already said it
                self.idle.emit()
            return
        self._loading = self.pending.pop(0)
        message, function = self._loading[:2]
        self.runner.start(lambda token: call(function))
        self.message.emit(message)

    def _on_loaded(self, value) -> None:
        if not self._dropped:
            self._loading[2](value)
        self._next()

    def _on_failed(self, message: str) -> None:
        if not self._dropped:
            self.failed.emit(self._loading[3], message)
        self._next()
