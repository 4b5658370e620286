"""Create the CUDA context early, on a thread of its own, before numba is even imported.

A cuda run's start-up (issue #16) is mostly Python, which holds the GIL: the imports
(numpy, numba, numba.cuda), reading the inputs, numba's compiler set-up, loading the
kernels. Creating the context (1.3 s on the H100 machine) is the driver's work and holds
no lock of Python's, so it can all overlap. This thread asks the driver itself, through
ctypes, for device 0's primary context (the one numba uses); numba's own request then
finds it made, or waits inside the driver until it is. Nothing ever joins the thread but
the process's exit (a driver torn down while a thread is still inside it can crash).

Importing numba.cuda on this thread as well would gain nothing (imports hold the GIL, as
does everything the main thread does meanwhile) and could deadlock Python's import locks
against the main thread's imports of numba, so numba.cuda is imported where it is needed.
Stdlib only: the command line calls :func:`start` before its heavy imports.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading

_thread: threading.Thread | None = None
_lock = threading.Lock()
#: Seconds the process's exit waits for a context still being created.
EXIT_WAIT_S = 30.0


def start() -> bool:
    """Start creating the context, once per process; False under numba's CUDA simulator
    (nothing to create). A machine without a driver just ends the thread: the run itself
    says what is missing."""
    global _thread
    if os.environ.get("NUMBA_ENABLE_CUDASIM", "0") not in ("", "0"):
        return False
    with _lock:
        if _thread is None:
            import atexit
            import ctypes  # imported here, not on the thread (the module's note: import locks)

            _thread = threading.Thread(target=_retain_primary_context, args=(ctypes,),
                                       name="cuda-context", daemon=True)
            _thread.start()
            atexit.register(_thread.join, EXIT_WAIT_S)
    return True


def _retain_primary_context(ctypes) -> None:
    """cuInit and a reference to device 0's primary context (kept for the process, as numba
    keeps its own). ctypes calls release the GIL."""
    try:
        lib = ctypes.CDLL("nvcuda.dll" if sys.platform == "win32" else "libcuda.so.1")
        if lib.cuInit(0) != 0:
            return
        device = ctypes.c_int()
        if lib.cuDeviceGet(ctypes.byref(device), 0) != 0:
            return
        lib.cuDevicePrimaryCtxRetain(ctypes.byref(ctypes.c_void_p()), device)
    except (OSError, AttributeError):  # no driver library, or one without these calls
        return


def defer_teardown() -> int | None:
    """Let the driver tear this process's CUDA context down after the process has ended.

    Ending a process that made a context costs ~0.1 s of driver work (the H100 machine,
    issue #16), done as the process's last reference to the driver's device files goes, after
    every output of the command is written. A child forked here holds copies of those files,
    and nothing else, until this process has gone (a pipe's write end, held only here, closes
    then), and ends after it: the command returns to its caller at once and the driver frees
    the GPU a moment later. The child closes every other descriptor first (the standard streams
    too, so that a caller reading the output sees its end when this process ends), touches
    neither the driver nor the engine, and ends if its wait fails. Linux only (the device
    files are found in /proc/self/fd). Returns the child's pid, None when nothing was forked.
    Call it last, right before ``os._exit`` (engine.interrupts.leave)."""
    if not sys.platform.startswith("linux"):
        return None
    from engine.interrupts import fork_child

    try:
        fds = [int(fd) for fd in os.listdir("/proc/self/fd")]
        driver = {fd for fd in fds if _target(fd).startswith("/dev/nvidia")}
        if not driver:
            return None
        read_end, write_end = os.pipe()
    except OSError:
        return None
    keep = driver | {read_end}

    def hold() -> None:  # the child
        import signal

        signal.alarm(60)  # (should its wait ever outlast the parent: it ends anyway)
        for fd in fds + [write_end]:
            if fd not in keep:
                with contextlib.suppress(OSError):
                    os.close(fd)
        os.read(read_end, 1)  # b"" once the parent has ended

    pid = fork_child(hold)
    os.close(read_end)
    if pid is None:
        os.close(write_end)
    return pid


def _target(fd: int) -> str:
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return ""
