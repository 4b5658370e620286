"""Numba kernels every CPU variant's scan shares: counting the hits as they are kept.

:func:`tally` counts a run of hits per pattern and per density bin; :func:`pack`
closes the gaps between the multicore chunks' hit regions and counts them, chunks
in parallel. The host side (chunks, hit regions, resuming a full region) is
engine/kmismatch/driver.py.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange


@njit(nogil=True, cache=True, parallel=True)
def pack(pos, code, mis, bases, found, to_pos, to_code, to_mis, at, offsets, shifts, bin_starts,
         pattern_hits, bins):
    """Copy region c (``found[c]`` hits from ``bases[c]``) of each chunk to ``to_*`` from
    ``at`` on, one after the other, and count them (as :func:`tally` does), chunks in
    parallel. A chunk's bins lie between its first and its last bin, so only those two
    can be another chunk's too: they are added after the parallel loop."""
    chunks = bases.shape[0]
    starts = np.empty(chunks, dtype=np.int64)
    n = at
    for c in range(chunks):
        starts[c] = n
        n += found[c]
    per_chunk = np.zeros((chunks, pattern_hits.shape[0]), dtype=np.int64)
    edges = np.zeros((chunks, 4), dtype=np.int64)  # first bin, its hits, last bin, its hits
    for c in prange(chunks):
        src, dst = bases[c], starts[c]
        for i in range(found[c]):
            to_pos[dst + i] = pos[src + i]
            to_code[dst + i] = code[src + i]
            to_mis[dst + i] = mis[src + i]
        _count(to_pos, to_code, dst, dst + found[c], offsets, shifts, bin_starts, per_chunk[c],
               bins, edges[c])
    for c in range(chunks):
        _add_edges(bins, edges[c])
        for p in range(pattern_hits.shape[0]):
            pattern_hits[p] += per_chunk[c, p]


@njit(nogil=True, cache=True)
def tally(pos, code, lo, hi, offsets, shifts, bin_starts, pattern_hits, bins):
    """Count hits lo..hi-1 per pattern into ``pattern_hits`` and per bin into ``bins``
    (record r's bins start at ``bin_starts[r]`` and are ``1 << shifts[r]`` positions
    wide)."""
    edges = np.zeros(4, dtype=np.int64)
    _count(pos, code, lo, hi, offsets, shifts, bin_starts, pattern_hits, bins, edges)
    _add_edges(bins, edges)


@njit(nogil=True, cache=True)
def _count(pos, code, lo, hi, offsets, shifts, bin_starts, pattern_hits, bins, edges):
    """:func:`tally`, except that the first and the last run of hits in one bin go to
    ``edges`` (bin, hits, bin, hits) instead of ``bins``. ``pos`` is sorted, so hits
    come in runs of one bin: a run is added once."""
    if lo >= hi:
        return
    r = np.searchsorted(offsets, pos[lo], side="right") - 1
    # The record's constants live in locals: stores to bins could alias them otherwise.
    rec_lo, rec_hi, shift, first_bin = offsets[r], offsets[r + 1], shifts[r], bin_starts[r]
    current = -1
    run = 0
    for i in range(lo, hi):
        p = pos[i]
        while p >= rec_hi:
            r += 1
            rec_lo, rec_hi, shift, first_bin = offsets[r], offsets[r + 1], shifts[r], bin_starts[r]
        b = first_bin + ((p - rec_lo) >> shift)
        if b != current:
            if current < 0:
                edges[0] = b
            elif run:
                if current == edges[0]:
                    edges[1] = run
                else:
                    bins[current] += run
            current = b
            run = 0
        run += 1
        pattern_hits[code[i] >> 1] += 1
    if current == edges[0]:
        edges[1] = run
    else:
        edges[2] = current
        edges[3] = run


@njit(nogil=True, cache=True, inline="always")
def _add_edges(bins, edges):
    if edges[1]:
        bins[edges[0]] += edges[1]
    if edges[3]:
        bins[edges[2]] += edges[3]


class Counts:
    """Hits per pattern, and per bin of each record's hit-density profile (at most
    ``max_bins`` bins a record, of a power-of-two width, so binning is a shift)."""

    def __init__(self, lengths, n_patterns: int, max_bins: int):
        lengths = np.asarray(lengths, dtype=np.int64)
        self.offsets = np.concatenate([[0], np.cumsum(lengths)])
        self.shifts = np.array([int(-(-n // max_bins) - 1).bit_length() for n in lengths.tolist()],
                               dtype=np.int64)
        self.bin_starts = np.concatenate([[0], np.cumsum(((lengths - 1) >> self.shifts) + 1)])
        self.pattern_hits = np.zeros(n_patterns, dtype=np.int64)
        self.bins = np.zeros(int(self.bin_starts[-1]), dtype=np.int64)

    def arrays(self):
        return self.offsets, self.shifts, self.bin_starts, self.pattern_hits, self.bins

    def add(self, out, lo: int, hi: int) -> None:
        """Count hits lo..hi-1 of ``out`` (a HitBuffer)."""
        pos, code, _ = out.columns
        tally(pos, code, lo, hi, *self.arrays())

    def recount(self, out) -> None:
        """Count ``out`` again from nothing (after a scan was dropped half-way)."""
        self.pattern_hits[:] = 0
        self.bins[:] = 0
        self.add(out, 0, len(out))

    def density(self, records) -> tuple:
        """One :class:`HitDensity` per record (in ``records`` order, as counted)."""
        from engine.kmismatch.hits import HitDensity

        edges = self.bin_starts.tolist()
        return tuple(HitDensity(rec.id, len(rec), 1 << shift, self.bins[a:z])
                     for rec, shift, a, z in zip(records, self.shifts.tolist(), edges[:-1],
                                                 edges[1:]))
