"""Slow, obvious oracles for kdiff and its closest-match search. Used by tests only.

For each start r it fills the whole semi-global DP matrix of alpha[r:] against
each background record (top row 0, left column i) and takes the largest row
that holds a value <= k-1. No cut-offs, no early exits inside a matrix.
"""

from __future__ import annotations

import numpy as np


def _columns(pattern: np.ndarray, text: np.ndarray):
    """The columns 1.. of the semi-global DP of ``pattern`` against ``text``, whole (top row
    0, column 0: D[i,0] = i), one a text symbol."""
    m = len(pattern)
    prev = list(range(m + 1))
    for b in text:
        cur = [0] * (m + 1)
        for i in range(1, m + 1):
            cost = 0 if (int(pattern[i - 1]) & int(b)) else 1
            cur[i] = min(prev[i - 1] + cost, prev[i] + 1, cur[i - 1] + 1)
        yield cur
        prev = cur


def longest_prefix_within(pattern: np.ndarray, texts: list[np.ndarray], k: int) -> int:
    """c: the longest prefix of ``pattern`` that occurs in one of ``texts`` within k-1 edits."""
    best = min(k - 1, len(pattern))
    for text in texts:
        for col in _columns(pattern, text):
            best = max([best] + [i for i, d in enumerate(col) if d <= k - 1])
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


def closest_reference(pattern: np.ndarray, texts: list[np.ndarray],
                      within: int | None = None) -> tuple[int, int, int] | None:
    """(distance, text index, end column) of the first window closest to ``pattern``.

    The whole semi-global DP of every text (top row 0, left column i); windows are taken in
    order of text, then end column (0-based, inclusive). Without ``within``: the first window
    at the smallest distance; with it: the first window at most ``within`` edits away (None if
    none is).
    """
    m = len(pattern)
    best = None
    for t, text in enumerate(texts):
        for j, cur in enumerate(_columns(pattern, text)):
            if within is not None:
                if cur[m] <= within:
                    return cur[m], t, j
            elif best is None or cur[m] < best[0]:
                best = (cur[m], t, j)
    return best


def semi_global_matrix(pattern: np.ndarray, window: np.ndarray) -> np.ndarray:
    """The full D matrix of ``pattern`` against ``window``, cell by cell (D[0, j] = 0, D[i, 0] = i)."""
    return np.column_stack([np.arange(len(pattern) + 1), *_columns(pattern, window)]).astype(np.int64)
