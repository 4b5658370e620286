"""Running generators off the GUI thread (superqt's ``GeneratorWorker`` shape).

A job is a generator: ``engine.iter_solve(job, cancel)`` yields
:class:`engine.jobs.Progress` and returns the family result. The worker does
nothing but loop over such a generator on a QThread and turn what it sees into
signals; cancellation goes through the engine's :class:`~engine.jobs.CancelToken`,
which the generator checks between slices, so the worker never needs to
interrupt anything. Tests can drive the very same generators without a thread.
"""

from __future__ import annotations

import traceback
from typing import Callable, Generator

from PySide6.QtCore import QObject, Qt, QThread, QTimer, Signal, Slot

from engine.jobs import CancelToken


def describe_error(exc: BaseException) -> str:
    """One message for a dialog: input errors as they are, crashes with their type."""
    if isinstance(exc, ValueError):  # engine.sequences.SequenceError is a ValueError too
        return str(exc)
    if isinstance(exc, MemoryError):
        return "Out of memory. Try a smaller region of the inputs."
    return f"{type(exc).__name__}: {exc}"


class GeneratorWorker(QObject):
    """Loops over ``make_generator()`` and reports through signals.

    Signals
    -------
    progress(object)
        Every value the generator yields.
    finished(object)
        The generator's return value.
    failed(str)
        A message for people when the generator raised; the traceback goes to
        ``report["details"]`` for the dialog's "Show details".
    """

    progress = Signal(object)
    finished = Signal(object)
    failed = Signal(str)

    def __init__(self, make_generator: Callable[[], Generator]):
        super().__init__()
        self._make_generator = make_generator
        self.report: dict = {}

    @Slot()
    def work(self) -> None:
        try:
            gen = self._make_generator()
            while True:
                try:
                    item = next(gen)
                except StopIteration as stop:
                    result = stop.value
                    break
                self.progress.emit(item)
        except Exception as exc:  # noqa: BLE001 -- every failure becomes a dialog, not a traceback
            self.report["details"] = traceback.format_exc()
            self.failed.emit(describe_error(exc))
            return
        self.finished.emit(result)


class JobRunner(QObject):
    """Runs one generator at a time on a worker thread and relays its signals on the GUI thread.

    Wiring as in superqt's ``new_worker_qthread``: ``started -> work``; the end
    signals quit the thread (directly, from the worker thread, so that
    :meth:`shutdown` can wait without spinning the GUI event loop). Python keeps
    its references to the thread and the worker until the thread has stopped,
    then drops them, which deletes both (no ``deleteLater``: see :meth:`_reap`).
    """

    progress = Signal(object)
    finished = Signal(object)
    failed = Signal(str)

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self._alive: list[tuple[QThread, GeneratorWorker]] = []
        self._current: GeneratorWorker | None = None
        self._report: dict = {}
        self.cancel_token: CancelToken | None = None
        self.details = ""
        self.closed = False

    @property
    def running(self) -> bool:
        """True from :meth:`start` until ``finished`` or ``failed`` has been relayed."""
        return self._current is not None

    def start(self, make_generator: Callable[[CancelToken], Generator]) -> CancelToken | None:
        """Start ``make_generator(cancel_token)`` on a new thread; return the token.

        After :meth:`shutdown` nothing starts (None): a queued "finished" handler that
        would start follow-up work (annotations after a run) must not outlive the window.
        """
        if self.closed:
            return None
        if self._current is not None:
            raise RuntimeError("a job is already running")
        token = CancelToken()
        worker = GeneratorWorker(lambda: make_generator(token))
        thread = QThread()
        thread.setObjectName("primerscope-worker")
        worker.moveToThread(thread)
        thread.started.connect(worker.work)
        for end in (worker.finished, worker.failed):
            end.connect(thread.quit, Qt.ConnectionType.DirectConnection)
        thread.finished.connect(self._reap)
        # Bound methods of this GUI-thread object: Qt queues the calls onto the GUI thread.
        worker.progress.connect(self._on_progress)
        worker.finished.connect(self._on_finished)
        worker.failed.connect(self._on_failed)
        self._alive.append((thread, worker))
        self._current, self._report, self.cancel_token = worker, worker.report, token
        # Below the GUI thread where the system honours it (not Linux's default scheduler).
        # No nice value on Linux: a lowered worker that is preempted while it holds the GIL
        # between kernel calls would make the GUI thread wait for it (priority inversion).
        thread.start(QThread.Priority.LowPriority)
        return token

    def cancel(self) -> None:
        if self.cancel_token is not None:
            self.cancel_token.cancel()

    def shutdown(self, timeout_ms: int = 10_000) -> bool:
        """Cancel, wait for every worker thread to stop, and start nothing afterwards
        (window closing). End signals still queued are dropped."""
        self.closed = True
        self.cancel()
        self._current = None
        stopped = True
        for thread, _ in list(self._alive):
            thread.quit()
            stopped = thread.wait(timeout_ms) and stopped
        self._reap()
        return stopped

    @Slot()
    def _reap(self) -> None:
        # Python owns the thread and the worker: dropping a pair here deletes both, once the
        # thread has stopped for good. Qt 6's isFinished() is already true while the thread is
        # still finishing (it runs its deferred deletes then), so wait(0) says when it is done;
        # a deleteLater on the worker thread racing with the last reference going away here
        # deleted the worker twice (a segfault after a few hundred back-to-back jobs).
        finishing = False
        for pair in list(self._alive):
            thread = pair[0]
            if thread.isFinished():
                if thread.wait(0):
                    self._alive.remove(pair)
                else:
                    finishing = True
        if finishing:
            QTimer.singleShot(20, self._reap)

    # Only one worker is current at a time, and a new one starts only after the
    # previous one's end signal has been relayed, so every queued signal that
    # arrives here belongs to the current worker (its C++ object may already be
    # gone; the report dict is plain Python and outlives it).
    @Slot(object)
    def _on_progress(self, item) -> None:
        if self._current is not None:
            self.progress.emit(item)

    @Slot(object)
    def _on_finished(self, result) -> None:
        if self._current is not None:
            self._current = None
            self.finished.emit(result)

    @Slot(str)
    def _on_failed(self, message: str) -> None:
        if self._current is not None:
            self.details = self._report.get("details", "")
            self._current = None
            self.failed.emit(message)
