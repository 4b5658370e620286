"""A command's input files read by a child process while this one imports the engine.

Start-up is mostly imports that hold the GIL (numba, and for a cuda run numba.cuda: 0.35-0.55 s
on the GPU machine), and reading the inputs holds it too (Biopython's import, parsing,
encoding: 0.11-0.21 s of a W2 run, issue #16), so no thread can overlap them. A child forked
once the command line is parsed reads the files (:func:`start`) while this process imports
what the job needs; :func:`take` then hands over what it read, with the warnings the reading
raised, shown here as a read here would show them.

Anything the child does not answer for is read here as before, with the same messages: a
file the child failed on (its error is this process's to report), a genome store (it maps,
nothing to copy), a file over :data:`LIMIT_BYTES` (its copy would cross the pipe). Only
the command line's own process does this (engine.interrupts.install: never the GUI or a
test process), on Linux (fork).
"""

from __future__ import annotations

import contextlib
import os
import pickle
import sys
import warnings

#: Input files larger than this are read by this process (the child's copy crosses a pipe).
LIMIT_BYTES = 64 << 20

_child: tuple[int, object] | None = None  # (pid, the pipe's read end) until its answer is read
_answers: dict[str, tuple[list, list[Warning]]] = {}


def start(sources) -> bool:
    """Fork a child that reads those of ``sources`` that are files (not literals) of at most
    :data:`LIMIT_BYTES`; False when there is none or this process does not preload."""
    global _child
    from engine import interrupts

    files = [s for s in dict.fromkeys(sources) if isinstance(s, str) and _readable_file(s)]
    if not files or _child is not None or not interrupts.installed() \
            or not sys.platform.startswith("linux"):
        return False
    read_end, write_end = os.pipe()
    pid = interrupts.fork_child(lambda: _read(files, read_end, write_end))
    os.close(write_end)
    if pid is None:
        os.close(read_end)
        return False
    _child = (pid, os.fdopen(read_end, "rb"))
    return True


def _readable_file(source: str) -> bool:
    try:
        return os.path.isfile(source) and os.path.getsize(source) <= LIMIT_BYTES
    except OSError:
        return False


def _read(files: list[str], read_end: int, write_end: int) -> None:
    """The child (interrupts.fork_child ends it): read each file and send what it read."""
    os.close(read_end)
    from engine.sequences import is_store, load

    answers = {}
    for path in files:
        if is_store(path):
            continue
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                records = load(path)
            except Exception:  # (read again by the parent, which reports it)
                continue
        answers[path] = (records, [w.message for w in caught])
    with os.fdopen(write_end, "wb") as out:
        pickle.dump(answers, out, protocol=pickle.HIGHEST_PROTOCOL)


def take(source) -> list | None:
    """The records the child read from ``source``, its warnings shown now, or None: read it
    here. Each answer is handed over once."""
    _collect()
    answer = _answers.pop(source, None) if isinstance(source, str) else None
    if answer is None:
        return None
    records, caught = answer
    for warning in caught:
        warnings.warn(warning, stacklevel=2)
    return records


def _collect() -> None:
    """Wait for the child's answer (once); a child that failed leaves everything to be read
    here."""
    global _child
    if _child is None:
        return
    pid, pipe = _child
    _child = None
    try:
        with pipe:
            _answers.update(pickle.load(pipe))
    except Exception:  # (an answer cut short or unreadable: all is read here)
        _answers.clear()
    finally:
        with contextlib.suppress(ChildProcessError, OSError):
            os.waitpid(pid, 0)
