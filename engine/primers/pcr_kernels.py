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


@njit(nogil=True, cache=True, inline="always")
def _ungapped(pat, minus, window, text, s, out):
    """(mismatches, 3' mismatches) of ``pat`` read along text[s..] without gaps."""
    m = pat.shape[0]
    d = 0
    e3 = 0
    for i in range(m):
        if (pat[i] & text[s + i]) == 0:
            d += 1
            if (i >= m - window) if not minus else (i < window):
                e3 += 1
    out[0], out[1] = d, e3


@njit(nogil=True, cache=True, parallel=True)
def refine_sites(pats, p_offs, rc_pats, text, rec_lo, hit_pat, hit_minus, hit_end, k, window,
                 indels, out):
    """For each hit h (pattern, strand, 0-based flat end, record start):
    out[h] = (d, e3, start, ungapped mismatches, ungapped 3' mismatches).

    The first three are the best alignment ending there (``indels``), or the ungapped one
    (``indels`` False: mismatches only); the last two are always the ungapped alignment
    of the pattern's length ending there, which is what mismatch-only tools (ipcress)
    report. Where that does not fit in the record, its mismatches are -1 (and d too
    without indels). No alignment holds a base of an assembly gap (code 0, engine.gaps):
    a site ends at a gap's edge as at a record's, so the sites are those of the records
    cut at their gaps.
    """
    for h in prange(hit_end.shape[0]):
        p = hit_pat[h]
        minus = hit_minus[h] != 0
        a, b = p_offs[p], p_offs[p + 1]
        pat = rc_pats[a:b] if minus else pats[a:b]
        m = b - a
        w = min(window, m)
        j = hit_end[h]
        lo = max(rec_lo[h], j - (m + k) + 1 if indels else j - m + 1)
        for c in range(j, lo - 1, -1):
            if text[c] == 0:  # an assembly gap base (engine.gaps): as a record's edge
                lo = c + 1
                break
        row = np.empty(3, dtype=np.int64)
        s = j - m + 1
        if s < lo:
            out[h, 3], out[h, 4] = -1, 0
        else:
            _ungapped(pat, minus, w, text, s, row)
            out[h, 3], out[h, 4] = row[0], row[1]
        if indels:
            _refine_one(pat, minus, w, text, lo, j, row)
            out[h, 0], out[h, 1], out[h, 2] = row[0], row[1], row[2]
        else:
            out[h, 0], out[h, 1], out[h, 2] = out[h, 3], out[h, 4], s


@njit(nogil=True, cache=True)
def dominated(key, start, end, edits, gapped, reach):
    """For candidates sorted by (key, start): True where a gapped candidate overlaps
    another of its key with fewer edits, or an ungapped one with as few (the ungapped
    alignment wins a tie). ``reach``: no candidate is longer (how far back to look)."""
    n = key.shape[0]
    out = np.zeros(n, dtype=np.bool_)
    for i in range(n):
        if not gapped[i]:
            continue
        for step in (-1, 1):
            j = i + step
            while 0 <= j < n and key[j] == key[i]:
                if step < 0 and start[j] < start[i] - reach:
                    break
                if step > 0 and start[j] > end[i]:
                    break
                if end[j] >= start[i] and (edits[j] < edits[i]
                                           or (edits[j] == edits[i] and not gapped[j])):
                    out[i] = True
                    break
                j += step
            if out[i]:
                break
    return out
