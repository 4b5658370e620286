"""Full-matrix traceback: the base case of Hirschberg's recursion (small sub-problems only).

One byte per cell records which moves reach the cell's optimum; the walk
back from the corner prefers the diagonal, then a gap in ``b`` (D), then a
gap in ``a`` (I), so every variant and backend returns the same alignment.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from engine.nw.alignment import OP_D, OP_I, OP_M
from engine.nw.cpu_common import U1

_DIAG, _UP, _LEFT = np.uint8(1), np.uint8(2), np.uint8(4)


@njit(nogil=True, cache=True)
def full_traceback(a, b, match, mismatch, gap, ops):
    """Global alignment of ``a`` and ``b``; writes the operations into ``ops`` (at least
    len(a) + len(b) long, filled from the end). Returns (score, number of operations)."""
    h = a.shape[0]
    w = b.shape[0]
    moves = np.zeros((h + 1, w + 1), dtype=np.uint8)
    row = np.empty(w + 1, dtype=np.int64)
    for j in range(w + 1):
        row[j] = j * gap
        moves[0, j] = _LEFT
    wu = np.uint64(w)
    for i in range(1, h + 1):
        ai = a[i - 1]
        diag = row[0]
        lft = i * gap
        row[0] = lft
        moves[i, 0] = _UP
        mv = moves[i]
        for j in range(U1, wu + U1):
            up = row[j]
            d = diag + (match if (ai & b[j - U1]) != 0 else mismatch)
            u = up + gap
            lf = lft + gap
            v = max(d, max(u, lf))
            mv[j] = (_DIAG if d == v else 0) | (_UP if u == v else 0) | (_LEFT if lf == v else 0)
            row[j] = v
            diag = up
            lft = v
    score = row[w]
    n = ops.shape[0]
    k = n
    i, j = h, w
    while i > 0 or j > 0:
        m = moves[i, j]
        k -= 1
        if i > 0 and j > 0 and (m & _DIAG) != 0:
            ops[k] = OP_M
            i -= 1
            j -= 1
        elif i > 0 and (m & _UP) != 0:
            ops[k] = OP_D
            i -= 1
        else:
            ops[k] = OP_I
            j -= 1
    return score, n - k
