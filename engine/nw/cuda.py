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

import functools

import numpy as np

from engine import config, gpu
from engine.gpu import CudaFailure, register_cap
from engine.nw.cuda_options import W_LIMIT, form_of
from engine.nw.scoring import Scores, value_type

class CudaKernels:
    """One job's form on the GPU behind the tile contract (``value_type``, ``first_rows``,
    ``tile``)."""

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
            from engine.nw.cuda_diagonal import STEP_COLUMNS

            lanes = gpu.band_layout(self.tpb)[0]
            if self.cols not in STEP_COLUMNS:
                raise CudaFailure(f"NW_CUDA_TILED_COLUMNS must be one of {STEP_COLUMNS}, "
                                  f"got {self.cols}")
            if self.chunk < lanes or self.chunk % lanes or self.chunk % self.cols:
                raise CudaFailure(f"the tiled form needs NW_CUDA_TILED_CHUNK ({self.chunk}) to be "
                                  f"a multiple of the lanes of a band ({lanes}) and of "
                                  f"NW_CUDA_TILED_COLUMNS ({self.cols})")
        self._scratch: dict[str, object] = {}
        self._no_snapshot = None
        self._epoch = 1
        # Kept for the job: every tile of a sweep has the same widths (Hirschberg's many
        # widths stay within the caches' sizes).
        self._ramp = functools.lru_cache(maxsize=8)(_ramp)
        self._striped = functools.lru_cache(maxsize=16)(functools.partial(_striped, self.tpb))

    # -- what the driver asks -----------------------------------------------------------
    def value_type(self, m: int, n: int, sc: Scores):
        """(dtype, offset) of the host rows; the device holds W in int32 (checked per tile)."""
        return value_type(m, n, sc)

    def first_rows(self, m: int, n: int) -> int:
        """Rows of a sweep's first band (also its smallest; see NW_CUDA_FIRST_SLICE_CELLS)."""
        n = max(1, n)
        rows = max(1, config.NW_CUDA_FIRST_SLICE_CELLS[self.form] // n)
        return max(rows, n) if self.form in ("per-launch", "diagonal-one-block") else rows

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
        ramp_w, ramp_h = self._ramp(w, g), self._ramp(h, g)
        top_w = top - ramp_w      # (int64: the ramps are)
        left_w = left - ramp_h
        lo = min(int(top_w.min()), int(left_w.min())) + min(0, int(sm2), int(sx2))
        hi = max(int(top_w.max()), int(left_w.max())) + min(h, w) * max(0, int(sm2), int(sx2))
        if lo < -W_LIMIT or hi > W_LIMIT:
            raise CudaFailure("the scores of this tile do not fit the CUDA kernels' 32-bit "
                              "arithmetic; use shorter inputs, smaller scores or a CPU backend")
        if rec_rows.shape[0] == 0 and self._no_snapshot is None:
            self._no_snapshot = _SnapshotMap(rec_rows, rec_cols, 0, 0, 0, 0, self.dev)
        snaps = (self._no_snapshot if rec_rows.shape[0] == 0
                 else _SnapshotMap(rec_rows, rec_cols, row0, col0, h, w, self.dev))
        if self.form == "tiled":  # (it uploads its inputs in one transfer)
            out = self._tiled(a, b, h, w, top_w, left_w, sm2, sx2, snaps)
        else:
            top_w, left_w = top_w.astype(np.int32), left_w.astype(np.int32)
            run = {"per-launch": self._per_launch, "diagonal-one-block": self._diagonal_one_block,
                   "prefix-one-block": self._prefix_one_block,
                   "prefix-multi-block": self._prefix_multi_block}[self.form]
            out = run(self.dev.upload(a, "sequence A"), b, self.dev.upload(b, "sequence B"), h, w,
                      top_w, left_w, sm2, sx2, snaps)
        if out is None:
            return False
        bottom_w, right_w = out
        np.add(bottom_w, ramp_w + h * g, out=bottom, casting="unsafe")
        np.add(right_w, ramp_h + w * g, out=right, casting="unsafe")
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

    def _tiled_scratch(self, h: int, w: int, nbands: int):
        """What the tiled kernel writes, in one allocation kept between tiles: the ticket and
        status flag, the two rows through which bands hand their bottom rows down, and the
        right column, laid out as [counters | ring row 0 | right | ring row 1] so that one
        copy brings back the status, the bottom row (the last band's, always row 0) and the
        right column. Returns (buffer, counters, ring, ring stride, right, where right
        starts in the buffer, tag of this launch's first band). Tags only grow and the
        buffer is zeroed when it is made (tag 0), so values that an earlier launch left
        never pass for this one's."""
        have = self._scratch.get("tiled")
        if (have is None or have[0] < h or have[1] < w or self._epoch + nbands >= 2 ** 31):
            if have is None or have[0] < h or have[1] < w:
                cap_h, cap_w = (h, w) if have is None else (max(h, have[0]), max(w, have[1]))
                size = 16 + 16 * (cap_w + 1) + 16 * -(-(cap_h + 1) // 4)
                have = (cap_h, cap_w, self.dev.empty(size, np.uint8, "the tiled kernel's rows"))
                self._scratch["tiled"] = have
            self.dev.clear(have[2], "clearing the tiled kernel's rows")
            self._epoch = 1
        cap_h, cap_w, buf = have
        row = 8 * (cap_w + 1)
        right_at = 16 + row
        ring = buf[16:].view(np.int64)
        stride = (row + 16 * -(-(cap_h + 1) // 4)) // 8
        right = buf[right_at:right_at + 4 * (h + 1)].view(np.int32)
        epoch = self._epoch
        self._epoch += nbands
        return buf, buf[:16].view(np.int32), ring, stride, right, right_at, epoch

    def _diagonal_buffers(self, h: int, w: int, top_w, left_w):
        """What both anti-diagonal forms start from: scratch for three anti-diagonals
        (``stride`` apart), the output rows and the boundary on the device."""
        stride = h + 1
        diags = self._buffer("diags", 3 * stride)
        bottom_d, right_d = self._buffer("bottom", w + 1), self._buffer("right", h + 1)
        top_d = self.dev.upload(top_w, "the tile's top row")
        left_d = self.dev.upload(left_w, "the tile's left column")
        return stride, diags, bottom_d, right_d, top_d, left_d

    def _fetch(self, bottom_d, right_d, h: int, w: int):
        return self.dev.fetch(bottom_d[:w + 1]), self.dev.fetch(right_d[:h + 1])

    # -- diagonal ------------------------------------------------------------------------------
    def _diagonal_one_block(self, a_d, b, b_d, h, w, top_w, left_w, sm2, sx2, snaps):
        from engine.nw.cuda_diagonal import one_block_kernel

        stride, diags, bottom_d, right_d, top_d, left_d = self._diagonal_buffers(h, w, top_w, left_w)
        self.dev.launch(one_block_kernel(snaps.on, self.cap), 1, self.tpb, 0, a_d, b_d, h, w, top_d,
                        left_d, diags, stride, sm2, sx2, bottom_d, right_d, *snaps.args)
        return self._fetch(bottom_d, right_d, h, w)

    def _per_launch(self, a_d, b, b_d, h, w, top_w, left_w, sm2, sx2, snaps):
        from engine.nw.cuda_diagonal import per_launch_kernel

        stride, diags, bottom_d, right_d, top_d, left_d = self._diagonal_buffers(h, w, top_w, left_w)
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

    def _tiled(self, a, b, h, w, top_w, left_w, sm2, sx2, snaps):
        from engine.nw.cuda_diagonal import BIAS, tiled_kernel

        lanes, per_block = gpu.band_layout(self.tpb)
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
        a_d, b_d, top_d, left_d = self.dev.upload_many(
            "the tile's sequences and boundary", a, b_words, (top_w, np.int32),
            (left_w, np.int32), keep=self._scratch)
        buf, counters, ring, stride, right_d, right_at, epoch = self._tiled_scratch(h, w, nbands)
        self.dev.clear(counters, "clearing the band ticket")
        self.dev.launch(tiled_kernel(R, K, T, lanes, per_block, snaps.on, self.cap), grid,
                        lanes * per_block, 0, a_d, b_d, h, w, top_d, left_d, ring, stride,
                        np.int64(epoch), counters[0:1], sm2, sx2, right_d, *snaps.args,
                        self.spin_limit, counters[1:2])
        back = self.dev.fetch(buf[:right_at + 4 * (h + 1)])
        if int(back[:16].view(np.int32)[1]) != 0:
            raise CudaFailure("a band of the nw tiled kernel waited too long for the band above "
                              "it (blocks not scheduled in order?); the pass was abandoned")
        # The bottom row, stamped (engine/nw/cuda_diagonal.py): W + BIAS in the low 32 bits.
        stamped = back[16:16 + 8 * (w + 1)].view(np.int64)
        return (stamped & 0xFFFFFFFF) - BIAS, back[right_at:].view(np.int32)

    # -- prefix -------------------------------------------------------------------------------
    def _prefix_rows(self, b, top_w, left_w, h, w, seg):
        """What both prefix forms start from: the striped b and top row on the device, the
        column map to undo the striping, the right column's buffer and the left column."""
        cols = self._striped(w, seg)
        valid = cols >= 0
        bs = np.zeros(cols.shape[0], dtype=np.uint8)
        bs[valid] = b[cols[valid]]
        prow = np.zeros(cols.shape[0], dtype=np.int32)
        prow[valid] = top_w[cols[valid] + 1]
        return (self.dev.upload(bs, "sequence B (striped)"),
                self.dev.upload(prow, "the tile's top row (striped)"), cols, valid,
                self._buffer("right", h + 1), self.dev.upload(left_w, "the tile's left column"))

    def _unstripe(self, prow_d, cols, valid, top_w, w):
        prow = self.dev.fetch(prow_d)
        bottom_w = np.empty(w + 1, dtype=np.int32)
        bottom_w[0] = top_w[0]   # replaced by the caller (left[h])
        bottom_w[cols[valid] + 1] = prow[valid]
        return bottom_w

    def _prefix_one_block(self, a_d, b, b_d, h, w, top_w, left_w, sm2, sx2, snaps):
        from engine.nw.cuda_prefix import one_block_kernel, shared_bytes

        seg = -(-w // self.tpb)
        bs_d, prow_d, cols, valid, right_d, left_d = self._prefix_rows(b, top_w, left_w, h, w, seg)
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
        bs_d, prow_d, cols, valid, right_d, left_d = self._prefix_rows(b, top_w, left_w, h, w, seg)
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


def _ramp(n: int, g: int) -> np.ndarray:
    """(0, 1, .., n) * g in int64."""
    return np.arange(n + 1, dtype=np.int64) * g


def _striped(tpb: int, w: int, seg: int) -> np.ndarray:
    """Column (0-based, -1 for padding) stored at each position of a striped row: block
    segments of tpb * seg columns, thread t's k-th column at k * tpb + t."""
    sb = tpb * seg
    p = np.arange(-(-w // sb) * sb, dtype=np.int64)
    q = p % sb
    cols = (p // sb) * sb + (q % tpb) * seg + q // tpb
    cols[cols >= w] = -1
    return cols


class _SnapshotMap:
    """The snapshot samples inside one tile: slot maps for the kernels and a device image."""

    def __init__(self, rec_rows, rec_cols, row0, col0, h, w, dev):
        self.on = rec_rows.shape[0] > 0
        self.dev = dev
        if not self.on:
            empty, image = dev.upload_many("snapshot slots", np.full(1, -1, dtype=np.int32),
                                           np.zeros((1, 1), np.int32))
            self.args = (empty, empty, image)
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
