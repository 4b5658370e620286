"""Helpers of the conventional and alternative CPU kernels.

Both variants have a core ``longest_prefix(alpha, r, m_end, beta, offsets, K,
early, scratch, counters, abort, counting) -> c`` that computes one matrix, and
``serial``/``coarse`` drivers that run it over a range of starts with the scan's
stop rule. Each variant writes its drivers out: a driver made by a factory around
the core would capture a dispatcher, which numba cannot cache across runs.
"""

from __future__ import annotations

from numba import njit


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
