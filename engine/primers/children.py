"""Child processes for Primer3: primer3-py (2.4.0) holds Python's lock for the whole of each
call (whole seconds for a tile's primer lists), so threads cannot share it out and a window's
thread would wait for it at every repaint. Pair design, the group search and the window's
annotations run Primer3 through :class:`ChildPool` (children kept for many calls) or
:func:`in_child` (one call, one child)."""

from __future__ import annotations

from typing import Generator

from engine.jobs import CancelToken, Progress, now
from engine.spawning import main_left_out

#: Seconds between the progress reports while a child process works (the caller's cancel
#: is read as often).
CHILD_POLL_S = 0.05


def _child_loop(conn) -> None:
    """A :class:`ChildPool` child: run each call it is sent, answer, wait for the next; end
    when the parent closes the connection."""
    import signal

    # Ctrl-C reaches the whole process group: the parent cancels and ends this child, which
    # must not answer with a KeyboardInterrupt of its own.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    while True:
        try:
            fn, args = conn.recv()
        except (EOFError, OSError):
            return
        try:
            answer = ("ok", fn(*args))
        except BaseException as exc:  # noqa: BLE001  (the parent raises it)
            answer = ("error", exc)
        conn.send(answer)


class ChildPool:
    """Child processes that stay for many calls (spawned: the caller may have threads):
    Primer3 holds Python's lock for whole seconds, so only processes run it side by side.
    Each child runs its own calls in order, the children at once; a child keeps its module
    state between calls (the group search keeps each cluster's pair checks in the child
    that ranks it). A child starts on its first call; :meth:`close` ends them all, as
    :meth:`run` does after a cancel, an error, or when its generator is closed."""

    #: Children started by every pool of this process (tests count them).
    started = 0

    def __init__(self, name: str = "primerscope-primer3"):
        self.name = name
        self._children: dict[int, tuple] = {}   # worker -> (process, its connection)

    def __len__(self) -> int:
        return len(self._children)

    def _child(self, worker: int):
        if worker not in self._children:
            import multiprocessing

            ctx = multiprocessing.get_context("spawn")
            mine, theirs = ctx.Pipe()
            child = ctx.Process(target=_child_loop, args=(theirs,), daemon=True, name=self.name)
            with main_left_out():
                child.start()
            theirs.close()
            ChildPool.started += 1
            self._children[worker] = (child, mine)
        return self._children[worker]

    def run(self, calls, cancel: CancelToken, progress) -> Generator[Progress, None, list | None]:
        """``calls``: ``(worker, fn, args)``, each ``fn(*args)`` run in child ``worker``
        (started if need be). Yields ``progress()`` every :data:`CHILD_POLL_S` s meanwhile,
        so a window's event loop and a cancel are never held up by Primer3. Returns the
        values in the calls' order, None after a cancel (the children ended); raises what a
        call raised."""
        from collections import deque
        from multiprocessing.connection import wait

        queues: dict[int, deque] = {}
        for i, (worker, fn, args) in enumerate(calls):
            queues.setdefault(worker, deque()).append((i, fn, args))
        out: list = [None] * len(calls)
        busy: dict = {}   # connection -> (worker, the call it runs)
        done = False

        def send(worker) -> None:
            if queues[worker]:
                i, fn, args = queues[worker].popleft()
                conn = self._child(worker)[1]
                conn.send((fn, args))
                busy[conn] = (worker, i)

        def ended(worker):
            """Raise: the child of ``worker`` ended without answering (killed, out of memory,
            or Primer3's C code aborted)."""
            child = self._children[worker][0]
            raise RuntimeError(f"Primer3's process ended without an answer (exit code "
                               f"{child.exitcode})") from None

        try:
            for worker in queues:
                send(worker)
            shown = now()
            while busy:
                ready = wait(list(busy), CHILD_POLL_S)
                if cancel.cancelled:
                    return None
                for conn in ready:
                    worker, i = busy.pop(conn)
                    try:
                        status, value = conn.recv()
                    except (EOFError, OSError):
                        ended(worker)
                    if status == "error":
                        raise value
                    out[i] = value
                    send(worker)
                if not ready:
                    for conn, (worker, _) in busy.items():
                        if not self._children[worker][0].is_alive() and not conn.poll(0):
                            ended(worker)
                if now() - shown >= CHILD_POLL_S:
                    shown = now()
                    yield progress()
            done = True
            return out
        finally:
            if not done:
                self.close()

    def close(self) -> None:
        """End every child (a busy one is terminated)."""
        children, self._children = self._children, {}
        for child, conn in children.values():
            conn.close()
            if child.is_alive():
                child.terminate()
        for child, _ in children.values():
            child.join()


def in_child(fn, args, cancel: CancelToken, progress) -> Generator[Progress, None, object]:
    """``fn(*args)`` in a child process of its own (:meth:`ChildPool.run`); returns its
    value, None after a cancel (the child is ended); raises what it raised."""
    pool = ChildPool()
    try:
        out = yield from pool.run([(0, fn, args)], cancel, progress)
    finally:
        pool.close()
    return None if out is None else out[0]
