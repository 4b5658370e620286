"""Per-r drivers shared by the conventional and alternative CPU kernels.

Both variants have a core ``longest_prefix(alpha, r, m_end, beta, offsets, K,
early, scratch, counters, abort) -> c`` that computes one matrix; these
drivers run it over a range of starts, serially or many at once (``coarse``),
with the scan's stop rule. ``scratch`` is a (2, width) int64 work area.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange


@njit(nogil=True, cache=True)
def max_record(offsets):
    longest = 0
    for i in range(offsets.shape[0] - 1):
        longest = max(longest, offsets[i + 1] - offsets[i])
    return longest


@njit(nogil=True, cache=True)
def settled(out_c, count):
    """Positions settled by a coarse slice: up to the first abort (-1)."""
    for i in range(count):
        if out_c[i] == -1:
            return i
    return count


def make_drivers(longest_prefix):
    """Serial and coarse drivers around one variant's per-r core."""

    @njit(nogil=True, cache=True)
    def serial(alpha, m_end, r_lo, r_hi, beta, offsets, K, early, out_c, counters, abort):
        """c(r) for r in [r_lo, r_hi); stops after the first r whose whole suffix occurs.

        Returns the number of positions settled (fewer when stopped or aborted).
        """
        scratch = np.empty((2, max_record(offsets) + K + 3), dtype=np.int64)
        for r in range(r_lo, r_hi):
            c = longest_prefix(alpha, r, m_end, beta, offsets, K, early, scratch, counters, abort)
            if c < 0:
                return r - r_lo
            out_c[r - r_lo] = c
            if c == m_end - r:
                return r - r_lo + 1
        return r_hi - r_lo

    @njit(nogil=True, cache=True, parallel=True)
    def coarse(alpha, m_end, r_lo, r_hi, beta, offsets, K, early, out_c, counters, abort):
        """Many r at once (prange). Each r writes its own slots, so no locks.

        Starts past one whose suffix fully occurred are skipped (``out_c = -2``);
        the shared stop hint may be stale, which only wastes work.
        """
        count = r_hi - r_lo
        stop = np.full(1, r_hi, dtype=np.int64)
        per_r = np.zeros((count, 2), dtype=np.int64)
        width = max_record(offsets) + K + 3
        for idx in prange(count):
            r = r_lo + idx
            if r > stop[0]:
                out_c[idx] = -2
                continue
            scratch = np.empty((2, width), dtype=np.int64)
            c = longest_prefix(alpha, r, m_end, beta, offsets, K, early, scratch, per_r[idx], abort)
            out_c[idx] = c
            if c == m_end - r and r < stop[0]:
                stop[0] = r
        for idx in range(count):
            counters[0] += per_r[idx, 0]
            counters[1] += per_r[idx, 1]
        return settled(out_c, count)

    return serial, coarse
