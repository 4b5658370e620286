"""Exact shared seeds for the group search's shortlist (two small numba loops).

A seed is a 16-mer of unambiguous bases, compared in canonical form (the smaller of it and
its reverse complement as 2-bit integers), so one lookup covers both strands. Every genome
is read once, its seeds looked up in the reference's sorted table; memory stays at a few
arrays of one genome's length, whatever the number of genomes.

The seeds only *shortlist* where primers are proposed: every reported pair is verified
exactly afterwards (engine.primers.group).
"""

from __future__ import annotations

import numpy as np
from numba import njit

#: Seed length: 4^16 = 4.3e9 seeds, so a random 16-mer occurs by chance in a 5 Mb genome
#: (both strands) with probability ~0.2 %; shorter seeds match everywhere in a bacterium.
SEED = 16

# 4-bit base set (engine.sequences) -> 2-bit code, 4 for anything ambiguous or a gap.
_TWO_BIT = np.full(256, 4, dtype=np.uint8)
for _code, _two in ((1, 0), (2, 1), (4, 2), (8, 3)):
    _TWO_BIT[_code] = _two


@njit(nogil=True, cache=True)
def _seeds(two, fwd_out, valid_out):
    """One pass: the canonical 2-bit seed of every start and whether it is all A/C/G/T."""
    fwd = np.uint64(0)
    rev = np.uint64(0)
    mask = np.uint64((1 << (2 * SEED)) - 1)
    top = np.uint64(2 * (SEED - 1))
    run = 0
    for i in range(len(two)):
        t = np.uint64(two[i])
        if t == 4:
            run = 0
            t = np.uint64(0)
        else:
            run += 1
        fwd = ((fwd << np.uint64(2)) | t) & mask
        rev = (rev >> np.uint64(2)) | ((np.uint64(3) - t) << top)
        p = i - SEED + 1
        if p >= 0:
            fwd_out[p] = min(fwd, rev)
            valid_out[p] = run >= SEED


def seeds(codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per start p of ``codes`` (len - SEED + 1 of them): the canonical seed of
    codes[p:p+SEED] (uint32) and whether it is made of A/C/G/T only."""
    n = len(codes) - SEED + 1
    if n <= 0:
        return np.zeros(0, dtype=np.uint32), np.zeros(0, dtype=bool)
    out, valid = np.empty(n, dtype=np.uint32), np.empty(n, dtype=bool)
    _seeds(_TWO_BIT[np.asarray(codes, dtype=np.uint8)], out, valid)
    return out, valid


#: The lookup's buckets: the top BUCKET_BITS of a seed index the sorted seeds directly
#: (4**SEED / 2**BUCKET_BITS values a bucket; a 5 Mb reference puts about one seed in each).
BUCKET_BITS = 22


@njit(nogil=True, cache=True)
def _mark(query, valid, unique, heads, shift, found):
    """found[i] = True for every unique[i] among the valid query seeds."""
    for p in range(len(query)):
        if not valid[p]:
            continue
        s = query[p]
        b = s >> shift
        for i in range(heads[b], heads[b + 1]):
            if unique[i] == s:
                found[i] = True
                break


class SeedTable:
    """The reference's seeds, record after record: ``lookup(codes)`` marks which reference
    seed positions occur in other codes (either strand)."""

    def __init__(self, records):
        self.lengths = [len(r) for r in records]
        parts, valids = zip(*(seeds(np.asarray(r.chunk(0, len(r)))) for r in records))
        self.starts = np.cumsum([0] + [len(p) for p in parts])
        everything = np.concatenate(parts)
        self.valid = np.concatenate(valids)
        self.unique, self.inverse = np.unique(everything[self.valid], return_inverse=True)
        self.shift = np.uint32(2 * SEED - BUCKET_BITS)
        self.heads = np.searchsorted(self.unique >> self.shift,
                                     np.arange(2 ** BUCKET_BITS + 1)).astype(np.int64)

    def lookup(self, records) -> np.ndarray:
        """Per reference seed position: does that seed occur in ``records`` (bool, over the
        concatenated reference records' seed positions)."""
        found = np.zeros(len(self.unique), dtype=bool)
        for r in records:
            s, ok = seeds(np.asarray(r.chunk(0, len(r))))
            _mark(s, ok, self.unique, self.heads, self.shift, found)
        out = np.zeros(len(self.valid), dtype=bool)
        out[self.valid] = found[self.inverse]
        return out

    def lookups(self, record_sets, threads: int):
        """:meth:`lookup` of each set of records, yielded in order; ``threads`` sets are
        looked up at once (the seed kernels release the GIL), at most ``threads + 1``
        answers held."""
        from collections import deque
        from concurrent.futures import ThreadPoolExecutor

        threads = max(1, threads)
        queue: deque = deque()
        with ThreadPoolExecutor(max_workers=threads) as pool:
            try:
                for records in record_sets:
                    queue.append(pool.submit(self.lookup, records))
                    if len(queue) > threads:
                        yield queue.popleft().result()
                while queue:
                    yield queue.popleft().result()
            finally:
                for f in queue:
                    f.cancel()

    def per_record(self, flags: np.ndarray) -> list[np.ndarray]:
        """``flags`` over seed positions split per reference record, each padded with False
        to the record's length (a seed position p stands for bases p..p+SEED-1)."""
        return [np.pad(part, (0, n - len(part)))
                for part, n in zip(np.split(flags, self.starts[1:-1]), self.lengths)]


def dilate(flags: np.ndarray, radius: int) -> np.ndarray:
    """Positions with a True within ``radius`` on either side."""
    csum = np.concatenate(([0], np.cumsum(flags, dtype=np.int64)))
    idx = np.arange(len(flags))
    lo = np.maximum(idx - radius, 0)
    hi = np.minimum(idx + radius + 1, len(flags))
    return csum[hi] - csum[lo] > 0


def all_of(flags: np.ndarray, span: int) -> np.ndarray:
    """Starts p with flags[p:p + span] all True (a stretch running past the end: False)."""
    csum = np.concatenate(([0], np.cumsum(flags, dtype=np.int64)))
    out = np.zeros(len(flags), dtype=bool)
    if len(flags) >= span:
        out[:len(flags) - span + 1] = csum[span:] - csum[:-span] == span
    return out


def covered(starts: np.ndarray, length: int) -> np.ndarray:
    """Positions inside a stretch of ``length`` that begins at a True of ``starts``."""
    csum = np.concatenate(([0], np.cumsum(starts, dtype=np.int64)))
    idx = np.arange(len(starts))
    return csum[idx + 1] - csum[np.maximum(idx - length + 1, 0)] > 0


def runs(flags: np.ndarray) -> list[tuple[int, int]]:
    """The [start, end) runs of True."""
    edges = np.diff(np.concatenate(([0], flags.astype(np.int8), [0])))
    return list(zip(np.flatnonzero(edges == 1).tolist(), np.flatnonzero(edges == -1).tolist()))
