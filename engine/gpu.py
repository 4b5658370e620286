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
of its own (engine.cuda_start); :func:`prepare` has numba load cached kernels without
readying its compiler (0.15 s), which it readies only for a kernel it must compile.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import math
import sys
import threading
import warnings
import weakref
from collections import Counter, OrderedDict
from contextlib import contextmanager

import numpy as np
from numba import config as numba_config
from numba import cuda

from engine import config
from engine.jobs import now
from engine.slices import add_compile_time, compile_time

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
    for name, module in list(sys.modules.items()):
        if name.startswith("engine.") and module is not None:
            vars(module).setdefault("__warningregistry__", {})
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "overflow encountered", RuntimeWarning)
        yield


def prepare() -> None:
    """Set numba up once per process to load cached kernels without readying its CUDA
    compiler, and to ready it (without scipy) only for a kernel it must compile
    (engine.numba_setup.load_cuda_kernels_lightly)."""
    if SIMULATOR:
        return
    from engine import numba_setup

    with cuda_errors("setting up numba's CUDA compiler"):
        numba_setup.load_cuda_kernels_lightly()


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


#: Threads of a warp: the band kernels (lcs, nw tiled) run one band of lanes per warp.
WARP = 32


def band_layout(threads_per_block: int) -> tuple[int, int]:
    """(lanes per band, bands per block) for a block of ``threads_per_block`` threads."""
    if threads_per_block <= WARP:
        return threads_per_block, 1
    return WARP, 1 if SIMULATOR else threads_per_block // WARP


