"""edit ``dp``: Sellers' column-by-column dynamic programming.

One column of m+1 values is kept. The top row is C[0,j] = 0 in search mode (an
occurrence may start anywhere) and C[0,j] = j in global mode. Every cell is
computed: m cells and m symbol comparisons per text column.
"""

from __future__ import annotations

from numba import njit

from engine.edit.cpu_common import ABORT_CHECK_COLUMNS, CELLS, CMPS, SCORE, T, record


@njit(nogil=True, cache=True)
def init(m, col):
    for i in range(m + 1):
        col[i] = i


@njit(nogil=True, cache=True)
def scan(pat, m, text, a, b, base, anchored, own_lo, mode, task, info, col, hits, abort):
    """Columns [a, b) of the task whose first column is ``base``; returns the next column."""
    t = info[T]
    j = a
    stop = False
    while j < b and not stop:
        if abort[0] != 0:
            break
        block_end = min(b, j + ABORT_CHECK_COLUMNS)
        while j < block_end:
            s = text[j]
            diag = col[0]
            up = j - base + 1 if anchored else 0
            col[0] = up
            for i in range(1, m + 1):
                left = col[i]
                v = diag if (pat[i - 1] & s) else diag + 1
                if left + 1 < v:
                    v = left + 1
                if up + 1 < v:
                    v = up + 1
                col[i] = v
                diag = left
                up = v
            j += 1
            if up <= t and j - 1 >= own_lo:
                t, stop = record(up, j - 1, mode, task, info, hits)
                if stop:
                    break
    cells = (j - a) * m
    info[CELLS] += cells
    info[CMPS] += cells
    info[SCORE] = col[m]
    return j
