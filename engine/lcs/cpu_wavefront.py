"""lcs ``wavefront``: anti-diagonals, as in the seed study (Dhraief et al.).

The cells of one anti-diagonal do not depend on each other. Inside a tile the
anti-diagonals are swept one after another and the cells of each form a
dependency-free loop (three diagonal buffers, ``b`` read reversed so that both
sequences are read forwards), which the compiler turns into SIMD code. On
multicore the anti-diagonals of tiles run their tiles in parallel, so threads
meet once per tile anti-diagonal instead of once per cell anti-diagonal.

Buffer index k = r + 1 for tile row r; index 0 is the row above the tile and
the left column enters at k = t + 2 on diagonal t.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from engine.lcs.cpu_common import (BITS, SNAPSHOT, bits_values, last_row_values,
                                   prepare_values, store_sample, tiles_on_diagonal)

VARIANT = "wavefront"


@njit(nogil=True, cache=True)
def _diagonal(count, av, bv, ups, lefts, diags, out):
    """The cells of one anti-diagonal: no dependencies, a branch-free SIMD loop.

    Kept out of line on purpose: inlined into the tile, LLVM did not vectorise it
    (about 3x slower)."""
    for q in range(count):
        best = max(ups[q], lefts[q])
        hit = np.int32((av[q] & bv[q]) != 0)
        out[q] = best + hit * (diags[q] + 1 - best)


@njit(nogil=True, cache=True)
def _diagonal_bits(k_lo, k_hi, i0, jk, d0, d1, bits):
    """Traceback bits of one anti-diagonal: cell k is (I, J) = (i0 + k, jk - k)."""
    k = k_lo
    while k <= k_hi:
        # Cells that share a word row of ``bits`` (64 consecutive matrix rows).
        word = (i0 + k - 1) >> 6
        k_end = min(k_hi, 64 * (word + 1) - i0)
        # Zero-based views (J falls as k rises), so no wraparound checks in the loop.
        out = bits[word, jk - k_end:jk - k + 1][::-1]
        vals = d0[k:k_end + 1]
        ups = d1[k - 1:k_end]
        first = np.uint64((i0 + k - 1) & 63)
        for q in range(k_end - k + 1):
            out[q] |= np.uint64(vals[q] == ups[q]) << (first + np.uint64(q))
        k = k_end + 1


def _build_tile(record_bits: bool, snapshots: bool):
    @njit(nogil=True, cache=True)
    def tile(s, c, st):
        a, b, brev, row, left, h, cw, bits, image, row_map, col_map, rows, shift = st
        m, n = a.shape[0], b.shape[0]
        i0 = s * h
        hh = min(m, i0 + h) - i0
        j0 = c * cw
        w = min(n, j0 + cw) - j0
        lf = left[s]
        d2 = np.empty(hh + 1, dtype=np.int32)
        d1 = np.empty(hh + 1, dtype=np.int32)
        d0 = np.empty(hh + 1, dtype=np.int32)
        corner_out = row[j0 + w - 1]   # L[i0, j1], the next tile's corner
        d2[0] = lf[0]                  # diagonal -2: the corner L[i0, j0]
        d1[0] = row[j0]                # diagonal -1: above column 0 ...
        d1[1] = lf[1]                  # ... and left of row 0
        if snapshots:
            p_lo = np.searchsorted(rows, i0 + 1)
            p_hi = np.searchsorted(rows, i0 + hh + 1)
        for t in range(hh + w - 1):
            if t + 1 <= w - 1:
                d0[0] = row[j0 + t + 1]
            if t + 1 <= hh - 1:
                d0[t + 2] = lf[t + 2]
            k_lo = max(1, t - w + 2)
            k_hi = min(hh, t + 1)
            # Views starting at k_lo: zero-based indices let the compiler drop numba's
            # negative-index wraparound and vectorise the loop. b[j0+t-k+1] == brev[base+k].
            base = n - 2 - j0 - t
            count = k_hi - k_lo + 1
            av = a[i0 + k_lo - 1:i0 + k_hi]
            bv = brev[base + k_lo:base + k_hi + 1]
            ups = d1[k_lo - 1:k_hi]
            lefts = d1[k_lo:k_hi + 1]
            diags = d2[k_lo - 1:k_hi]
            out = d0[k_lo:k_hi + 1]
            _diagonal(count, av, bv, ups, lefts, diags, out)
            if k_hi == hh:
                row[j0 + t - hh + 1] = d0[hh]      # the tile's bottom row
            if t - w + 2 >= 1:
                lf[t - w + 2] = d0[t - w + 2]      # the tile's right column
            if record_bits:
                _diagonal_bits(k_lo, k_hi, i0, j0 + t + 2, d0, d1, bits)
            if snapshots:
                for p in range(p_lo, p_hi):
                    k = rows[p] - i0
                    if k_lo <= k <= k_hi:
                        jc = col_map[j0 + t - k + 2]
                        if jc >= 0:
                            store_sample(image, d0[k], row_map[rows[p]], jc, shift)
            d2, d1, d0 = d1, d0, d2
        lf[0] = corner_out

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


# Drivers beside their tile kernel: see cpu_rows.py for why they are not shared.
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
