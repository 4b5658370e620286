"""Slow, obvious oracle for nw. Used by tests only.

The whole (m+1) x (n+1) matrix in Python lists, filled cell by cell from the
textbook recurrence, and a walk back from the corner. No tiles, no shifts,
no Hirschberg.
"""

from __future__ import annotations

from itertools import groupby

import numpy as np

from engine.sequences import IUPAC_CODES


def _s(x: int, y: int, match: int, mismatch: int) -> int:
    return match if (int(x) & int(y)) != 0 else mismatch


def nw_matrix(a: np.ndarray, b: np.ndarray, match: int, mismatch: int, gap: int) -> list[list[int]]:
    m, n = len(a), len(b)
    H = [[0] * (n + 1) for _ in range(m + 1)]
    for j in range(n + 1):
        H[0][j] = j * gap
    for i in range(1, m + 1):
        H[i][0] = i * gap
        for j in range(1, n + 1):
            H[i][j] = max(H[i - 1][j - 1] + _s(a[i - 1], b[j - 1], match, mismatch),
                          H[i - 1][j] + gap, H[i][j - 1] + gap)
    return H


def nw_reference(a: np.ndarray, b: np.ndarray, match: int = 1, mismatch: int = 0,
                 gap: int = -1) -> tuple[int, list[tuple[int, int]]]:
    """(score, one optimal alignment as (i, j) column pairs with -1 for a gap)."""
    H = nw_matrix(a, b, match, mismatch, gap)
    i, j = len(a), len(b)
    cols = []
    while i > 0 or j > 0:
        if i > 0 and j > 0 and H[i][j] == H[i - 1][j - 1] + _s(a[i - 1], b[j - 1], match, mismatch):
            cols.append((i - 1, j - 1))
            i, j = i - 1, j - 1
        elif i > 0 and H[i][j] == H[i - 1][j] + gap:
            cols.append((i - 1, -1))
            i -= 1
        else:
            cols.append((-1, j - 1))
            j -= 1
    return H[len(a)][len(b)], cols[::-1]


def rescore(aligned_a: str, aligned_b: str, match: int, mismatch: int, gap: int) -> int:
    """Score of an alignment given as two gapped strings (IUPAC sets intersect = match)."""
    assert len(aligned_a) == len(aligned_b)
    total = 0
    for x, y in zip(aligned_a, aligned_b):
        assert not (x == "-" and y == "-"), "a column of two gaps"
        if x == "-" or y == "-":
            total += gap
        else:
            total += match if IUPAC_CODES[x] & IUPAC_CODES[y] else mismatch
    return total


def cigar_from_strings(aligned_a: str, aligned_b: str) -> str:
    """The CIGAR an alignment must have (A as reference: D = gap in B, I = gap in A)."""
    letters = []
    for x, y in zip(aligned_a, aligned_b):
        if y == "-":
            letters.append("D")
        elif x == "-":
            letters.append("I")
        else:
            letters.append("=" if IUPAC_CODES[x] & IUPAC_CODES[y] else "X")
    return "".join(f"{len(list(run))}{op}" for op, run in groupby(letters))
