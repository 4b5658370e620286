"""Myers' bit-vector column step, shared by the scans and the alignment stage.

A column of the DP matrix is kept as vertical deltas C[i,j] - C[i-1,j]: bit i-1
of ``pv`` is set for +1, of ``mv`` for -1. Rows are packed 64 per word; words
pass their bottom horizontal delta to the word below (Myers 1999, block form).
Rows below the pattern's last row in the last word are never read back: they
only influence rows under them.

Match words (``peq``, flat, 16 per block: ``peq[16 * block + symbol]``) are built
for all 16 IUPAC codes, so "symbols match when their sets intersect" holds in
the bit-parallel code as everywhere else.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from engine.bitops import popcount64

ONE = np.uint64(1)
ZERO = np.uint64(0)
ALL = np.uint64(0xFFFFFFFFFFFFFFFF)
SIXTYTHREE = np.uint64(63)


@njit(nogil=True, cache=True, inline="always")
def advance_at(pv, mv, eq, hin_p, hin_m, out_bit):
    """One column of one word. ``hin_p``/``hin_m``: +1/-1 delta entering the top (0/1 words).

    Returns the new (pv, mv) and the +1/-1 horizontal delta leaving row ``out_bit``
    (63 for a full word; the pattern's last row in the last word).
    """
    xv = eq | mv
    eq = eq | hin_m
    xh = (((eq & pv) + pv) ^ pv) | eq
    ph = mv | ~(xh | pv)
    mh = pv & xh
    hout_p = (ph >> out_bit) & ONE
    hout_m = (mh >> out_bit) & ONE
    ph = (ph << ONE) | hin_p
    mh = (mh << ONE) | hin_m
    return mh | ~(xv | ph), ph & xv, hout_p, hout_m


@njit(nogil=True, cache=True, inline="always")
def advance_column(pvs, mvs, peq, symbol, nb, hin_p, last_bit):
    """Advance all ``nb`` words of a column by one text symbol; return C[m,j] - C[m,j-1].

    ``hin_p`` is 1 when the top row grows by one per column (anchored, C[0,j] = j)
    and 0 in search mode (C[0,j] = 0).
    """
    hp = hin_p
    hm = ZERO
    for b in range(nb - 1):
        pv, mv, hp, hm = advance_at(pvs[b], mvs[b], peq[16 * b + symbol], hp, hm, SIXTYTHREE)
        pvs[b] = pv
        mvs[b] = mv
    b = nb - 1
    pv, mv, hp, hm = advance_at(pvs[b], mvs[b], peq[16 * b + symbol], hp, hm, last_bit)
    pvs[b] = pv
    mvs[b] = mv
    return np.int64(hp) - np.int64(hm)


@njit(nogil=True, cache=True)
def build_peq(pattern, m, peq, reverse):
    """Match words of ``pattern[:m]`` (or of its reverse) for every IUPAC code."""
    nb = (m + 63) // 64
    for w in range(16 * nb):
        peq[w] = ZERO
    for i in range(m):
        a = pattern[m - 1 - i] if reverse else pattern[i]
        base = 16 * (i >> 6)
        bit = ONE << np.uint64(i & 63)
        for s in range(1, 16):
            if a & s:
                peq[base + s] |= bit


@njit(nogil=True, cache=True)
def reset_column(pvs, mvs, nb):
    """Column 0: C[i,0] = i, every vertical delta +1."""
    for b in range(nb):
        pvs[b] = ALL
        mvs[b] = ZERO


@njit(nogil=True, cache=True, inline="always")
def blocks(state, m):
    """(nb, last bit, pvs, mvs, peq) of a lane's blocked state row ``[pv x nb, mv x nb,
    peq x 16 nb]`` for a pattern of m rows: myers-blocked and banded share the layout."""
    nb = (m + 63) // 64
    return nb, np.uint64((m - 1) & 63), state[0:nb], state[nb:2 * nb], state[2 * nb:18 * nb]


@njit(nogil=True, cache=True)
def init_blocked(pat, m, state, reverse):
    """Column 0 of a blocked state row (C[i,0] = i) and the match words of the pattern (or
    of its reverse)."""
    nb, _, pvs, mvs, peq = blocks(state, m)
    reset_column(pvs, mvs, nb)
    build_peq(pat, m, peq, reverse)


@njit(nogil=True, cache=True, inline="always")
def rows_sum(col, nb, i):
    """C[i,j] - C[0,j] for a column stored as ``[pv x nb, mv x nb]``: the deltas of rows 1..i."""
    total = np.int64(0)
    full = i >> 6
    for b in range(full):
        total += popcount64(col[b]) - popcount64(col[nb + b])
    rest = i & 63
    if rest:
        mask = (ONE << np.uint64(rest)) - ONE
        total += popcount64(col[full] & mask) - popcount64(col[nb + full] & mask)
    return total


@njit(nogil=True, cache=True, inline="always")
def row_delta(col, nb, i):
    """C[i,j] - C[i-1,j] (row i >= 1) for a column stored as ``[pv x nb, mv x nb]``."""
    b = (i - 1) >> 6
    bit = np.uint64((i - 1) & 63)
    return np.int64((col[b] >> bit) & ONE) - np.int64((col[nb + b] >> bit) & ONE)
