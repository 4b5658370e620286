"""nw ``diagonal`` on CUDA: the study's anti-diagonal kernels and the tiled wavefront.

Every nw kernel works on W[i][j] = H[i][j] - (i + j) * gap (tile-local i, j). With
linear gaps the recurrence then loses its additions but one:

    W[i][j] = max(W[i-1][j], W[i][j-1], W[i-1][j-1] + s(a_i, b_j) - 2 * gap)

so a cell is one selection, one addition and two maxima; W never decreases along a
row or a column. engine/nw/cuda.py converts boundaries and results and checks that
every value fits int32.

Forms (Dicker et al., sec. 2.1; the tiled one is ours):

- **one-block**: one block walks the anti-diagonals d = i + j of the tile, its threads
  striding over the cells of each; three anti-diagonals live in global memory and a
  barrier separates consecutive ones.
- **per-launch** (multi-block): the same cells, one launch per anti-diagonal with a
  grid-stride loop, so every SM helps; the launch boundary is the barrier.
- **tiled** (multi-block): a block owns a band of tpb * R rows (R rows per thread, held
  in registers) and sweeps it by anti-diagonals: thread t handles column s - t + 1 at
  step s, taking the cell above its first row from thread t-1 through shared memory.
  Bands are tiles of a persistent launch: a block takes the next band by ticket and
  waits for the band above chunk by chunk (its bottom row goes through global memory,
  its progress through an atomic counter), so tiles are processed along tile
  anti-diagonals and all bands in flight run at once. A block only ever waits for a
  band with an earlier ticket, which is running or done, so the wait cannot deadlock
  (numba's simulator, which runs blocks one after another, included).

The helpers that call ``cuda.*`` live here beside the kernels: the simulator swaps its
fake ``cuda`` module into the launched kernel's module only.
"""

from __future__ import annotations

from functools import lru_cache

from numba import cuda, int32, uint8
from numba import uint64 as U  # unsigned indices: numba then skips the negative-index wraparound

from engine.gpu import imax, imin, kernel_jit


@cuda.jit(device=True, inline=True)
def diagonal_cells(d, first, step, a, b, h, w, top, left, diags, stride, sm2, sx2, bottom, right,
                   row_slot, col_slot, snap, snap_on):
    """Cells (i, d - i) for i = lo + first, lo + first + step, ... of anti-diagonal d.

    ``diags`` holds three anti-diagonals (indexed by i, ``stride`` apart), d at d % 3;
    boundary cells are copied from ``top``/``left`` so that the next two diagonals find
    them. Cells on the last row and column also go to ``bottom`` and ``right``.
    """
    cur = (d % 3) * stride
    p1 = ((d + 2) % 3) * stride
    p2 = ((d + 1) % 3) * stride
    i = imax(0, d - w) + first
    hi = imin(h, d)
    while i <= hi:
        j = d - i
        if i == 0:
            v = top[j]
        elif j == 0:
            v = left[i]
        else:
            s = sm2 if (a[U(i - 1)] & b[U(j - 1)]) != 0 else sx2
            v = imax(int32(diags[U(p2 + i - 1)] + s), imax(diags[U(p1 + i - 1)], diags[U(p1 + i)]))
        diags[U(cur + i)] = v
        if i == h:
            bottom[j] = v
        if j == w:
            right[i] = v
        if snap_on:
            rs = row_slot[i]
            if rs >= 0:
                cs = col_slot[j]
                if cs >= 0:
                    snap[rs, cs] = v
        i += step


@lru_cache(maxsize=None)
def one_block_kernel(snap_on: bool, registers: int = 255):
    """The whole tile in one block, one anti-diagonal after another."""
    SNAP, CAP = snap_on, registers

    @kernel_jit(registers)
    def kernel(a, b, h, w, top, left, diags, stride, sm2, sx2, bottom, right, row_slot, col_slot,
               snap):
        # CAP is never 0: naming it puts the register cap in the kernel's closure, which
        # numba's disk cache keys on (it ignores max_registers).
        if CAP == 0:
            return
        t = cuda.threadIdx.x
        tpb = cuda.blockDim.x
        for d in range(h + w + 1):
            diagonal_cells(d, t, tpb, a, b, h, w, top, left, diags, stride, sm2, sx2, bottom, right,
                           row_slot, col_slot, snap, SNAP)
            cuda.syncthreads()

    return kernel


