"""The tile wavefront: multicore form of the ``rows`` and ``diagonal`` variants.

The matrix is cut into tiles; tile (r, c) needs only the bottom row of tile
(r-1, c) and the right column of tile (r, c-1), so the tiles of one tile
anti-diagonal run in parallel (prange) and threads meet once per tile
anti-diagonal. Each tile runs the variant's own tile kernel. Edges travel in
two buffer sets: tiles of step t read set t % 2 and write set (t+1) % 2, so no
tile reads an edge that a tile of the same step is writing.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from engine.nw.cpu_diagonal import diagonal_tile
from engine.nw.cpu_rows import rows_tile

#: Variant codes understood by :func:`wavefront`.
ROWS, DIAGONAL = 0, 1


@njit(nogil=True, cache=True, parallel=True)
def wavefront(kind, a, b, top, left, bottom, right, match, mismatch, gap,
              rec_rows, rec_cols, snap, row0, col0, abort, tile_h, tile_w):
    """One tile of the contract in :mod:`engine.nw.cpu_common`, computed as a grid of
    ``tile_h`` x ``tile_w`` tiles by the ``kind`` kernel. False when aborted."""
    h = a.shape[0]
    w = b.shape[0]
    nr = max(1, (h + tile_h - 1) // tile_h)
    nc = max(1, (w + tile_w - 1) // tile_w)
    th = min(tile_h, h)
    tw = min(tile_w, w)
    dt = top.dtype
    hedge = np.empty((2, nc, tw + 1), dtype=dt)   # bottom rows, per tile column
    vedge = np.empty((2, nr, th + 1), dtype=dt)   # right columns, per tile row
    for c in range(nc):
        j0 = c * tw
        wc = min(tw, w - j0)
        for p in range(2):
            hedge[p, c, :wc + 1] = top[j0:j0 + wc + 1]
    for r in range(nr):
        i0 = r * th
        hr = min(th, h - i0)
        for p in range(2):
            vedge[p, r, :hr + 1] = left[i0:i0 + hr + 1]
    ok = np.ones(nr, dtype=np.bool_)
    for t in range(nr + nc - 1):
        if abort[0] != 0:
            return False
        r_lo = max(0, t - nc + 1)
        r_hi = min(nr - 1, t)
        src = t % 2
        dst = 1 - src
        for r in prange(r_lo, r_hi + 1):
            c = t - r
            i0 = r * th
            j0 = c * tw
            hr = min(th, h - i0)
            wc = min(tw, w - j0)
            ta = a[i0:i0 + hr]
            tb = b[j0:j0 + wc]
            tt = hedge[src, c, :wc + 1]
            tl = vedge[src, r, :hr + 1]
            tbot = hedge[dst, c, :wc + 1]
            trig = vedge[dst, r, :hr + 1]
            if kind == ROWS:
                done = rows_tile(ta, tb, tt, tl, tbot, trig, match, mismatch, gap,
                                 rec_rows, rec_cols, snap, row0 + i0, col0 + j0, abort)
            else:
                done = diagonal_tile(ta, tb, tt, tl, tbot, trig, match, mismatch, gap,
                                     rec_rows, rec_cols, snap, row0 + i0, col0 + j0, abort)
            if not done:
                ok[r] = False
        for r in range(r_lo, r_hi + 1):
            if not ok[r]:
                return False
    # The last tile row and tile column hold the outputs; tile (r, c) wrote set (r+c+1) % 2.
    bottom[0] = left[h]
    for c in range(nc):
        j0 = c * tw
        wc = min(tw, w - j0)
        p = (nr - 1 + c + 1) % 2
        bottom[j0 + 1:j0 + wc + 1] = hedge[p, c, 1:wc + 1]
    right[0] = top[w]
    for r in range(nr):
        i0 = r * th
        hr = min(th, h - i0)
        p = (r + nc - 1 + 1) % 2
        right[i0 + 1:i0 + hr + 1] = vedge[p, r, 1:hr + 1]
    return True
