"""Bounds on c(r) from neighbouring starts: which starts need a scan, and how large a one.

Dropping the first symbol of an approximate occurrence of alpha[r:r+L] (at most K
edits) leaves an approximate occurrence of alpha[r+1:r+L] (see :func:`bounds` for the
proof), so

    c(r+1) >= c(r) - 1, and for starts x < y of one record:  c(y) >= c(x) - (y - x),
                                                              c(x) <= c(y) + (y - x).

A start settled exactly bounds every start to its right from below and every start to
its left from above. Where a lower and an upper bound meet, c(r) is known without a
scan. On real DNA this is the common case for long candidates: inside a stretch shared
with the background, c(r) = c(r+1) + 1 for 95-99 % of the starts (lambda against
E. coli 536, k = 5), so settling a run of such starts needs scans only at the points
where c jumps; bisection finds them. And a start that does need a scan gets an upper
bound U(r) from its nearest settled right neighbour, which sizes its scan exactly
(words and chunk overlap; ``cuda_bitparallel``) instead of a ladder of re-runs. The
CUDA driver's first lanes pass uses the bounds too: it takes every other start first.

:class:`SliceBounds` keeps one slice's starts (settled, or bounded from below), answers
the bounds, settles what they decide, and picks the starts to scan next.
"""

from __future__ import annotations

import numpy as np


class SliceBounds:
    """The starts ``rs`` of one slice (increasing, one target record) and what is known of
    their c(r): ``known`` (exact) or ``low`` (a proven lower bound, e.g. a lanes stage's
    word width); ``mps`` is each suffix's length (c(r) <= mps). ``before``, when given, is
    (r, c(r)) of a settled start left of rs[0] in the same record (the previous slice)."""

    def __init__(self, rs: np.ndarray, c: np.ndarray, known: np.ndarray, mps: np.ndarray,
                 before: tuple[int, int] | None = None):
        self.rs = np.asarray(rs, dtype=np.int64)
        self.c = np.asarray(c, dtype=np.int64).copy()  # exact where known, else a lower bound
        self.known = np.asarray(known, dtype=bool).copy()
        self.mps = np.asarray(mps, dtype=np.int64)
        self.before = before

    @property
    def pending(self) -> np.ndarray:
        return np.flatnonzero(~self.known)

    def bounds(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(L, U, right) for every start: c(r) in [L, U]; ``right`` where U comes from a
        settled start to the right (else U is the suffix length).

        Proof of the neighbour bound: let alpha[r:r+L] (L >= 1) be within K edits of a
        background substring t, by an alignment of cost <= K. Remove alpha[r] from it: if
        alpha[r] was aligned to a symbol of t (a match or a substitution), drop that symbol
        too; if it was an insertion (aligned to no symbol), drop nothing. Either way the
        rest is an alignment of alpha[r+1:r+L] with a substring of t (still contiguous,
        since t's first symbol or none was dropped), of cost no larger. So c(r+1) >=
        c(r) - 1, and by induction c(y) >= c(x) - (y - x) for x < y. With x the nearest
        settled start to the left of r this is L; with y the nearest settled start to the
        right, c(r) <= c(y) + (y - r) is U. Both use only exact c of settled starts and the
        proven lower bounds ``low``, so c(r) lies in [L, U]; L = U settles r.
        """
        n = self.rs.shape[0]
        idx = np.arange(n)
        known = self.known
        li = np.maximum.accumulate(np.where(known, idx, -1)) if n else idx
        ri = np.minimum.accumulate(np.where(known, idx, n)[::-1])[::-1] if n else idx
        lower = self.c.copy()
        has = li >= 0
        lower[has] = np.maximum(lower[has], self.c[li[has]] - (self.rs[has] - self.rs[li[has]]))
        if self.before is not None:
            r0, c0 = self.before
            lower = np.maximum(lower, c0 - (self.rs - r0))
        upper = self.mps.copy()
        right = ri < n
        upper[right] = np.minimum(upper[right], self.c[ri[right]] + (self.rs[ri[right]] - self.rs[right]))
        return lower, upper, right

    def infer(self) -> int:
        """Settle every pending start whose bounds meet (again, while that settles more);
        return how many."""
        total = 0
        while True:
            lower, upper, _ = self.bounds()
            pending = ~self.known
            if np.any(pending & (lower > upper)):
                raise RuntimeError("kdiff: the c(r) of neighbouring starts contradict each other "
                                   "(an internal error)")
            meet = pending & (lower == upper)
            if not meet.any():
                return total
            self.c[meet] = upper[meet]
            self.known |= meet
            total += int(meet.sum())

    def settle(self, where: np.ndarray, values: np.ndarray) -> None:
        """Exact c(r) for the starts at indices ``where``."""
        self.c[where] = values
        self.known[where] = True

    def raise_low(self, where: np.ndarray, values: np.ndarray) -> None:
        """Proven lower bounds for the (pending) starts at indices ``where``."""
        self.c[where] = np.maximum(self.c[where], values)

    def picks(self, split: int) -> np.ndarray:
        """Indices of the pending starts to scan next, at most a few per run of pending starts:
        the run's first start when nothing to its left bounds it above its own lower bound (a
        candidate jump), and ``split - 1`` points spread over the run (bisection when split is
        2); of a run that nothing bounds from the right (it reaches the slice's end), only its
        last start. After they are
        settled, :meth:`infer` settles every stretch between two of them where c falls by one
        per start; the others are split again."""
        pend = self.pending
        if not len(pend):
            return pend
        n = self.rs.shape[0]
        out = []
        for run in np.split(pend, np.flatnonzero(np.diff(pend) > 1) + 1):
            a, b = int(run[0]), int(run[-1])
            if b == n - 1:
                out.append(b)  # nothing bounds the run from the right until its last start is known
                continue
            if a > 0:
                left = self.c[a - 1] - (self.rs[a] - self.rs[a - 1])
            elif self.before is not None:
                left = self.before[1] - (self.rs[a] - self.before[0])
            else:
                left = None
            if left is None or left <= self.c[a]:
                out.append(a)
            length = b - a + 1
            for i in range(1, split):
                out.append(a + (i * length) // split)
        return np.unique(np.asarray(out, dtype=np.int64))
