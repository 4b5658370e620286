"""lcs on CUDA: the host side of the score passes (imported lazily, only for cuda jobs).

A cuda job's score passes run on the GPU and present the interface of the CPU
:class:`engine.lcs.driver.Pass` (``total``, ``done``, ``finished``,
``run(budget, abort)``, ``last_row()``), so the same driver slices them,
reports progress, cancels between launches and recovers one LCS with
Hirschberg's rule: forward and reverse last-row passes on the GPU, in linear
space. Subproblems whose traceback bits fit in ``config.LCS_CUDA_TRACEBACK_WORDS``
are finished on the CPU with the variant's own serial kernels.

- ``bitparallel`` and ``wavefront`` (parallel form ``tiled``) run the band
  pipeline of :mod:`engine.lcs.cuda_band`;
- ``wavefront`` (parallel form ``diagonal``) runs the seed study's kernel,
  one launch per anti-diagonal (:mod:`engine.lcs.cuda_diagonal`).

Every CUDA failure becomes a one-line :class:`~engine.gpu.CudaFailure`; the CPU
backends keep working in the same process.
"""

from __future__ import annotations

import numpy as np

from engine import config, gpu
from engine.gpu import CudaFailure, cuda_errors, quiet_simulator
from engine.lcs.passes import DiagonalSlices, Pass, cpu_module
from engine.lcs.cpu_common import BITS, SNAPSHOT, Sampling, split_evenly
from engine.lcs.cuda_band import PAD, band_kernel, match_words_kernel
from engine.lcs.cuda_diagonal import diagonal_kernel

_ALL = np.uint64(0xFFFFFFFFFFFFFFFF)


class _Snapshot:
    """The sampled cells of a SNAPSHOT pass on the device, copied into the host image."""

    def __init__(self, dev, sampling: Sampling | None, rows_per_unit: int, nunits: int):
        self.sampling = sampling
        if sampling is None:
            self.image = dev.zeros((1, 1), np.uint16, "the snapshot")
            self.row_map = dev.zeros(1, np.int32, "the snapshot rows")
            self.col_map = dev.zeros(1, np.int32, "the snapshot columns")
            self.smask = dev.zeros(1, np.uint64, "the snapshot rows")
            self.shift = 0
            return
        self.image = dev.upload(sampling.image, "the snapshot")
        self.row_map = dev.upload(sampling.row_map.astype(np.int32), "the snapshot rows")
        self.col_map = dev.upload(sampling.col_map.astype(np.int32), "the snapshot columns")
        # Bit r of smask[u]: matrix row rows_per_unit * u + r + 1 is sampled.
        rows0 = np.flatnonzero(sampling.row_map[1:] >= 0)
        smask = np.zeros(max(1, nunits), dtype=np.uint64)
        np.bitwise_or.at(smask, rows0 // rows_per_unit,
                         np.left_shift(np.uint64(1), (rows0 % rows_per_unit).astype(np.uint64)))
        self.smask = dev.upload(smask, "the snapshot rows")
        self.shift = int(sampling.shift)
        self.dev = dev

    def args(self):
        return self.image, self.row_map, self.col_map, self.smask, self.shift

    def fetch(self) -> None:
        if self.sampling is not None:
            self.sampling.image[...] = self.dev.fetch(self.image)