def register_cap(threads_per_block: int) -> int:
    """Most registers per thread that still let a block of this size launch (64K per block)."""
    return min(255, 65536 // max(1, threads_per_block))


def kernel_factory(factory):
    """``lru_cache`` for a function that builds a kernel, keyed on its arguments with the
    defaults filled in: ``chunk_kernel(8, 255)`` and ``chunk_kernel(8, 255, 0)`` are one
    dispatcher, so a kernel compiles once, and what it compiled (registers, local memory)
    can be read back through any spelling of its arguments."""
    signature = inspect.signature(factory)
    cached = functools.lru_cache(maxsize=None)(factory)

    @functools.wraps(factory)
    def kernel(*args, **kwargs):
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        return cached(*bound.args)

    return kernel


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


def _size_class(nbytes: int) -> int:
    """``nbytes`` rounded up to one of four sizes an octave (at least 4 KiB), so that pooled
    memory serves requests of about the same size again (at most 25 % more is taken)."""
    nbytes = max(int(nbytes), 4096)
    top = 1 << (nbytes - 1).bit_length()
    step = top // 8
    return -(-nbytes // step) * step


class _PinnedBlock:
    """One page-locked allocation handed out as numpy arrays (their ``base`` leads here): when
    the last of them is gone, the memory goes back to the pool instead of being freed."""

    def __init__(self, raw, pool):
        self._raw = raw
        self._pool = pool
        self.__array_interface__ = raw.__array_interface__

    def __del__(self):
        try:
            self._pool.give(self._raw.shape[0], self._raw)
        except Exception:  # (interpreter shutdown)
            pass


class _Kept:
    """Free memory kept for later use, by key (``free``: key -> allocations), at most the
    config tunable :attr:`BUDGET` bytes in all (``bytes``). The lock is re-entrant: memory
    is given back wherever the garbage collector runs an owner's ``__del__``, also inside
    :meth:`take` on the same thread (a plain lock hung there)."""

    BUDGET = ""

    def __init__(self):
        self.lock = threading.RLock()
        self.free: dict = {}
        self.bytes = 0

    def give(self, key, raw) -> None:
        with self.lock:
            if self.bytes + raw.shape[0] <= getattr(config, self.BUDGET):
                self.free.setdefault(key, []).append(raw)
                self.bytes += raw.shape[0]

    def clear(self) -> int:
        """Drop everything kept; returns the bytes it held."""
        with self.lock:
            held = self.bytes
            self.free.clear()
            self.bytes = 0
        return held


class PinnedPool(_Kept):
    """Page-locked host memory for arrays that transfers go to and from asynchronously:
    allocating it costs about as much as the transfer itself (the driver pins every page), so
    blocks are reused. A block is in use while any array made from it lives (a result's hit
    columns, say); it then goes back to the pool (by its size), which keeps at most
    ``config.GPU_PINNED_POOL_BYTES`` of free blocks."""

    BUDGET = "GPU_PINNED_POOL_BYTES"

    def take(self, nbytes: int) -> np.ndarray:
        """A uint8 array of at least ``nbytes`` page-locked bytes."""
        size = _size_class(nbytes)
        raw = None
        with self.lock:
            spare = self.free.get(size)
            if spare:
                raw = spare.pop()
                self.bytes -= size
        if raw is None:
            tally_event("pinned")
            if SIMULATOR:
                raw = np.empty(size, dtype=np.uint8)
            else:
                with cuda_errors("allocating page-locked host memory", size):
                    raw = cuda.pinned_array(size, dtype=np.uint8)
        return np.asarray(_PinnedBlock(raw, self))


PINNED = PinnedPool()


class Tally:
    """What the GPU side did while a :func:`tally` was open, counted where it happens (the
    behaviour tests and benchmarks check, instead of the caches' insides): ``allocations``
    (new device arrays, not spares), ``packs`` (texts packed for an upload), ``streams``
    (new CUDA streams, not kept ones), ``pinned`` (new page-locked host blocks, not pooled
    ones), ``waits`` (the host waiting for the GPU: :meth:`Device.synchronize`),
    ``downloads`` (copies from the GPU to the host), ``launches`` (kernel name -> count),
    and of a family's batches of launches (kmismatch): ``batches``, ``reruns`` (a batch run
    again with the room its spilled tiles asked for) and ``oversized`` (a batch whose hits
    could outgrow the memory for one: it is split)."""

    def __init__(self) -> None:
        self.allocations = 0
        self.packs = 0
        self.streams = 0
        self.pinned = 0
        self.waits = 0
        self.downloads = 0
        self.batches = 0
        self.reruns = 0
        self.oversized = 0
        self.launches: Counter = Counter()


_TALLIES: list[Tally] = []


@contextmanager
def tally():
    """A :class:`Tally` of the GPU work done inside (nested tallies each count it all)."""
    counts = Tally()
    _TALLIES.append(counts)
    try:
        yield counts
    finally:
        _TALLIES.remove(counts)


def tally_event(field: str, kernel: str | None = None) -> None:
    """Add one to ``field`` of every open tally (``launches``: to ``kernel``'s count)."""
    for counts in _TALLIES:
        if kernel is None:
            setattr(counts, field, getattr(counts, field) + 1)
        else:
            counts.launches[kernel] += 1


def pinned_empty(n: int, dtype) -> np.ndarray:
    """``n`` items of ``dtype`` in page-locked memory from :data:`PINNED` (uninitialised)."""
    dtype = np.dtype(dtype)
    return PINNED.take(n * dtype.itemsize)[:n * dtype.itemsize].view(dtype)


def packed_bytes(n: int) -> int:
    """Bytes of ``n`` codes packed two a byte, in whole 4-byte words (8 codes each)."""
    return -(-n // 8) * 4


def pack_into(codes: np.ndarray, out: np.ndarray, first: int, last: int) -> None:
    """Bytes [first, last) of the packed ``codes`` into ``out[first:last]``: two codes a byte,
    low nibble first (as in a genome store), zeros after the last code. (Two codes are one
    little-endian uint16 ``a | b << 8``, whose low byte after ``v | v >> 4`` is
    ``a | b << 4``.)"""
    if first == 0 and _TALLIES:
        tally_event("packs")
    n = codes.shape[0]
    even = min(2 * last, n - (n & 1))
    step = 1 << 22
    for a in range(2 * first, even, step):
        z = min(even, a + step)
        v = codes[a:z].view(np.uint16)
        np.copyto(out[a // 2:z // 2], v | (v >> 4), casting="unsafe")
    if max(first, even // 2) < last:
        out[max(first, even // 2):last] = 0
        if n & 1 and first <= n // 2 < last:
            out[n // 2] = codes[n - 1]


class TextCache:
    """Texts kept for the objects they were made from (a job's text records, by identity,
    while they live): :data:`PACKED_TEXTS` the packed, page-locked host copy (:func:`pack_into`)
    that an upload starts from, :data:`DEVICE_TEXTS` the text left on a GPU, so that solving
    the same records again (the GUI's background, a benchmark's repeated runs) skips the
    packing, or the upload too. Least recently used entries go first beyond the config
    tunable named ``budget`` (bytes).

    An owner's death only notes its entry (:meth:`_drop`, a weakref callback, takes no
    lock): the callback runs wherever the garbage collector does, also inside this class's
    own locked code on the same thread, where taking the lock hung the kmismatch GPU tests.
    Noted entries go at the next call, under the lock."""

    def __init__(self, budget: str):
        self.budget = budget
        self.lock = threading.Lock()
        self.entries: OrderedDict = OrderedDict()  # key -> (token, weakrefs, value, nbytes)
        self.bytes = 0
        self._dead: list = []  # (key, token) of entries whose owner died

    def get(self, owners, tag=None):
        """The text kept for ``owners`` (a tuple of objects) under ``tag`` (a device), or None."""
        key = (tag, *(id(o) for o in owners))
        with self.lock:
            self._purge()
            entry = self.entries.get(key)
            if entry is not None and all(r() is o for r, o in zip(entry[1], owners)):
                self.entries.move_to_end(key)
                return entry[2]
        return None

    def keep(self, owners, value, nbytes: int | None = None, tag=None,
             limit: int | None = None) -> bool:
        """Keep ``value`` (``nbytes``: default its own) as the text of ``owners`` under ``tag``
        while they all live, within the budget and ``limit`` bytes in all (older entries go
        first); False when it is not kept."""
        nbytes = int(value.nbytes if nbytes is None else nbytes)
        budget = getattr(config, self.budget)
        if limit is not None:
            budget = min(budget, limit)
        if nbytes > budget:
            return False
        key = (tag, *(id(o) for o in owners))
        token = object()
        try:
            refs = tuple(weakref.ref(o, lambda _, key=key, token=token: self._drop(key, token))
                         for o in owners)
        except TypeError:  # not weakly referenceable: not kept
            return False
        with self.lock:
            self._purge()
            self._pop(key)
            self.entries[key] = (token, refs, value, nbytes)
            self.bytes += nbytes
            while self.bytes > budget and len(self.entries) > 1:
                self._pop(next(iter(self.entries)))
        return True

    def _pop(self, key) -> None:
        entry = self.entries.pop(key, None)
        if entry is not None:
            self.bytes -= entry[3]

    def _drop(self, key, token) -> None:
        self._dead.append((key, token))  # (list.append is atomic: no lock here, see above)

    def __len__(self) -> int:
        """Texts kept (those of dead owners gone first)."""
        with self.lock:
            self._purge()
            return len(self.entries)

    def _purge(self) -> None:
        """Drop the noted entries (the caller holds the lock)."""
        while self._dead:
            key, token = self._dead.pop()
            entry = self.entries.get(key)
            if entry is not None and entry[0] is token:
                self._pop(key)

    def clear(self) -> int:
        """Drop every entry; returns the bytes they held."""
        with self.lock:
            held = self.bytes
            self.entries.clear()
            self._dead.clear()
            self.bytes = 0
        return held


PACKED_TEXTS = TextCache("GPU_TEXT_CACHE_BYTES")
#: Texts left on the GPU for their records (kmismatch: the unpacked text, one code a byte),
#: each also within ``config.GPU_DEVICE_TEXT_FREE_FRACTION`` of the free device memory when
#: kept, all dropped when an allocation runs out of memory (:meth:`Device.empty`).
DEVICE_TEXTS = TextCache("GPU_DEVICE_TEXT_BYTES")


class DeviceSpares(_Kept):
    """Device memory a finished job left for the next one (by purpose): an allocation and its
    free cost about 0.1 ms each, and freeing waits for the whole device, which would stall the
    streams of a job that overlaps its transfers with its kernels. A job gives its arrays back
    only after its streams are idle; at most ``config.GPU_SPARE_BYTES`` are kept."""

    BUDGET = "GPU_SPARE_BYTES"

    def take(self, key: str, nbytes: int):
        """A spare uint8 device array of at least ``nbytes`` (at most 4x), or None."""
        with self.lock:
            spare = self.free.get(key, [])
            fits = [i for i, a in enumerate(spare) if nbytes <= a.shape[0] <= 4 * max(nbytes, 4096)]
            if not fits:
                return None
            best = spare.pop(min(fits, key=lambda i: spare[i].shape[0]))
            self.bytes -= best.shape[0]
            return best


SPARES = DeviceSpares()


def release_kept() -> bool:
    """Drop the device memory kept for later jobs (texts left on the GPU, spare arrays);
    whether there was any. (numba frees it at the next allocation that runs out of memory.)"""
    return (DEVICE_TEXTS.clear() + SPARES.clear()) > 0


class StreamPool:
    """CUDA streams a finished job left for the next one (per device): creating a stream and
    destroying it are driver calls of their own (kmismatch made two a solve). A job takes
    its streams with :meth:`take` and gives them back idle (synchronised) with :meth:`give`;
    a stream is never shared by two live jobs."""

    LIMIT = 8  # streams kept per device

    def __init__(self):
        self.lock = threading.Lock()
        self.free: dict[int, list] = {}

    def take(self, device: int, count: int) -> list:
        """``count`` idle streams of ``device`` (kept ones first, then new ones)."""
        with self.lock:
            spare = self.free.setdefault(device, [])
            streams = [spare.pop() for _ in range(min(count, len(spare)))]
        for _ in range(count - len(streams)):
            tally_event("streams")
        with cuda_errors("creating CUDA streams"):
            streams += [cuda.stream() for _ in range(count - len(streams))]
        return streams

    def give(self, device: int, streams) -> None:
        """Keep ``streams`` (nothing queued on them any more) for the next job."""
        with self.lock:
            spare = self.free.setdefault(device, [])
            spare.extend(streams[:max(0, self.LIMIT - len(spare))])

    def clear(self) -> int:
        """Drop every kept stream; returns how many there were."""
        with self.lock:
            kept = sum(len(spare) for spare in self.free.values())
            self.free.clear()
        return kept


STREAMS = StreamPool()


def in_context(method):
    """``method`` run with the thread's CUDA context looked up once: numba asks the driver for
    the current context and device (two driver calls, and a lock) at every API entry point
    (copies, array views, launches, streams) unless a caller up the stack already did, which
    was about thirty times a kmismatch solve. (numba's own decorator; the simulator has no
    context to attach.)"""
    if SIMULATOR:
        return method
    from numba.cuda.cudadrv.devices import require_context

    return require_context(method)


def sync_event():
    """A CUDA event for ordering streams (no timing: cheaper to record and wait on)."""
    with cuda_errors("creating a CUDA event"):
        return cuda.event() if SIMULATOR else cuda.event(timing=False)


# -- the device ---------------------------------------------------------------------------
class Device:
    """One job's GPU: its limits, allocations and launches with one-line errors, and the
    job's cancel flag (polled between launches)."""

    def __init__(self, threads_per_block: int = 256, abort: np.ndarray | None = None):
        prepare()
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
            self.id = int(getattr(dev, "id", 0) or 0)  # (the simulator's device has none)
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

    def upload_many(self, what: str, *parts, keep: dict | None = None,
                    spare: str | None = None, stream=None) -> list:
        """Several host arrays in one transfer (each transfer and allocation is a round trip
        to the driver, which small launches notice): device views of one allocation, in
        order, each 16-byte aligned; ``keep`` (a dict) keeps the allocation under ``what``
        for the next call. A part is an array or (array, dtype) to convert it to on the way.
        ``spare``: take the allocation from :data:`SPARES` under that key when it has one
        (and give it back there when done: it is ``keep[what]``). ``stream`` (needs
        ``keep``): queue the transfer there instead of waiting for it, from page-locked
        memory of :data:`PINNED` that ``keep[(what, "staging")]`` holds until the stream is
        done (a transfer on the default stream would also wait for every other stream's
        work, an upload's say)."""
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
            into = self.empty(total, np.uint8, what) if spare is None else self.spare(spare, total, what)
        if keep is not None:
            keep[what] = into
        device = into[:total]

        def fill(blob):
            for array, dtype, start in zip(arrays, dtypes, starts):
                np.copyto(blob[start:start + array.size * dtype.itemsize].view(dtype),
                          array.reshape(-1), casting="unsafe")

        if stream is not None:
            staging = keep.get((what, "staging"))
            if staging is None or staging.shape[0] < total:
                staging = keep[(what, "staging")] = PINNED.take(total)
            fill(staging)
            with cuda_errors(what, total):
                device.copy_to_device(staging[:total], stream=stream)
        else:
            with _PINNED.lock:
                blob = _PINNED.take(total)
                fill(blob)
                with cuda_errors(what, total):
                    device.copy_to_device(blob)
        return [device[start:start + array.size * dtype.itemsize].view(dtype).reshape(array.shape)
                for array, dtype, start in zip(arrays, dtypes, starts)]

    def clear(self, array, what: str, stream=0) -> None:
        """Zero a device array in place (a device memset, no transfer; on ``stream``, queued)."""
        with cuda_errors(what):
            if SIMULATOR:
                array.copy_to_device(np.zeros(array.shape, dtype=array.dtype))
            else:
                from numba.cuda.cudadrv.driver import device_memset

                device_memset(array, 0, array.nbytes, stream=stream)

    def spare(self, key: str, nbytes: int, what: str):
        """A uint8 device allocation of at least ``nbytes`` (a whole number of 512-byte
        blocks): a spare one when :data:`SPARES` has one under ``key``, else a new one (give
        it back there when done)."""
        raw = SPARES.take(key, nbytes)
        if raw is None:
            raw = self.empty(_size_class(nbytes), np.uint8, what)
        return raw

    def empty(self, shape, dtype, what: str):
        """A new device array; when the GPU is full, once more after the memory kept for later
        jobs is dropped (:func:`release_kept`)."""
        nbytes = int(np.prod(shape)) * np.dtype(dtype).itemsize
        if _TALLIES:
            tally_event("allocations")
        try:
            with cuda_errors(what, nbytes):
                return cuda.device_array(shape, dtype=dtype)
        except CudaFailure as exc:
            if "ran out of memory" not in str(exc) or not release_kept():
                raise
        with cuda_errors(what, nbytes):
            return cuda.device_array(shape, dtype=dtype)

    def keep_text(self, owners, raw) -> bool:
        """Leave the device array ``raw`` (a text) in :data:`DEVICE_TEXTS` for ``owners`` on this
        device, if it fits the budget and its share of the free memory (the caller's streams
        must be done writing it); False when it is not kept."""
        limit = DEVICE_TEXTS.bytes + int(self.free_bytes() * config.GPU_DEVICE_TEXT_FREE_FRACTION)
        return DEVICE_TEXTS.keep(tuple(owners), raw, raw.shape[0] * raw.dtype.itemsize,
                                 tag=self.id, limit=limit)

    def zeros(self, shape, dtype, what: str):
        return self.upload(np.zeros(shape, dtype=dtype), what)

    def fetch(self, device_array) -> np.ndarray:
        tally_event("downloads")
        with cuda_errors("running a kernel (copying its results back)"):
            nbytes = device_array.size * device_array.dtype.itemsize
            if nbytes < _PINNED.SMALL or not device_array.is_c_contiguous():
                return device_array.copy_to_host()
            cuda.synchronize()  # wait for the kernel outside the lock: other jobs' copies go on
            with _PINNED.lock:
                stage = _PINNED.take(nbytes).view(device_array.dtype).reshape(device_array.shape)
                device_array.copy_to_host(stage)
                return stage.copy()

    def synchronize(self, what: str = "running a kernel", stream=None) -> None:
        """Wait for the device (``stream``: for the work queued on that stream only)."""
        tally_event("waits")
        with cuda_errors(what):
            if stream is None:
                cuda.synchronize()
            else:
                stream.synchronize()

    def launch(self, kernel, blocks, tpb: int, shared_bytes: int, *args, stream=0) -> None:
        """Queue a kernel (on ``stream``; 0: the default stream). A launch that compiles the
        kernel or loads it from the disk cache (its first, or one with new argument types) is
        listed in :data:`LOADED` and its time counted as compile time (the launch itself is
        asynchronous: microseconds)."""
        if shared_bytes > self.max_shared:
            raise CudaFailure(f"the kernel needs {shared_bytes} bytes of shared memory per block, "
                              f"more than {self.name} allows ({self.max_shared}); use fewer threads "
                              "per block or smaller tiles")
        if _TALLIES:
            tally_event("launches", kernel_name(kernel))
        first = id(kernel) not in _LAUNCHED
        overloads = getattr(kernel, "overloads", None)  # (the simulator's kernels have none)
        known = -1 if overloads is None else len(overloads)
        t0, c0 = now(), compile_time()
        with cuda_errors(f"launching {blocks} blocks of {tpb} threads"), quiet_simulator():
            kernel[blocks, tpb, stream, shared_bytes](*args)
        if first or (overloads is not None and len(overloads) != known):
            seconds = 0.0 if SIMULATOR else now() - t0
            # (less what the compiler lock's timer counted already: engine.slices)
            add_compile_time(max(0.0, seconds - (compile_time() - c0)))
            with _LOADED_LOCK:
                _LAUNCHED.add(id(kernel))
                LOADED.append((kernel_name(kernel), seconds))
