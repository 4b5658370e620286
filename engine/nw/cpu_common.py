"""Pieces every nw CPU kernel shares: the tile contract and snapshot sampling.

The tile contract. A kernel computes the h x w block of H for ``a`` (rows)
against ``b`` (columns) from its boundary: ``top`` is H on the row above
(length w+1, ``top[0]`` the corner) and ``left`` is H on the column to the
left (length h+1, ``left[0]`` the same corner). It writes the block's bottom
row (w+1 values, ``bottom[0] = left[h]``) and right column (h+1 values,
``right[0] = top[w]``); outputs never alias inputs. A whole problem, a band of
rows and a multicore tile are all tiles, so one kernel serves the score pass,
the Hirschberg passes and the tile wavefront.

Snapshots. ``rec_rows`` and ``rec_cols`` are the sorted global matrix indices
sampled for the GUI's image; ``row0``/``col0`` place the tile's corner in the
matrix. A kernel stores H at every sampled (row, col) strictly inside its tile
(rows and columns >= 1 locally), so tiles never write the same pixel.
Empty ``rec_rows`` means no snapshot.

Indices in the hot loops are unsigned: numba then omits the negative-index
wraparound test, which otherwise keeps LLVM from vectorising the loops.
"""

from __future__ import annotations

import numpy as np
from numba import njit

U1 = np.uint64(1)


@njit(nogil=True, cache=True)
def sample_span(rec, lo, hi):
    """Indices [p, q) of the sorted samples ``rec`` that lie in [lo, hi)."""
    return np.searchsorted(rec, lo), np.searchsorted(rec, hi)


@njit(nogil=True, cache=True)
def record_row(snap, k, rec_cols, c_lo, c_hi, col0, row):
    """Store the sampled columns c_lo..c_hi of ``row`` (local columns) at snapshot row k."""
    for c in range(c_lo, c_hi):
        snap[k, c] = row[rec_cols[c] - col0]