@lru_cache(maxsize=None)
def per_launch_kernel(snap_on: bool, registers: int = 255):
    """Anti-diagonal d of the tile over the whole grid (one launch per anti-diagonal)."""
    SNAP, CAP = snap_on, registers

    @kernel_jit(registers)
    def kernel(a, b, h, w, top, left, diags, stride, d, sm2, sx2, bottom, right, row_slot, col_slot,
               snap):
        if CAP == 0:
            return
        diagonal_cells(d, cuda.grid(1), cuda.gridsize(1), a, b, h, w, top, left, diags, stride,
                       sm2, sx2, bottom, right, row_slot, col_slot, snap, SNAP)

    return kernel


def tiled_layout(tpb: int, cols: int, chunk: int) -> tuple[int, int]:
    """(size of the b ring, dynamic shared bytes) of the tiled kernel: the exchange pairs,
    the staged cells above thread 0, the band's bottom row (two chunks), the block's band
    number and, in bytes, the b ring, which holds every column a thread of the block may
    still read (a power of two). (No static shared arrays: numba's simulator allocates those per
    thread without a lock, so two simulated threads could get different ones.)"""
    ring = 1
    while ring < chunk + tpb * cols:
        ring *= 2
    return ring, 4 * (2 * cols * tpb + 3 * chunk + 1) + ring


