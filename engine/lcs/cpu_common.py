"""The tile grid that every CPU variant of lcs runs on, and the traceback they share.

The LCS matrix L (rows: ``a``, columns: ``b``; L[0, :] = L[:, 0] = 0) is cut into
bands of rows and, on multicore, chunks of columns. Tile (s, c) needs the row
above it and the column to its left, so the tiles of one tile anti-diagonal
d = s + c are independent. Serial runs band after band (one chunk spans all
columns). Multicore either runs each tile anti-diagonal under prange (one
fork/join per tile anti-diagonal), or pipelines the tiles: one thread per
chunk, each tile started as soon as the chunk to its left has finished that
band, signalled through per-chunk flags (:mod:`engine.lcs.cpu_sync`). Only the
boundaries between tiles are stored, so a pass takes O(m + n) memory.

A pass can also record the traceback bits: bit I-1 of ``bits[(I-1) >> 6, J]``
is set when L[I, J] == L[I-1, J] (the bit-vector V of Allison-Dix/Hyyrö).
They alone decide an optimal path (see :func:`traceback`), so recovery stores
one bit per cell, and only for problems below ``config.LCS_TRACEBACK_WORDS``.

Modes of a tile kernel: ``PLAIN`` (scores only), ``BITS`` (also the
traceback bits), ``SNAPSHOT`` (also the sampled cells of the GUI's heatmap).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

PLAIN, BITS, SNAPSHOT = 0, 1, 2

_ONE = np.uint64(1)
_ALL = np.uint64(0xFFFFFFFFFFFFFFFF)


class Grid(NamedTuple):
    """A prepared pass: the state tuple the kernels take, and the tile geometry."""

    state: tuple
    band_rows: np.ndarray  # rows of each band of tiles
    chunk_cols: np.ndarray  # columns of each chunk
    mode: int

    @property
    def nbands(self) -> int:
        return int(self.band_rows.shape[0])

    @property
    def nchunks(self) -> int:
        return int(self.chunk_cols.shape[0])

    def cells_per_diagonal(self) -> np.ndarray:
        """Cells of each tile anti-diagonal: the convolution of the two tile sides."""
        return np.convolve(self.band_rows, self.chunk_cols)


class Sampling(NamedTuple):
    """Which cells a SNAPSHOT pass writes into ``image`` (uint16), and the value shift."""

    image: np.ndarray
    row_map: np.ndarray  # int32[m+1]: image row of matrix row I, or -1
    col_map: np.ndarray  # int32[n+1]: image column of matrix column J, or -1
    rows: np.ndarray     # sorted matrix rows that are sampled (int64)
    shift: int           # values are stored as L >> shift so that min(m, n) fits in uint16


def no_sampling() -> Sampling:
    z = np.zeros(1, dtype=np.int32) - 1
    return Sampling(np.zeros((1, 1), dtype=np.uint16), z, z, np.zeros(0, dtype=np.int64), 0)


def sample_axis(length: int, cap: int) -> np.ndarray:
    """Matrix indices 1..length to sample: all of them when length <= cap, else ``cap``
    evenly spread ones ending at ``length``."""
    if length <= cap:
        return np.arange(1, length + 1, dtype=np.int64)
    return np.ceil(np.arange(1, cap + 1, dtype=np.float64) * length / cap).astype(np.int64)


def make_sampling(m: int, n: int, cap: int) -> Sampling:
    rows, cols = sample_axis(m, cap), sample_axis(n, cap)
    row_map = np.full(m + 1, -1, dtype=np.int32)
    row_map[rows] = np.arange(rows.shape[0], dtype=np.int32)
    col_map = np.full(n + 1, -1, dtype=np.int32)
    col_map[cols] = np.arange(cols.shape[0], dtype=np.int32)
    shift = max(0, int(min(m, n)).bit_length() - 16)
    image = np.zeros((rows.shape[0], cols.shape[0]), dtype=np.uint16)
    return Sampling(image, row_map, col_map, rows, shift)


def split_evenly(length: int, size: int) -> np.ndarray:
    """Sides of consecutive pieces of at most ``size`` covering ``length``."""
    count = max(1, -(-length // size))
    sides = np.full(count, size, dtype=np.int64)
    sides[-1] = length - size * (count - 1)
    return sides


@njit(nogil=True, cache=True, inline="always")
def tiles_on_diagonal(d, nbands, nchunks):
    """(first band, number of tiles) of tile anti-diagonal d."""
    s_lo = max(0, d - nchunks + 1)
    s_hi = min(nbands - 1, d)
    return s_lo, s_hi - s_lo + 1


@njit(nogil=True, cache=True, inline="always")
def store_sample(image, value, row, col, shift):
    v = value >> shift
    image[row, col] = 65535 if v > 65535 else v


@njit(nogil=True, cache=True)
def traceback(bits, m, n, pairs):
    """One optimal path through L from (m, n), read from the traceback bits alone.

    At (I, J): up when L[I-1, J] == L[I, J] (bit set in column J); otherwise
    diagonal when L[I-1, J-1] == L[I, J-1] too (bit set in column J-1), since L
    then rises by one in row I only through a match; otherwise left, because
    L[I, J-1] == L[I, J]. Column 0 has every bit set. Writes 0-based (i, j)
    pairs into ``pairs`` in decreasing order and returns how many.
    """
    I, J = m, n
    count = 0
    while I > 0 and J > 0:
        word = (I - 1) >> 6
        bit = _ONE << np.uint64((I - 1) & 63)
        if bits[word, J] & bit:
            I -= 1
        elif bits[word, J - 1] & bit:
            pairs[count, 0] = I - 1
            pairs[count, 1] = J - 1
            count += 1
            I -= 1
            J -= 1
        else:
            J -= 1
    return count


def new_bits(m: int, n: int) -> np.ndarray:
    """Traceback bits with column 0 set (L[:, 0] is flat)."""
    bits = np.zeros(((m + 63) // 64, n + 1), dtype=np.uint64)
    bits[:, 0] = _ALL
    return bits


def prepare_values(a: np.ndarray, b: np.ndarray, band_rows: int, chunk_cols: int, mode: int,
                   sampling: Sampling) -> Grid:
    """State of the rows and wavefront variants: the row below the last finished
    band (per chunk) and, per band, the column right of its last finished tile.

    ``row[j]`` holds L[i, j+1]; ``left[s, r]`` holds L[i0(s)+r, j] for r = 0..h.
    """
    m, n = a.shape[0], b.shape[0]
    bands = split_evenly(m, band_rows)
    chunks = split_evenly(n, chunk_cols)
    row = np.zeros(n, dtype=np.int32)
    left = np.zeros((bands.shape[0], band_rows + 1), dtype=np.int32)
    bits = new_bits(m, n) if mode == BITS else np.zeros((1, 1), dtype=np.uint64)
    smp = sampling if mode == SNAPSHOT else no_sampling()
    brev = np.ascontiguousarray(b[::-1])
    state = (a, b, brev, row, left, np.int64(band_rows), np.int64(chunk_cols), bits,
             smp.image, smp.row_map, smp.col_map, smp.rows, np.int64(smp.shift))
    return Grid(state, bands, chunks, mode)


def last_row_values(grid: Grid) -> np.ndarray:
    """L[m, 0..n] after a finished pass of the rows or wavefront variant."""
    row = grid.state[3]
    out = np.zeros(row.shape[0] + 1, dtype=np.int64)
    out[1:] = row
    return out


def bits_values(grid: Grid) -> np.ndarray:
    return grid.state[7]
