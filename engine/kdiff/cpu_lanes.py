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

The lower levels of ``kdiff --all-k`` (``lv``: c for t = 0..K-1 edits) cost no probe per
level (``_lanes_levels``). Let M(i) be the smallest D of row i over the columns so far
(M is non-decreasing in i, and c_t = #{i: M(i) <= t}, so M holds every level at once). A
column changes some level only where D[i] < M(i) for a row i, and since D[i] moves by the
row's horizontal delta, only where D[i] = M(i) one column earlier and the delta is -1.
Each row keeps e(i) = D[i] - M(i) in a 4-bit counter sliced over four words (one bit of
every row per word): a column adds ph - mh to all of them with a dozen and a half word
operations, whatever K is, and a borrow out of the counter of a row 1..c_K+1 flags the
lane (a row below can fall under M only if row c_K+1 does too). The rare flagged lane
is settled exactly (its levels from the column's D, its counters afresh). A counter only
ever underestimates e (it stays at 15 past 15, or is set to at most 15), so a flag can be
false but a change of level is never missed. (Three bits were too few: e >= 8 is common
in a 32-row word, and the wraps flagged a quarter of all lane-columns. Four bits that
wrapped past 15 instead of holding there settled 64-bit lanes 560 times as often: 64.6
million settles against 115 thousand, lambda 5 kb vs E. coli 1 Mb at k = 8.)
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from engine.bitops import w_add, w_and, w_le, w_lt, w_not, w_or, w_shl, w_shr, w_sub, w_xor

ABORT_CHECK_COLUMNS = 1 << 14
DONE_CHECK_COLUMNS = 1 << 9


def word_constants(bits: int) -> np.ndarray:
    """0, 1, all ones and the shift mask, in the word type of ``bits`` (32 or 64)."""
    dtype = np.uint32 if bits == 32 else np.uint64
    return np.array([0, 1, np.iinfo(dtype).max, bits - 1], dtype=dtype)


@njit(nogil=True, cache=True, inline="always")
def _column(eq, p, m, one):
    """One Myers column of a lane: the row's horizontal deltas (+1: ``ph``, -1: ``mh``,
    row i at bit i-1) and the new column's vertical deltas (``pn``, ``mn``)."""
    xv = w_or(eq, m)
    xh = w_or(w_xor(w_add(w_and(eq, p), p), p), eq)
    ph = w_or(m, w_not(w_or(xh, p)))
    mh = w_and(p, xh)
    phs = w_shl(ph, one)
    mhs = w_shl(mh, one)
    return ph, mh, w_or(mhs, w_not(w_or(xv, phs))), w_and(phs, xv)


@njit(nogil=True, cache=True)
def lanes_group(alpha, m_end, rs, beta, offsets, K, word, out_c, lv, outgrown, counters, abort):
    """c(r) for the starts ``rs`` (one lane each), in words of ``word``'s dtype
    (``word_constants``: np.uint32 or np.uint64). Writes ``out_c``, ``lv`` (the lower
    levels, lanes x L: ``_lanes_levels``) and ``outgrown``; adds cells (word-steps x word
    bits) to ``counters[0]``. Returns False when aborted."""
    if lv.shape[1] > 0:
        return _lanes_levels(alpha, m_end, rs, beta, offsets, K, word, out_c, lv, outgrown,
                             counters, abort)
    width = rs.shape[0]
    wbits = word.itemsize * 8
    zero, one, full, mask = word[0], word[1], word[2], word[3]  # typed: no integer promotion
    peq = _match_words(alpha, rs, word, width, wbits)
    pv = np.empty(width, dtype=peq.dtype)
    mv = np.empty(width, dtype=peq.dtype)
    c = np.empty(width, dtype=peq.dtype)
    limit = np.empty(width, dtype=peq.dtype)
    dc = np.empty(width, dtype=word.dtype)  # D[c+1] (>= 0: the word type holds it)
    kk = zero
    for _ in range(K):
        kk = w_add(kk, one)
    pending = 0
    for l in range(width):
        mp = m_end - rs[l]
        limit[l] = min(mp, wbits)
        c[l] = min(K, mp)
        if c[l] < limit[l]:
            pending += 1
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
                    ph, mh, pn, mn = _column(row[l], pv[l], mv[l], one)
                    cl = c[l]
                    # D[c+1] of this column: the row's horizontal delta added.
                    d = w_sub(w_add(dc[l], w_and(w_shr(ph, cl), one)), w_and(w_shr(mh, cl), one))
                    hit = w_le(d, kk) & w_lt(cl, limit[l])
                    cn = w_add(cl, one if hit else zero)
                    # On a hit, D[c+2] = D[c+1] + the column's vertical delta at row c+2.
                    sh = w_and(cn, mask)
                    vd = w_sub(w_add(d, w_and(w_shr(pn, sh), one)), w_and(w_shr(mn, sh), one))
                    dc[l] = vd if hit else d
                    c[l] = cn
                    pv[l] = pn
                    mv[l] = mn
            steps += (stop - j) * width
            j = stop
            pending = 0
            for l in range(width):
                if c[l] < limit[l]:
                    pending += 1
            if pending == 0:
                break
    for l in range(width):
        out_c[l] = np.int64(c[l])
        outgrown[l] = np.int64(c[l]) == wbits and m_end - rs[l] > wbits
    counters[0] += steps * wbits
    return True


@njit(nogil=True, cache=True)
def _match_words(alpha, rs, word, width, wbits):
    """peq[s, l]: the rows of lane l's first word that symbol code s matches (IUPAC sets
    intersect)."""
    one = word[1]
    peq = np.zeros((16, width), dtype=word.dtype)
    for l in range(width):
        for i in range(min(alpha.shape[0] - rs[l], wbits)):
            a = alpha[rs[l] + i]
            bit = one << i
            for s in range(1, 16):
                if a & s:
                    peq[s, l] |= bit
    return peq


#: The largest e(i) = D[i] - M(i) a row's counter holds (4 bits; it wraps past this).
COUNTER_MAX = 15


@njit(nogil=True, cache=True, inline="always")
def counter_step(ph, mh, a0, a1, a2, a3):
    """e += ph - mh on every row of the 4-bit counters sliced over the words a0..a3 (bit b
    of e(i) in a_b, row i at bit i-1; ``ph``/``mh`` the rows' +1/-1 horizontal deltas): the
    new words, and the rows whose counter was 0 and fell (the borrow out of the top bit).
    A counter stays at COUNTER_MAX past it (under e, never over it): one that wrapped to 0
    would flag the lane at the next -1, and a 64-row word's lower rows, tens of edits above
    M after a near match, crossed 15 and back all the time."""
    carry = w_and(ph, a0)
    borrow = w_and(mh, w_not(a0))
    b0 = w_xor(a0, w_or(ph, mh))
    step = w_or(carry, borrow)
    carry = w_and(carry, a1)
    borrow = w_and(borrow, w_not(a1))
    b1 = w_xor(a1, step)
    step = w_or(carry, borrow)
    carry = w_and(carry, a2)
    borrow = w_and(borrow, w_not(a2))
    b2 = w_xor(a2, step)
    step = w_or(carry, borrow)
    over = w_and(carry, a3)  # 15 + 1: held at 15
    borrow = w_and(borrow, w_not(a3))
    b3 = w_xor(a3, step)
    return w_or(b0, over), w_or(b1, over), w_or(b2, over), w_or(b3, over), borrow


@njit(nogil=True, cache=True, inline="always")
def counter_bits(e, bit, a0, a1, a2, a3):
    """The words a0..a3 with a row's counter (its bit ``bit``, clear before) set to
    min(max(e, 0), COUNTER_MAX)."""
    e = min(max(e, 0), COUNTER_MAX)
    if e & 1:
        a0 = w_or(a0, bit)
    if e & 2:
        a1 = w_or(a1, bit)
    if e & 4:
        a2 = w_or(a2, bit)
    if e & 8:
        a3 = w_or(a3, bit)
    return a0, a1, a2, a3


@njit(nogil=True, cache=True)
def _settle(l, pv, mv, word, ct, lim, f, e0, e1, e2, e3):
    """Lane l after a column (its deltas ``pv``/``mv``): the levels ``ct[:, l]`` this column
    raises (each by at most one: Ukkonen), then its counters afresh, min(e, COUNTER_MAX)."""
    zero, one = word[0], word[1]
    p = pv[l]
    m = mv[l]
    bit = one
    for i in range(1, lim + 1):  # f[i] = D[i] of this column
        f[i] = f[i - 1] + (1 if w_and(p, bit) != zero else 0) - (1 if w_and(m, bit) != zero else 0)
        bit = w_shl(bit, one)
    top = ct.shape[0] - 1
    for t in range(top + 1):
        c = ct[t, l]
        if c < lim and f[c + 1] <= t:
            ct[t, l] = c + 1
    a0 = zero
    a1 = zero
    a2 = zero
    a3 = zero
    bit = one
    below = 0  # M(i) = #{t: c_t < i}
    for i in range(1, lim + 1):
        while below <= top and ct[below, l] < i:
            below += 1
        a0, a1, a2, a3 = counter_bits(f[i] - below, bit, a0, a1, a2, a3)
        bit = w_shl(bit, one)
    e0[l] = a0
    e1[l] = a1
    e2[l] = a2
    e3[l] = a3


@njit(nogil=True, cache=True, inline="always")
def _pending(ct, lim, l, wbits, mp):
    """Whether lane l can still grow: c at K under its limit, or its suffix fits the word
    and 0 edits have not found all of it. A lane that outgrew the word is done here."""
    return ct[ct.shape[0] - 1, l] < lim or (mp <= wbits and ct[0, l] < lim)


@njit(nogil=True, cache=True)
def _flag_rows(ct, l, lim, wbits, mp, word):
    """The rows whose falling counter flags lane l: 1..c_K+1 (a row below that can fall
    under M only if row c_K+1 does too, since M stays non-decreasing), none once done."""
    rows = word[0]
    if not _pending(ct, lim, l, wbits, mp):
        return rows
    bit = word[1]
    for _ in range(min(ct[ct.shape[0] - 1, l] + 1, lim)):
        rows = w_or(rows, bit)
        bit = w_shl(bit, word[1])
    return rows


@njit(nogil=True, cache=True)
def _lanes_levels(alpha, m_end, rs, beta, offsets, K, word, out_c, lv, outgrown, counters,
                  abort):
    """``lanes_group`` with every level: c at t = 0..K edits (``lv`` and ``out_c``), from
    the rows' counters of e = D - M (see the module's docstring)."""
    width = rs.shape[0]
    wbits = word.itemsize * 8
    zero, one, full = word[0], word[1], word[2]
    peq = _match_words(alpha, rs, word, width, wbits)
    pv = np.empty(width, dtype=peq.dtype)
    mv = np.empty(width, dtype=peq.dtype)
    e0 = np.empty(width, dtype=peq.dtype)  # bit b of e(i), row i at bit i-1
    e1 = np.empty(width, dtype=peq.dtype)
    e2 = np.empty(width, dtype=peq.dtype)
    e3 = np.empty(width, dtype=peq.dtype)
    valid = np.empty(width, dtype=peq.dtype)  # the rows whose flags count (none once done)
    flag = np.empty(width, dtype=peq.dtype)
    ct = np.empty((K + 1, width), dtype=np.int64)  # c at t edits
    limit = np.empty(width, dtype=np.int64)
    f = np.zeros(wbits + 1, dtype=np.int64)
    pending = 0
    for l in range(width):
        mp = m_end - rs[l]
        lim = min(mp, wbits)
        limit[l] = lim
        for t in range(K + 1):
            ct[t, l] = min(t, mp)
        if _pending(ct, lim, l, wbits, mp):
            pending += 1
    steps = 0
    for rec in range(offsets.shape[0] - 1):
        if pending == 0:
            break
        lo = offsets[rec]
        hi = offsets[rec + 1]
        for l in range(width):
            pv[l] = full  # D[i][0] = i at a record's start
            mv[l] = zero
            _settle(l, pv, mv, word, ct, limit[l], f, e0, e1, e2, e3)
            valid[l] = _flag_rows(ct, l, limit[l], wbits, m_end - rs[l], word)
        j = lo
        while j < hi:
            if ((j - lo) & (ABORT_CHECK_COLUMNS - 1)) == 0 and abort[0] != 0:
                return False
            stop = min(hi, j + DONE_CHECK_COLUMNS)
            for jj in range(j, stop):
                row = peq[beta[jj]]
                flagged = zero
                for l in range(width):
                    ph, mh, pn, mn = _column(row[l], pv[l], mv[l], one)
                    pv[l] = pn
                    mv[l] = mn
                    # e += ph - mh on every row, through the four bit planes.
                    e0[l], e1[l], e2[l], e3[l], borrow = counter_step(ph, mh, e0[l], e1[l],
                                                                      e2[l], e3[l])
                    hit = w_and(borrow, valid[l])  # e was 0 and fell: D < M somewhere
                    flag[l] = hit
                    flagged = w_or(flagged, hit)
                if flagged != zero:
                    for l in range(width):
                        if flag[l] != zero:
                            _settle(l, pv, mv, word, ct, limit[l], f, e0, e1, e2, e3)
                            counters[1] += 1
                            valid[l] = _flag_rows(ct, l, limit[l], wbits, m_end - rs[l], word)
            steps += (stop - j) * width
            j = stop
            pending = 0
            for l in range(width):
                if _pending(ct, limit[l], l, wbits, m_end - rs[l]):
                    pending += 1
            if pending == 0:
                break
    for l in range(width):
        out_c[l] = ct[K, l]
        for t in range(K):
            lv[l, t] = ct[t, l]
        outgrown[l] = ct[K, l] == wbits and m_end - rs[l] > wbits
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
        counters[1] += per_group[g, 1]  # (the levels' settles, as lanes_serial counts them)
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
