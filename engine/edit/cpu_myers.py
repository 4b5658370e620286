"""edit ``myers`` (one word, m <= 64) and ``myers-blocked`` (any m).

Myers (1999): a text column of the DP matrix is computed with about 17 word
operations per 64 rows. The one-word scan keeps its two state words in
registers; the blocked scan passes the horizontal carry from word to word
(Myers' block-based algorithm, Hyyrö's formulation). Neither compares symbols:
the match word of each IUPAC code is looked up instead.

The one-word scan advances two lanes (independent tasks) in lockstep, the
blocked scan one lane; see cpu_lanes.

State (a lane's uint64 row): ``[pv, mv, peq x16]`` for one word,
``[pv x nb, mv x nb, peq x 16 nb]`` for nb words. The score C[m,j] is tracked
from the horizontal delta leaving the pattern's last row.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from engine.edit.cpu_bits import ALL, ONE, ZERO, advance_at, advance_column, blocks, build_peq
from engine.edit.cpu_common import (CELLS, INF, NEVER, SCORE, T, bin_edge, flush_profile, lane,
                                    profile_column, record)


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
def run_word(n, two, anchored, mode, p_offs, text, tasks, prof, ix, ux, hx, iy, uy, hy):
    """n columns of lane x (and of lane y when ``two``), one word each; returns the columns done.

    The lanes are written out side by side so that both lanes' words stay in
    registers; their dependency chains are independent, so the core overlaps
    them. A run stops early after a hit that fills a buffer, or a best of 0.
    Owned columns lower their profile bins in ``prof``.
    """
    tx, px, _, mx, ownx = lane(tasks, p_offs, ix)
    ty, py, _, my, owny = lane(tasks, p_offs, iy)
    pvx, mvx, sx, lastx = ux[0], ux[1], ix[SCORE], np.uint64(mx - 1)
    pvy, mvy, sy, lasty = uy[0], uy[1], iy[SCORE], np.uint64(my - 1)
    # Columns a lane does not own record nothing: a threshold of -1 says so in one compare.
    thx = ix[T] if ownx else -1
    thy = iy[T] if owny else -1
    hin = ONE if anchored else ZERO
    lowx = INF
    lowy = INF
    edgex = bin_edge(tasks, tx, px, ownx)
    edgey = bin_edge(tasks, ty, py, owny)
    done = n
    for j in range(n):
        pvx, mvx, hp, hm = advance_at(pvx, mvx, ux[2 + text[px + j]], hin, ZERO, lastx)
        sx += np.int64(hp) - np.int64(hm)
        edgex, lowx = profile_column(prof, tasks, tx, px + j, min(lowx, sx), edgex)
        stop = False
        if sx <= thx:
            thx, stop = record(sx, px + j, mode, tx, ix, hx)
        if two:
            pvy, mvy, hp, hm = advance_at(pvy, mvy, uy[2 + text[py + j]], hin, ZERO, lasty)
            sy += np.int64(hp) - np.int64(hm)
            edgey, lowy = profile_column(prof, tasks, ty, py + j, min(lowy, sy), edgey)
            if sy <= thy:
                thy, stop_y = record(sy, py + j, mode, ty, iy, hy)
                stop = stop or stop_y
        if stop:
            done = j + 1
            break
    ux[0] = pvx
    ux[1] = mvx
    ix[SCORE] = sx
    ix[CELLS] += done * mx
    if lowx < INF and edgex != NEVER:
        flush_profile(prof, tasks, tx, px + done - 1, lowx)
    if two:
        uy[0] = pvy
        uy[1] = mvy
        iy[SCORE] = sy
        iy[CELLS] += done * my
        if lowy < INF and edgey != NEVER:
            flush_profile(prof, tasks, ty, py + done - 1, lowy)
    return done


@njit(nogil=True, cache=True)
def run_blocked(n, anchored, mode, p_offs, text, tasks, prof, info, state, hits):
    """n columns of one lane, ceil(m/64) words; returns the columns done (as :func:`run_word`)."""
    task, pos, _, m, owned = lane(tasks, p_offs, info)
    nb, last, pvs, mvs, peq = blocks(state, m)
    hin = ONE if anchored else ZERO
    score = info[SCORE]
    t = info[T]
    low = INF
    edge = bin_edge(tasks, task, pos, owned)
    done = n
    for j in range(n):
        score += advance_column(pvs, mvs, peq, text[pos + j], nb, hin, last)
        edge, low = profile_column(prof, tasks, task, pos + j, min(low, score), edge)
        if score <= t and owned:
            t, stop = record(score, pos + j, mode, task, info, hits)
            if stop:
                done = j + 1
                break
    if low < INF and edge != NEVER:
        flush_profile(prof, tasks, task, pos + done - 1, low)
    info[SCORE] = score
    info[CELLS] += done * m
    return done
