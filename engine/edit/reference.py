"""Slow, obvious oracle for the edit family. Used by tests only.

Everything is a full DP matrix in pure Python (C[i][j], rows: pattern prefix,
columns: text prefix). Symbols match when their IUPAC sets intersect.

Conventions the fast code must reproduce exactly:

- search: C[0][j] = 0, a hit is an end j (1..n, 1-based inclusive) with
  C[m][j] <= k; its start is the *smallest* s with ed(P, T[s:j]) = C[m][j]
  (the longest optimal occurrence, as edlib reports);
- the alignment is traced back from (m, L) preferring ``I`` (a pattern symbol
  against no text symbol), then ``D`` (a text symbol against no pattern
  symbol), then the diagonal (``=``/``X``), as edlib does;
- best: the first end with the smallest distance (<= k when k is given).
"""

from __future__ import annotations

from itertools import groupby


def _cost(a, b) -> int:
    return 0 if (int(a) & int(b)) else 1


def matrix(pattern, text, anchored: bool) -> list[list[int]]:
    """The whole matrix; ``anchored`` gives C[0][j] = j (global), else 0 (search)."""
    m, n = len(pattern), len(text)
    c = [[0] * (n + 1) for _ in range(m + 1)]
    for j in range(n + 1):
        c[0][j] = j if anchored else 0
    for i in range(1, m + 1):
        c[i][0] = i
        for j in range(1, n + 1):
            c[i][j] = min(c[i - 1][j - 1] + _cost(pattern[i - 1], text[j - 1]),
                          c[i - 1][j] + 1, c[i][j - 1] + 1)
    return c


def global_distance(pattern, text) -> int:
    return matrix(pattern, text, True)[len(pattern)][len(text)]


def end_distances(pattern, text) -> list[int]:
    """C[m][j] for j = 1..n (search mode)."""
    return matrix(pattern, text, False)[len(pattern)][1:]


def cigar(pattern, window) -> str:
    """Run-length CIGAR (=, X, I, D) of one optimal global alignment, by the tie-break rule."""
    c = matrix(pattern, window, True)
    i, j = len(pattern), len(window)
    ops = []
    while i > 0 or j > 0:
        if i > 0 and c[i - 1][j] + 1 == c[i][j]:
            ops.append("I")
            i -= 1
        elif j > 0 and c[i][j - 1] + 1 == c[i][j]:
            ops.append("D")
            j -= 1
        else:
            cost = _cost(pattern[i - 1], window[j - 1])
            assert c[i - 1][j - 1] + cost == c[i][j]
            ops.append("=" if cost == 0 else "X")
            i, j = i - 1, j - 1
    ops.reverse()
    return run_length(ops)


def run_length(ops) -> str:
    return "".join(f"{len(list(run))}{op}" for op, run in groupby(ops))


def reverse_cigar(cigar_text: str) -> str:
    """The same alignment read from its other end: a ``-`` hit's CIGAR (the pattern 5'->3'
    against ``matched``) from the oracle's trace of the reverse complement along the text."""
    import re

    return "".join(reversed(re.findall(r"\d+[=XID]", cigar_text)))


def start_of(pattern, text, end: int, distance: int) -> int:
    """Smallest 0-based s with ed(pattern, text[s:end]) == distance.

    Only windows of length <= m + distance can have that distance (each
    unmatched length costs an edit). The last row of the global matrix of the
    reversed pattern against the reversed window gives ed(pattern, text[end-L:end])
    for every L at once.
    """
    lo = max(0, end - len(pattern) - distance)
    last_row = matrix(pattern[::-1], text[lo:end][::-1], True)[len(pattern)]
    for length in range(end - lo, -1, -1):
        if last_row[length] == distance:
            return end - length
    raise AssertionError("no start realises the distance")


def search_hits(pattern, text, k: int) -> list[tuple[int, int, int, str]]:
    """Every hit as (start 1-based, end 1-based inclusive, distance, cigar)."""
    out = []
    for j, d in enumerate(end_distances(pattern, text), start=1):
        if d <= k:
            s = start_of(pattern, text, j, d)
            out.append((s + 1, j, d, cigar(pattern, text[s:j])))
    return out


def best_hit(pattern, text, k: int | None):
    """(start, end, distance, cigar) of the first end with the smallest distance, or None."""
    ds = end_distances(pattern, text)
    best = min(ds)
    if k is not None and best > k:
        return None
    j = ds.index(best) + 1
    s = start_of(pattern, text, j, best)
    return s + 1, j, best, cigar(pattern, text[s:j])


def cigar_cost(cigar_text: str, pattern, window) -> int:
    """Edits a CIGAR spends on (pattern, window); raises if it does not fit them."""
    i = j = cost = 0
    num = ""
    for ch in cigar_text:
        if ch.isdigit():
            num += ch
            continue
        n, num = int(num), ""
        for _ in range(n):
            if ch in "=X":
                match = _cost(pattern[i], window[j]) == 0
                if match != (ch == "="):
                    raise AssertionError(f"{ch} at pattern {i}, window {j}")
                cost += 0 if match else 1
                i, j = i + 1, j + 1
            elif ch == "I":
                cost, i = cost + 1, i + 1
            elif ch == "D":
                cost, j = cost + 1, j + 1
            else:
                raise AssertionError(f"unknown op {ch}")
    if i != len(pattern) or j != len(window):
        raise AssertionError("CIGAR does not consume both sequences")
    return cost


def end_distances_numpy(pattern, text, anchored: bool = False):
    """C[m][j] for j = 1..n (search mode; ``anchored``: global), row by row with numpy; the
    same recurrence as :func:`matrix`, for inputs too long for the pure-Python matrix.

    The left neighbour is folded in with a running minimum: C[i][j] = min over
    l <= j of A[l] + (j - l), where A is the row from the diagonal and upper
    neighbours only.
    """
    import numpy as np

    pattern = np.asarray(pattern, dtype=np.uint8)
    text = np.asarray(text, dtype=np.uint8)
    n = len(text)
    idx = np.arange(n + 1, dtype=np.int64)
    row = idx.copy() if anchored else np.zeros(n + 1, dtype=np.int64)  # C[0][j] = j or 0
    for i in range(1, len(pattern) + 1):
        cost = np.where((text & pattern[i - 1]) != 0, 0, 1)
        a = np.empty(n + 1, dtype=np.int64)
        a[0] = i
        a[1:] = np.minimum(row[:-1] + cost, row[1:] + 1)
        row = np.minimum.accumulate(a - idx) + idx
    return row[1:]


def score_profile(distances, cap: int, bin_width: int):
    """Per bin of ``bin_width`` ends, the smallest of min(C[m][j], cap)."""
    import numpy as np

    d = np.minimum(np.asarray(distances, dtype=np.int64), cap)
    bins = -(-len(d) // bin_width)
    padded = np.full(bins * bin_width, cap, dtype=np.int64)
    padded[:len(d)] = d
    return padded.reshape(bins, bin_width).min(axis=1)
