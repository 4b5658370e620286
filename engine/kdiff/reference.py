"""Slow, obvious oracle for kdiff. Used by tests only.

For each start r it fills the whole semi-global DP matrix of alpha[r:] against
each background record (top row 0, left column i) and takes the largest row
that holds a value <= k-1. No cut-offs, no early exits inside a matrix.
"""

from __future__ import annotations

import numpy as np


def longest_prefix_within(pattern: np.ndarray, texts: list[np.ndarray], k: int) -> int:
    """c: the longest prefix of ``pattern`` that occurs in one of ``texts`` within k-1 edits."""
    m = len(pattern)
    best = min(k - 1, m)
    for text in texts:
        prev = list(range(m + 1))  # column 0: D[i,0] = i
        for b in text:
            cur = [0] * (m + 1)
            for i in range(1, m + 1):
                cost = 0 if (int(pattern[i - 1]) & int(b)) else 1
                cur[i] = min(prev[i - 1] + cost, prev[i] + 1, cur[i - 1] + 1)
                if cur[i] <= k - 1 and i > best:
                    best = i
            prev = cur
    return best


def kdiff_reference(alpha: np.ndarray, betas: list[np.ndarray], k: int) -> list[tuple[int, int]]:
    """Candidates as 0-based (start, length) for one target record.

    ``betas`` already holds every text to search (reverse complements included
    for both strands).
    """
    out = []
    m = len(alpha)
    for r in range(m):
        c = longest_prefix_within(alpha[r:], betas, k)
        if c >= m - r:
            break
        out.append((r, c + 1))
    return out


def profile_reference(alpha: np.ndarray, betas: list[np.ndarray], k: int) -> np.ndarray:
    """c(r) for every r until the scan stops (used to check per-position profiles)."""
    cs = []
    m = len(alpha)
    for r in range(m):
        c = longest_prefix_within(alpha[r:], betas, k)
        cs.append(c)
        if c >= m - r:
            break
    return np.array(cs, dtype=np.int64)
