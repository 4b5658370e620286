"""edit ``myers`` with the ``simd`` flag: many patterns per vector instruction.

When many patterns (primers, probes, both strands of each) search one text, the
text is read once and each column advances all of them: a *group* of ``L``
patterns is laid out structure-of-arrays (``pv[l]``, ``mv[l]``, the score
``sc[l]``, the match words ``peq[s * stride + l]``), one machine word per
pattern (uint32 when every pattern has m <= 32, else uint64), and the loop over
lanes has no branch, so LLVM turns it into AVX-512 (or AVX2) code: 16 (or 8)
patterns per instruction. The word operations are engine.bitops' width-keeping
ones, so uint32 lanes stay 32-bit (numba would widen them to 64).

Hits are rare, so the vector loop does not look for them: it runs a *block* of
columns keeping each lane's lowest score, and after the block only a lane whose
low reaches its threshold is run again over the block, alone, from the state
saved at the block's start, to record its ends (hits mode) or its first best
(best mode). Blocks end on profile bin edges, so a block's low is its bin's.
A worker stops when its hit buffer could not take a block's worst case (every
lane a hit in every column), and goes on after the slice hands the hits over.

A *unit* is one chunk of one text record (see driver.Plan) scanned by one
group; a worker (one per thread) takes units w, w + W, ... and keeps its
lanes' state between slices, so a scan stops and resumes on block edges.
Global mode (C[0,j] = j) is the same loop with +1 entering the top row.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from engine.bitops import w_add, w_and, w_lt, w_not, w_or, w_shl, w_shr, w_sub, w_xor
from engine.edit.cpu_common import (INF, MODE_GLOBAL, MODE_HITS, T_BEST, T_CUT, T_DONE,
                                    T_END, T_PROF, T_THRESH)

#: Longest block of owned columns between two looks for hits (and at the cancel flag).
BLOCK_COLUMNS = 256
#: Longest run of columns not owned (a chunk's overlap with its predecessor).
LEAD_COLUMNS = 1 << 12

# Worker info fields (int64 row per worker).
W_UNIT = 0     # unit in progress, -1 when none
W_POS = 1      # next text column (absolute)
W_NEXT = 2     # next unit of the worker's queue (then + number of workers)
W_NHITS = 3    # hits waiting in the worker's buffer
W_COLS = 4     # columns scanned, times the lanes that scanned them (progress)
W_CELLS = 5    # DP cells: columns times m, summed over the lanes
W_STRIDE = 6   # the number of workers (the step of the queue)
NWINFO = 7

# Unit fields (int64 row per unit).
U_GROUP = 0    # the group of patterns
U_REC_LO = 1   # first column of the record (absolute), for profile bins
U_SCAN_LO = 2  # first column scanned; every lane starts fresh there
U_OWN_LO = 3   # first column whose hits belong to the unit
U_HI = 4       # end of the unit (absolute, exclusive)
U_BINW = 5     # profile bin width (0: no profile)
NUNIT = 6

# Word state rows of a worker (word dtype): the column, its saved copy, the block's low.
PV, MV, SC, LOW, PV0, MV0, SC0 = range(7)
NWORD = 7
# Int64 state rows of a worker: threshold, best distance, its first end (absolute, exclusive).
THR, BEST, BEST_END = range(3)
NLANE = 3


def word_type(max_m: int):
    """The lane word for patterns up to ``max_m`` (<= 64)."""
    return np.uint32 if max_m <= 32 else np.uint64


def word_constants(dtype) -> np.ndarray:
    """0, 1 and all ones in the lane word type (typed: no integer promotion in the kernel)."""
    return np.array([0, 1, np.iinfo(dtype).max], dtype=dtype)


def build_peq(pattern_codes, dtype) -> np.ndarray:
    """(16, L) match words of L patterns (m <= word bits): bit i of [s, l] is set when
    pattern l's symbol i and code s share a base."""
    out = np.zeros((16, len(pattern_codes)), dtype=np.uint64)
    sym = np.arange(16, dtype=np.uint8)
    for l, codes in enumerate(pattern_codes):
        bits = (np.asarray(codes, dtype=np.uint8)[:, None] & sym[None, :]) != 0
        weights = np.left_shift(np.uint64(1), np.arange(len(codes), dtype=np.uint64))
        out[:, l] = (bits.astype(np.uint64) * weights[:, None]).sum(axis=0, dtype=np.uint64)
    return out.astype(dtype)


