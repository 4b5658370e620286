"""kmismatch ``shift-add``: Baeza-Yates and Gonnet's counters, one pattern at a time.

For a pattern of length m, counter i (b bits, b = ceil(log2(m+1)) so that it
never overflows) holds the mismatches between pattern[0..i] and the i+1 text
symbols that end at the current one. Reading text symbol c shifts every
counter up one field and adds the table word T[c], whose field i is 1 when
pattern[i] does not match c. Counter m-1 is then the Hamming distance of the
window that ends there. ``64 // b`` counters fit a word; longer patterns use
several words, and the counter leaving the top of one word enters the next.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from engine.kmismatch.cpu_pmasm import counter_bits

_NO_PATTERNS = np.zeros((0, 0), dtype=np.uint8)
_NO_MASKS = np.zeros(0, dtype=np.uint64)


def build_model(slot_patterns: np.ndarray, k: int):
    """(pat, tab, prm, msk) for :func:`scan_range`: T[slot, symbol, word] for all 16 codes."""
    R, m = slot_patterns.shape
    b = counter_bits(m)
    fpw = 64 // b
    W = -(-m // fpw)
    mismatch = (slot_patterns[:, :, None] & np.arange(16, dtype=np.uint8)[None, None, :]) == 0
    tab = np.zeros((R, 16, W), dtype=np.uint64)
    for i in range(m):
        tab[:, :, i // fpw] |= mismatch[:, i, :].astype(np.uint64) << np.uint64((i % fpw) * b)
    return _NO_PATTERNS, tab.ravel(), np.array([m, k, R, b, fpw, W], dtype=np.int64), _NO_MASKS


@njit(nogil=True, cache=True)
def scan_range(text, lo, hi, pat, tab, prm, msk, slot_code, pos, code, mis, base, cap, abort):
    """Windows starting in [lo, hi); same contract as ``cpu_pmasm.scan_range``.

    The counters start at zero m-1 symbols before the first window ends, so a
    range needs nothing from the ranges before it.
    """
    m = prm[0]
    k = prm[1]
    R = prm[2]
    b = prm[3]
    fpw = prm[4]
    W = prm[5]
    b_u = np.uint64(b)
    field_mask = np.uint64((1 << b) - 1)
    top = np.uint64((fpw - 1) * b)
    full = fpw * b == 64
    word_mask = ~np.uint64(0) if full else (np.uint64(1) << np.uint64(fpw * b)) - np.uint64(1)
    last_word = (m - 1) // fpw
    last_shift = np.uint64(((m - 1) % fpw) * b)
    state = np.zeros(R * W, dtype=np.uint64)
    first = lo + m - 1
    nh = 0
    for p in range(lo, hi + m - 1):
        j = p - m + 1
        ends_window = p >= first
        if ends_window:
            if ((j - lo) & 1023) == 0 and abort[0] != 0:
                return nh, j
            if nh + R > cap:
                return nh, j
        c = text[p]
        for r in range(R):
            so = r * W
            to = (r * 16 + c) * W
            carry = np.uint64(0)
            for w in range(W):
                x = state[so + w]
                state[so + w] = (((x << b_u) & word_mask) | carry) + tab[to + w]
                carry = (x >> top) & field_mask
            if ends_window:
                d = np.int64((state[so + last_word] >> last_shift) & field_mask)
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
