"""nw on CUDA: the tile contract of engine/nw/cpu_common.py on the GPU (imported lazily,
only for cuda jobs).

:class:`CudaKernels` stands where :class:`engine.nw.driver.Kernels` stands for the CPU, so
the score pass and Hirschberg's passes of engine/nw/driver.py run unchanged: each band
of rows (and each Hirschberg half) is one :meth:`CudaKernels.tile` call, which uploads
the two sequences and the tile's boundary, runs the job's form and copies the bottom
row and right column back. The traceback's small base cases stay on the CPU
(engine/nw/cpu_traceback.py), as they do for the CPU backends.

Kernels work on W = H - (i + j) * gap in int32 (engine/nw/cuda_diagonal.py says why);
the boundary is converted here, and its range (W never decreases along a row or a
column, and grows by at most max(s) - 2 * gap per diagonal step) is checked to fit.
Every CUDA failure becomes a one-line :class:`CudaFailure`; cancellation is checked
between launches.
"""

from __future__ import annotations

import numpy as np

from engine import config, gpu
from engine.gpu import CudaFailure, register_cap
from engine.nw.cuda_options import W_LIMIT, form_of
from engine.nw.scoring import Scores, value_type

class CudaKernels:
    """One job's form on the GPU behind the tile contract (``value_type``, ``first_rows``,
    ``warm_key``, ``tile``)."""

    def __init__(self, variant: str, parallel: str | None, flags, threads_per_block: int = 0,
                 blocks: int = 0):
        self.variant = variant
        self.form = form_of(variant, parallel, flags)
        self.tpb = int(threads_per_block or config.NW_CUDA_THREADS_PER_BLOCK[self.form])
        self.blocks = int(blocks or 0)
        self.rows = int(config.NW_CUDA_TILED_ROWS)
        self.cols = int(config.NW_CUDA_TILED_COLUMNS)
        self.chunk = int(config.NW_CUDA_TILED_CHUNK)
        self.cap = register_cap(self.tpb)
        self.dev = gpu.Device(self.tpb)
        self.spin_limit = 1000 if gpu.SIMULATOR else int(config.CUDA_SPIN_LIMIT)
        if self.form == "tiled":
            from engine.nw.cuda_diagonal import STEP_COLUMNS, band_layout

            lanes = band_layout(self.tpb)[0]
            if self.cols not in STEP_COLUMNS:
                raise CudaFailure(f"NW_CUDA_TILED_COLUMNS must be one of {STEP_COLUMNS}, "
                                  f"got {self.cols}")
            if self.chunk < lanes or self.chunk % lanes or self.chunk % self.cols:
                raise CudaFailure(f"the tiled form needs NW_CUDA_TILED_CHUNK ({self.chunk}) to be "
                                  f"a multiple of the lanes of a band ({lanes}) and of "
                                  f"NW_CUDA_TILED_COLUMNS ({self.cols})")
        self._scratch: dict[str, object] = {}
        self._stripes: dict[tuple, np.ndarray] = {}
        self._no_snapshot = None

    # -- what the driver asks -----------------------------------------------------------
    def value_type(self, m: int, n: int, sc: Scores):
        """(dtype, offset) of the host rows; the device holds W in int32 (checked per tile)."""
        return value_type(m, n, sc)

    def first_rows(self, m: int, n: int) -> int:
        """Rows of a sweep's first band (also its smallest; see NW_CUDA_FIRST_SLICE_CELLS)."""
        n = max(1, n)
        rows = max(1, config.NW_CUDA_FIRST_SLICE_CELLS[self.form] // n)
        return max(rows, n) if self.form in ("per-launch", "diagonal-one-block") else rows

    def warm_key(self, snapshots: bool) -> tuple:
        """What decides which kernels a job compiles."""
        return (self.form, self.cap, self.rows, self.cols, self.chunk, bool(snapshots))

    def tile(self, a, b, top, left, bottom, right, scores, rec_rows, rec_cols, snap,
             row0, col0, abort) -> bool:
        """One tile (the contract of engine/nw/cpu_common.py); False when cancelled."""
        h, w = a.shape[0], b.shape[0]
        self.dev.abort = abort
        if self.dev.cancelled():
            return False
        g = int(scores[2])
        sm2 = np.int32(int(scores[0]) - 2 * g)
        sx2 = np.int32(int(scores[1]) - 2 * g)
        top_w = top.astype(np.int64) - np.arange(w + 1, dtype=np.int64) * g
        left_w = left.astype(np.int64) - np.arange(h + 1, dtype=np.int64) * g
        lo = min(int(top_w.min()), int(left_w.min())) + min(0, int(sm2), int(sx2))
        hi = max(int(top_w.max()), int(left_w.max())) + min(h, w) * max(0, int(sm2), int(sx2))
        if lo < -W_LIMIT or hi > W_LIMIT:
            raise CudaFailure("the scores of this tile do not fit the CUDA kernels' 32-bit "
                              "arithmetic; use shorter inputs, smaller scores or a CPU backend")
        if rec_rows.shape[0] == 0 and self._no_snapshot is None:
            self._no_snapshot = _SnapshotMap(rec_rows, rec_cols, 0, 0, 0, 0, self.dev)
        snaps = (self._no_snapshot if rec_rows.shape[0] == 0
                 else _SnapshotMap(rec_rows, rec_cols, row0, col0, h, w, self.dev))
        run = {"tiled": self._tiled, "per-launch": self._per_launch,
               "diagonal-one-block": self._diagonal_one_block,
               "prefix-one-block": self._prefix_one_block,
               "prefix-multi-block": self._prefix_multi_block}[self.form]
        a_d = self.dev.upload(a, "sequence A")
        b_d = self.dev.upload(b, "sequence B")
        out = run(a_d, b, b_d, h, w, top_w.astype(np.int32), left_w.astype(np.int32), sm2, sx2,
                  snaps)
        if out is None:
            return False
        bottom_w, right_w = out
        bottom[:] = bottom_w.astype(np.int64) + (h + np.arange(w + 1, dtype=np.int64)) * g
        right[:] = right_w.astype(np.int64) + (np.arange(h + 1, dtype=np.int64) + w) * g
        bottom[0] = left[h]
        right[0] = top[w]
        snaps.store(snap, g)
        return True

    # -- scratch ---------------------------------------------------------------------------
    def _buffer(self, name: str, size: int, dtype=np.int32):
        """A device array of at least ``size`` elements, reused between tiles (Hirschberg
        makes hundreds of calls; allocating each time would dominate small ones)."""
        arr = self._scratch.get(name)
        if arr is None or arr.shape[0] < size or arr.dtype != np.dtype(dtype):
            arr = self.dev.empty(max(1, size), dtype, f"the nw scratch '{name}'")
            self._scratch[name] = arr
        return arr

    def _rows_out(self, h: int, w: int):
        return self._buffer("bottom", w + 1), self._buffer("right", h + 1)

    def _fetch(self, bottom_d, right_d, h: int, w: int):
        return self.dev.fetch(bottom_d[:w + 1]), self.dev.fetch(right_d[:h + 1])

    # -- diagonal ------------------------------------------------------------------------------
    def _diagonal_one_block(self, a_d, b, b_d, h, w, top_w, left_w, sm2, sx2, snaps):
        from engine.nw.cuda_diagonal import one_block_kernel

        stride = h + 1
        diags = self._buffer("diags", 3 * stride)
        bottom_d, right_d = self._rows_out(h, w)
        top_d = self.dev.upload(top_w, "the tile's top row")
        left_d = self.dev.upload(left_w, "the tile's left column")
        self.dev.launch(one_block_kernel(snaps.on, self.cap), 1, self.tpb, 0, a_d, b_d, h, w, top_d,
                        left_d, diags, stride, sm2, sx2, bottom_d, right_d, *snaps.args)
        return self._fetch(bottom_d, right_d, h, w)

    def _per_launch(self, a_d, b, b_d, h, w, top_w, left_w, sm2, sx2, snaps):
        from engine.nw.cuda_diagonal import per_launch_kernel

        stride = h + 1
        diags = self._buffer("diags", 3 * stride)
        bottom_d, right_d = self._rows_out(h, w)
        top_d = self.dev.upload(top_w, "the tile's top row")
        left_d = self.dev.upload(left_w, "the tile's left column")
        kernel = per_launch_kernel(snaps.on, self.cap)
        tpb = self.tpb
        for d in range(h + w + 1):
            if d % 1024 == 0 and self.dev.cancelled():
                return None
            cells = min(h, d) - max(0, d - w) + 1
            blocks = self.blocks or -(-cells // tpb)   # the study: a thread for every cell
            self.dev.launch(kernel, blocks, tpb, 0, a_d, b_d, h, w, top_d, left_d, diags, stride, d,
                            sm2, sx2, bottom_d, right_d, *snaps.args)
        return self._fetch(bottom_d, right_d, h, w)

    def _tiled(self, a_d, b, b_d, h, w, top_w, left_w, sm2, sx2, snaps):
        from engine.nw.cuda_diagonal import band_layout, tiled_kernel

        lanes, per_block = band_layout(self.tpb)
        R, K, T = self.rows, self.cols, self.chunk
        nbands = -(-h // (lanes * R))
        groups = -(-nbands // per_block)
        grid = min(groups, self.blocks) if self.blocks else groups
        # b's codes K to a word, with a lane's worth of zero words on each side, so that
        # lanes ahead of or behind the matrix read in bounds without a check.
        steps = -(-w // K)
        b_pad = np.zeros((steps + 2 * lanes) * K, dtype=np.uint8)
        b_pad[lanes * K:lanes * K + w] = b
        b_words = b_pad.view({1: np.uint8, 2: np.uint16, 4: np.uint32}[K])
        bottom_d, right_d = self._rows_out(h, w)
        edge = self._buffer("edge", w + 1)
        status = self.dev.zeros(1, np.int32, "the status flag")
        self.dev.launch(tiled_kernel(R, K, T, lanes, per_block, snaps.on, self.cap), grid,
                        lanes * per_block, 0, a_d, self.dev.upload(b_words, "sequence B"), h, w,
                        self.dev.upload(top_w, "the tile's top row"),
                        self.dev.upload(left_w, "the tile's left column"), edge,
                        self.dev.zeros(nbands, np.int32, "the bands' progress counters"),
                        self.dev.zeros(1, np.int32, "the band ticket"), sm2, sx2, bottom_d,
                        right_d, *snaps.args, self.spin_limit, status)
        if int(self.dev.fetch(status)[0]) != 0:
            raise CudaFailure("a band of the nw tiled kernel waited too long for the band above "
                              "it (blocks not scheduled in order?); the pass was abandoned")
        return self._fetch(bottom_d, right_d, h, w)

    # -- prefix -------------------------------------------------------------------------------
    def _striped(self, w: int, seg: int):
        """Column (0-based, -1 for padding) stored at each position of a striped row: block
        segments of tpb * seg columns, thread t's k-th column at k * tpb + t."""
        key = (w, self.tpb, seg)
        cols = self._stripes.get(key)
        if cols is None:
            sb = self.tpb * seg
            p = np.arange(-(-w // sb) * sb, dtype=np.int64)
            q = p % sb
            cols = (p // sb) * sb + (q % self.tpb) * seg + q // self.tpb
            cols[cols >= w] = -1
            if len(self._stripes) > 16:   # Hirschberg's many widths: keep the map small
                self._stripes.clear()
            self._stripes[key] = cols
        return cols

    def _prefix_rows(self, b, top_w, w, seg):
        """The striped b and top row on the device, and the column map to undo the striping."""
        cols = self._striped(w, seg)
        valid = cols >= 0
        bs = np.zeros(cols.shape[0], dtype=np.uint8)
        bs[valid] = b[cols[valid]]
        prow = np.zeros(cols.shape[0], dtype=np.int32)
        prow[valid] = top_w[cols[valid] + 1]
        return (self.dev.upload(bs, "sequence B (striped)"),
                self.dev.upload(prow, "the tile's top row (striped)"), cols, valid)

    def _unstripe(self, prow_d, cols, valid, top_w, w):
        prow = self.dev.fetch(prow_d)
        bottom_w = np.empty(w + 1, dtype=np.int32)
        bottom_w[0] = top_w[0]   # replaced by the caller (left[h])
        bottom_w[cols[valid] + 1] = prow[valid]
        return bottom_w

    def _prefix_one_block(self, a_d, b, b_d, h, w, top_w, left_w, sm2, sx2, snaps):
        from engine.nw.cuda_prefix import one_block_kernel, shared_bytes

        seg = -(-w // self.tpb)
        bs_d, prow_d, cols, valid = self._prefix_rows(b, top_w, w, seg)
        right_d = self._buffer("right", h + 1)
        left_d = self.dev.upload(left_w, "the tile's left column")
        self.dev.launch(one_block_kernel(snaps.on, self.cap), 1, self.tpb, shared_bytes(self.tpb),
                        a_d, bs_d, h, w, seg, prow_d, left_d, sm2, sx2, right_d, *snaps.args)
        return (self._unstripe(prow_d, cols, valid, top_w, w),
                self.dev.fetch(right_d[:h + 1]))

    def prefix_blocks(self, w: int) -> int:
        """Column segments of the multi-block prefix (the job's block count, or one per SM
        while every thread keeps at least NW_CUDA_PREFIX_MIN_COLUMNS columns)."""
        if self.blocks:
            return self.blocks
        return max(1, min(self.dev.sms, w // (self.tpb * config.NW_CUDA_PREFIX_MIN_COLUMNS)))

    def _prefix_multi_block(self, a_d, b, b_d, h, w, top_w, left_w, sm2, sx2, snaps):
        from engine.nw.cuda_prefix import SENTINEL, fill_kernel, multi_block_kernel, shared_bytes

        seg = -(-w // (self.prefix_blocks(w) * self.tpb))
        nb = -(-w // (self.tpb * seg))
        bs_d, prow_d, cols, valid = self._prefix_rows(b, top_w, w, seg)
        right_d = self._buffer("right", h + 1)
        left_d = self.dev.upload(left_w, "the tile's left column")
        top_d = self.dev.upload(top_w, "the tile's top row")
        budget = self.dev.scratch_budget(config.NW_CUDA_MEMORY_FRACTION)
        rows_per_launch = max(1, min(h, budget // (4 * nb)))
        edge = self._buffer("edges", nb * rows_per_launch)
        kernel = multi_block_kernel(snaps.on, self.cap)
        g0 = 0
        while g0 < h:
            if self.dev.cancelled():
                return None
            g1 = min(h, g0 + rows_per_launch)
            if nb > 1:
                count = nb * (g1 - g0)
                self.dev.launch(fill_kernel(), min(1024, -(-count // 256)), 256, 0, edge,
                                np.int32(SENTINEL))
            ticket = self.dev.zeros(1, np.int32, "the segment ticket")
            self.dev.launch(kernel, nb, self.tpb, shared_bytes(self.tpb), a_d, bs_d, g0, g1, w, seg,
                            prow_d, top_d, left_d, edge, ticket, sm2, sx2, right_d, *snaps.args)
            if g1 < h:
                # The next launch starts from row g1: its top row in column order.
                top_w = self._unstripe(prow_d, cols, valid, top_w, w)
                top_w[0] = left_w[g1]
                top_d = self.dev.upload(top_w, "a band's top row")
            g0 = g1
        return (self._unstripe(prow_d, cols, valid, top_w, w),
                self.dev.fetch(right_d[:h + 1]))


class _SnapshotMap:
    """The snapshot samples inside one tile: slot maps for the kernels and a device image."""

    def __init__(self, rec_rows, rec_cols, row0, col0, h, w, dev):
        self.on = rec_rows.shape[0] > 0
        self.dev = dev
        if not self.on:
            empty = dev.upload(np.full(1, -1, dtype=np.int32), "snapshot slots")
            self.args = (empty, empty, dev.upload(np.zeros((1, 1), np.int32), "snapshot"))
            return
        # Samples strictly inside the tile (rows and columns >= 1 locally), as on the CPU.
        self.r_lo, self.r_hi = np.searchsorted(rec_rows, [row0 + 1, row0 + h + 1])
        self.c_lo, self.c_hi = np.searchsorted(rec_cols, [col0 + 1, col0 + w + 1])
        rows = rec_rows[self.r_lo:self.r_hi] - row0
        cols = rec_cols[self.c_lo:self.c_hi] - col0
        row_slot = np.full(h + 1, -1, dtype=np.int32)
        col_slot = np.full(w + 1, -1, dtype=np.int32)
        row_slot[rows] = np.arange(rows.shape[0], dtype=np.int32)
        col_slot[cols] = np.arange(cols.shape[0], dtype=np.int32)
        self.rows, self.cols = rows, cols
        self.image = dev.upload(np.full((max(1, rows.shape[0]), max(1, cols.shape[0])),
                                        np.iinfo(np.int32).min, dtype=np.int32), "snapshot")
        self.args = (dev.upload(row_slot, "snapshot rows"), dev.upload(col_slot, "snapshot columns"),
                     self.image)

    def store(self, snap, g: int) -> None:
        """Write the recorded samples (H - offset, the dtype of ``snap``) into the snapshot."""
        if not self.on or self.rows.shape[0] == 0 or self.cols.shape[0] == 0:
            return
        image = self.dev.fetch(self.image)[:self.rows.shape[0], :self.cols.shape[0]]
        done = image != np.iinfo(np.int32).min
        values = image.astype(np.int64) + (self.rows[:, None] + self.cols[None, :]) * g
        block = snap[self.r_lo:self.r_hi, self.c_lo:self.c_hi]
        block[done] = values[done].astype(snap.dtype)