@njit(nogil=True, cache=True, inline="always")
def step(eq, p, m, s, lo, at, hin, one):
    """One column of one lane: Myers' step, the score C[m,j] and the lowest one so far."""
    xv = w_or(eq, m)
    xh = w_or(w_xor(w_add(w_and(eq, p), p), p), eq)
    ph = w_or(m, w_not(w_or(xh, p)))
    mh = w_and(p, xh)
    s = w_sub(w_add(s, w_and(w_shr(ph, at), one)), w_and(w_shr(mh, at), one))
    ph = w_or(w_shl(ph, one), hin)
    mh = w_shl(mh, one)
    return w_or(mh, w_not(w_or(xv, ph))), w_and(ph, xv), s, s if w_lt(s, lo) else lo


@njit(nogil=True, cache=True)
def columns(text, j0, j1, peq, stride, width, last, pv, mv, sc, low, hin, one):
    """Advance lanes 0..width-1 over text[j0:j1]; ``low`` takes each lane's lowest score.
    ``hin``: the delta entering the top row (0 in search, 1 in global mode).

    Branch-free over the lanes: this is the loop that vectorises. Four columns are done
    per pass over the lanes, so a lane's state is loaded and stored once per four
    columns (and the loop's set-up, its aliasing checks included, paid once).
    """
    j = j0
    while j + 4 <= j1:
        r0 = peq[np.int64(text[j]) * stride:]  # views: indices from 0 need no wraparound,
        r1 = peq[np.int64(text[j + 1]) * stride:]  # so the loads stay contiguous (no gather)
        r2 = peq[np.int64(text[j + 2]) * stride:]
        r3 = peq[np.int64(text[j + 3]) * stride:]
        for l in range(width):
            at = last[l]
            p, m, s, lo = step(r0[l], pv[l], mv[l], sc[l], low[l], at, hin, one)
            p, m, s, lo = step(r1[l], p, m, s, lo, at, hin, one)
            p, m, s, lo = step(r2[l], p, m, s, lo, at, hin, one)
            p, m, s, lo = step(r3[l], p, m, s, lo, at, hin, one)
            pv[l] = p
            mv[l] = m
            sc[l] = s
            low[l] = lo
        j += 4
    while j < j1:
        r0 = peq[np.int64(text[j]) * stride:]
        for l in range(width):
            p, m, s, lo = step(r0[l], pv[l], mv[l], sc[l], low[l], last[l], hin, one)
            pv[l] = p
            mv[l] = m
            sc[l] = s
            low[l] = lo
        j += 1


@njit(nogil=True, cache=True)
def rescan(mode, text, j0, j1, peq, stride, l, at, p, m, s, hin, one, task, lane, hits, nhits):
    """Lane l alone over text[j0:j1] from the column (p, m, s), recording what passes its
    threshold as cpu_common.record does; returns the hits in the buffer after it."""
    for j in range(j0, j1):
        p, m, s, _ = step(peq[np.int64(text[j]) * stride + l], p, m, s, s, at, hin, one)
        v = np.int64(s)
        if v <= lane[THR]:
            if mode == MODE_HITS:
                hits[nhits, 0] = j + 1
                hits[nhits, 1] = v
                hits[nhits, 2] = task
                nhits += 1
                if v < lane[BEST]:
                    lane[BEST] = v
                    lane[BEST_END] = j + 1
            else:
                lane[BEST] = v
                lane[BEST_END] = j + 1
                lane[THR] = v - 1
    return nhits


@njit(nogil=True, cache=True)
def _start(u, units, unit_tasks, widths, lane_m, tasks, word, ws, ls):
    """Column 0 of every lane of unit u."""
    g = units[u, U_GROUP]
    for l in range(widths[g]):
        ws[PV, l] = word[2]
        ws[MV, l] = word[0]
        ws[SC, l] = lane_m[g, l]
        task = unit_tasks[u, l]
        ls[THR, l] = tasks[task, T_THRESH]
        ls[BEST, l] = INF
        ls[BEST_END, l] = -1


@njit(nogil=True, cache=True)
def _finish(mode, u, units, unit_tasks, widths, tasks, ws, ls):
    g = units[u, U_GROUP]
    for l in range(widths[g]):
        task = unit_tasks[u, l]
        tasks[task, T_BEST] = np.int64(ws[SC, l]) if mode == MODE_GLOBAL else ls[BEST, l]
        tasks[task, T_END] = ls[BEST_END, l]
        tasks[task, T_THRESH] = ls[THR, l]
        tasks[task, T_DONE] = 1


