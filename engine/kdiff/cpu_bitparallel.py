"""kdiff ``bitparallel``: Myers/Hyyrö block bit-vectors with Ukkonen's cut-off.

For one start r the pattern is the suffix alpha[r:]; rows are its prefix
positions (64 per word, block b holds rows 64b+1..64b+64), columns are
background symbols and the top row is zero (semi-global). Only blocks
0..y are live, where every row below block y is inactive (D > K = k-1) in the
current column. Because D[i,j] >= D[i-1,j-1], a row can only become active
when the row above it was active, so at most one block is switched on per
column, and only its first row can be newly active. c(r) is the largest
active row over all columns; Ukkonen's lact(j) <= lact(j-1)+1 means one probe
of row c+1 per column finds it.

``lv`` (lanes x L) asks for the lower levels too (``kdiff --all-k``): column t is c for
t edits (k = t+1), found by the same one probe per column, of row lv+1 against t. The
row minima only grow down a column's active cells, whose values the blocks hold exactly
(inactive ones stay > K > t), so one pass at the largest k answers every smaller one;
the lane then lives until its suffix occurs within 0 edits. L = 0 is the plain scan.

The carry between blocks makes one matrix a chain of dependent word
operations, so the kernel advances ``LANES`` consecutive starts r together in
one pass over the background: their chains are independent and the CPU
overlaps them.

``counting`` (the comparison counter) is an argument, tested once per call. The
kernels are module-level functions that call each other as globals: numba's cache
keys a closure by its captured values, and a captured dispatcher pickles with a
fresh id in every process, so kernels made inside a factory recompiled on every run.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from engine.bitops import popcount64


_ONE = np.uint64(1)
_ALL = np.uint64(0xFFFFFFFFFFFFFFFF)
_ZERO = np.uint64(0)
_SIXTYTHREE = np.uint64(63)
ABORT_CHECK_COLUMNS = 1 << 14


@njit(nogil=True, cache=True, inline="always")
def advance_block(pv, mv, eq, hin_p, hin_m):
    """One column of one 64-row block (Myers 1999, block form; Hyyrö).

    ``hin_p``/``hin_m`` are the +1/-1 horizontal delta entering the top row, as
    0/1 words. Returns the new (pv, mv) and the outgoing delta at the bottom.
    """
    xv = eq | mv
    eq = eq | hin_m
    xh = (((eq & pv) + pv) ^ pv) | eq
    ph = mv | ~(xh | pv)
    mh = pv & xh
    hout_p = ph >> _SIXTYTHREE
    hout_m = mh >> _SIXTYTHREE
    ph = (ph << _ONE) | hin_p
    mh = (mh << _ONE) | hin_m
    return mh | ~(xv | ph), ph & xv, hout_p, hout_m


@njit(nogil=True, cache=True)
def build_peq_block(alpha, start, m_end, block, peq):
    """Match words of one 64-row block for all 16 IUPAC codes (sets intersect)."""
    for s in range(16):
        peq[block, s] = _ZERO
    row0 = start + block * 64
    for i in range(64):
        row = row0 + i
        if row >= m_end:
            break
        a = alpha[row]
        bit = _ONE << np.uint64(i)
        for s in range(1, 16):
            if a & s:
                peq[block, s] |= bit


@njit(nogil=True, cache=True, inline="always")
def _row_score(pv, mv, bottom, row):
    """D at ``row`` of a block: its bottom score less the vertical deltas below the row."""
    bit = (row - 1) & 63
    if bit == 63:
        return bottom
    sh = np.uint64(bit + 1)
    return bottom - popcount64(pv >> sh) + popcount64(mv >> sh)


@njit(nogil=True, cache=True, inline="always")
def full_at(out_c, lv, i, mp):
    """Whether start i's whole suffix (``mp`` long) occurs: at the largest k, or with
    levels (``lv``) at the smallest, k = 1 (the scan goes on until then)."""
    return (lv[i, 0] if lv.shape[1] > 0 else out_c[i]) == mp


@njit(nogil=True, cache=True)
def longest_prefixes(alpha, m_end, r_lo, lanes, beta, offsets, K, out_c, lv, counters, abort,
                     counting):
    """c(r) for r in [r_lo, r_lo+lanes), all advanced in one pass over beta.

    Writes ``out_c[0:lanes]`` (and ``lv[0:lanes]``); returns False when aborted.
    """
    levels = lv.shape[1]
    nb = (m_end - r_lo + 63) // 64 + 1
    peq = np.empty((lanes, nb, 16), dtype=np.uint64)
    pv = np.empty((lanes, nb), dtype=np.uint64)
    mv = np.empty((lanes, nb), dtype=np.uint64)
    score = np.empty((lanes, nb), dtype=np.int64)
    y = np.zeros(lanes, dtype=np.int64)
    built = np.zeros(lanes, dtype=np.int64)
    nblocks = np.zeros(lanes, dtype=np.int64)
    mps = np.zeros(lanes, dtype=np.int64)
    live = np.zeros(lanes, dtype=np.bool_)
    y0 = (K - 1) // 64 if K >= 1 else 0
    steps = 0
    for l in range(lanes):
        mp = m_end - (r_lo + l)
        mps[l] = mp
        nblocks[l] = (mp + 63) // 64
        out_c[l] = min(K, mp)
        for t in range(levels):
            lv[l, t] = min(t, mp)
        live[l] = (lv[l, 0] if levels > 0 else out_c[l]) < mp
    for rec in range(offsets.shape[0] - 1):
        lo = offsets[rec]
        hi = offsets[rec + 1]
        remaining = 0
        for l in range(lanes):
            if live[l]:
                remaining += 1
                y[l] = y0
                while built[l] <= y0:
                    build_peq_block(alpha, r_lo + l, m_end, built[l], peq[l])
                    built[l] += 1
                for b in range(y0 + 1):
                    pv[l, b] = _ALL
                    mv[l, b] = _ZERO
                    score[l, b] = 64 * (b + 1)
        if remaining == 0:
            break
        for j in range(lo, hi):
            if ((j - lo) & (ABORT_CHECK_COLUMNS - 1)) == 0 and abort[0] != 0:
                return False
            s = beta[j]
            for l in range(lanes):
                if not live[l]:
                    continue
                yl = y[l]
                hin_p = _ZERO
                hin_m = _ZERO
                for b in range(yl + 1):
                    p, m, hin_p, hin_m = advance_block(pv[l, b], mv[l, b], peq[l, b, s], hin_p, hin_m)
                    pv[l, b] = p
                    mv[l, b] = m
                    score[l, b] += np.int64(hin_p) - np.int64(hin_m)
                steps += yl + 1
                # Grow: the first row of block y+1 can only become active from
                # the bottom of block y (diagonal from j-1, or vertical in j).
                if yl < nblocks[l] - 1:
                    hin = np.int64(hin_p) - np.int64(hin_m)
                    prev = score[l, yl] - hin
                    nxt = yl + 1
                    if built[l] <= nxt:
                        build_peq_block(alpha, r_lo + l, m_end, built[l], peq[l])
                        built[l] += 1
                    eq = peq[l, nxt, s]
                    delta = 0 if (eq & _ONE) else 1
                    if prev + delta <= K or score[l, yl] <= K - 1:
                        # Implied column j-1 values prev+1..prev+64 are all >= K+1,
                        # and replacing inactive values changes no active cell.
                        p, m, hp, hm = advance_block(_ALL, _ZERO, eq, hin_p, hin_m)
                        pv[l, nxt] = p
                        mv[l, nxt] = m
                        score[l, nxt] = prev + 64 + np.int64(hp) - np.int64(hm)
                        yl = nxt
                        steps += 1
                # Shrink: a block whose bottom is >= K+64 is inactive throughout.
                while yl > 0 and score[l, yl] >= K + 64:
                    yl -= 1
                y[l] = yl
                # Probe row c+1 (Ukkonen: lact(j) <= lact(j-1) + 1 <= c + 1).
                row = out_c[l] + 1
                b = (row - 1) >> 6
                if b <= yl and row <= mps[l]:
                    if _row_score(pv[l, b], mv[l, b], score[l, b], row) <= K:
                        out_c[l] = row
                        if row == mps[l] and levels == 0:
                            live[l] = False
                            remaining -= 1
                for t in range(levels):  # the lower levels, each its own probe
                    row = lv[l, t] + 1
                    b = (row - 1) >> 6
                    if b <= yl and row <= mps[l]:
                        if _row_score(pv[l, b], mv[l, b], score[l, b], row) <= t:
                            lv[l, t] = row
                            if t == 0 and row == mps[l]:
                                live[l] = False
                                remaining -= 1
            if remaining == 0:
                break
    counters[0] += 64 * steps
    if counting:
        counters[1] += 64 * steps  # 64 symbol comparisons per word operation
    return True


@njit(nogil=True, cache=True)
def serial(alpha, m_end, r_lo, r_hi, beta, offsets, K, out_c, lv, counters, abort, lanes, counting):
    """c(r) for r in [r_lo, r_hi), ``lanes`` starts per pass.

    Stops after the first r whose whole suffix matches; returns the number
    of positions settled (fewer than asked when stopped or aborted).
    """
    r = r_lo
    while r < r_hi:
        width = min(lanes, r_hi - r)
        if not longest_prefixes(alpha, m_end, r, width, beta, offsets, K,
                                out_c[r - r_lo:], lv[r - r_lo:], counters, abort, counting):
            return r - r_lo
        for l in range(width):
            if full_at(out_c, lv, r - r_lo + l, m_end - r - l):
                return r - r_lo + l + 1
        r += width
    return r_hi - r_lo


@njit(nogil=True, cache=True)
def _coarse_group(alpha, m_end, r_lo, g, lanes, count, beta, offsets, K, out_c, lv, per_group,
                  aborted, stop, abort, counting):
    """One group of the coarse form (its own slots; see ``coarse``)."""
    first = g * lanes
    width = min(lanes, count - first)
    if r_lo + first > stop[0]:
        for l in range(width):
            out_c[first + l] = -2
        return
    ok = longest_prefixes(alpha, m_end, r_lo + first, width, beta, offsets, K,
                          out_c[first:first + width], lv[first:first + width], per_group[g],
                          abort, counting)
    if not ok:
        aborted[g] = True
        return
    for l in range(width):
        r = r_lo + first + l
        if full_at(out_c, lv, first + l, m_end - r) and r < stop[0]:
            stop[0] = r
            break


@njit(nogil=True, cache=True, parallel=True)
def coarse(alpha, m_end, r_lo, r_hi, beta, offsets, K, out_c, lv, counters, abort, lanes, nthreads,
           counting):
    """Groups of ``lanes`` starts spread over threads, dealt out round-robin.

    Round-robin (not prange's contiguous blocks) keeps every thread near the
    lowest unsettled start, so the shared stop is found early and few groups past
    it are computed. Each group writes its own slice of ``out_c`` and its own
    counters row, so no locks. Groups past a start whose suffix fully matched are
    skipped (``out_c = -2``); the shared stop hint may be stale, which only wastes work.
    """
    count = r_hi - r_lo
    groups = (count + lanes - 1) // lanes
    stop = np.full(1, r_hi, dtype=np.int64)
    per_group = np.zeros((groups, 2), dtype=np.int64)
    aborted = np.zeros(groups, dtype=np.bool_)
    for th in prange(nthreads):
        for g in range(th, groups, nthreads):
            _coarse_group(alpha, m_end, r_lo, g, lanes, count, beta, offsets, K, out_c, lv,
                          per_group, aborted, stop, abort, counting)
    for g in range(groups):
        counters[0] += per_group[g, 0]
        counters[1] += per_group[g, 1]
    # Settled prefix: every group up to the first aborted one.
    for g in range(groups):
        if aborted[g]:
            return g * lanes
    return count