@cuda.jit(device=True, inline=True)
def flush_bottom(dyn, o_out, C, t, tpb, lo, hi, last_band, bottom, bufs, out, progress, k):
    """Copy the band's bottom row, columns lo+1..hi, from shared memory to the next band's
    buffer (or to ``bottom``) and publish it; every thread of the block calls it."""
    for x in range(t, hi - lo, tpb):
        col = lo + x + 1
        val = dyn[U(o_out + (((col - 1) // C) & 1) * C + (col - 1) % C)]
        if last_band:
            bottom[U(col)] = val
        else:
            bufs[U(out + col - 1)] = val
    if not last_band:
        cuda.threadfence()      # each writer's part reaches L2 before the count says so
        cuda.syncthreads()
        if t == 0:
            cuda.atomic.max(progress, k, hi)


@lru_cache(maxsize=None)
def tiled_kernel(rows: int, cols: int, chunk: int, snap_on: bool, registers: int = 255):
    """The tiled wavefront: ``rows`` rows per thread, ``cols`` columns per step, bands
    handing over ``chunk`` columns at a time (compile-time constants, so a thread's
    rows x cols cells stay in registers and the unrolled columns overlap)."""
    R, K, C, SNAP, CAP = rows, cols, chunk, snap_on, registers
    CS = C // K          # steps per chunk (the host checks that K divides C)

    @kernel_jit(registers)
    def kernel(a, b, w, g0, g1, top, left, bufs, stride, progress, ticket, sm2, sx2, bottom, right,
               row_slot, col_slot, snap, ring):
        """Rows g0+1..g1 of the tile: ``top`` is W on row g0, ``bottom`` gets W on row g1.

        Band k (rows g0 + k*tpb*R + 1 ...) leaves its bottom row in bufs[k*stride ...] and
        the number of its columns there in progress[k]; ``ticket`` hands out bands. At
        step s thread t computes columns (s-t)*K + 1 .. (s-t)*K + K of its R rows; per
        step it touches only registers and shared memory (global memory once per chunk).
        """
        if CAP == 0:
            return
        t = cuda.threadIdx.x
        tpb = cuda.blockDim.x
        # Shared int32: exchange [2 parities][K][tpb] | cells above thread 0's chunk [C] |
        # the band's bottom row [2][C] | this block's band [1]; then bytes: b codes, column
        # j at (j - 1) & (ring - 1) [ring]. (Dynamic shared arrays all start at the same
        # address, so dyn8 is a byte view of the same memory.)
        dyn = cuda.shared.array(0, int32)
        dyn8 = cuda.shared.array(0, uint8)
        o_stage = 2 * K * tpb
        o_out = o_stage + C
        o_box = U(o_out + 2 * C)
        o_ring = 4 * (o_out + 2 * C + 1)
        mask = ring - 1
        ac = cuda.local.array(R, int32)    # a's codes of the thread's rows
        v = cuda.local.array(R, int32)     # W of the thread's rows in the last column done
        rslot = cuda.local.array(R, int32)
        hb = tpb * R
        nbands = (g1 - g0 + hb - 1) // hb
        while True:
            if t == 0:
                dyn[o_box] = cuda.atomic.add(ticket, 0, 1)
            cuda.syncthreads()
            k = dyn[o_box]
            cuda.syncthreads()
            if k >= nbands:
                return
            base = g0 + k * hb
            end = imin(g1, base + hb)
            tl = (end - base - 1) // R        # the last thread with rows: it holds the band's bottom
            r0 = base + t * R                 # the row above the thread's first row
            rv = imax(0, imin(R, end - r0))   # rows of this thread
            snap_any = False
            for q in range(R):
                i = r0 + q + 1
                if q < rv:
                    ac[q] = int32(a[U(i - 1)])
                    v[q] = left[i]
                    if SNAP:
                        rslot[q] = row_slot[i]
                        if rslot[q] >= 0:
                            snap_any = True
                else:
                    ac[q] = 0
                    v[q] = 0
                    rslot[q] = -1
            dprev = left[imin(r0, g1)]        # W[r0][0]: the diagonal of row r0+1, column 1
            last_band = k == nbands - 1
            out = k * stride
            src = (k - 1) * stride if k > 0 else 0
            known = 0                         # columns of the band above seen published
            flushed = 0                       # columns of this band's bottom row flushed
            cpos = 0                          # thread 0's step within its chunk
            for s in range((w + K - 1) // K + tl):
                if cpos == 0 and s * K < w:
                    # Thread 0 starts columns s*K+1 .. s*K+C: stage the cells above them
                    # and their b codes.
                    c0 = s * K
                    if k > 0:
                        if t == 0:
                            need = imin(w, c0 + C)
                            while known < need:
                                known = cuda.atomic.max(progress, k - 1, 0)
                        cuda.syncthreads()
                    for x in range(t, C, tpb):
                        col = c0 + x + 1
                        code = uint8(0)       # past the end: matches nothing, never output
                        if col <= w:
                            code = b[U(col - 1)]
                            if k == 0:
                                dyn[U(o_stage + x)] = top[U(col)]
                            else:
                                dyn[U(o_stage + x)] = bufs[U(src + col - 1)]
                        dyn8[U(o_ring + ((col - 1) & mask))] = code
                    cuda.syncthreads()
                done = imin(w, imax(0, (s - tl) * K))   # bottom-row columns before this step
                if done - flushed >= C:
                    flush_bottom(dyn, o_out, C, t, tpb, flushed, flushed + C, last_band, bottom,
                                 bufs, out, progress, k)
                    flushed += C
                jb = (s - t) * K
                if rv > 0 and jb >= 0 and jb < w:
                    exr = U(((s - 1) & 1) * K * tpb + imax(t, 1) - 1)   # unused by thread 0
                    exw = U((s & 1) * K * tpb + t)
                    for kk in range(K):
                        j = jb + kk + 1
                        if t == 0:
                            up = dyn[U(o_stage + cpos * K + kk)]
                        else:
                            up = dyn[exr + U(kk * tpb)]
                        bj = int32(dyn8[U(o_ring + ((j - 1) & mask))])
                        d = dprev
                        dprev = up
                        for q in range(R):
                            lft = v[q]
                            x = int32(d + (sm2 if (ac[q] & bj) != 0 else sx2))
                            up = imax(up, imax(lft, x))
                            v[q] = up
                            d = lft
                        last = up
                        if rv < R:            # the band's last thread may hold fewer rows
                            for q in range(R):
                                if q == rv - 1:
                                    last = v[q]
                        dyn[exw + U(kk * tpb)] = last
                        if t == tl:
                            dyn[U(o_out + (((j - 1) // C) & 1) * C + (j - 1) % C)] = last
                        if j == w:
                            for q in range(R):
                                if q < rv:
                                    right[U(r0 + q + 1)] = v[q]
                        if SNAP and snap_any and j <= w:
                            cs = col_slot[U(j)]
                            if cs >= 0:
                                for q in range(R):
                                    if rslot[q] >= 0:
                                        snap[rslot[q], cs] = v[q]
                cpos += 1
                if cpos == CS:
                    cpos = 0
                cuda.syncthreads()
            if flushed < w:
                flush_bottom(dyn, o_out, C, t, tpb, flushed, w, last_band, bottom, bufs, out,
                             progress, k)
            cuda.syncthreads()

    return kernel
