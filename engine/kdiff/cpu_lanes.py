"""kdiff ``bitparallel`` with the ``simd`` flag: many starts r per vector instruction.

At small k most candidates are shorter than a machine word, so one word of the
Myers/Hyyrö bit-vector holds every row that matters. A group of ``L`` starts is
laid out structure-of-arrays (``pv[l]``, ``mv[l]``, the match words ``peq[s, l]``)
and advanced together along the background; the loop over lanes has no branch, so
LLVM turns it into AVX-512 (or AVX2) code, 8 or 16 starts per instruction.

Each lane tracks c (the longest prefix found within K = k-1 edits so far) and
D[c+1] of the current column. Ukkonen's bound lact(j) <= lact(j-1) + 1 means c
grows by at most one per column, so it is enough to update D[c+1] by the row's
horizontal delta and, when it drops to <= K, step c up and take D[c+2] from the
column's vertical delta: shifts and masks, no popcount, no branch.

A lane whose c reaches the word's width while its suffix is longer has *outgrown*
the word: it is settled again with 64-bit words (after 32) or by the blocked kernel
of ``cpu_bitparallel`` (after 64). The first w rows of D do not depend on the rows
below, so a lane that stays under the width is exact.

The lower levels of ``kdiff --all-k`` (``lv``: c for t = 0..L-1 edits) probe their row
c_t+1 in each column from the popcounts of the column's deltas below it, one more
branch-free loop over the lanes per level.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from engine.bitops import (w_add, w_and, w_le, w_lt, w_not, w_or, w_popcount, w_shl, w_shr, w_sub,
                           w_xor)

ABORT_CHECK_COLUMNS = 1 << 14
DONE_CHECK_COLUMNS = 1 << 9


def word_constants(bits: int) -> np.ndarray:
    """0, 1, all ones and the shift mask, in the word type of ``bits`` (32 or 64)."""
    dtype = np.uint32 if bits == 32 else np.uint64
    return np.array([0, 1, np.iinfo(dtype).max, bits - 1], dtype=dtype)


@njit(nogil=True, cache=True, inline="always")
def _pending(c, ct, limit, l, levels, wbits, mp):
    """Whether lane l can still grow: c under its limit, or (levels) the suffix fits the
    word and level 0 has not found all of it. A lane that outgrew the word is done here."""
    if c[l] < limit[l]:
        return True
    return levels > 0 and mp <= wbits and ct[0, l] < limit[l]


@njit(nogil=True, cache=True)
def lanes_group(alpha, m_end, rs, beta, offsets, K, word, out_c, lv, outgrown, counters, abort):
    """c(r) for the starts ``rs`` (one lane each), in words of ``word``'s dtype
    (``word_constants``: np.uint32 or np.uint64). Writes ``out_c``, ``lv`` (the lower
    levels, lanes x L) and ``outgrown``; adds cells (word-steps x word bits) to
    ``counters[0]``. Returns False when aborted."""
    levels = lv.shape[1]
    width = rs.shape[0]
    wbits = word.itemsize * 8
    zero, one, full, mask = word[0], word[1], word[2], word[3]  # typed: no integer promotion
    peq = np.zeros((16, width), dtype=word.dtype)
    pv = np.empty(width, dtype=peq.dtype)
    mv = np.empty(width, dtype=peq.dtype)
    c = np.empty(width, dtype=peq.dtype)
    limit = np.empty(width, dtype=peq.dtype)
    dc = np.empty(width, dtype=word.dtype)  # D[c+1] (>= 0: the word type holds it)
    kk = zero
    for _ in range(K):
        kk = w_add(kk, one)
    wb = w_add(mask, one)
    ct = np.empty((levels, width), dtype=word.dtype)  # c of each lower level
    tw = np.empty(levels, dtype=word.dtype)          # its threshold t, in the word type
    for t in range(levels):
        tw[t] = zero if t == 0 else w_add(tw[t - 1], one)
    pending = 0
    for l in range(width):
        mp = m_end - rs[l]
        lim = min(mp, wbits)
        limit[l] = lim
        c[l] = min(K, mp)
        for t in range(levels):
            ct[t, l] = min(t, mp)
        if _pending(c, ct, limit, l, levels, wbits, mp):
            pending += 1
        for i in range(lim):
            a = alpha[rs[l] + i]
            bit = one << i
            for s in range(1, 16):
                if a & s:
                    peq[s, l] |= bit
    steps = 0
    for rec in range(offsets.shape[0] - 1):
        if pending == 0:
            break
        lo = offsets[rec]
        hi = offsets[rec + 1]
        for l in range(width):
            pv[l] = full
            mv[l] = zero
            dc[l] = w_add(c[l], one)  # D[i][0] = i at a record's start
        j = lo
        while j < hi:
            if ((j - lo) & (ABORT_CHECK_COLUMNS - 1)) == 0 and abort[0] != 0:
                return False
            stop = min(hi, j + DONE_CHECK_COLUMNS)
            for jj in range(j, stop):
                row = peq[beta[jj]]
                for l in range(width):
                    eq = row[l]
                    p = pv[l]
                    m = mv[l]
                    xv = w_or(eq, m)
                    xh = w_or(w_xor(w_add(w_and(eq, p), p), p), eq)
                    ph = w_or(m, w_not(w_or(xh, p)))
                    mh = w_and(p, xh)
                    cl = c[l]
                    # D[c+1] of this column: the row's horizontal delta added.
                    d = w_sub(w_add(dc[l], w_and(w_shr(ph, cl), one)), w_and(w_shr(mh, cl), one))
                    ph = w_shl(ph, one)
                    mh = w_shl(mh, one)
                    pn = w_or(mh, w_not(w_or(xv, ph)))
                    mn = w_and(ph, xv)
                    hit = w_le(d, kk) & w_lt(cl, limit[l])
                    cn = w_add(cl, one if hit else zero)
                    # On a hit, D[c+2] = D[c+1] + the column's vertical delta at row c+2.
                    sh = w_and(cn, mask)
                    vd = w_sub(w_add(d, w_and(w_shr(pn, sh), one)), w_and(w_shr(mn, sh), one))
                    dc[l] = vd if hit else d
                    c[l] = cn
                    pv[l] = pn
                    mv[l] = mn
                for t in range(levels):
                    tv = tw[t]
                    crow = ct[t]
                    for l in range(width):
                        cl = crow[l]
                        lim = limit[l]
                        row = w_add(cl, one)
                        row = row if w_le(row, lim) else lim
                        low = w_shr(full, w_sub(wb, row))  # rows 1..row
                        d = w_sub(w_popcount(w_and(pv[l], low)), w_popcount(w_and(mv[l], low)))
                        hit = w_le(d, tv) & w_lt(cl, lim)
                        crow[l] = w_add(cl, one if hit else zero)
            steps += (stop - j) * width
            j = stop
            pending = 0
            for l in range(width):
                if _pending(c, ct, limit, l, levels, wbits, m_end - rs[l]):
                    pending += 1
            if pending == 0:
                break
    for l in range(width):
        out_c[l] = np.int64(c[l])
        for t in range(levels):
            lv[l, t] = np.int64(ct[t, l])
        outgrown[l] = np.int64(c[l]) == wbits and m_end - rs[l] > wbits
    counters[0] += steps * wbits
    return True


@njit(nogil=True, cache=True, parallel=True)
def lanes_parallel(alpha, m_end, rs, beta, offsets, K, word, lanes, out_c, lv, outgrown,
                   counters, abort):
    """Groups of ``lanes`` starts spread over the threads (each group its own slots)."""
    groups = (rs.shape[0] + lanes - 1) // lanes
    per_group = np.zeros((groups, 2), dtype=np.int64)
    ok = np.ones(groups, dtype=np.bool_)
    for g in prange(groups):
        a = g * lanes
        b = min(rs.shape[0], a + lanes)
        ok[g] = lanes_group(alpha, m_end, rs[a:b], beta, offsets, K, word, out_c[a:b], lv[a:b],
                            outgrown[a:b], per_group[g], abort)
    for g in range(groups):
        counters[0] += per_group[g, 0]
    for g in range(groups):
        if not ok[g]:
            return False
    return True


@njit(nogil=True, cache=True)
def lanes_serial(alpha, m_end, rs, beta, offsets, K, word, lanes, out_c, lv, outgrown,
                 counters, abort):
    """The same, one group after the other."""
    for a in range(0, rs.shape[0], lanes):
        b = min(rs.shape[0], a + lanes)
        if not lanes_group(alpha, m_end, rs[a:b], beta, offsets, K, word, out_c[a:b], lv[a:b],
                           outgrown[a:b], counters, abort):
            return False
    return True
