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

``lv`` (lanes x K) asks for the lower levels too (``kdiff --all-k``): column t is c for
t edits (k = t+1). One pass at the largest k answers every smaller one: the blocks hold
every active cell (D <= K) exactly, and an inactive one's computed D is above K too (it
bounds the true one from above). The levels come from cpu_lanes' counters of e = D - M,
M(i) the smallest D of row i so far (clipped at K+1, the inactive rows' floor): four
words per live block (64 rows each) take each column's horizontal deltas, and a row of
1..c_K+1 whose counter falls below 0 (D under M: the only way a level rises) has the
lane settled exactly (``_settle_levels``, also when a block is grown: its counters are
made then). No probe per level and column (those cost 1.97x one k). The lane then lives
until its suffix occurs within 0 edits. L = 0 is the plain scan, one probe a column.

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
from engine.kdiff.cpu_lanes import counter_bits, counter_step


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
    p, m, hout_p, hout_m, _, _ = advance_block_rows(pv, mv, eq, hin_p, hin_m)
    return p, m, hout_p, hout_m


@njit(nogil=True, cache=True, inline="always")
def advance_block_rows(pv, mv, eq, hin_p, hin_m):
    """:func:`advance_block`, also returning the rows' +1/-1 horizontal deltas (row i of
    the block at bit i-1): the lower levels' counters take them."""
    xv = eq | mv
    eq = eq | hin_m
    xh = (((eq & pv) + pv) ^ pv) | eq
    ph = mv | ~(xh | pv)
    mh = pv & xh
    hout_p = ph >> _SIXTYTHREE
    hout_m = mh >> _SIXTYTHREE
    phs = (ph << _ONE) | hin_p
    mhs = (mh << _ONE) | hin_m
    return mhs | ~(xv | phs), phs & xv, hout_p, hout_m, ph, mh


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
def _settle_levels(l, pv, mv, score, yl, ct, mp, f, e0, e1, e2, e3, valid):
    """Lane l after a column (or a record's first, or a block grown): the levels
    ``ct[l, 0..K]`` this column raises (each by at most one: Ukkonen), read from D of its
    live blocks' rows, then those rows' counters of e = D - M afresh and the rows whose fall
    flags the lane, 1..c_K+1 (the module's docstring)."""
    top = ct.shape[1] - 1
    for b in range(yl + 1):  # f[i] = D at row i: each block from its bottom score up
        d = score[l, b]
        base = 64 * b
        f[base + 64] = d
        p = pv[l, b]
        m = mv[l, b]
        for i in range(63, 0, -1):
            bit = _ONE << np.uint64(i)  # the vertical delta at row base+i+1
            if p & bit:
                d -= 1
            if m & bit:
                d += 1
            f[base + i] = d
    lim = min(mp, 64 * (yl + 1))
    for t in range(top + 1):
        c = ct[l, t]
        if c < lim and f[c + 1] <= t:
            ct[l, t] = c + 1
    flagged = min(ct[l, top] + 1, mp)
    below = 0  # M(i) = #{t: c_t < i}, at most K+1 (inactive rows' D, not exact, is above)
    for b in range(yl + 1):
        a0 = _ZERO
        a1 = _ZERO
        a2 = _ZERO
        a3 = _ZERO
        bit = _ONE
        for i in range(64 * b + 1, 64 * b + 65):
            while below <= top and ct[l, below] < i:
                below += 1
            a0, a1, a2, a3 = counter_bits(f[i] - below, bit, a0, a1, a2, a3)
            bit = bit << _ONE
        e0[l, b] = a0
        e1[l, b] = a1
        e2[l, b] = a2
        e3[l, b] = a3
        n = min(max(flagged - 64 * b, 0), 64)
        valid[l, b] = _ALL if n == 64 else (_ONE << np.uint64(n)) - _ONE


@njit(nogil=True, cache=True)
def longest_prefixes(alpha, m_end, r_lo, lanes, beta, offsets, K, out_c, lv, counters, abort,
                     counting):
    """c(r) for r in [r_lo, r_lo+lanes), all advanced in one pass over beta.

    Writes ``out_c[0:lanes]`` (and ``lv[0:lanes]``); returns False when aborted.
    """
    levels = lv.shape[1]  # 0, or K: then every level from the rows' counters
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
    # with levels: c at t = 0..K edits, and per live block the rows' counters of D - M and
    # the rows whose fall flags the lane (cpu_lanes' counters, 64 rows a word)
    wide = nb if levels > 0 else 0
    ct = np.empty((lanes, levels + 1), dtype=np.int64)
    e0 = np.zeros((lanes, wide), dtype=np.uint64)
    e1 = np.zeros((lanes, wide), dtype=np.uint64)
    e2 = np.zeros((lanes, wide), dtype=np.uint64)
    e3 = np.zeros((lanes, wide), dtype=np.uint64)
    valid = np.zeros((lanes, wide), dtype=np.uint64)
    f = np.zeros(64 * wide + 1, dtype=np.int64)
    y0 = (K - 1) // 64 if K >= 1 else 0
    steps = 0
    for l in range(lanes):
        mp = m_end - (r_lo + l)
        mps[l] = mp
        nblocks[l] = (mp + 63) // 64
        out_c[l] = min(K, mp)
        for t in range(levels + 1):
            ct[l, t] = min(t if levels > 0 else K, mp)
        live[l] = ct[l, 0] < mp
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
                if levels > 0:
                    _settle_levels(l, pv, mv, score, y0, ct, mps[l], f, e0, e1, e2, e3, valid)
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
                fell = _ZERO  # with levels: the flagged rows whose counter fell below 0
                for b in range(yl + 1):
                    p, m, hin_p, hin_m, ph, mh = advance_block_rows(pv[l, b], mv[l, b],
                                                                    peq[l, b, s], hin_p, hin_m)
                    pv[l, b] = p
                    mv[l, b] = m
                    score[l, b] += np.int64(hin_p) - np.int64(hin_m)
                    if levels > 0:
                        e0[l, b], e1[l, b], e2[l, b], e3[l, b], borrow = counter_step(
                            ph, mh, e0[l, b], e1[l, b], e2[l, b], e3[l, b])
                        fell |= borrow & valid[l, b]
                steps += yl + 1
                # Grow: the first row of block y+1 can only become active from
                # the bottom of block y (diagonal from j-1, or vertical in j).
                grown = False
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
                        grown = True
                # Shrink: a block whose bottom is >= K+64 is inactive throughout.
                while yl > 0 and score[l, yl] >= K + 64:
                    yl -= 1
                y[l] = yl
                if levels > 0:
                    # Every level at once: only a row falling under M can raise one (a grown
                    # block's counters are made here too).
                    if fell != _ZERO or grown:
                        _settle_levels(l, pv, mv, score, yl, ct, mps[l], f, e0, e1, e2, e3,
                                       valid)
                        if ct[l, 0] == mps[l]:
                            live[l] = False
                            remaining -= 1
                    continue
                # Probe row c+1 (Ukkonen: lact(j) <= lact(j-1) + 1 <= c + 1).
                row = out_c[l] + 1
                b = (row - 1) >> 6
                if b <= yl and row <= mps[l]:
                    if _row_score(pv[l, b], mv[l, b], score[l, b], row) <= K:
                        out_c[l] = row
                        if row == mps[l]:
                            live[l] = False
                            remaining -= 1
            if remaining == 0:
                break
    if levels > 0:
        for l in range(lanes):
            out_c[l] = ct[l, levels]
            for t in range(levels):
                lv[l, t] = ct[l, t]
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
