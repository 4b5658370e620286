"""nw ``rows``: the textbook row sweep, one cell after another (the baseline).

Each cell takes the best of its diagonal, upper and left neighbours; the left
neighbour is the cell just computed, so the row is one dependency chain and
does not vectorise. The diagonal and upper moves are combined first so that
only one maximum sits on that chain, and the substitution score comes from a
16-entry table per row rather than a test, which would be an unpredictable
branch on DNA. Multicore runs these tiles on the tile wavefront
(:mod:`engine.nw.cpu_wavefront`).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from engine.nw.cpu_common import U1, record_row, sample_span


@njit(nogil=True, cache=True)
def rows_tile(a, b, top, left, bottom, right, match, mismatch, gap,
              rec_rows, rec_cols, snap, row0, col0, abort):
    """One tile by rows (the contract is in :mod:`engine.nw.cpu_common`). False when aborted."""
    h = a.shape[0]
    w = b.shape[0]
    row = top.copy()
    right[0] = top[w]
    r_ptr, r_end = sample_span(rec_rows, row0 + 1, row0 + h + 1)
    c_lo, c_hi = sample_span(rec_cols, col0 + 1, col0 + w + 1)
    wu = np.uint64(w)
    score_of = np.empty(16, dtype=np.int64)   # s(a_i, code) for the 16 base sets
    for i in range(1, h + 1):
        if abort[0] != 0:
            return False
        ai = a[i - 1]
        for code in range(16):
            score_of[code] = match if (ai & code) != 0 else mismatch
        diag = np.int64(row[0])
        lft = np.int64(left[i])
        row[0] = lft
        for j in range(U1, wu + U1):
            up = np.int64(row[j])
            # The left move last: only one maximum sits on the chain from cell to cell.
            v = max(diag + score_of[b[j - U1]], up + gap)
            lft = max(v, lft + gap)
            row[j] = lft
            diag = up
        right[i] = row[w]
        if r_ptr < r_end and rec_rows[r_ptr] == row0 + i:
            record_row(snap, r_ptr, rec_cols, c_lo, c_hi, col0, row)
            r_ptr += 1
    bottom[:] = row
    return True
