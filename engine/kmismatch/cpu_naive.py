"""kmismatch ``naive``: every window against every pattern, symbol by symbol.

The reference point of the seed study (its "naive CPU"): O(n m r) symbol
tests, with the usual early exit once a window has k+1 mismatches.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

_NO_TABLE = np.zeros(0, dtype=np.uint64)


def build_model(slot_patterns: np.ndarray, k: int):
    """(pat, tab, prm, msk) for :func:`scan_range`: the slot patterns themselves."""
    R, m = slot_patterns.shape
    return (np.ascontiguousarray(slot_patterns, dtype=np.uint8), _NO_TABLE,
            np.array([m, k, R], dtype=np.int64), _NO_TABLE)


@njit(nogil=True, cache=True)
def scan_range(text, lo, hi, pat, tab, prm, msk, slot_code, pos, code, mis, base, cap, abort):
    """Windows starting in [lo, hi); same contract as ``cpu_pmasm.scan_range``."""
    m = prm[0]
    k = prm[1]
    R = prm[2]
    nh = 0
    for j in range(lo, hi):
        if ((j - lo) & 1023) == 0 and abort[0] != 0:
            return nh, j
        if nh + R > cap:
            return nh, j
        for r in range(R):
            d = 0
            for i in range(m):
                if (pat[r, i] & text[j + i]) == 0:
                    d += 1
                    if d > k:
                        break
            if d <= k:
                pos[base + nh] = j
                code[base + nh] = slot_code[r]
                mis[base + nh] = d
                nh += 1
    return nh, hi


# Chunk drivers (one pair per variant, so that LLVM optimises each scanner on its own).
# Every chunk has its own region of the output arrays: no two threads write one place.
@njit(nogil=True, cache=True)
def scan_chunks_serial(text, los, his, pat, tab, prm, msk, slot_code, pos, code, mis, bases, caps,
                       counts, reached, abort):
    for c in range(los.shape[0]):
        counts[c], reached[c] = scan_range(text, los[c], his[c], pat, tab, prm, msk, slot_code,
                                           pos, code, mis, bases[c], caps[c], abort)


@njit(nogil=True, cache=True, parallel=True)
def scan_chunks_multicore(text, los, his, pat, tab, prm, msk, slot_code, pos, code, mis, bases,
                          caps, counts, reached, abort):
    for c in prange(los.shape[0]):
        counts[c], reached[c] = scan_range(text, los[c], his[c], pat, tab, prm, msk, slot_code,
                                           pos, code, mis, bases[c], caps[c], abort)
