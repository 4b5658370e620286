"""nw ``prefix``: each row from the previous one with a prefix-max scan (Aluru et al. 2003).

With Y[j] = H[i][j] - j*gap the row recurrence loses its left-to-right sum:

    X[j] = max(Yprev[j] + gap, Yprev[j-1] + s(a_i, b_j) - gap)    (independent cells)
    Y[j] = max(H[i][0], X[1], ..., X[j])                          (a prefix maximum)

Aluru's parallel prefix gives each of p processors a contiguous segment of the
row: each computes X and the running maximum of its segment, the p segment
maxima are combined (carry[l] = the maximum of everything left of segment l),
and each segment is raised to its carry. Here the processors are SIMD lanes:
the row is cut into ``lanes`` segments of S columns, stored striped (column
l*S + k + 1 at index k*lanes + l), so that step k of every segment is one
contiguous vector operation. The raise is folded into the next row's X pass,
so a row is one pass over memory plus a combine over the lanes.

Multicore splits the lanes between threads: one fork/join per row (the
parallel scan), with the combine done serially between forks. The serial
kernel is the same row step with one thread.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from engine.nw.cpu_common import sample_span


@njit(nogil=True, cache=True)
def _layout(w, lanes):
    """(lanes, S): segments of S columns; lanes * S >= w, the excess padding the last lane."""
    nl = max(1, min(lanes, w))
    return nl, max(1, (w + nl - 1) // nl)


@njit(nogil=True, cache=True)
def _striped_index(j, nl, seg):
    """Striped position of column j >= 1 and its lane."""
    lane = (j - 1) // seg
    return ((j - 1) - lane * seg) * nl + lane, lane


@njit(nogil=True, cache=True)
def _setup(b, top, lanes, match, mismatch, gap):
    """What both kernels start a tile from: the layout (:func:`_layout`), striped b, the
    shifted top row and the second row buffer, the lane carries and maxima, and the
    match and mismatch scores less a gap.

    Padding columns lie right of column w, so they feed only each other and the
    lanes' maxima right of the last real column: their values never reach a real
    cell (they may even wrap around). They get code 0 and the last top value.
    """
    w = b.shape[0]
    nl, seg = _layout(w, lanes)
    bs = np.zeros(nl * seg, dtype=np.uint8)
    lp = np.empty(nl * seg, dtype=top.dtype)
    last = top[w] - w * gap
    for j in range(1, nl * seg + 1):
        idx, _ = _striped_index(j, nl, seg)
        if j <= w:
            bs[idx] = b[j - 1]
            lp[idx] = top[j] - j * gap
        else:
            lp[idx] = last
    lc = np.empty_like(lp)
    cp = np.full(nl, lp.min(), dtype=top.dtype)   # raising the top row to its minimum: no change
    cc = np.empty_like(cp)
    z = np.empty_like(cp)
    return (nl, seg, bs, lp, lc, cp, cc, z, top.dtype.type(match - gap),
            top.dtype.type(mismatch - gap))


@njit(nogil=True, cache=True)
def _lanes_step(lp, lc, cp, z, l0, l1, nl, seg, left_prev, bs, ai, match_g, mismatch_g, gap):
    """Row i for lanes [l0, l1): X and each lane's running maximum z (its local scan).

    ``lp`` holds the previous row's local scans, to be raised to ``cp[lane]``;
    ``left_prev`` is the previous row's column 0.
    """
    cast = lc.dtype.type
    for l in range(l0, l1):   # step 0: the left neighbour is the previous lane's last column
        yl = left_prev if l == 0 else max(lp[(seg - 1) * nl + l - 1], cp[l - 1])
        sg = match_g if (ai & bs[l]) != 0 else mismatch_g
        x = max(cast(max(lp[l], cp[l]) + gap), cast(yl + sg))
        z[l] = x
        lc[l] = x
    lo = np.uint64(l0)
    hi = np.uint64(l1)
    stride = np.uint64(nl)
    for k in range(1, seg):
        base = np.uint64(k) * stride
        before = base - stride
        for l in range(lo, hi):
            c = cp[l]
            sg = match_g if (ai & bs[base + l]) != 0 else mismatch_g
            x = max(cast(max(lp[base + l], c) + gap), cast(max(lp[before + l], c) + sg))
            v = max(z[l], x)
            z[l] = v
            lc[base + l] = v


@njit(nogil=True, cache=True)
def _finish_row(i, lc, cc, z, left, right, w, nl, seg, gap,
                rec_rows, rec_cols, snap, row0, col0, r_ptr, r_end, c_lo, c_hi):
    """Combine the lane maxima into the carries of row i; its right cell and sampled cells.

    Returns the updated snapshot row pointer.
    """
    cc[0] = left[i]
    for l in range(1, nl):
        cc[l] = max(cc[l - 1], z[l - 1])
    idx, lane = _striped_index(w, nl, seg)
    right[i] = max(lc[idx], cc[lane]) + w * gap
    if r_ptr < r_end and rec_rows[r_ptr] == row0 + i:
        for q in range(c_lo, c_hi):
            j = rec_cols[q] - col0
            idx, lane = _striped_index(j, nl, seg)
            snap[r_ptr, q] = max(lc[idx], cc[lane]) + j * gap
        r_ptr += 1
    return r_ptr


@njit(nogil=True, cache=True)
def _bottom(lp, cp, nl, seg, left_h, bottom, gap):
    bottom[0] = left_h
    for j in range(1, bottom.shape[0]):
        idx, lane = _striped_index(j, nl, seg)
        bottom[j] = max(lp[idx], cp[lane]) + j * gap


@njit(nogil=True, cache=True)
def prefix_tile(a, b, top, left, bottom, right, match, mismatch, gap,
                rec_rows, rec_cols, snap, row0, col0, abort, lanes):
    """One tile by prefix-max rows on ``lanes`` SIMD segments (serial). False when aborted."""
    h = a.shape[0]
    w = b.shape[0]
    nl, seg, bs, lp, lc, cp, cc, z, match_g, mismatch_g = _setup(b, top, lanes, match, mismatch, gap)
    right[0] = top[w]
    r_ptr, r_end = sample_span(rec_rows, row0 + 1, row0 + h + 1)
    c_lo, c_hi = sample_span(rec_cols, col0 + 1, col0 + w + 1)
    for i in range(1, h + 1):
        if abort[0] != 0:
            return False
        _lanes_step(lp, lc, cp, z, 0, nl, nl, seg, left[i - 1], bs, a[i - 1],
                    match_g, mismatch_g, gap)
        r_ptr = _finish_row(i, lc, cc, z, left, right, w, nl, seg, gap,
                            rec_rows, rec_cols, snap, row0, col0, r_ptr, r_end, c_lo, c_hi)
        lp, lc = lc, lp
        cp, cc = cc, cp
    _bottom(lp, cp, nl, seg, left[h], bottom, gap)
    return True


@njit(nogil=True, cache=True, parallel=True)
def prefix_tile_parallel(a, b, top, left, bottom, right, match, mismatch, gap,
                         rec_rows, rec_cols, snap, row0, col0, abort, lanes, threads):
    """One tile by prefix-max rows; each row's lanes are split between ``threads`` threads."""
    h = a.shape[0]
    w = b.shape[0]
    nl, seg, bs, lp, lc, cp, cc, z, match_g, mismatch_g = _setup(b, top, lanes, match, mismatch, gap)
    nb = max(1, min(threads, nl))
    right[0] = top[w]
    r_ptr, r_end = sample_span(rec_rows, row0 + 1, row0 + h + 1)
    c_lo, c_hi = sample_span(rec_cols, col0 + 1, col0 + w + 1)
    for i in range(1, h + 1):
        if abort[0] != 0:
            return False
        ai = a[i - 1]
        left_prev = left[i - 1]
        for t in prange(nb):
            _lanes_step(lp, lc, cp, z, t * nl // nb, (t + 1) * nl // nb, nl, seg, left_prev, bs,
                        ai, match_g, mismatch_g, gap)
        r_ptr = _finish_row(i, lc, cc, z, left, right, w, nl, seg, gap,
                            rec_rows, rec_cols, snap, row0, col0, r_ptr, r_end, c_lo, c_hi)
        lp, lc = lc, lp
        cp, cc = cc, cp
    _bottom(lp, cp, nl, seg, left[h], bottom, gap)
    return True
