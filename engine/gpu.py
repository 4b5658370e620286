"""What every family's CUDA backend shares: one-line errors, the device, launches, kernel jit.

Imported lazily, only by cuda jobs (it imports numba.cuda; the registry's
``backend_status`` answers "is there a GPU" without it). Every CUDA failure (out
of memory, a launch the device refuses, a fault inside a kernel, no GPU at all)
becomes a :class:`CudaFailure`, a RuntimeError with a one-line message that the
CLI prints before exiting 1; nothing global is left broken, so the CPU backends
keep working in the same process.

Kernels run unchanged under numba's CUDA simulator (``NUMBA_ENABLE_CUDASIM=1``),
which is how CI tests them.

Start-up (issue #16): a kernel is compiled, or loaded from numba's disk cache, at its
first launch (:meth:`Device.launch`), so a job loads only the kernels it runs; that time
is compile time, not solve time (``engine.slices.add_compile_time``), and
:data:`LOADED` lists those launches. The CLI creates the CUDA context early on a thread
of its own (engine.cuda_start); :func:`prepare` readies numba's compiler once.
"""

from __future__ import annotations

import importlib
import math
import threading
import warnings
from contextlib import contextmanager

import numpy as np
from numba import config as numba_config
from numba import cuda

from engine.jobs import now
from engine.slices import add_compile_time

SIMULATOR = bool(numba_config.ENABLE_CUDASIM)
#: A real CUDA context was made in this process (engine.interrupts.leave reads it).
CONTEXT_MADE = False


def _no_low_occupancy_warnings() -> None:
    """Small jobs and the warm-up launch few blocks on purpose; numba would warn on stderr
    at each (numba-cuda keeps its own config module, the built-in numba.cuda numba's)."""
    for name in ("numba.cuda.core.config", "numba.core.config"):
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        if hasattr(module, "CUDA_LOW_OCCUPANCY_WARNINGS"):
            module.CUDA_LOW_OCCUPANCY_WARNINGS = 0


_no_low_occupancy_warnings()


def _atomic_simulator_shared_arrays() -> None:
    """The simulator hands out a block's static shared arrays per call site, creating one on
    first use with a get-then-set that two simulated threads can both pass, so that each gets
    its own array (a rare wrong result in tests). Create them with an atomic setdefault."""
    import sys

    from numba import types
    from numba.cuda.simulator import kernelapi
    from numba.np import numpy_support

    def array(self, shape, dtype):
        if isinstance(dtype, types.Type):
            dtype = numpy_support.as_dtype(dtype)
        if shape == 0:  # dynamic shared memory: one buffer for all
            count = self._dynshared_size // dtype.itemsize
            return np.frombuffer(self._dynshared.data, dtype=dtype, count=count)
        frame = sys._getframe(1)
        caller = (frame.f_code.co_filename, frame.f_lineno)
        res = self._allocations.get(caller)
        if res is None:
            res = self._allocations.setdefault(caller, np.empty(shape, dtype))
        return res

    kernelapi.FakeCUDAShared.array = array


if SIMULATOR:
    _atomic_simulator_shared_arrays()


class CudaFailure(RuntimeError):
    """A CUDA error, said in one line (the CLI prints it and exits 1)."""


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text[:300] or type(exc).__name__


@contextmanager
def cuda_errors(what: str, need_bytes: int = 0):
    """Turn any CUDA/numba error raised inside into a one-line :class:`CudaFailure`."""
    try:
        yield
    except CudaFailure:
        raise
    except Exception as exc:  # driver, launch, compile or kernel-fault errors alike
        text = _one_line(exc)
        if "OUT_OF_MEMORY" in text.upper().replace(" ", "_") or isinstance(exc, MemoryError):
            need = f" ({need_bytes / 2**20:.0f} MiB)" if need_bytes else ""
            raise CudaFailure(f"the GPU ran out of memory while allocating {what}{need}; "
                              "use shorter inputs or a CPU backend") from exc
        raise CudaFailure(f"CUDA error while {what}: {type(exc).__name__}: {text}") from exc


@contextmanager
def quiet_simulator():
    """The simulator runs kernels on numpy scalars, which warn where uint64 arithmetic wraps
    around as it should; silence that for the launch (the simulator only)."""
    if not SIMULATOR:
        yield
        return
    # The simulator runs each CUDA thread as a Python thread and, at every device-function
    # call, iterates over the function's module globals. The first warning raised in a module
    # adds __warningregistry__ to those globals (even when ignored), and a thread iterating
    # them at that moment fails with "dictionary changed size during iteration". Creating the
    # registries up front closes that race.
    import sys

    for name, module in list(sys.modules.items()):
        if name.startswith("engine.") and module is not None:
            vars(module).setdefault("__warningregistry__", {})
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "overflow encountered", RuntimeWarning)
        yield


def prepare() -> None:
    """Ready numba's CUDA compiler once per process (engine.numba_setup: without scipy).
    Loading the first kernel would do it; done before the driver is first asked for the
    context, it runs while the context is still being created (engine.cuda_start)."""
    if SIMULATOR:
        return
    from engine import numba_setup

    with cuda_errors("setting up numba's CUDA compiler"):
        numba_setup.ready("cuda")


