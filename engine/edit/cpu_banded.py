"""edit ``banded``: only the cells that can still be <= the threshold (Ukkonen 1985).

Search: Myers' block-based bit-vectors with Ukkonen's cut-off, as in edlib
(Myers 1999, section 4; Hyyrö). A cell is *active* when C <= K. Only blocks
0..y are computed, where every row below block y is inactive in the current
column. Because C[i,j] >= C[i-1,j-1], a row can only become active below an
active one, so at most one block is switched on per column: block y+1 when
its first row can reach <= K (diagonally from the bottom of block y in the
previous column, or vertically from it in this one); its previous column is
taken as ``bottom + 1, + 2, ...``, all > K, which changes no active cell. Block
y is switched off while all its cells are > K: at once when its bottom is >=
K + its rows, and after a look at each cell every STRONG_REDUCE columns.
C[m,j] is known, and exact when <= K, only while the last block is on. Work is
O(n K / 64) words expected on random text instead of O(n m / 64).

K is the hit threshold T (k, or in best mode one less than the best so far),
but never below the task's T_CUT while it keeps a profile: the profile needs
every C[m,j] <= k, not only the ones that beat the best.

Global: an alignment of cost <= t never leaves the diagonals
[min(0, n-m) - p, max(0, n-m) + p], p = (t - |n-m|) / 2, because every step
away from the main diagonal costs an insertion or deletion. Only the blocks
that hold a row of that band in the current column are computed (first..last,
both moving down by at most one block per column). Values the computation
reads from outside them are upper bounds of the true ones: a block switched
on takes its previous column as ``bottom + 1, + 2, ...``, and the first block
takes +1 from the row above it each column, as the top row does. So every
computed value is >= the true one, and equal on the optimal path, which stays
in the band: C[m,n] is exact when it is <= t. With k given, t = k; otherwise
the driver doubles t until C[m,n] <= t (Ukkonen's doubling). Work is
O(n (t - |n-m|) / 64) words.

State: ``[pv x nb, mv x nb, peq x 16 nb]`` in the lane's uint64 row; search
keeps ``[y, bottom value of block y]`` in its int64 row, global ``[first,
last, bottom value of each block]``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from engine.edit.cpu_bits import ALL, ONE, SIXTYTHREE, ZERO, advance_at, blocks, init_blocked
from engine.edit.cpu_common import (CELLS, CUT, INF, NEVER, SCORE, T, T_CUT, T_HI, T_SCAN_LO,
                                    bin_edge, flush_profile, lane, profile_column, record)
from engine.bitops import popcount64

#: Columns between two looks at every cell of the last block (a power of two).
STRONG_REDUCE = 256


@njit(nogil=True, cache=True)
def band(m, n, t):
    """(dmin, dmax): the diagonals j - i an alignment of cost <= t stays in (t >= |n - m|)."""
    diff = n - m
    p = (t - abs(diff)) // 2
    return min(0, diff) - p, max(0, diff) + p


@njit(nogil=True, cache=True)
def init_global(pat, m, n, t, ist, ust):
    """Column 0 of a global task of n columns; False when no cell can be <= t."""
    if t < abs(n - m):
        return False
    nb = (m + 63) // 64
    init_blocked(pat, m, ust, False)
    dmin, _ = band(m, n, t)
    last_row = min(m, -dmin)  # rows 0..-dmin of column 0 are in the band
    ist[0] = 0
    ist[1] = (last_row - 1) // 64 if last_row >= 1 else 0
    for b in range(nb):
        ist[2 + b] = min(64 * (b + 1), m)  # C[i,0] = i at each block's bottom
    return True


@njit(nogil=True, cache=True)
def init_search(pat, m, info, ist, ust):
    """Search: column 0 (C[i,0] = i), with the blocks that hold a row <= K on."""
    nb = (m + 63) // 64
    init_blocked(pat, m, ust, False)
    cut = max(info[T], info[CUT])
    y = min((cut - 1) // 64, nb - 1) if cut >= 1 else 0
    ist[0] = y
    ist[1] = min(64 * (y + 1), m)


@njit(nogil=True, cache=True, inline="always")
def all_above(pv, mv, rows, top_value, cut):
    """True when every cell of a block is > cut: its rows hold top_value plus the running
    sums of the vertical deltas (bit i of pv: +1, of mv: -1)."""
    v = top_value
    for i in range(rows):
        bit = np.uint64(i)
        v += np.int64((pv >> bit) & ONE) - np.int64((mv >> bit) & ONE)
        if v <= cut:
            return False
    return True


@njit(nogil=True, cache=True)
def run_search(n, mode, p_offs, text, tasks, prof, info, ist, ust, hits):
    """n search columns of one lane; returns the columns done.

    Owned columns lower their profile bins in ``prof``, with T_CUT + 1 for a
    column where row m is switched off. A run stops early after a hit that
    fills the buffer, or a best of 0.
    """
    task, pos, _, m, owned = lane(tasks, p_offs, info)
    nb, last, pvs, mvs, peq = blocks(ust, m)
    top = nb - 1
    last_rows = ((m - 1) & 63) + 1
    y = ist[0]
    bottom = ist[1]
    t = info[T]
    floor = info[CUT]
    cut = max(t, floor)
    beyond = tasks[task, T_CUT] + 1  # profile value of a column whose row m is switched off
    cells = 0
    low = INF
    edge = bin_edge(tasks, task, pos, owned)
    done = n
    for j in range(n):
        s = text[pos + j]
        hp = ZERO
        hm = ZERO
        for w in range(y):
            pv, mv, hp, hm = advance_at(pvs[w], mvs[w], peq[16 * w + s], hp, hm, SIXTYTHREE)
            pvs[w] = pv
            mvs[w] = mv
        pv, mv, hp, hm = advance_at(pvs[y], mvs[y], peq[16 * y + s], hp, hm,
                                    SIXTYTHREE if y < top else last)
        pvs[y] = pv
        mvs[y] = mv
        prev = bottom
        bottom += np.int64(hp) - np.int64(hm)
        if y < top:
            cells += 64 * (y + 1)
            # Switch on block y+1 when its first row can reach <= cut.
            eq = peq[16 * (y + 1) + s]
            if prev + (0 if eq & ONE else 1) <= cut or bottom < cut:
                y += 1
                rows = 64 if y < top else last_rows
                pv, mv, hp, hm = advance_at(ALL, ZERO, eq, hp, hm, SIXTYTHREE if y < top else last)
                pvs[y] = pv
                mvs[y] = mv
                bottom = prev + rows + np.int64(hp) - np.int64(hm)
                cells += rows
        else:
            cells += m
        # Switch off block y while all its cells are > cut: cheaply when its bottom
        # is >= cut + its rows, and every STRONG_REDUCE columns by looking at each
        # cell (edlib's two reductions). The bottom of block y-1 is this bottom
        # minus the vertical deltas of block y's rows.
        strong = ((pos + j) & (STRONG_REDUCE - 1)) == 0
        while y > 0:
            rows = 64 if y < top else last_rows
            low_bottom = bottom < cut + rows
            if low_bottom and not strong:
                break
            mask = ALL if rows == 64 else (ONE << np.uint64(rows)) - ONE
            above_y = bottom - (popcount64(pvs[y] & mask) - popcount64(mvs[y] & mask))
            if low_bottom and not all_above(pvs[y], mvs[y], rows, above_y, cut):
                break
            bottom = above_y
            y -= 1
        edge, low = profile_column(prof, tasks, task, pos + j,
                                   min(low, bottom if y == top else beyond), edge)
        if y == top and bottom <= t and owned:
            t, stop = record(bottom, pos + j, mode, task, info, hits)
            cut = max(t, floor)
            if stop:
                done = j + 1
                break
    if low < INF and edge != NEVER:
        flush_profile(prof, tasks, task, pos + done - 1, low)
    ist[0] = y
    ist[1] = bottom
    info[CELLS] += cells
    return done


@njit(nogil=True, cache=True)
def run_global(n, p_offs, text, tasks, info, ist, ust):
    """n global columns of one lane, blocks first..last of its band of threshold T; returns n."""
    task, pos, _, m, _ = lane(tasks, p_offs, info)
    nb, last, pvs, mvs, peq = blocks(ust, m)
    top = nb - 1
    last_rows = ((m - 1) & 63) + 1
    t = info[T]
    base = tasks[task, T_SCAN_LO]
    dmin, dmax = band(m, tasks[task, T_HI] - base, t)
    first = ist[0]
    last_block = ist[1]
    cells = 0
    for j in range(pos, pos + n):
        jr = j - base + 1  # 1-based column: the band holds rows jr - dmax .. jr - dmin
        s = text[j]
        hp = ONE  # C[0,j] = j (first block 0), or the +1 bound from the row above it
        hm = ZERO
        for w in range(first, last_block + 1):
            pv, mv, hp, hm = advance_at(pvs[w], mvs[w], peq[16 * w + s], hp, hm,
                                        SIXTYTHREE if w < top else last)
            pvs[w] = pv
            mvs[w] = mv
            ist[2 + w] += np.int64(hp) - np.int64(hm)
        cells += 64 * (last_block - first + 1) - (64 - last_rows if last_block == top else 0)
        low_row = min(m, jr - dmin)
        if low_row > 64 * (last_block + 1):
            # The band reaches the next block: its previous column is taken as the
            # bottom of this one then, + 1, + 2, ... (upper bounds).
            prev = ist[2 + last_block] - (np.int64(hp) - np.int64(hm))
            last_block += 1
            rows = 64 if last_block < top else last_rows
            pv, mv, hp, hm = advance_at(ALL, ZERO, peq[16 * last_block + s], hp, hm,
                                        SIXTYTHREE if last_block < top else last)
            pvs[last_block] = pv
            mvs[last_block] = mv
            ist[2 + last_block] = prev + rows + np.int64(hp) - np.int64(hm)
            cells += rows
        high_row = max(1, jr - dmax)
        first = max(first, min((high_row - 1) // 64, last_block))
    ist[0] = first
    ist[1] = last_block
    info[CELLS] += cells
    score = ist[2 + top]
    info[SCORE] = score if last_block == top and score <= t else t + 1
    return n
