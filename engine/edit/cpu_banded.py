"""edit ``banded``: dynamic programming on the cells that can still matter (Ukkonen 1985).

Search: a cell is *active* when C <= T (k, or in best mode one less than the
best so far). C[i,j] >= C[i-1,j-1], so a column's active cells lie in rows
0..lact(j) with lact(j) <= lact(j-1) + 1; only those rows are computed, and a
row past lact(j-1) reads its left neighbour as T+1. A value computed that way
is exact whenever it is <= T, which is all a hit needs. Expected work is
O(kn) on random text instead of O(mn).

Global: an alignment of cost <= t never leaves the diagonals
[min(0, n-m) - p, max(0, n-m) + p], p = (t - |n-m|) / 2, because every step
away from the main diagonal costs an insertion or deletion. Cells outside the
band count as unreachable; C[m,n] is exact when it is <= t. With k given, t = k;
otherwise the driver doubles t until C[m,n] <= t (Ukkonen's doubling).

State (a slot's int64 row): the column, then lact (search).
"""

from __future__ import annotations

from numba import njit

from engine.edit.cpu_common import ABORT_CHECK_COLUMNS, CELLS, CMPS, SCORE, T, record


@njit(nogil=True, cache=True)
def init(m, t, col):
    for i in range(m + 1):
        col[i] = i
    col[m + 1] = min(t, m)  # lact of column 0 (search)


@njit(nogil=True, cache=True)
def scan_search(pat, m, text, a, b, own_lo, mode, task, info, col, hits, abort):
    """Search columns [a, b) under the cut-off; returns the next column."""
    t = info[T]
    lact = col[m + 1]
    cells = 0
    j = a
    stop = False
    while j < b and not stop:
        if abort[0] != 0:
            break
        block_end = min(b, j + ABORT_CHECK_COLUMNS)
        while j < block_end:
            s = text[j]
            hi = lact + 1 if lact < m else m
            diag = 0
            up = 0
            for i in range(1, lact + 1):
                left = col[i]
                v = diag if (pat[i - 1] & s) else diag + 1
                if left + 1 < v:
                    v = left + 1
                if up + 1 < v:
                    v = up + 1
                col[i] = v
                diag = left
                up = v
            if hi > lact:
                # Row lact+1 reads its left neighbour as T+1, which never wins: the
                # diagonal one is active, so v <= T+1.
                v = diag if (pat[hi - 1] & s) else diag + 1
                if up + 1 < v:
                    v = up + 1
                col[hi] = v
            cells += hi
            lact = hi
            while lact > 0 and col[lact] > t:
                lact -= 1
            j += 1
            if lact == m and j - 1 >= own_lo:
                t, stop = record(col[m], j - 1, mode, task, info, hits)
                if stop:
                    break
                while lact > 0 and col[lact] > t:  # best mode lowered t
                    lact -= 1
    col[m + 1] = lact
    info[CELLS] += cells
    info[CMPS] += cells
    return j


@njit(nogil=True, cache=True)
def scan_global(pat, m, text, a, b, base, n, info, col, abort):
    """Global columns [a, b) of a task of n columns starting at ``base``, in the band of T."""
    t = info[T]
    diff = n - m
    width = t - abs(diff)
    if width < 0:
        # Even the length difference costs more than t: C[m,n] > t without a cell.
        info[SCORE] = t + 1
        return base + n
    p = width // 2
    dmin = min(0, diff) - p
    dmax = max(0, diff) + p
    unreachable = t + 1 + m + n
    cells = 0
    j = a
    while j < b:
        if abort[0] != 0:
            break
        block_end = min(b, j + ABORT_CHECK_COLUMNS)
        while j < block_end:
            jr = j - base + 1
            s = text[j]
            ilo = max(0, jr - dmax)
            ihi = min(m, jr - dmin)
            prev_ihi = min(m, jr - 1 - dmin)
            if ilo == 0:
                col[0] = jr
                up = jr
                diag = jr - 1
                first = 1
            else:
                up = unreachable
                diag = col[ilo - 1]  # row ilo-1 is the previous column's first band row
                first = ilo
            for i in range(first, min(ihi, prev_ihi) + 1):
                left = col[i]
                v = diag if (pat[i - 1] & s) else diag + 1
                if left + 1 < v:
                    v = left + 1
                if up + 1 < v:
                    v = up + 1
                col[i] = v
                diag = left
                up = v
            if ihi > prev_ihi:  # the band's new bottom row: nothing on its left
                v = diag if (pat[ihi - 1] & s) else diag + 1
                if up + 1 < v:
                    v = up + 1
                col[ihi] = v
            cells += ihi - first + 1
            j += 1
    info[CELLS] += cells
    info[CMPS] += cells
    info[SCORE] = col[m] if col[m] <= t else t + 1
    return j
