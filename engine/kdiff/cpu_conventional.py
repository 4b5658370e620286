"""kdiff ``conventional``: the DP matrix D of the seed study, on the CPU.

D has a row per prefix of alpha[r:] and a column per background symbol;
D[0,j] = 0 (a match may start anywhere) and D[i,0] = i. c(r) is the highest
row holding a value <= K = k-1. Row minima never decrease, so the rows that
hold such a value are exactly 1..c(r); ``opt1`` stops a matrix at the first
row whose minimum is >= k.

Forms:
- per-r row sweeps (serial, and ``coarse``: many r under prange);
- ``fine``/``coarse+fine``: stripes of rows, each swept by anti-diagonals whose
  cells are computed in parallel; the stripe's bottom row is saved for the next
  stripe (the study's tiles), and opt1 is checked on it. ``fine`` is a batch of
  one matrix, ``coarse+fine`` a batch of several, in one kernel.
- ``opt3``: each thread keeps its best row in a private slot, merged once per
  stripe; without it every anti-diagonal's hits go through a shared array that
  the main thread reduces serially (the critical section of the study).
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from engine.kdiff.cpu_common import max_record


@njit(nogil=True, cache=True, inline="always")
def edit_cell(diag, up, left, a, b):
    """D[i,j] from its three neighbours; symbols match when their IUPAC sets intersect."""
    v = diag + (0 if (a & b) else 1)
    if up + 1 < v:
        v = up + 1
    if left + 1 < v:
        v = left + 1
    return v


@njit(nogil=True, cache=True)
def longest_prefix(alpha, start, m_end, beta, offsets, K, opt1, scratch, lv, counters, abort,
                   counting):
    """c(r) by row sweeps, one matrix per background record. -1 when aborted.

    ``lv`` (L long) takes the lower levels of ``kdiff --all-k``: c for t = 0..L-1 edits,
    the last row whose minimum is <= t (row minima never decrease).
    """
    row = scratch[0]
    mp = m_end - start
    c = min(K, mp)
    levels = lv.shape[0]
    for t in range(levels):
        lv[t] = min(t, mp)
    cells = 0
    for rec in range(offsets.shape[0] - 1):
        lo = offsets[rec]
        hi = offsets[rec + 1]
        n = hi - lo
        for j in range(n + 1):
            row[j] = 0
        for i in range(1, mp + 1):
            if abort[0] != 0:
                return -1
            a = alpha[start + i - 1]
            diag = row[0]
            row[0] = i
            left = i
            rowmin = i
            for j in range(1, n + 1):
                up = row[j]
                v = edit_cell(diag, up, left, a, beta[lo + j - 1])
                row[j] = v
                diag = up
                left = v
                if v < rowmin:
                    rowmin = v
            cells += n
            if rowmin <= K:
                if i > c:
                    c = i
                for t in range(rowmin, levels):
                    if i > lv[t]:
                        lv[t] = i
            elif opt1:
                break
    counters[0] += cells
    if counting:
        counters[1] += cells  # one symbol comparison per cell
    return c


@njit(nogil=True, cache=True, parallel=True)
def fine_batch(alpha, m_end, starts, beta, offsets, K, opt1, opt3, stripe, out_c, counters, abort, nthreads,
               counting):
    """c(r) for every r in ``starts``; cells of an anti-diagonal in parallel.

    Returns False when aborted.
    """
    nq = starts.shape[0]
    mps = np.empty(nq, dtype=np.int64)
    for q in range(nq):
        mps[q] = m_end - starts[q]
        out_c[q] = min(K, mps[q])
    width = max_record(offsets) + 1
    top = np.empty((nq, width), dtype=np.int64)       # bottom row of the previous stripe
    newtop = np.empty((nq, width), dtype=np.int64)
    ad = np.empty((3, nq, stripe), dtype=np.int64)    # anti-diagonals t-2, t-1, t
    hits = np.zeros((nq, stripe), dtype=np.int64)     # shared result scratch (no opt3)
    slots = np.zeros((nthreads, nq), dtype=np.int64)  # opt3: per-thread result slots
    cells = 0
    for rec in range(offsets.shape[0] - 1):
        lo = offsets[rec]
        n = offsets[rec + 1] - lo
        live = np.ones(nq, dtype=np.bool_)
        for q in range(nq):
            for j in range(n + 1):
                top[q, j] = 0
        i0 = 0
        maxmp = 0
        for q in range(nq):
            maxmp = max(maxmp, mps[q])
        while i0 < maxmp:
            if abort[0] != 0:
                return False
            h = min(stripe, maxmp - i0)
            slots[:, :] = 0
            for t in range(h + n - 1):
                cur = t % 3
                p1 = (t + 2) % 3
                p2 = (t + 1) % 3
                ii_lo = max(0, t - (n - 1))
                ii_hi = min(h - 1, t)
                span = ii_hi - ii_lo + 1
                total = span * nq
                if span <= 0:
                    continue
                # Cells of this anti-diagonal (of every live matrix) split over the threads.
                for th in prange(nthreads):
                    a_ = th * total // nthreads
                    b_ = (th + 1) * total // nthreads
                    flat = a_
                    while flat < b_:
                        q = flat // span
                        seg_end = min(b_, (q + 1) * span)
                        if live[q]:
                            best = _fine_span(alpha, starts[q], beta, lo, t, ii_lo + flat - q * span,
                                              ii_lo + seg_end - q * span, ii_lo, i0, h, n, mps[q], K,
                                              top[q], newtop[q], ad[cur, q], ad[p1, q], ad[p2, q],
                                              not opt3, hits[q])
                            if opt3 and best > slots[th, q]:
                                slots[th, q] = best  # opt3: this thread's own result slot
                        flat = seg_end
                if not opt3:
                    # The shared result, updated one cell at a time (the critical section).
                    for q in range(nq):
                        if live[q]:
                            for x in range(span):
                                if hits[q, x] != 0:
                                    row_i = i0 + ii_lo + x + 1
                                    if row_i > slots[0, q]:
                                        slots[0, q] = row_i
                for q in range(nq):
                    if live[q]:
                        rows_q = min(h, mps[q] - i0)
                        cells += max(0, min(ii_hi, rows_q - 1) - ii_lo + 1)
            for q in range(nq):
                if not live[q]:
                    continue
                best = 0
                for th in range(nthreads):
                    if slots[th, q] > best:
                        best = slots[th, q]
                if best > out_c[q]:
                    out_c[q] = best
                rows_q = min(h, mps[q] - i0)
                last = i0 + rows_q
                if last >= mps[q] or (opt1 and best < last):
                    live[q] = False  # done, or opt1: the stripe's bottom row is all >= k
                else:
                    for j in range(n + 1):
                        top[q, j] = newtop[q, j]
                    top[q, 0] = last
            i0 += h
    counters[0] += cells
    if counting:
        counters[1] += cells
    return True


@njit(nogil=True, cache=True)
def _fine_span(alpha, start, beta, lo, t, ii_a, ii_b, ii_lo, i0, h, n, mp, K, top, newtop,
               ad_cur, ad_p1, ad_p2, record, hits):
    """Cells ii in [ii_a, ii_b) of anti-diagonal t of one stripe (row i0+ii+1, column t-ii+1).

    A span per call, not a cell: numba reference-counts array arguments on every call.
    Returns the highest row holding a value <= K (0 if none); with ``record`` each cell's
    verdict also goes to ``hits[ii - ii_lo]`` (the shared-result form).
    """
    best = 0
    for ii in range(ii_a, ii_b):
        row_i = i0 + ii + 1
        hit = False
        if row_i <= mp:
            j = t - ii + 1
            a = alpha[start + row_i - 1]
            if ii == 0:
                diag = top[j - 1]
                up = top[j]
            else:
                diag = ad_p2[ii - 1] if j > 1 else row_i - 1
                up = ad_p1[ii - 1]
            left = ad_p1[ii] if j > 1 else row_i
            v = edit_cell(diag, up, left, a, beta[lo + j - 1])
            ad_cur[ii] = v
            if ii == h - 1 or row_i == mp:
                newtop[j] = v
            hit = v <= K
            if hit and row_i > best:
                best = row_i
        if record:
            hits[ii - ii_lo] = 1 if hit else 0
    return best
