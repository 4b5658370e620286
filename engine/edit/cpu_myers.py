"""edit ``myers`` (one word, m <= 64) and ``myers-blocked`` (any m).

Myers (1999): a text column of the DP matrix is computed with about 17 word
operations per 64 rows. The one-word scan keeps its two state words in
registers; the blocked scan passes the horizontal carry from word to word
(Myers' block-based algorithm, Hyyrö's formulation). Neither compares symbols:
the match word of each IUPAC code is looked up instead.

State (a slot's uint64 row): ``[pv, mv, peq x16]`` for one word,
``[pv x nb, mv x nb, peq x 16 nb]`` for nb words. The score C[m,j] is tracked
from the horizontal delta leaving the pattern's last row.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from engine.edit.cpu_bits import ALL, ONE, ZERO, advance_at, advance_column, build_peq, reset_column
from engine.edit.cpu_common import ABORT_CHECK_COLUMNS, CELLS, SCORE, T, record


def words_needed(m: int, blocked: bool) -> int:
    """Size of the uint64 state row for a pattern of length m."""
    nb = (m + 63) // 64
    return 18 * nb if blocked else 18


@njit(nogil=True, cache=True)
def init_word(pat, m, state):
    state[0] = ALL
    state[1] = ZERO
    build_peq(pat, m, state[2:18], False)


@njit(nogil=True, cache=True)
def scan_word(m, text, a, b, anchored, own_lo, mode, task, info, state, hits, abort):
    """Columns [a, b) with the pattern in one word; returns the next column."""
    peq = state[2:18]
    pv = state[0]
    mv = state[1]
    score = info[SCORE]
    t = info[T]
    hin = ONE if anchored else ZERO
    last = np.uint64(m - 1)
    j = a
    stop = False
    while j < b and not stop:
        if abort[0] != 0:
            break
        block_end = min(b, j + ABORT_CHECK_COLUMNS)
        while j < block_end:
            pv, mv, hp, hm = advance_at(pv, mv, peq[text[j]], hin, ZERO, last)
            score += np.int64(hp) - np.int64(hm)
            j += 1
            if score <= t and j - 1 >= own_lo:
                t, stop = record(score, j - 1, mode, task, info, hits)
                if stop:
                    break
    state[0] = pv
    state[1] = mv
    info[SCORE] = score
    info[CELLS] += (j - a) * m
    return j


@njit(nogil=True, cache=True)
def init_blocked(pat, m, state):
    nb = (m + 63) // 64
    reset_column(state[0:nb], state[nb:2 * nb], nb)
    build_peq(pat, m, state[2 * nb:18 * nb], False)


@njit(nogil=True, cache=True)
def scan_blocked(m, text, a, b, anchored, own_lo, mode, task, info, state, hits, abort):
    """Columns [a, b) with the pattern in ceil(m/64) words; returns the next column."""
    nb = (m + 63) // 64
    pvs = state[0:nb]
    mvs = state[nb:2 * nb]
    peq = state[2 * nb:18 * nb]
    last = np.uint64((m - 1) & 63)
    hin = ONE if anchored else ZERO
    score = info[SCORE]
    t = info[T]
    j = a
    stop = False
    while j < b and not stop:
        if abort[0] != 0:
            break
        block_end = min(b, j + ABORT_CHECK_COLUMNS)
        while j < block_end:
            score += advance_column(pvs, mvs, peq, text[j], nb, hin, last)
            j += 1
            if score <= t and j - 1 >= own_lo:
                t, stop = record(score, j - 1, mode, task, info, hits)
                if stop:
                    break
    info[SCORE] = score
    info[CELLS] += (j - a) * m
    return j
