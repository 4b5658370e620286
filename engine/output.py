"""Writing results to files without ever losing a user's data.

- Regular files are replaced atomically: the text goes to a hidden temporary file
  beside the target, which is renamed over it only once complete, so a failed or
  interrupted run leaves no partial file. The replacement keeps the old file's
  permissions; a new file gets the usual 0666 minus the umask.
- A symlink is written through (its target is replaced), never replaced by a file.
- Special files (``/dev/null``, ``/dev/stdout``, FIFOs, terminals) are written
  directly: renaming over a device node would break the machine.
- :func:`check_outputs` runs before any work: the directory exists and is
  writable, the path is not a directory, and no output is one of the inputs
  (symlinks and hard links included) or another output.

Errors are :class:`OutputError` (a ValueError: the CLI prints one line, exit 2).
"""

from __future__ import annotations

import contextlib
import os
import socket
import stat
import tempfile
import time
from typing import IO, Callable, Iterable, Iterator, Mapping

TEMP_PREFIX = ".primerscope-"


class OutputError(ValueError):
    """An output path that cannot or must not be written."""


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _same_file(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def check_outputs(outputs: Iterable[str | None], inputs: Iterable[str | None] = ()) -> None:
    """Refuse, before any work starts, outputs that cannot be written or would destroy
    an input. ``inputs`` may hold literals (not files); those are ignored."""
    outs = [p for p in outputs if p]
    ins = [p for p in inputs if p and os.path.isfile(p)]
    for i, path in enumerate(outs):
        _check_writable(path)
        for source in ins:
            if _same_file(path, source):
                raise OutputError(f"{path}: is the input file {source}; refusing to overwrite an input")
        for other in outs[:i]:
            if (os.path.abspath(path) == os.path.abspath(other) or _same_file(path, other)):
                raise OutputError(f"{path}: named for two outputs; give each output its own file")


def _check_writable(path: str) -> None:
    if path.endswith(os.sep) and not os.path.isdir(path):
        raise OutputError(f"{path}: names a directory (it ends with '{os.sep}'); give a file name")
    if os.path.isdir(path):
        raise OutputError(f"{path}: is a directory, cannot write output there")
    real = os.path.realpath(path)
    if os.path.exists(real) and not stat.S_ISREG(os.stat(real).st_mode):
        if not os.access(real, os.W_OK):
            raise OutputError(f"{path}: cannot write output (permission denied)")
        return  # a device or FIFO: written directly
    directory = os.path.dirname(real) or "."
    if not os.path.isdir(directory):
        raise OutputError(f"{path}: cannot write output (directory {directory} does not exist)")
    if not os.access(directory, os.W_OK | os.X_OK) or (os.path.exists(real)
                                                       and not os.access(real, os.W_OK)):
        raise OutputError(f"{path}: cannot write output (permission denied)")


#: A temporary file of another host (or an older primerscope: no process id in its name)
#: untouched this long is taken for one a killed run left.
STALE_SECONDS = 24 * 3600


def _temp_prefix() -> str:
    """``.primerscope-HOST-PID-``: a later run can tell a killed run's file from a live one."""
    host = socket.gethostname().replace("-", "_") or "host"
    return f"{TEMP_PREFIX}{host}-{os.getpid()}-"


def clean_stale_temporaries(directory: str) -> None:
    """Remove the temporary files that runs killed with SIGKILL left in ``directory``
    (nothing else could remove them): those of this host whose process is gone, and any
    other untouched for :data:`STALE_SECONDS`. Best effort: never an error."""
    host = socket.gethostname().replace("-", "_") or "host"
    now = time.time()
    try:
        entries = [e for e in os.scandir(directory) if e.name.startswith(TEMP_PREFIX)]
    except OSError:
        return
    for entry in entries:
        parts = entry.name[len(TEMP_PREFIX):].split("-")
        with contextlib.suppress(OSError):
            if not entry.is_file(follow_symlinks=False):
                continue
            if len(parts) >= 3 and parts[0] == host and parts[1].isdigit():
                stale = not _alive(int(parts[1]))
            else:
                stale = now - entry.stat(follow_symlinks=False).st_mtime > STALE_SECONDS
            if stale:
                os.unlink(entry.path)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # (another user's process: alive)
        return True
    return True


@contextlib.contextmanager
def open_output(path: str, mode: str = "w") -> Iterator[IO]:
    """A file object to write ``path``'s new content to; committed when the block ends
    without an exception, discarded otherwise (see the module docstring)."""
    binary = "b" in mode
    real = os.path.realpath(path)
    try:
        st = os.stat(real)
    except FileNotFoundError:
        st = None
    except OSError as exc:
        raise OutputError(f"{path}: cannot write output ({exc.strerror})") from None
    if st is not None and not stat.S_ISREG(st.st_mode):
        yield from _write_direct(path, real, binary)
        return
    directory = os.path.dirname(real) or "."
    clean_stale_temporaries(directory)
    try:
        fd, tmp = tempfile.mkstemp(prefix=_temp_prefix(), dir=directory)
    except OSError as exc:
        raise OutputError(f"{path}: cannot write output ({exc.strerror})") from None
    try:
        os.fchmod(fd, stat.S_IMODE(st.st_mode) if st is not None else 0o666 & ~_umask())
        with os.fdopen(fd, "wb" if binary else "w", **({} if binary else {"newline": ""})) as fh:
            yield fh
        os.replace(tmp, real)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(exc, OSError):
            raise OutputError(f"{path}: cannot write output ({exc.strerror or exc})") from None
        raise


def _write_direct(path: str, real: str, binary: bool) -> Iterator[IO]:
    try:
        fh = open(real, "wb" if binary else "w", **({} if binary else {"newline": ""}))
    except OSError as exc:
        raise OutputError(f"{path}: cannot write output ({exc.strerror})") from None
    try:
        with fh:
            yield fh
            fh.flush()
    except OSError as exc:  # ENOSPC on /dev/full, a closed FIFO...
        raise OutputError(f"{path}: cannot write output ({exc.strerror or exc})") from None


def write_texts(texts: Mapping[str, str | Callable[[IO], None]],
                before_commit: Callable[[], None] = lambda: None) -> None:
    """Write several outputs all or none: every file's text goes to its temporary first;
    then ``before_commit()`` runs (the command line stops taking signals there) and all
    are renamed into place. An error or interrupt before that leaves none of them.
    A value may be a function that writes into the open file (a large CSV streamed from a
    result's columns, never held whole in memory)."""
    with contextlib.ExitStack() as stack:
        for path, text in texts.items():
            fh = stack.enter_context(open_output(path))
            if callable(text):
                text(fh)
            else:
                fh.write(text)
        before_commit()
    # leaving the block renamed every temporary over its target


def write_text(path: str, text: str) -> None:
    """Write ``text`` to ``path`` (atomically for regular files)."""
    with open_output(path) as fh:
        fh.write(text)


def write_bytes(path: str, data: bytes) -> None:
    with open_output(path, "wb") as fh:
        fh.write(data)
