"""edit ``dp``: Sellers' column-by-column dynamic programming.

One column of m+1 values is kept. The top row is C[0,j] = 0 in search mode (an
occurrence may start anywhere) and C[0,j] = j in global mode. Every cell is
computed: m cells and m symbol comparisons per text column.
"""

from __future__ import annotations

from numba import njit

from engine.edit.cpu_common import (CELLS, CMPS, INF, NEVER, SCORE, T, T_SCAN_LO, bin_edge,
                                    flush_profile, lane, profile_column, record)


@njit(nogil=True, cache=True)
def init(m, col):
    for i in range(m + 1):
        col[i] = i


@njit(nogil=True, cache=True)
def run(n, anchored, mode, pats, p_offs, text, tasks, prof, info, col, hits):
    """n columns of one lane; returns the columns done (fewer after a hit that fills the
    buffer, or a best of 0). Owned columns lower their profile bins in ``prof``."""
    task, pos, off, m, owned = lane(tasks, p_offs, info)
    pat = pats[off:off + m]
    top = pos - tasks[task, T_SCAN_LO] + 1 if anchored else 0  # C[0,j] at the run's first column
    step = 1 if anchored else 0
    t = info[T]
    low = INF
    edge = bin_edge(tasks, task, pos, owned)
    done = n
    for j in range(n):
        s = text[pos + j]
        diag = col[0]
        up = top + step * j
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
        edge, low = profile_column(prof, tasks, task, pos + j, min(low, up), edge)
        if up <= t and owned:
            t, stop = record(up, pos + j, mode, task, info, hits)
            if stop:
                done = j + 1
                break
    if low < INF and edge != NEVER:
        flush_profile(prof, tasks, task, pos + done - 1, low)
    info[SCORE] = col[m]
    info[CELLS] += done * m
    info[CMPS] += done * m
    return done
