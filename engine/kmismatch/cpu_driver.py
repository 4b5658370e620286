"""Run a variant's range scanner over many text chunks, serially or under prange.

Every chunk writes its hits into its own region of the result columns (no
races, no atomics: stumpy's per-thread buffers, the study's opt3 idea); the
host then closes the gaps between the regions in chunk order, so the hits stay
sorted by window and slot. A chunk that filled its region reports how far it
got and is resumed from there with a larger one.
"""

from __future__ import annotations

import threading
from typing import NamedTuple

import numba
import numpy as np
from numba import njit, prange

from engine.kmismatch import cpu_naive, cpu_pmasm, cpu_shiftadd

_MODULES = {"naive": cpu_naive, "shift-add": cpu_shiftadd, "pmasm": cpu_pmasm}


class Model(NamedTuple):
    """One length group compiled for one variant (the arrays its kernel reads)."""

    variant: str
    pat: np.ndarray  # uint8 (R, m): naive's slot patterns
    tab: np.ndarray  # uint64: shift-add tables / pmasm look-up memory
    prm: np.ndarray  # int64: m, k, R, then the variant's own fields
    msk: np.ndarray  # uint64: pmasm's word constants
    slot_code: np.ndarray  # int32: what a hit of each slot reports (2 * pattern + strand)
    m: int

    @property
    def slots(self) -> int:
        return int(self.slot_code.shape[0])


def build_model(variant: str, slot_patterns: np.ndarray, k: int,
                slot_code: np.ndarray | None = None) -> Model:
    """Tables for the ``(R, m)`` slot patterns (with both strands: patterns and their
    reverse complements).

    ``slot_code[r]`` is written for a hit of slot r (default: r itself).
    """
    R, m = slot_patterns.shape
    if variant not in _MODULES:
        raise ValueError(f"unknown kmismatch variant {variant!r}")
    arrays = _MODULES[variant].build_model(slot_patterns, k)
    if slot_code is None:
        slot_code = np.arange(R, dtype=np.int32)
    return Model(variant, *arrays, np.ascontiguousarray(slot_code, dtype=np.int32), m)


def _kernel(variant: str, backend: str):
    module = _MODULES[variant]
    return module.scan_chunks_serial if backend == "serial" else module.scan_chunks_multicore


def compiled(variant: str, backend: str) -> bool:
    helpers = [tally] + ([pack] if backend == "multicore" else [])
    return all(bool(f.signatures) for f in [_kernel(variant, backend)] + helpers)


_POOL = threading.local()


def _spare(size: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Scratch hit columns for the multicore chunks, kept from call to call (per calling
    thread): fresh memory costs a page fault per 4 KiB on first touch, and threads that
    fault at once wait for each other, which made a first multicore scan slower than a
    serial one."""
    cols = getattr(_POOL, "columns", None)
    if cols is None or cols[0].shape[0] < size:
        size = max(size, 2 * (0 if cols is None else cols[0].shape[0]), 1 << 16)
        cols = _POOL.columns = tuple(np.empty(size, dtype=d) for d in (np.int64, np.int32,
                                                                          np.int32))
    return cols


def scan(model: Model, text: np.ndarray, los, his, backend: str, abort: np.ndarray, out,
         per_window: float, counts: Counts) -> int | None:
    """Add the hits of windows starting in the chunks [los[c], his[c]) to ``out``.

    ``out`` is a :class:`~engine.kmismatch.hits.HitBuffer`; its new hits are in
    window then slot order (chunks are given in text order), and ``counts``
    counts them. Each chunk writes into its own region, sized for
    ``per_window`` hits a window (the caller's estimate): of ``out`` itself
    when serial, of a spare buffer when multicore, from which the regions are
    then packed into ``out`` (and counted) in parallel. A chunk that filled its
    region is resumed where it stopped with four times the room (and the chunks
    after it run again). Returns the number of hits added, or None when
    ``abort`` stopped the scan (``out`` is then as before, ``counts`` may not be:
    see :meth:`Counts.recount`).
    """
    kernel = _kernel(model.variant, backend)
    R = model.slots
    los = np.array(los, dtype=np.int64)
    his = np.asarray(his, dtype=np.int64)
    # Room for a window's worth of hits at least, so that every round makes progress.
    caps = (R + 64 + (his - los) * per_window).astype(np.int64)
    start = len(out)
    active = np.flatnonzero(los < his)
    while active.size:
        c_lo, c_hi, c_cap = los[active], his[active], caps[active]
        bases = np.zeros(active.size, dtype=np.int64)
        np.cumsum(c_cap[:-1], out=bases[1:])
        room = int(c_cap.sum())
        if backend == "serial":
            bases += out.room(room)
            target = out.columns
        else:
            target = _spare(room)
        found = np.zeros(active.size, dtype=np.int64)
        reached = np.zeros(active.size, dtype=np.int64)
        # Chunks are handed to threads one at a time as they free up (not split evenly in
        # advance), so a thread that loses its core for a while does not hold the others up.
        with numba.parallel_chunksize(1):
            kernel(text, c_lo, c_hi, model.pat, model.tab, model.prm, model.msk,
                   model.slot_code, *target, bases, c_cap, found, reached, abort)
        if abort[0] != 0:
            out.truncate(start)  # keep nothing of this scan
            return None
        # Keep chunks in order up to the first one that stopped early; it goes on from
        # where it stopped, and those after it run again. Every chunk that stopped early
        # gets four times the room.
        short = reached < c_hi
        kept = int(np.argmax(short)) + 1 if short.any() else active.size
        n = int(found[:kept].sum())
        if backend == "serial":
            at = len(out)
            out.keep(zip(bases[:kept].tolist(), found[:kept].tolist()))
            counts.add(out, at, at + n)
        else:
            at = out.room(n)
            pack(*target, bases[:kept], found[:kept], *out.columns, at, *counts.arrays())
            out.keep([(at, n)])
        los[active[:kept]] = reached[:kept]
        caps[active[short]] *= 4
        active = np.flatnonzero(los < his)
    return len(out) - start


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


def set_threads(threads: int | None) -> None:
    numba.set_num_threads(min(threads or numba.config.NUMBA_NUM_THREADS,
                              numba.config.NUMBA_NUM_THREADS))
