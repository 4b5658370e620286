"""The slow, obvious LCS oracle (tests only): the full matrix and a traceback.

Symbols match when their IUPAC base sets intersect. O(m*n) time and memory in
pure Python, so keep inputs small (a few hundred symbols).
"""

from __future__ import annotations


def lcs_matrix(a, b) -> list[list[int]]:
    """L[i][j] = length of an LCS of a[:i] and b[:j]."""
    a, b = [int(x) for x in a], [int(x) for x in b]
    m, n = len(a), len(b)
    L = [[0] * (n + 1) for _ in range(m + 1)]
    for i in range(1, m + 1):
        prev, cur, x = L[i - 1], L[i], a[i - 1]
        for j in range(1, n + 1):
            if x & b[j - 1]:
                cur[j] = prev[j - 1] + 1
            else:
                cur[j] = max(prev[j], cur[j - 1])
    return L


def lcs(a, b) -> tuple[int, list[tuple[int, int]]]:
    """(length, 0-based index pairs of one LCS, increasing)."""
    L = lcs_matrix(a, b)
    i, j = len(a), len(b)
    pairs = []
    while i > 0 and j > 0:
        if int(a[i - 1]) & int(b[j - 1]) and L[i][j] == L[i - 1][j - 1] + 1:
            pairs.append((i - 1, j - 1))
            i -= 1
            j -= 1
        elif L[i - 1][j] >= L[i][j - 1]:
            i -= 1
        else:
            j -= 1
    pairs.reverse()
    return L[len(a)][len(b)], pairs
