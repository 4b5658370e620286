"""kdiff ``alternative``: the diagonal matrix L of the seed study (Landau-Vishkin).

L[d,e] is the highest row of D on diagonal d = j - i that is reachable with e
differences, after sliding along matches. Column e is computed from column
e-1 only, so memory is two columns of n+K+2 cells. c(r) is the largest entry
of column K = k-1 (rows are capped at the suffix length and at the text end).
``opt2`` stops as soon as any entry reaches the end of the suffix: the whole
suffix occurs within K, so r has no candidate.

Forms as for conventional: per-r sweeps (serial, ``coarse``), and
``fine``/``coarse+fine``, where the cells of one column of L (for one or
several matrices) are computed in parallel; ``opt3`` swaps the serial
reduction of each column for per-thread result slots.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from engine.kdiff.cpu_common import max_record

_NEG = -(1 << 40)


@njit(nogil=True, cache=True)
def _l_span(alpha, start, mp, beta, lo, n, K, e, d_lo, d_hi, prev, cur, record, scratch):
    """L[d,e] for d in [d_lo, d_hi) from column e-1 (arrays indexed d + K + 1).

    Works on a span of cells, not one: numba reference-counts the array arguments of
    every call, which would cost more than the cell itself. Returns (best, comparisons),
    best being the largest row that counts for c (column K, or a full match). With
    ``record`` each cell's candidate also goes to ``scratch`` (the shared-result form).
    The third value is the column's highest row, c at e edits (``kdiff --all-k``).
    """
    base = K + 1
    best = _NEG
    top = _NEG
    cmps = 0
    for d in range(d_lo, d_hi):
        if e == 0:
            row = 0 if d >= 0 else _NEG
        else:
            row = prev[base + d] + 1                       # substitution
            v = prev[base + d + 1] + 1                     # from diagonal d+1: step down
            if v > row:
                row = v
            if d - 1 >= -(e - 1):
                v = prev[base + d - 1]                     # from diagonal d-1: step right
                if v > row:
                    row = v
        if row >= 0:
            if row > mp:
                row = mp
            if row > n - d:
                row = n - d
            while row < mp and row + d < n:
                cmps += 1
                if alpha[start + row] & beta[lo + row + d]:
                    row += 1
                else:
                    break
        else:
            row = _NEG
        cur[base + d] = row
        if row > top:
            top = row
        counts = e == K or row == mp
        if counts and row > best:
            best = row
        if record:
            scratch[base + d] = row if counts else _NEG
    return best, cmps, top


@njit(nogil=True, cache=True)
def longest_prefix(alpha, start, m_end, beta, offsets, K, opt2, cols, lv, counters, abort,
                   counting):
    """c(r) from column K of L, one matrix per background record. -1 when aborted.

    ``cols`` is the (2, width) scratch: two columns of L. ``lv`` (L long) takes the lower
    levels of ``kdiff --all-k``: column e of L holds c at e edits, so the largest k gives
    every smaller one; opt2 then stops at a full match at the smallest k.
    """
    mp = m_end - start
    c = min(K, mp)
    levels = lv.shape[0]
    for t in range(levels):
        lv[t] = min(t, mp)
    cells = 0
    cmps = 0
    for rec in range(offsets.shape[0] - 1):
        lo = offsets[rec]
        n = offsets[rec + 1] - lo
        prev = cols[0]
        cur = cols[1]
        for x in range(n + K + 3):
            prev[x] = _NEG
            cur[x] = _NEG
        for e in range(K + 1):
            if abort[0] != 0:
                return -1
            best, cm, top = _l_span(alpha, start, mp, beta, lo, n, K, e, -e, n + 1, prev, cur,
                                    False, prev)
            if counting:
                cmps += cm
            if best > c:
                c = best
            if e < levels and top > lv[e]:
                lv[e] = top
            cells += n + 1 + e
            if opt2 and (c == mp if levels == 0 else top == mp):
                for t in range(e + 1, levels):  # L only grows with e: the rest match too
                    lv[t] = mp
                break
            prev, cur = cur, prev
        if opt2 and (c == mp if levels == 0 else lv[0] == mp):
            break
    counters[0] += cells
    counters[1] += cmps
    return c


@njit(nogil=True, cache=True, parallel=True)
def fine_batch(alpha, m_end, starts, beta, offsets, K, opt2, opt3, out_c, counters, abort, nthreads,
               counting):
    """c(r) for every r in ``starts``; the cells of a column of L in parallel."""
    nq = starts.shape[0]
    width = max_record(offsets) + K + 3
    cols = np.empty((2, nq, width), dtype=np.int64)
    scratch = np.empty((nq, width), dtype=np.int64)    # shared result scratch (no opt3)
    slots = np.zeros((nthreads, nq), dtype=np.int64)   # opt3: per-thread result slots
    slot_cmps = np.zeros(nthreads, dtype=np.int64)
    mps = np.empty(nq, dtype=np.int64)
    for q in range(nq):
        mps[q] = m_end - starts[q]
        out_c[q] = min(K, mps[q])
    base = K + 1
    cells = 0
    for rec in range(offsets.shape[0] - 1):
        lo = offsets[rec]
        n = offsets[rec + 1] - lo
        live = np.ones(nq, dtype=np.bool_)
        for q in range(nq):
            if opt2 and out_c[q] == mps[q]:
                live[q] = False
        cols[:, :, :] = _NEG
        for e in range(K + 1):
            if abort[0] != 0:
                return False
            prev = cols[(e + 1) % 2]
            cur = cols[e % 2]
            span = n + 1 + e
            total = span * nq
            slots[:, :] = 0
            # Cells of this column (of every live matrix) split over the threads.
            for th in prange(nthreads):
                a_ = th * total // nthreads
                b_ = (th + 1) * total // nthreads
                flat = a_
                while flat < b_:
                    q = flat // span
                    seg_end = min(b_, (q + 1) * span)
                    if live[q]:
                        d_lo = flat - q * span - e
                        d_hi = seg_end - q * span - e
                        best, cm, _ = _l_span(alpha, starts[q], mps[q], beta, lo, n, K, e, d_lo, d_hi,
                                           prev[q], cur[q], not opt3, scratch[q])
                        if opt3 and best > slots[th, q]:
                            slots[th, q] = best  # opt3: this thread's own result slot
                        if counting:
                            slot_cmps[th] += cm
                    flat = seg_end
            if not opt3:
                # The shared result, updated one cell at a time (the critical section).
                for q in range(nq):
                    if live[q]:
                        for d in range(-e, n + 1):
                            if scratch[q, base + d] > slots[0, q]:
                                slots[0, q] = scratch[q, base + d]
            any_live = False
            for q in range(nq):
                if not live[q]:
                    continue
                cells += span
                for th in range(nthreads):
                    if slots[th, q] > out_c[q]:
                        out_c[q] = slots[th, q]
                if opt2 and out_c[q] == mps[q]:
                    live[q] = False
                else:
                    any_live = True
            if not any_live:
                break
    counters[0] += cells
    for th in range(nthreads):
        counters[1] += slot_cmps[th]
    return True

