"""Site refinement for in-silico PCR (numba).

The edit family finds every end position where a primer (or its reverse complement)
occurs within k edits. For each such end these kernels settle the site exactly as
:mod:`engine.primers.pcr` defines it: the distance, the fewest edits in the primer's
3' window among the alignments that realise that distance, and the smallest start
that realises both. The DP orders (distance, 3' edits, start) lexicographically; the
first two add up along a path and the start is carried, so the order is kept cell
by cell (Sellers' recurrence with a free start).

A pattern symbol and a text symbol match when their IUPAC sets intersect.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

_BIG = np.int64(1) << 40


@njit(nogil=True, cache=True, inline="always")
def _key(d, e3, s):
    # (distance, 3' edits, start) in one integer: start < 2^40, e3 and d < 2^11.
    return (d << 51) | (e3 << 40) | s


@njit(nogil=True, cache=True)
def _refine_one(pat, minus, window, text, lo, j, out):
    """(d, e3, start) of the best alignment of ``pat`` ending at text[j], start >= lo."""
    m = pat.shape[0]
    n = j - lo + 1
    mask = (np.int64(1) << 40) - 1
    col = np.empty(m + 1, dtype=np.int64)
    # Column before the window: the empty alignment (start = lo) and pattern-only prefixes.
    col[0] = _key(0, 0, lo)
    e3 = 0
    for i in range(1, m + 1):
        w = (i - 1 >= m - window) if not minus else (i - 1 < window)
        if w:
            e3 += 1
        col[i] = _key(i, e3, lo)
    for c in range(n):
        t = text[lo + c]
        diag = col[0]
        col[0] = _key(0, 0, lo + c + 1)  # free start: an alignment may begin after column c
        up = col[0]
        for i in range(1, m + 1):
            p_in = (i - 1 >= m - window) if not minus else (i - 1 < window)
            # deletion (text symbol with no pattern symbol) after pattern row i: in the
            # window when the primer base before it (5'->3') is a window base.
            d_in = (i > m - window) if not minus else (i < window)
            left = col[i]
            if pat[i - 1] & t:
                v = diag
            else:
                v = diag + _key(1, 1 if p_in else 0, 0)
            cand = up + _key(1, 1 if p_in else 0, 0)
            if cand < v:
                v = cand
            cand = left + _key(1, 1 if d_in else 0, 0)
            if cand < v:
                v = cand
            diag = left
            col[i] = v
            up = v
    v = col[m]
    out[0] = v >> 51
    out[1] = (v >> 40) & 2047
    out[2] = v & mask


@njit(nogil=True, cache=True, parallel=True)
def refine_sites(pats, p_offs, rc_pats, text, rec_lo, hit_pat, hit_minus, hit_end, k, window,
                 indels, out):
    """For each hit h (pattern, strand, 0-based flat end, record start): out[h] = (d, e3, start).

    ``indels`` False: the window of the pattern's length ending at the end, mismatches
    only (d = -1 when it does not fit in the record).
    """
    for h in prange(hit_end.shape[0]):
        p = hit_pat[h]
        minus = hit_minus[h] != 0
        a, b = p_offs[p], p_offs[p + 1]
        pat = rc_pats[a:b] if minus else pats[a:b]
        m = b - a
        w = min(window, m)
        j = hit_end[h]
        if indels:
            lo = max(rec_lo[h], j - (m + k) + 1)
            row = np.empty(3, dtype=np.int64)
            _refine_one(pat, minus, w, text, lo, j, row)
            out[h, 0], out[h, 1], out[h, 2] = row[0], row[1], row[2]
        else:
            s = j - m + 1
            if s < rec_lo[h]:
                out[h, 0], out[h, 1], out[h, 2] = -1, 0, s
                continue
            d = 0
            e3 = 0
            for i in range(m):
                if (pat[i] & text[s + i]) == 0:
                    d += 1
                    if (i >= m - w) if not minus else (i < w):
                        e3 += 1
            out[h, 0], out[h, 1], out[h, 2] = d, e3, s


def warm_up() -> None:
    """Compile (or load from the cache) on a tiny input."""
    pats = np.array([1, 2, 4, 8], dtype=np.uint8)
    offs = np.array([0, 4], dtype=np.int64)
    text = np.array([1, 2, 4, 8, 1], dtype=np.uint8)
    one = np.zeros(1, dtype=np.int64)
    out = np.zeros((1, 3), dtype=np.int64)
    for indels in (True, False):
        refine_sites(pats, offs, pats, text, one, one, one, one + 3, 1, 2, indels, out)


def compiled() -> bool:
    return bool(refine_sites.signatures)
