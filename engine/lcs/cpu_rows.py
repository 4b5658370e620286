"""lcs ``rows``: the row-by-row DP of the seed study, on the tile grid.

Inside a tile each row is swept left to right; L[I, J] = L[I-1, J-1] + 1 on a
match (sets intersect), else max(L[I-1, J], L[I, J-1]). Serial runs whole
bands (one chunk spans every column), so it is the textbook one-row sweep;
multicore runs the tiles of each tile anti-diagonal in parallel.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from engine.lcs.cpu_common import (BITS, SNAPSHOT, bits_values, last_row_values,
                                   prepare_values, store_sample, tiles_on_diagonal)

VARIANT = "rows"


def _build_tile(record_bits: bool, snapshots: bool):
    @njit(nogil=True, cache=True)
    def tile(s, c, st):
        a, b, _brev, row, left, h, cw, bits, image, row_map, col_map, _rows, shift = st
        m, n = a.shape[0], b.shape[0]
        i0 = s * h
        i1 = min(m, i0 + h)
        j0 = c * cw
        j1 = min(n, j0 + cw)
        lf = left[s]
        diag_in = lf[0]          # L[i0, j0]
        lf[0] = row[j1 - 1]      # L[i0, j1]: the corner of the next tile to the right
        # Zero-based views: numba then drops its negative-index wraparound checks.
        rv = row[j0:j1]
        bv = b[j0:j1]
        for r in range(i1 - i0):
            I = i0 + r + 1
            x = a[I - 1]
            lin = lf[r + 1]      # L[I, j0]
            diag = diag_in
            v = lin
            if record_bits:
                bw = bits[(I - 1) >> 6, j0 + 1:j1 + 1]
                shift_i = np.uint64((I - 1) & 63)
            for q in range(rv.shape[0]):
                up = rv[q]
                if x & bv[q]:
                    nv = diag + 1
                else:
                    nv = up if up > v else v
                rv[q] = nv
                diag = up
                v = nv
                if record_bits:
                    bw[q] |= np.uint64(nv == up) << shift_i
            lf[r + 1] = v        # L[I, j1]
            diag_in = lin
            if snapshots:
                ir = row_map[I]
                if ir >= 0:
                    for j in range(j0, j1):
                        jc = col_map[j + 1]
                        if jc >= 0:
                            store_sample(image, row[j], ir, jc, shift)

    return tile


_PLAIN_TILE = _build_tile(False, False)
_BITS_TILE = _build_tile(True, False)
_SNAPSHOT_TILE = _build_tile(False, True)


@njit(nogil=True, cache=True)
def run_tile(mode, s, c, st):
    if mode == BITS:
        _BITS_TILE(s, c, st)
    elif mode == SNAPSHOT:
        _SNAPSHOT_TILE(s, c, st)
    else:
        _PLAIN_TILE(s, c, st)


# The two drivers live beside their tile kernel on purpose: numba's cache cannot
# key a closure over another dispatcher, and a driver cached in another file would
# not notice an edit here.
@njit(nogil=True, cache=True)
def sweep_serial(mode, d0, d1, nbands, nchunks, st, abort):
    """Bands d0..d1-1 (one chunk); returns the next band, < d1 when aborted."""
    for d in range(d0, d1):
        if abort[0] != 0:
            return d
        run_tile(mode, d, 0, st)
    return d1


@njit(nogil=True, cache=True, parallel=True)
def sweep_multicore(mode, d0, d1, nbands, nchunks, st, abort):
    """Tile anti-diagonals d0..d1-1, the tiles of each in parallel."""
    for d in range(d0, d1):
        if abort[0] != 0:
            return d
        s_lo, count = tiles_on_diagonal(d, nbands, nchunks)
        if count == 1:  # the pipeline's fill and drain: no fork/join for one tile
            run_tile(mode, s_lo, d - s_lo, st)
            continue
        for k in prange(count):
            run_tile(mode, s_lo + k, d - s_lo - k, st)
    return d1


prepare = prepare_values
last_row = last_row_values
bits = bits_values
