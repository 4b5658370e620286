"""lcs ``bitparallel``: Allison-Dix / Hyyrö bit-vectors, 64 cells per word operation.

Bits are rows of ``a`` (64 per word) and columns are symbols of ``b``. With
V (bit set: L does not rise at that row) and the match word M of the column's
symbol, one column is

    U = V & M;  V' = (V + U) | (V - U)

and the carry out of the addition's top bit is L[m, J] - L[m, J-1]. The 16
IUPAC match words per word of ``a`` make matching 'sets intersect'.

A strip is ``WORDS`` consecutive words, kept in registers while the strip sweeps
its columns; the carry between strips is stored per column (``carry``), so the
strip below continues the addition where this one stopped. A tile is a band of
strips by a chunk of columns: tile (s, c) needs band s's V after chunk c-1 and
the carries of chunk c from band s-1, which is the tile wavefront of cpu_common.
Serial runs one strip after another over all columns; multicore pipelines the
tiles: the thread of a chunk runs its bands in order, each as soon as the chunk
to its left has finished that band.

Words past the end of ``a`` are padding: V = all ones and no matches, so a
carry runs through them unchanged and the last carry is still the top row's.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from engine.bitops import popcount64
from engine.lcs.cpu_common import (BITS, SNAPSHOT, Grid, Sampling, new_bits, no_sampling,
                                   split_evenly, store_sample)
from engine.lcs.cpu_sync import frontier, load_acquire, store_release, wait_for

#: Words per strip: unrolled and kept in registers by the compiler.
WORDS = 8
STRIP_ROWS = 64 * WORDS

_ONE = np.uint64(1)
_ALL = np.uint64(0xFFFFFFFFFFFFFFFF)


@njit(nogil=True, cache=True)
def build_match_words(a, nwords):
    """pm[w, s]: bit i set when a[64w + i] & s (all 16 IUPAC codes)."""
    pm = np.zeros((nwords, 16), dtype=np.uint64)
    for i in range(a.shape[0]):
        x = a[i]
        bit = _ONE << np.uint64(i & 63)
        for s in range(1, 16):
            if x & s:
                pm[i >> 6, s] |= bit
    return pm


def _build_tile(record_bits: bool, snapshots: bool):
    @njit(nogil=True, cache=True)
    def tile(s, c, st):
        """The strips of band s over chunk c, one after another."""
        pm, b, V, carry, tops, cw, m, band_strips, _progress, bits, image, row_map, col_map, rows, \
            shift = st
        n = b.shape[0]
        j0 = c * cw
        j1 = min(n, j0 + cw)
        vl = np.empty(WORDS, dtype=np.uint64)
        pl = np.empty((16, WORDS), dtype=np.uint64)
        for strip in range(s * band_strips, min(tops.shape[0], (s + 1) * band_strips)):
            w0 = strip * WORDS
            for k in range(WORDS):
                vl[k] = V[w0 + k]
                for x in range(16):
                    pl[x, k] = pm[w0 + k, x]
            if snapshots:
                top = tops[strip]   # L[64 w0, J] as the sweep moves right
                i_top = 64 * w0
                p_lo = np.searchsorted(rows, i_top + 1)
                p_hi = np.searchsorted(rows, min(m, i_top + STRIP_ROWS) + 1)
            if record_bits:
                real_words = bits.shape[0]
            for j in range(j0, j1):
                x = b[j]
                cin = np.uint64(carry[j])
                cc = cin
                for k in range(WORDS):
                    v = vl[k]
                    u = v & pl[x, k]
                    t = v + u
                    y = t + cc
                    cc = np.uint64(t < v) | np.uint64(y < t)
                    vl[k] = y | (v - u)
                carry[j] = np.uint8(cc)
                if record_bits:
                    for k in range(WORDS):
                        if w0 + k < real_words:
                            bits[w0 + k, j + 1] = vl[k]
                if snapshots:
                    top += np.int64(cin)
                    jc = col_map[j + 1]
                    if jc >= 0:
                        for p in range(p_lo, p_hi):
                            I = rows[p]
                            depth = I - i_top
                            ones = 0
                            for k in range(depth >> 6):
                                ones += popcount64(vl[k])
                            rem = depth & 63
                            if rem:
                                ones += popcount64(vl[depth >> 6] & ((_ONE << np.uint64(rem)) - _ONE))
                            store_sample(image, top + depth - ones, row_map[I], jc, shift)
            for k in range(WORDS):
                V[w0 + k] = vl[k]
            if snapshots:
                tops[strip] = top

    return tile


_PLAIN_TILE = _build_tile(False, False)
_BITS_TILE = _build_tile(True, False)
_SNAPSHOT_TILE = _build_tile(False, True)


@njit(nogil=True, cache=True)
def run_tile(mode, s, c, st):
    if mode == BITS:
        _BITS_TILE(s, c, st)
    elif mode == SNAPSHOT:
        _SNAPSHOT_TILE(s, c, st)
    else:
        _PLAIN_TILE(s, c, st)


# Drivers beside their tile kernel: see cpu_rows.py for why they are not shared.
@njit(nogil=True, cache=True)
def sweep_serial(mode, d0, d1, nbands, nchunks, st, abort):
    """Bands d0..d1-1 (one chunk); returns the next band, < d1 when aborted."""
    for d in range(d0, d1):
        if abort[0] != 0:
            return d
        run_tile(mode, d, 0, st)
    return d1


@njit(nogil=True, cache=True, parallel=True)
def sweep_multicore(mode, d0, d1, nbands, nchunks, st, abort):
    """The tiles with d0 <= s + c < d1, as a pipeline: the thread of chunk c runs its
    bands in order, each once chunk c-1 has finished that band (per-chunk flags, so
    threads never meet at a fork/join per tile anti-diagonal and a thread that falls
    behind only delays the chunks to its right). Returns the tile anti-diagonal
    reached: d1, or less when aborted.
    """
    progress = st[8]
    for c in prange(nchunks):
        for s in range(max(0, d0 - c), min(nbands, d1 - c)):
            if c > 0 and not wait_for(progress, c - 1, s, abort):
                break
            if load_acquire(abort, 0) != 0:
                break
            run_tile(mode, s, c, st)
            store_release(progress, c, s + 1)
    return frontier(progress, nbands, d1)


def prepare(a: np.ndarray, b: np.ndarray, band_rows: int, chunk_cols: int, mode: int,
            sampling: Sampling) -> Grid:
    """State: match words, V per word, the carry per column between strips, and
    (for snapshots) L along each strip's top row. Tiles are bands of
    ``band_rows // STRIP_ROWS`` strips by chunks of ``chunk_cols`` columns."""
    if band_rows % STRIP_ROWS:
        raise ValueError(f"bitparallel bands are whole strips of {STRIP_ROWS} rows, got {band_rows}")
    m, n = a.shape[0], b.shape[0]
    nstrips = -(-m // STRIP_ROWS)
    nwords = nstrips * WORDS
    pm = build_match_words(a, nwords)
    V = np.full(nwords, _ALL, dtype=np.uint64)
    carry = np.zeros(n, dtype=np.uint8)
    tops = np.zeros(nstrips, dtype=np.int64)
    bits = new_bits(m, n) if mode == BITS else np.zeros((0, 1), dtype=np.uint64)
    smp = sampling if mode == SNAPSHOT else no_sampling()
    chunks = split_evenly(n, chunk_cols)
    progress = np.zeros(chunks.shape[0], dtype=np.int64)  # bands finished, per chunk
    state = (pm, b, V, carry, tops, np.int64(chunk_cols), np.int64(m),
             np.int64(band_rows // STRIP_ROWS), progress, bits,
             smp.image, smp.row_map, smp.col_map, smp.rows, np.int64(smp.shift))
    return Grid(state, split_evenly(m, band_rows), chunks, mode)


def last_row(grid: Grid) -> np.ndarray:
    """L[m, 0..n]: the running sum of the carries out of the last strip."""
    carry = grid.state[3]
    out = np.zeros(carry.shape[0] + 1, dtype=np.int64)
    np.cumsum(carry, out=out[1:])
    return out


def bits(grid: Grid) -> np.ndarray:
    return grid.state[9]
