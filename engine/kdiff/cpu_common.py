"""What the conventional and alternative CPU kernels and their scans (cpu_scan.py) share."""

from __future__ import annotations

from numba import njit


@njit(nogil=True, cache=True)
def max_record(offsets):
    longest = 0
    for i in range(offsets.shape[0] - 1):
        longest = max(longest, offsets[i + 1] - offsets[i])
    return longest
