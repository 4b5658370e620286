"""kdiff on CUDA: the host side of the three variants (imported lazily, only for cuda jobs).

:class:`CudaSliceRunner` is what ``engine.kdiff._SliceRunner`` calls for a slice
[r_lo, r_hi) of one target record: it uploads the background once per job,
launches the variant's kernels (in batches when the matrices' scratch would not
fit), copies c(r) back and applies the scan's stop rule. Cancellation is
checked between launches. Every CUDA failure (out of memory, a launch the
device refuses, a fault inside a kernel) becomes a :class:`CudaFailure`
(a RuntimeError with a one-line message); nothing global is left broken, so
the CPU backends keep working.

The kernels live beside this file: cuda_blocks.py (conventional and
alternative, one block per matrix) and cuda_bitparallel.py.
"""

from __future__ import annotations

import importlib
import math
import warnings
from contextlib import contextmanager

import numpy as np
from numba import config as numba_config
from numba import cuda

from engine import config
from engine.kdiff.cuda_device import register_cap

_WARMED: set = set()  # kernel sets compiled in this process (for the "compiling" phase)


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
                              "use a shorter background or target, or the multicore backend") from exc
        raise CudaFailure(f"CUDA error while {what}: {type(exc).__name__}: {text}") from exc


@contextmanager
def _quiet_simulator():
    """The simulator runs kernels on numpy scalars, which warn where uint64 arithmetic wraps
    around as it should; silence that for the launch (the simulator only)."""
    if not numba_config.ENABLE_CUDASIM:
        yield
        return
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "overflow encountered", RuntimeWarning)
        yield


def device_name() -> str:
    """The current device's name ('CUDA simulator' under NUMBA_ENABLE_CUDASIM)."""
    dev = cuda.current_context().device
    name = getattr(dev, "name", None)
    if name is None:
        return "CUDA simulator"
    return name.decode() if isinstance(name, bytes) else str(name)


