"""nw ``diagonal``: anti-diagonals, whose cells do not depend on each other.

Diagonal d holds the cells (i, d-i). Three buffers indexed by the row i keep
diagonals d-2, d-1 and d; ``b`` is read reversed so that both sequences are
read forwards along a diagonal. The loop over a diagonal has no dependency,
and each sum is cast back to the value type before the maximum, so LLVM emits
SIMD code on 16-bit lanes when the scores allow int16 (numba would otherwise
widen every sum to 64 bits). Multicore runs these tiles on the tile wavefront
(:mod:`engine.nw.cpu_wavefront`), so threads meet once per tile anti-diagonal,
not once per cell anti-diagonal.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from engine.nw.cpu_common import U1, sample_span


@njit(nogil=True, cache=True)
def _diagonal_cells(cur, prev, pprev, a, brev, i_lo, count, b_off, match, mismatch, gap):
    """Cells i_lo .. i_lo+count-1 of one diagonal; b[j-1] is brev[b_off + k]."""
    cast = cur.dtype.type
    base = np.uint64(i_lo)
    boff = np.uint64(b_off)
    for k in range(np.uint64(count)):
        i = base + k
        s = match if (a[i - U1] & brev[boff + k]) != 0 else mismatch
        v = cast(pprev[i - U1] + s)
        u = cast(max(prev[i - U1], prev[i]) + gap)
        cur[i] = max(v, u)


@njit(nogil=True, cache=True)
def diagonal_tile(a, b, top, left, bottom, right, match, mismatch, gap,
                  rec_rows, rec_cols, snap, row0, col0, abort):
    """One tile by anti-diagonals (the contract is in :mod:`engine.nw.cpu_common`).

    False when aborted.
    """
    h = a.shape[0]
    w = b.shape[0]
    brev = b[::-1].copy()
    pprev = np.empty(h + 1, dtype=top.dtype)
    prev = np.empty(h + 1, dtype=top.dtype)
    cur = np.empty(h + 1, dtype=top.dtype)
    # Sampled rows of this tile; each keeps a pointer to its next sampled column
    # (column j of row i is on diagonal i + j, so columns come in order).
    r_lo, r_hi = sample_span(rec_rows, row0 + 1, row0 + h + 1)
    c_lo, c_hi = sample_span(rec_cols, col0 + 1, col0 + w + 1)
    nxt = np.full(max(0, r_hi - r_lo), c_lo, dtype=np.int64)
    live_lo = r_lo
    for d in range(h + w + 1):
        if (d & 255) == 0 and abort[0] != 0:
            return False
        if d <= w:
            cur[0] = top[d]
        if d <= h:
            cur[d] = left[d]
        i_lo = max(1, d - w)
        i_hi = min(h, d - 1)
        if i_hi >= i_lo:
            _diagonal_cells(cur, prev, pprev, a, brev, i_lo, i_hi - i_lo + 1, w - d + i_lo,
                            match, mismatch, gap)
        if d >= h:
            bottom[d - h] = cur[h]
        if d >= w:
            right[d - w] = cur[d - w]
        p = live_lo
        while p < r_hi and rec_rows[p] - row0 <= d:
            q = nxt[p - r_lo]
            if q < c_hi:
                i = rec_rows[p] - row0
                if rec_cols[q] - col0 == d - i:
                    snap[p, q] = cur[i]
                    nxt[p - r_lo] = q + 1
            elif p == live_lo:
                live_lo += 1
            p += 1
        pprev, prev, cur = prev, cur, pprev
    return True
