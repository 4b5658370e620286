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
alternative, one block per matrix), cuda_lanes.py and cuda_bitparallel.py
(bitparallel's lanes stages and blocked tiers).
"""

from __future__ import annotations

import math

import numpy as np

from engine import config, gpu
from engine.gpu import CudaFailure, cuda_errors, device_name, register_cap  # noqa: F401 (re-exported)

class Device(gpu.Device):
    """The kdiff job's GPU: the background (and its record offsets) uploaded once per job
    (a streamed job's once per chunk, into one buffer), and the target record uploaded
    once per record."""

    def __init__(self, beta: np.ndarray, offsets: np.ndarray, threads_per_block: int,
                 abort: np.ndarray | None = None):
        super().__init__(threads_per_block, abort)
        self._alpha = self._alpha_d = None
        self._room = None
        self.set_background(beta, offsets)
        threads = config.KDIFF_CUDA_BITPARALLEL_THREADS
        self.target_threads = threads or 4 * self.resident_threads()

    def set_background(self, beta: np.ndarray, offsets: np.ndarray) -> None:
        """Upload a background text and its record offsets, reusing the buffer of the one
        before when it is large enough (streamed chunks: one chunk on the device at a time)."""
        if offsets[-1] >= 2**31:
            raise CudaFailure("the background is longer than 2^31 symbols, too long for the "
                              "CUDA kernels' 32-bit positions")
        self.offsets = np.asarray(offsets, dtype=np.int64)
        n = int(beta.shape[0])
        if self._room is None or self._room.shape[0] < n:
            self._room = None  # (freed before the larger one is taken)
            self._room = self.empty(max(1, n), np.uint8, "the background")
        with cuda_errors("copying the background to the GPU", n):
            self._room[:n].copy_to_device(np.ascontiguousarray(beta, dtype=np.uint8))
        self.beta = self._room[:n]
        self.offsets_d = self.upload(self.offsets, "the background's record offsets")
        self.max_record = int(np.diff(self.offsets).max()) if len(self.offsets) > 1 else 0

    def target(self, alpha: np.ndarray):
        """The target record on the device, uploaded once per record (slices reuse it)."""
        if self._alpha is not alpha:
            self._alpha_d, self._alpha = self.upload(alpha, "the target"), alpha
        return self._alpha_d

    def scratch_budget(self) -> int:
        return super().scratch_budget(config.KDIFF_CUDA_MEMORY_FRACTION)


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
        #: kdiff --all-k: the lower levels (c at 0..K-1 edits), bitparallel only (make_job)
        self.levels = self.K if job.params.get("all_k") else 0
        default_tpb = (config.KDIFF_CUDA_BITPARALLEL_THREADS_PER_BLOCK if job.variant == "bitparallel"
                       else config.KDIFF_CUDA_THREADS_PER_BLOCK)
        self.tpb = int(job.params.get("threads_per_block") or default_tpb)
        self.factor = int(job.params.get("prefetch_factor") or config.KDIFF_CUDA_PREFETCH_FACTOR)
        self.dev = Device(beta, offsets, self.tpb, abort)
        if job.variant == "bitparallel":
            from engine.kdiff.cuda_bitparallel import BitparallelDriver

            self.driver = BitparallelDriver(self.dev, self.K, self.counting, self.flags,
                                            self.levels)
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

    def use_background(self, beta: np.ndarray, offsets: np.ndarray) -> None:
        """Scan another background text from now on (a streamed chunk: engine.kdiff.driver)."""
        self.dev.set_background(beta, offsets)

    # -- what _SliceRunner asks -------------------------------------------------------
    def min_slice(self) -> int:
        if self.driver is not None:
            return self.driver.min_slice()
        return self.dev.resident_blocks(self.tpb)

    def __call__(self, alpha, r_lo, r_hi, out_c, counters, out_lv=None) -> int:
        """Fill ``out_c[0:r_hi-r_lo]`` (and with levels ``out_lv``: starts x levels); return
        how many starts are settled (the scan stops after the first start whose whole suffix
        occurs, with levels within 0 edits; fewer when cancelled)."""
        m_end = alpha.shape[0]
        rs = np.arange(r_lo, r_hi, dtype=np.int64)
        if self.driver is not None:
            lv = np.empty((len(rs), self.levels), dtype=np.int64) if self.levels else None
            cs = self.driver.run(alpha, rs, counters, lv)
            if cs is None:
                return 0
            out_c[:len(rs)] = cs
            if lv is not None:
                out_lv[:len(rs)] = lv
            full = np.flatnonzero((lv[:, 0] if lv is not None else cs) == m_end - rs)
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