class Device:
    """One job's GPU: the background on the device, allocations and launches with clear errors."""

    def __init__(self, beta: np.ndarray, offsets: np.ndarray, threads_per_block: int,
                 abort: np.ndarray | None = None):
        with cuda_errors("starting CUDA"):
            if not cuda.is_available():
                raise CudaFailure("no usable CUDA GPU on this machine (numba.cuda.is_available() "
                                  "is False); use the multicore backend")
            ctx = cuda.current_context()
            dev = ctx.device
            self.name = device_name()
            self.sms = int(getattr(dev, "MULTIPROCESSOR_COUNT", 1))
            self.max_threads_per_sm = int(getattr(dev, "MAX_THREADS_PER_MULTIPROCESSOR", 2048))
            self.max_shared = int(getattr(dev, "MAX_SHARED_MEMORY_PER_BLOCK", 48 * 1024))
            self.max_block = int(getattr(dev, "MAX_THREADS_PER_BLOCK", 1024))
        if threads_per_block > self.max_block:
            raise CudaFailure(f"{threads_per_block} threads per block is more than {self.name} "
                              f"allows ({self.max_block})")
        if offsets[-1] >= 2**31:
            raise CudaFailure("the background is longer than 2^31 symbols, too long for the "
                              "CUDA kernels' 32-bit positions")
        self.threads_per_block = threads_per_block
        self._alpha = self._alpha_d = None
        self.offsets = np.asarray(offsets, dtype=np.int64)
        self.abort = abort
        self.beta = self.upload(beta, "the background")
        self.offsets_d = self.upload(self.offsets, "the background's record offsets")
        self.max_record = int(np.diff(self.offsets).max()) if len(self.offsets) > 1 else 0
        threads = config.KDIFF_CUDA_BITPARALLEL_THREADS
        self.target_threads = threads or 4 * self.sms * self.max_threads_per_sm

    def target(self, alpha: np.ndarray):
        """The target record on the device, uploaded once per record (slices reuse it)."""
        if self._alpha is not alpha:
            self._alpha_d, self._alpha = self.upload(alpha, "the target"), alpha
        return self._alpha_d

    def cancelled(self) -> bool:
        return self.abort is not None and self.abort[0] != 0

    def resident_blocks(self, tpb: int) -> int:
        """Blocks of ``tpb`` threads the whole GPU runs at once (one wave)."""
        return self.sms * max(1, self.max_threads_per_sm // tpb)

    def scratch_budget(self) -> int:
        """Bytes one launch's scratch may take."""
        with cuda_errors("querying GPU memory"):
            free = cuda.current_context().get_memory_info()[0]
        if not math.isfinite(free):  # the simulator reports infinite memory
            free = 1 << 30
        return max(1 << 20, int(free * config.KDIFF_CUDA_MEMORY_FRACTION))

    def upload(self, array: np.ndarray, what: str):
        array = np.ascontiguousarray(array)
        with cuda_errors(what, array.nbytes):
            return cuda.to_device(array)

    def empty(self, shape, dtype, what: str):
        with cuda_errors(what, int(np.prod(shape)) * np.dtype(dtype).itemsize):
            return cuda.device_array(shape, dtype=dtype)

    def zeros(self, shape, dtype, what: str):
        return self.upload(np.zeros(shape, dtype=dtype), what)

    def fetch(self, device_array) -> np.ndarray:
        with cuda_errors("running a kernel (copying its results back)"):
            return device_array.copy_to_host()

    def launch(self, kernel, blocks: int, tpb: int, shared_bytes: int, *args) -> None:
        if shared_bytes > self.max_shared:
            raise CudaFailure(f"the kernel needs {shared_bytes} bytes of shared memory per block, "
                              f"more than {self.name} allows ({self.max_shared}); use fewer threads "
                              "per block, a smaller prefetch factor or fewer prefetch flags")
        with cuda_errors(f"launching {blocks} blocks of {tpb} threads"), _quiet_simulator():
            kernel[blocks, tpb, 0, shared_bytes](*args)


def prefetch_lengths(k: int, tpb: int, factor: int) -> tuple[int, int]:
    """The seed study's prefetch lengths: ceil(c*k/tpb)*tpb for alpha, plus tpb for beta."""
    alpha = math.ceil(factor * k / tpb) * tpb
    return alpha, alpha + tpb


class CudaSliceRunner:
    """c(r) for slices of start positions, on the GPU, for one job."""

    def __init__(self, job, beta: np.ndarray, offsets: np.ndarray, abort: np.ndarray):
        self.job = job
        self.k = job.params["k"]
        self.K = self.k - 1
        self.flags = frozenset(job.flags)
        self.counting = job.count_comparisons
        default_tpb = (config.KDIFF_CUDA_BITPARALLEL_THREADS_PER_BLOCK if job.variant == "bitparallel"
                       else config.KDIFF_CUDA_THREADS_PER_BLOCK)
        self.tpb = int(job.params.get("threads_per_block") or default_tpb)
        self.factor = int(job.params.get("prefetch_factor") or config.KDIFF_CUDA_PREFETCH_FACTOR)
        self.dev = Device(beta, offsets, self.tpb, abort)
        if job.variant == "bitparallel":
            from engine.kdiff.cuda_bitparallel import BitparallelDriver

            self.driver = BitparallelDriver(self.dev, self.K, self.counting)
        else:
            self.driver = None
            self.kernel = self._block_kernel()
            need = self._shared()[1]
            if need > self.dev.max_shared:  # say so before compiling anything
                raise CudaFailure(
                    f"{job.variant}/cuda with k={self.k}, {self.tpb} threads per block and flags "
                    f"{','.join(sorted(self.flags)) or 'none'} needs {need} bytes of shared memory per "
                    f"block, more than {self.dev.name} allows ({self.dev.max_shared}); use fewer "
                    "threads per block, a smaller prefetch factor, or drop opt4/opt5/opt6")
        self.key = (job.variant, tuple(sorted(self.flags)), self.counting, register_cap(self.tpb),
                    tuple(config.KDIFF_CUDA_BITPARALLEL_TIERS) if self.driver else ())

    # -- what _SliceRunner asks -------------------------------------------------------
    def min_slice(self) -> int:
        if self.driver is not None:
            return self.driver.min_slice()
        return self.dev.resident_blocks(self.tpb)

    def compiled(self) -> bool:
        return self.key in _WARMED

    def warm_up(self) -> None:
        """Compile (or load) the job's kernels on a tiny input."""
        if self.driver is not None:
            self.driver.warm_up()
        else:
            tiny = Device(np.array([1, 2, 4, 8, 8], dtype=np.uint8), np.array([0, 5], dtype=np.int64),
                          self.tpb)
            saved, self.dev = self.dev, tiny
            saved_k, self.k, self.K = self.k, 2, 1
            try:
                self._blocks(np.array([1, 2, 4, 8, 1, 2, 4, 8], dtype=np.uint8), np.zeros(1, np.int64),
                             np.zeros(2, dtype=np.int64))
            finally:
                self.dev = saved
                self.k, self.K = saved_k, saved_k - 1
        _WARMED.add(self.key)

    def __call__(self, alpha, r_lo, r_hi, out_c, counters) -> int:
        """Fill ``out_c[0:r_hi-r_lo]``; return how many starts are settled (the scan stops
        after the first start whose whole suffix occurs; fewer when cancelled)."""
        m_end = alpha.shape[0]
        rs = np.arange(r_lo, r_hi, dtype=np.int64)
        if self.driver is not None:
            cs = self.driver.run(alpha, rs, counters)
            if cs is None:
                return 0
            out_c[:len(rs)] = cs
            full = np.flatnonzero(cs == m_end - rs)
            return int(full[0]) + 1 if len(full) else len(rs)
        return self._blocks(alpha, rs, counters, out_c)

    # -- conventional and alternative: one block per matrix -----------------------------
    def _block_kernel(self):
        f, cap = self.flags, register_cap(self.tpb)
        from engine.kdiff.cuda_blocks import alternative_kernel, conventional_kernel

        if self.job.variant == "conventional":
            return conventional_kernel("opt1" in f, "opt3" in f, "opt4" in f, "opt5" in f, cap)
        return alternative_kernel("opt3" in f, "opt4" in f, "opt5" in f, "opt6" in f, self.counting,
                                  cap)

    def _scratch_width(self, mp_max: int) -> int:
        """int32 cells of global scratch per block (0 when none is needed)."""
        f, n = self.flags, self.dev.max_record
        if self.job.variant == "conventional":
            return 2 * (n + 1) if "opt4" in f else 3 * (mp_max + 1)
        return 0 if "opt4" in f else 2 * (n + self.K + 3)

    def _shared(self):
        """(arguments describing the shared memory layout, its size in bytes)."""
        from engine.kdiff.cuda_blocks import alternative_shared_layout, conventional_shared_bytes

        if self.job.variant == "conventional":
            return (), conventional_shared_bytes(self.tpb)
        pa, pb = prefetch_lengths(self.k, self.tpb, self.factor)
        offsets, size = alternative_shared_layout(self.tpb, self.K, pa, pb, self.flags)
        return (pa, pb) + offsets, size

    def _blocks(self, alpha, rs, counters, out_c=None) -> int:
        m_end = alpha.shape[0]
        alpha_d = self.dev.target(alpha)
        layout, shared = self._shared()
        width = self._scratch_width(int(m_end - rs[0]) if len(rs) else 0)
        per_block = 4 * max(1, width)
        batch = max(1, min(len(rs), self.dev.scratch_budget() // per_block))
        done = 0
        while done < len(rs):
            if self.dev.cancelled():
                return done
            part = rs[done:done + batch]
            nb = len(part)
            rs_d = self.dev.upload(part.astype(np.int32), "start positions")
            out_d = self.dev.zeros(nb, np.int32, "results")
            cnt_d = self.dev.zeros(2, np.int64, "counters")
            scratch = self.dev.empty((nb, max(1, width)), np.int32,
                                     f"the scratch of {nb} matrices")
            self.dev.launch(self.kernel, nb, self.tpb, shared, alpha_d, m_end, rs_d, self.dev.beta,
                            self.dev.offsets_d, self.K, *layout, out_d, cnt_d, scratch)
            cs = self.dev.fetch(out_d).astype(np.int64)
            cnt = self.dev.fetch(cnt_d)
            counters[0] += int(cnt[0])
            if self.counting:
                counters[1] += int(cnt[1]) if self.job.variant == "alternative" else int(cnt[0])
            if out_c is not None:
                out_c[done:done + nb] = cs
            full = np.flatnonzero(cs == m_end - part)
            if len(full):
                return done + int(full[0]) + 1
            done += nb
        return done