#: (kernel name, seconds) of every launch that compiled a kernel or loaded it from numba's
#: disk cache in this process, in order (under the simulator: each kernel's first launch,
#: 0 s). Tests and scripts/probe/cli_startup.sh read it: a job loads only what it launches.
LOADED: list[tuple[str, float]] = []
_LAUNCHED: set[int] = set()  # id() of every kernel launched in this process (they live on)
_LOADED_LOCK = threading.Lock()


def kernel_name(kernel) -> str:
    function = getattr(kernel, "py_func", None) or getattr(kernel, "fn", None)
    return getattr(function, "__name__", None) or type(kernel).__name__


def loaded_kernels() -> list[str]:
    """The names in :data:`LOADED`, in order."""
    with _LOADED_LOCK:
        return [name for name, _ in LOADED]


def device_name() -> str:
    """The current device's name ('CUDA simulator' under NUMBA_ENABLE_CUDASIM)."""
    dev = cuda.current_context().device
    name = getattr(dev, "name", None)
    if name is None:
        return "CUDA simulator"
    return name.decode() if isinstance(name, bytes) else str(name)


# -- kernels ----------------------------------------------------------------------------
@cuda.jit(device=True, inline=True)
def imin(a, b):
    # Plain comparisons: the builtins min/max go through generic overloads on CUDA.
    return a if a < b else b


@cuda.jit(device=True, inline=True)
def imax(a, b):
    return a if a > b else b


