"""kdiff's oracle for every start of a target at once, for the simulator cases.

engine.kdiff.reference fills one start's DP matrix cell by cell in Python; a simulator case
with a target of a few hundred symbols spent more CPU in those loops than in the kernels.
:func:`longest_prefixes` runs the very same recurrence (top row 0, left column i, the
largest row that holds a value <= k-1) for all starts side by side in numpy: row i of start
r reads alpha[r + i - 1]. test_kdiff_cuda.py checks that it equals the reference.
"""

from __future__ import annotations

import numpy as np


def longest_prefixes(alpha: np.ndarray, texts: list[np.ndarray], k: int) -> np.ndarray:
    """c(r) for every start r: reference.longest_prefix_within(alpha[r:], texts, k)."""
    alpha = np.asarray(alpha, dtype=np.int64)
    m = len(alpha)
    starts = np.arange(m)[:, None]
    rows = np.arange(m + 1)
    inside = starts + rows[None, 1:] <= m  # rows past a start's own pattern: never counted
    symbols = alpha[np.minimum(starts + rows[None, 1:] - 1, m - 1)] if m else alpha.reshape(0, 0)
    best = np.minimum(k - 1, m - np.arange(m))
    for text in texts:
        prev = np.broadcast_to(rows, (m, m + 1))
        for b in np.asarray(text, dtype=np.int64):
            diagonal = prev[:, :-1] + ((symbols & b) == 0)
            local = np.minimum(diagonal, prev[:, 1:] + 1)
            # cur[i] = min(local[i], cur[i-1] + 1) with cur[0] = 0: a running minimum of
            # local[i] - i (and 0 for row 0), plus i.
            shifted = np.concatenate([np.zeros((m, 1), np.int64), local - rows[1:]], axis=1)
            cur = np.minimum.accumulate(shifted, axis=1) + rows
            within = (cur[:, 1:] <= k - 1) & inside
            best = np.maximum(best, np.where(within, rows[1:], -1).max(axis=1, initial=-1))
            prev = cur
    return best


def candidates(alpha: np.ndarray, texts: list[np.ndarray], k: int) -> list[tuple[int, int]]:
    """reference.kdiff_reference(alpha, texts, k): (start, length) 0-based, up to the first
    start whose prefix reaches the target's end."""
    c = longest_prefixes(alpha, texts, k)
    out = []
    for r, length in enumerate(c.tolist()):
        if length >= len(alpha) - r:
            break
        out.append((r, length + 1))
    return out
