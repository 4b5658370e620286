"""Where does a kdiff candidate come closest in the background?

kdiff answers "the shortest substring at least k edits from everything"; to show
*why*, this finds the background window where a candidate comes closest, with that
window's D matrix (rows 0..c+1, top row zero as in the kernels) and the alignment
through it (the GUI's candidate view draws them).

The search is a semi-global DP with Ukkonen's cut-off: only rows whose value
can still be <= the limit are computed, so a candidate of length c+1 costs
about O(k * n) rather than O(c * n), and every hit lowers the limit. A
candidate's distance is exactly k (its prefix of length c occurs within k-1),
so for kdiff the scan stops at the first window within k. It is a compiled kernel
(``nogil``) run from a generator in chunks, so it reports progress and can be cancelled.
The oracle is :func:`engine.kdiff.reference.closest_reference`.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Generator

import numpy as np

from engine import api
from engine.gaps import as_background
from engine.jobs import drive
from engine.kdiff.spec import SPEC
from engine.sequences import Record, decode, reverse_complement_record

CHUNK_COLUMNS = 1 << 20


@functools.cache
def scan_kernel():
    """The scan's kernel, compiled once per process on first use (numba is imported only then)."""
    from numba import njit

    @njit(nogil=True, cache=True)
    def scan(pattern, text, lo, hi, limit, col, state):
        """Columns text[lo:hi] of the semi-global DP (top row 0) with the cut-off at ``limit``.

        ``col`` holds D[., j-1] for rows 0..state[0] (the last active row);
        rows below are > limit and their stale values are never read. Returns
        the first column whose bottom row is <= limit, or -1.
        """
        m = pattern.shape[0]
        lact = state[0]
        over = limit + 1
        for j in range(lo, hi):
            b = text[j]
            top = lact + 1 if lact < m else m
            diag = col[0]
            for i in range(1, top + 1):
                up = col[i] if i <= lact else over
                v = diag + (0 if (pattern[i - 1] & b) != 0 else 1)
                if up + 1 < v:
                    v = up + 1
                if col[i - 1] + 1 < v:
                    v = col[i - 1] + 1
                diag = up
                col[i] = v
            while top > 0 and col[top] > limit:
                top -= 1
            lact = top
            if lact == m:
                state[0] = lact
                return j
        state[0] = lact
        return -1

    return scan


@dataclass(frozen=True)
class ClosestMatch:
    """The best background window of a candidate and its D matrix."""

    record_id: str
    strand: str  # '+' or '-'
    start: int  # 1-based, inclusive, in the forward record's coordinates
    end: int
    distance: int
    matrix: np.ndarray  # D, rows 0..m (candidate prefixes) x columns 0..w (window prefix)
    window: str  # the background window the matrix's columns stand for (as read on the strand)
    window_offset: int  # 0-based position of the window's first base on the strand read
    path: tuple[tuple[int, int], ...]  # (i, j) cells of the alignment, top to bottom
    aligned_candidate: str
    aligned_background: str
    match_start_on_strand: int  # 0-based first base of the match, on the strand read


def window_matrix(pattern: np.ndarray, window: np.ndarray) -> np.ndarray:
    """D of ``pattern`` against ``window``: D[0, j] = 0, D[i, 0] = i, unit costs, sets intersect.

    Row by row with numpy; the left-to-right dependency within a row is a
    running minimum of D[i, j] - j (plus j).
    """
    m, w = len(pattern), len(window)
    D = np.zeros((m + 1, w + 1), dtype=np.int32)
    ramp = np.arange(w + 1, dtype=np.int32)
    for i in range(1, m + 1):
        cost = ((pattern[i - 1] & window) == 0).astype(np.int32)
        row = np.empty(w + 1, dtype=np.int32)
        row[0] = i
        row[1:] = np.minimum(D[i - 1, :-1] + cost, D[i - 1, 1:] + 1)
        D[i] = np.minimum.accumulate(row - ramp) + ramp
    return D


def traceback(D: np.ndarray, pattern: np.ndarray, window: np.ndarray, end_col: int):
    """One optimal path from (m, end_col) up to row 0; diagonal steps first."""
    i, j = D.shape[0] - 1, end_col
    cells = [(i, j)]
    top, bottom = [], []
    pattern_text, window_text = decode(pattern), decode(window)
    while i > 0:
        if j > 0:
            cost = 0 if (pattern[i - 1] & window[j - 1]) != 0 else 1
            if D[i, j] == D[i - 1, j - 1] + cost:
                top.append(pattern_text[i - 1])
                bottom.append(window_text[j - 1])
                i, j = i - 1, j - 1
                cells.append((i, j))
                continue
        if D[i, j] == D[i - 1, j] + 1:
            top.append(pattern_text[i - 1])
            bottom.append("-")
            i -= 1
        else:
            top.append("-")
            bottom.append(window_text[j - 1])
            j -= 1
        cells.append((i, j))
    return tuple(reversed(cells)), "".join(reversed(top)), "".join(reversed(bottom)), j