@njit(nogil=True, cache=True)
def run_worker(mode, text, peq, last, lane_m, widths, m_sum, units, unit_tasks, tasks, prof, word,
               info, ws, ls, hits, budget, abort):
    """Advance one worker by up to ``budget`` text columns (its queue of units, in blocks).

    Stops early when its hit buffer cannot take the next block or the cancel flag is set.
    """
    stride = peq.shape[1] // 16
    hin = word[1] if mode == MODE_GLOBAL else word[0]
    one = word[1]
    full = hits.shape[0]
    nunits = units.shape[0]
    left = budget
    while left > 0 and abort[0] == 0:
        u = info[W_UNIT]
        if u < 0:
            u = info[W_NEXT]
            if u >= nunits:
                break
            info[W_NEXT] = u + info[W_STRIDE]
            info[W_UNIT] = u
            info[W_POS] = units[u, U_SCAN_LO]
            _start(u, units, unit_tasks, widths, lane_m, tasks, word, ws, ls)
        g = units[u, U_GROUP]
        width = widths[g]
        pos = info[W_POS]
        hi = units[u, U_HI]
        if pos >= hi:
            _finish(mode, u, units, unit_tasks, widths, tasks, ws, ls)
            info[W_UNIT] = -1
            continue
        own = units[u, U_OWN_LO]
        gp = peq[g]
        gl = last[g]
        if pos < own:  # the overlap: columns that only build the state
            e = min(own, pos + left, pos + LEAD_COLUMNS)
            columns(text, pos, e, gp, stride, width, gl, ws[PV], ws[MV], ws[SC], ws[LOW], hin, one)
        else:
            e = min(hi, pos + left, pos + BLOCK_COLUMNS)
            binw = units[u, U_BINW]
            rec_lo = units[u, U_REC_LO]
            if binw > 0:
                e = min(e, rec_lo + ((pos - rec_lo) // binw + 1) * binw)
            if mode == MODE_HITS:
                room = (full - info[W_NHITS]) // width
                if room == 0:
                    break
                e = min(e, pos + room)
            for l in range(width):
                ws[PV0, l] = ws[PV, l]
                ws[MV0, l] = ws[MV, l]
                ws[SC0, l] = ws[SC, l]
                ws[LOW, l] = word[2]
            columns(text, pos, e, gp, stride, width, gl, ws[PV], ws[MV], ws[SC], ws[LOW], hin, one)
            nh = info[W_NHITS]
            for l in range(width):
                low = np.int64(ws[LOW, l])
                task = unit_tasks[u, l]
                if low <= ls[THR, l]:
                    nh = rescan(mode, text, pos, e, gp, stride, l, gl[l], ws[PV0, l], ws[MV0, l],
                                ws[SC0, l], hin, one, task, ls[:, l], hits, nh)
                if binw > 0:
                    i = tasks[task, T_PROF] + (e - 1 - rec_lo) // binw
                    v = min(low, tasks[task, T_CUT] + 1)
                    if v < prof[i]:
                        prof[i] = v
            info[W_NHITS] = nh
        info[W_POS] = e
        info[W_COLS] += (e - pos) * width
        info[W_CELLS] += (e - pos) * m_sum[g]
        left -= e - pos


@njit(nogil=True, cache=True)
def run_serial(mode, text, peq, last, lane_m, widths, m_sum, units, unit_tasks, tasks, prof, word,
               info, ws, ls, hits, budget, abort):
    """Every worker in turn, on this thread."""
    for w in range(info.shape[0]):
        run_worker(mode, text, peq, last, lane_m, widths, m_sum, units, unit_tasks, tasks, prof,
                   word, info[w], ws[w], ls[w], hits[w], budget, abort)


@njit(nogil=True, cache=True, parallel=True)
def run_parallel(mode, text, peq, last, lane_m, widths, m_sum, units, unit_tasks, tasks, prof,
                 word, info, ws, ls, hits, budget, abort):
    """One worker per thread."""
    for w in prange(info.shape[0]):
        run_worker(mode, text, peq, last, lane_m, widths, m_sum, units, unit_tasks, tasks, prof,
                   word, info[w], ws[w], ls[w], hits[w], budget, abort)