class BandPass(DiagonalSlices):
    """One pass of the band pipeline (bitparallel, or the tiled wavefront) over ``a`` x ``b``."""

    def __init__(self, dev, a: np.ndarray, b: np.ndarray, bits: bool, mode: int,
                 sampling: Sampling | None, threads_per_block: int, tile: int):
        a = np.ascontiguousarray(a, dtype=np.uint8)
        b = np.ascontiguousarray(b, dtype=np.uint8)
        m, n = a.shape[0], b.shape[0]
        self.dev, self.bits, self.tile = dev, bits, tile
        self.lanes, self.per_block = gpu.band_layout(threads_per_block)
        rows = 64 if bits else 1
        self.nbands = max(1, -(-m // (rows * self.lanes)))
        self.nchunks = max(1, -(-n // tile))
        nunits = self.nbands * self.lanes
        super().__init__(np.convolve(split_evenly(m, rows * self.lanes), split_evenly(n, tile)))
        snap = mode == SNAPSHOT
        self.kernel = band_kernel(bits, snap, self.lanes, self.per_block, tile)
        need = shared_bytes(bits, self.lanes, self.per_block, tile)
        if need > dev.max_shared:
            raise CudaFailure(f"lcs/cuda with {threads_per_block} threads per block and tiles of "
                              f"{tile} columns needs {need} bytes of shared memory per block, more "
                              f"than {dev.name} allows ({dev.max_shared}); use fewer threads per "
                              "block or smaller config.LCS_CUDA_TILE_COLUMNS")
        b_pad = np.zeros(n + 2 * PAD, dtype=np.uint8)
        b_pad[PAD:PAD + n] = b
        self.n = n
        self.b = dev.upload(b_pad, "sequence B")
        if bits:
            # pm[x, u]: consecutive lanes read consecutive words (coalesced).
            self.pm = dev.empty((16, nunits), np.uint64, "the match words")
            tpb = 128
            dev.launch(match_words_kernel, -(-16 * nunits // tpb), tpb, 0,
                       dev.upload(a, "sequence A"), self.pm)
            self.a_units = dev.zeros(1, np.uint8, "sequence A")
            self.v_state = dev.upload(np.full(nunits, _ALL, dtype=np.uint64), "the bit-vectors")
        else:
            self.pm = dev.zeros((1, 1), np.uint64, "the match words")
            padded = np.zeros(nunits, dtype=np.uint8)
            padded[:m] = a
            self.a_units = dev.upload(padded, "sequence A")
            self.v_state = dev.zeros(1, np.uint64, "the bit-vectors")
        self.i_state = dev.zeros(nunits, np.int32, "the band state")
        self.corner = dev.zeros(self.nbands, np.int32, "the band corners")
        self.edge = dev.zeros(n, np.int32, "the boundary rows")
        self.flags = dev.zeros(self.nbands, np.int32, "the band flags")
        self.tickets = dev.zeros(self.cumulative.shape[0], np.int32, "the block tickets")
        self.status = dev.zeros(1, np.int32, "the status flag")
        self.snapshot = _Snapshot(dev, sampling if snap else None, rows, nunits)
        self.spin_limit = 1000 if gpu.SIMULATOR else int(config.CUDA_SPIN_LIMIT)

    def run(self, budget_cells: int, abort: np.ndarray) -> int:
        """Launch whole tile anti-diagonals worth about ``budget_cells``; return the cells done."""
        d0, d1 = self.plan(budget_cells)
        s_lo = max(0, d0 - self.nchunks + 1)
        s_hi = min(self.nbands - 1, d1 - 1)
        blocks = -(-(s_hi - s_lo + 1) // self.per_block)
        self.dev.launch(self.kernel, blocks, self.lanes * self.per_block, 0, self.b, self.n,
                        self.pm, self.a_units, self.edge, self.v_state, self.i_state, self.corner,
                        self.flags, self.tickets, d0, d0, d1, s_lo, s_hi, self.nchunks,
                        self.spin_limit, self.status, *self.snapshot.args())
        if int(self.dev.fetch(self.status)[0]) != 0:
            raise CudaFailure("a band of the lcs kernel waited too long for the band above it "
                              "(blocks not scheduled in order?); the pass was abandoned")
        self.snapshot.fetch()
        return self.advance(d1)

    def last_row(self) -> np.ndarray:
        """L[m, 0..n] (int64) once finished: the last band's edge (summed carries for bits)."""
        edge = self.dev.fetch(self.edge).astype(np.int64)
        out = np.zeros(edge.shape[0] + 1, dtype=np.int64)
        if self.bits:
            np.cumsum(edge, out=out[1:])
        else:
            out[1:] = edge
        return out


def shared_bytes(bits: bool, lanes: int, per_block: int, tile: int) -> int:
    """Static shared memory of a band kernel's block."""
    match = per_block * (16 if bits else 1) * lanes * 8
    return 4 + 4 * per_block + 4 * per_block * tile + match + 4 * lanes


class DiagonalPass(DiagonalSlices):
    """One pass of the seed study's kernel: a launch per anti-diagonal, a thread per cell."""

    def __init__(self, dev, a: np.ndarray, b: np.ndarray, mode: int, sampling: Sampling | None,
                 threads_per_block: int):
        a = np.ascontiguousarray(a, dtype=np.uint8)
        b = np.ascontiguousarray(b, dtype=np.uint8)
        m, n = a.shape[0], b.shape[0]
        d = np.arange(2, m + n + 1, dtype=np.int64)
        lo = np.maximum(1, d - n)
        counts = np.minimum(m, d - 1) - lo + 1
        super().__init__(counts)
        # Blocks of each launch (a diagonal's cells, i_lo.., are found by the kernel from d).
        self.blocks = (-(-counts // threads_per_block)).tolist()
        self.dev, self.tpb = dev, threads_per_block
        self.kernel = diagonal_kernel(mode == SNAPSHOT)
        self.a = dev.upload(a, "sequence A")
        self.b = dev.upload(b, "sequence B")
        self.buf = dev.zeros((4, max(m, n) + 1), np.int32, "the anti-diagonals")
        self.snapshot = _Snapshot(dev, sampling if mode == SNAPSHOT else None, 1, m)
        snap = self.snapshot.args()
        self.extra = (snap[0], snap[1], snap[2], snap[4]) if mode == SNAPSHOT else ()

    def run(self, budget_cells: int, abort: np.ndarray) -> int:
        first, stop = self.plan(budget_cells)
        tpb, kernel, blocks = self.tpb, self.kernel, self.blocks
        a, b, buf, extra = self.a, self.b, self.buf, self.extra
        reached = stop
        with cuda_errors(f"launching anti-diagonals of {tpb} threads per block"), quiet_simulator():
            for k in range(first, stop):
                if abort[0] != 0:
                    reached = k
                    break
                kernel[blocks[k], tpb](a, b, buf, k + 2, *extra)
        self.dev.synchronize("running the anti-diagonal kernel")
        self.snapshot.fetch()
        return self.advance(reached)

    def last_row(self) -> np.ndarray:
        out = self.dev.fetch(self.buf)[3, :].astype(np.int64)
        return out[:self.b.shape[0] + 1]


class CudaPasses:
    """The passes of one cuda lcs job: score passes on the GPU, recovery leaves on the CPU."""

    def __init__(self, job, abort: np.ndarray | None = None):
        self.variant = job.variant
        self.form = job.parallel
        self.tpb = int(job.params.get("threads_per_block") or config.LCS_CUDA_THREADS_PER_BLOCK)
        self.tile = int(config.LCS_CUDA_TILE_COLUMNS[job.variant])
        if self.tile < 1:
            raise ValueError(f"config.LCS_CUDA_TILE_COLUMNS[{job.variant!r}] must be >= 1, "
                             f"got {self.tile}")
        self.dev = gpu.Device(self.tpb, abort)
        self.leaf_kernels = cpu_module(job.variant)

    @property
    def max_words(self) -> int:
        return int(config.LCS_CUDA_TRACEBACK_WORDS)

    def new_pass(self, a: np.ndarray, b: np.ndarray, mode: int, sampling: Sampling | None = None):
        """A pass of ``a`` x ``b`` in ``mode``; traceback-bit (leaf) passes run on the CPU."""
        if mode == BITS:
            return Pass(self.leaf_kernels, a, b, "serial", BITS)
        if self.variant == "wavefront" and self.form == "diagonal":
            return DiagonalPass(self.dev, a, b, mode, sampling, self.tpb)
        return BandPass(self.dev, a, b, self.variant == "bitparallel", mode, sampling, self.tpb,
                        self.tile)


__all__ = ["BandPass", "CudaFailure", "CudaPasses", "DiagonalPass", "shared_bytes"]