def iter_closest_match(candidate, background, k: int | None = None, *, strands: str = "both",
                       cancel=None, gap_min: int | None = None
                       ) -> Generator[float, None, ClosestMatch | None]:
    """Yield the fraction of the background scanned; return the candidate's :class:`ClosestMatch`.

    Parameters
    ----------
    candidate : numpy.ndarray of IUPAC codes, or any form of :func:`engine.api.records`
        The candidate (of several records, the first); it may match anywhere (top row zero).
    background : any form of :func:`engine.api.records`
        A str, list of str, SeqRecord(s), a path to a file or genome store, or Records.
        With ``strands='both'`` their reverse complements are searched too; a match there
        is reported in forward coordinates with strand '-'.
    k : int, optional
        The kdiff k the candidate was found with. Its distance is then exactly k (its
        prefix of length c occurs within k-1), so the search cuts off above k and stops at
        the first window within k edits. Without k: the first window at the smallest
        distance.
    cancel : CancelToken, optional
        Checked between chunks of columns; the generator then returns None.
    gap_min : int
        Runs of at least this many N in the background are assembly gaps (engine.gaps), as
        in the kdiff job the candidate came from.

    Returns
    -------
    ClosestMatch or None
        None when cancelled, or when no window is within k.

    Raises
    ------
    ValueError
        An empty candidate, no background records, a bad ``strands`` or ``k``.
    """
    # (codes pass as they are: the app hands over a candidate it already holds encoded)
    pattern = candidate if isinstance(candidate, np.ndarray) else \
        api.one_record(candidate, "candidate").codes
    if len(pattern) == 0:
        raise ValueError("the candidate is empty")
    background = tuple(as_background(api.records(background, "background"), gap_min))
    if not background:
        raise ValueError("no background records")
    strands = SPEC.param("strands").check(strands)  # the family's rule (engine.registry)
    bound = None if k is None else SPEC.param("k").check(k)
    return _search(pattern, background, strands, limit=bound, lower_bound=bound or 0, cancel=cancel)


def closest_match(candidate, background, k: int | None = None, *,
                  strands: str = "both", gap_min: int | None = None) -> ClosestMatch | None:
    """:func:`iter_closest_match` run to the end: the ``candidate`` and the ``background`` in
    any form of :func:`engine.api.records` (a str, list of str, SeqRecord(s), a path to a file
    or genome store, Records); the candidate may also be IUPAC codes.

    >>> m = closest_match("GATTACA", "CCGATTTACACC", strands="forward")
    >>> (m.record_id, m.start, m.end, m.distance, m.aligned_candidate, m.aligned_background)
    ('seq1', 3, 10, 1, 'GA-TTACA', 'GATTTACA')
    """
    return drive(iter_closest_match(candidate, background, k, strands=strands, gap_min=gap_min))


def _search(pattern_codes: np.ndarray, backgrounds, strands: str, *, limit: int | None = None,
            lower_bound: int = 0, cancel=None):
    """The first window with the smallest edit distance. ``limit`` is where the search starts
    cutting off (default: the pattern length, which always finds something); each hit lowers
    it. The scan stops early at a hit of at most ``lower_bound``."""
    scan = scan_kernel()
    pattern = np.ascontiguousarray(pattern_codes, dtype=np.uint8)
    m = len(pattern)
    limit = m if limit is None else min(limit, m)
    texts: list[tuple[Record, str, int]] = [(r, "+", len(r)) for r in backgrounds]
    if strands == "both":
        texts += [(reverse_complement_record(r), "-", len(r)) for r in backgrounds]
    total = sum(length for _, _, length in texts)
    done = 0
    best = None  # (distance, record, strand, length, end)
    for record, strand, length in texts:
        codes = np.ascontiguousarray(record.codes)
        col = np.arange(m + 1, dtype=np.int64)
        state = np.array([min(limit, m)], dtype=np.int64)
        for lo in range(0, length, CHUNK_COLUMNS):
            hi = min(length, lo + CHUNK_COLUMNS)
            start = lo
            while start < hi:
                if cancel is not None and cancel.cancelled:
                    return None
                end = scan(pattern, codes, start, hi, limit, col, state)
                if end < 0:
                    break
                best = (int(col[m]), record, strand, length, end)
                if best[0] <= lower_bound or best[0] == 0:
                    return _describe(pattern, *best[1:], limit)
                limit = best[0] - 1  # only a strictly closer window is worth finding now
                lact = int(state[0])
                while lact > 0 and col[lact] > limit:
                    lact -= 1
                state[0] = lact
                start = end + 1
            done += hi - lo
            yield min(1.0, done / max(1, total))
    if best is None:
        return None
    return _describe(pattern, *best[1:], best[0])


def _describe(pattern, record: Record, strand: str, length: int, end: int, limit: int) -> ClosestMatch:
    m = len(pattern)
    lo = max(0, end + 1 - (m + limit))
    window = record.codes[lo:end + 1]
    D = window_matrix(pattern, window)
    w = len(window)
    # The first window column where the bottom row is best (the scan stopped at `end`).
    distance = int(D[m, w])
    path, top, bottom, j0 = traceback(D, pattern, window, w)
    start_on_strand = lo + j0
    if strand == "+":
        start, stop = start_on_strand + 1, end + 1
    else:  # position p on the reverse complement is base length-1-p of the forward record
        start, stop = length - end, length - start_on_strand
    return ClosestMatch(record.id, strand, start, stop, distance, D, decode(window), lo, path,
                        top, bottom, start_on_strand)