def register_cap(threads_per_block: int) -> int:
    """Most registers per thread that still let a block of this size launch (64K per block)."""
    return min(255, 65536 // max(1, threads_per_block))


def kernel_jit(cap: int = 255):
    """``cuda.jit`` for a kernel, cached on disk (the compile then happens once per
    machine), with its registers capped at ``cap`` so that a block of 65536 // cap
    threads always launches (the simulator has neither).

    A cache entry (numba-cuda 0.30: ``CUDACodeLibrary._reduce_states``) holds the LLVM IR,
    the PTX and the cubin of the device it was compiled on (the compile links one before
    saving), keyed by the compute capability: a load unpickles it and hands the cubin to
    the driver, with no PTX JIT, so no option makes it cheaper. The one-off cost of the
    first load in a process is numba's target set-up (:func:`prepare`)."""
    if SIMULATOR:
        return cuda.jit
    if cap >= 255:
        return cuda.jit(cache=True)
    return cuda.jit(cache=True, max_registers=cap)


class _Pinned:
    """Page-locked host memory that transfers go through, kept for the process and shared
    by jobs under a lock: the driver copies pageable memory through a buffer of its own
    first, which costs a small launch more than its kernel; allocating page-locked memory
    is slow, hence one buffer, grown to the largest transfer up to LIMIT (beyond that a
    transfer is long anyway and gets its own)."""

    SMALL = 1 << 14    # smaller copies: the staging's extra host copy is not worth it
    LIMIT = 1 << 26

    def __init__(self):
        self.lock = threading.Lock()
        self.buffer = None

    def take(self, nbytes: int) -> np.ndarray:
        """``nbytes`` of staging (the caller holds the lock)."""
        if nbytes > self.LIMIT or SIMULATOR:
            return np.empty(nbytes, dtype=np.uint8)
        if self.buffer is None or self.buffer.shape[0] < nbytes:
            self.buffer = None
            with cuda_errors("allocating page-locked host memory", nbytes):
                self.buffer = cuda.pinned_array(max(nbytes, 1 << 20), dtype=np.uint8)
        return self.buffer[:nbytes]


_PINNED = _Pinned()


# -- the device ---------------------------------------------------------------------------
class Device:
    """One job's GPU: its limits, allocations and launches with one-line errors, and the
    job's cancel flag (polled between launches)."""

    def __init__(self, threads_per_block: int = 256, abort: np.ndarray | None = None):
        prepare()  # before the driver: it may still be creating the context (engine.cuda_start)
        with cuda_errors("starting CUDA"):
            if not cuda.is_available():
                raise CudaFailure("no usable CUDA GPU on this machine (numba.cuda.is_available() "
                                  "is False); use the multicore backend")
            dev = cuda.current_context().device
            global CONTEXT_MADE
            CONTEXT_MADE = not SIMULATOR
            self.name = device_name()
            self.sms = int(getattr(dev, "MULTIPROCESSOR_COUNT", 1))
            self.max_threads_per_sm = int(getattr(dev, "MAX_THREADS_PER_MULTIPROCESSOR", 2048))
            self.max_shared = int(getattr(dev, "MAX_SHARED_MEMORY_PER_BLOCK", 48 * 1024))
            self.max_block = int(getattr(dev, "MAX_THREADS_PER_BLOCK", 1024))
        if threads_per_block > self.max_block:
            raise CudaFailure(f"{threads_per_block} threads per block is more than {self.name} "
                              f"allows ({self.max_block})")
        self.threads_per_block = threads_per_block
        self.abort = abort

    def cancelled(self) -> bool:
        return self.abort is not None and self.abort[0] != 0

    def resident_blocks(self, tpb: int) -> int:
        """Blocks of ``tpb`` threads the whole GPU runs at once (one wave)."""
        return self.sms * max(1, self.max_threads_per_sm // tpb)

    def resident_threads(self) -> int:
        return self.sms * self.max_threads_per_sm

    def free_bytes(self) -> int:
        with cuda_errors("querying GPU memory"):
            free = cuda.current_context().get_memory_info()[0]
        if not math.isfinite(free):  # the simulator reports infinite memory
            free = 1 << 30
        return int(free)

    def scratch_budget(self, fraction: float = 0.5) -> int:
        """Bytes one launch's scratch may take."""
        return max(1 << 20, int(self.free_bytes() * fraction))

    def upload(self, array: np.ndarray, what: str):
        array = np.ascontiguousarray(array)
        with cuda_errors(what, array.nbytes):
            return cuda.to_device(array)

    def upload_many(self, what: str, *parts, keep: dict | None = None) -> list:
        """Several host arrays in one transfer (each transfer and allocation is a round trip
        to the driver, which small launches notice): device views of one allocation, in
        order, each 16-byte aligned; ``keep`` (a dict) keeps the allocation under ``what``
        for the next call. A part is an array or (array, dtype) to convert it to on the way."""
        arrays = [p if isinstance(p, np.ndarray) else p[0] for p in parts]
        dtypes = [np.dtype(a.dtype if isinstance(p, np.ndarray) else p[1])
                  for a, p in zip(arrays, parts)]
        starts, total = [], 0
        for array, dtype in zip(arrays, dtypes):
            starts.append(total)
            total += -(-array.size * dtype.itemsize // 16) * 16
        total = max(16, total)
        into = None if keep is None else keep.get(what)
        if into is None or into.shape[0] < total:
            into = self.empty(total, np.uint8, what)
            if keep is not None:
                keep[what] = into
        device = into[:total]
        with _PINNED.lock:
            blob = _PINNED.take(total)
            for array, dtype, start in zip(arrays, dtypes, starts):
                np.copyto(blob[start:start + array.size * dtype.itemsize].view(dtype),
                          array.reshape(-1), casting="unsafe")
            with cuda_errors(what, total):
                device.copy_to_device(blob)
        return [device[start:start + array.size * dtype.itemsize].view(dtype).reshape(array.shape)
                for array, dtype, start in zip(arrays, dtypes, starts)]

    def clear(self, array, what: str) -> None:
        """Zero a device array in place (a device memset, no transfer)."""
        with cuda_errors(what):
            if SIMULATOR:
                array.copy_to_device(np.zeros(array.shape, dtype=array.dtype))
            else:
                from numba.cuda.cudadrv.driver import device_memset

                device_memset(array, 0, array.nbytes)

    def empty(self, shape, dtype, what: str):
        with cuda_errors(what, int(np.prod(shape)) * np.dtype(dtype).itemsize):
            return cuda.device_array(shape, dtype=dtype)

    def zeros(self, shape, dtype, what: str):
        return self.upload(np.zeros(shape, dtype=dtype), what)

    def fetch(self, device_array) -> np.ndarray:
        with cuda_errors("running a kernel (copying its results back)"):
            nbytes = device_array.size * device_array.dtype.itemsize
            if nbytes < _PINNED.SMALL or not device_array.is_c_contiguous():
                return device_array.copy_to_host()
            cuda.synchronize()  # wait for the kernel outside the lock: other jobs' copies go on
            with _PINNED.lock:
                stage = _PINNED.take(nbytes).view(device_array.dtype).reshape(device_array.shape)
                device_array.copy_to_host(stage)
                return stage.copy()

    def synchronize(self, what: str = "running a kernel") -> None:
        with cuda_errors(what):
            cuda.synchronize()

    def launch(self, kernel, blocks: int, tpb: int, shared_bytes: int, *args) -> None:
        """Queue a kernel. A launch that compiles the kernel or loads it from the disk cache
        (its first, or one with new argument types) is listed in :data:`LOADED` and its time
        counted as compile time (the launch itself is asynchronous: microseconds)."""
        if shared_bytes > self.max_shared:
            raise CudaFailure(f"the kernel needs {shared_bytes} bytes of shared memory per block, "
                              f"more than {self.name} allows ({self.max_shared}); use fewer threads "
                              "per block or smaller tiles")
        first = id(kernel) not in _LAUNCHED
        overloads = getattr(kernel, "overloads", None)  # (the simulator's kernels have none)
        known = -1 if overloads is None else len(overloads)
        t0 = now()
        with cuda_errors(f"launching {blocks} blocks of {tpb} threads"), quiet_simulator():
            kernel[blocks, tpb, 0, shared_bytes](*args)
        if first or (overloads is not None and len(overloads) != known):
            seconds = 0.0 if SIMULATOR else now() - t0
            add_compile_time(seconds)
            with _LOADED_LOCK:
                _LAUNCHED.add(id(kernel))
                LOADED.append((kernel_name(kernel), seconds))
