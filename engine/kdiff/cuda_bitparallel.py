"""kdiff ``bitparallel`` on CUDA: the blocked tiers, one thread per (start r, background chunk).

The CPU kernel (cpu_bitparallel.py) walks the whole background once per r.
One thread per r would leave most of a GPU idle when alpha is a few thousand
long, and one long candidate would hold its thread for the whole run. Here the
background is cut into chunks, and each thread runs the same block recurrence
with Ukkonen's cut-off over one chunk for one r; c(r) is the atomic max over
its chunks. With the ``word32``/``word64`` flags the lanes stages
(cuda_lanes.py) settle first every start whose candidate fits their word; only
the others reach these tiers.

**Overlap.** A chunk owning columns [s, e) starts its DP V columns earlier
(never before its record's start). An occurrence of a prefix of length L with
at most K = k-1 edits spans at most L+K columns, so the chunk owning its end
sees it whole when L+K <= V. A chunk's DP runs on a substring of the record,
so every cell it finds active is truly active (no false hits). Hence, with m
the max over chunks: if m < V-K then m = c(r) (had c(r) >= V-K, the prefix of
length V-K of that occurrence would have been seen whole, giving m >= V-K).

**Words.** A thread keeps its live 64-row blocks in registers: a
``cuda.local.array`` of compile-time size indexed only inside loops of
constant trip count, which NVVM unrolls and promotes (ptxas reports no stack
frame). A thread that would need more words than it holds stops and flags its
r. Tiers of more words keep them in global memory, interleaved per thread so
that a warp's accesses coalesce.

**Which tier.** Without bounds on c(r), a start climbs a ladder: the tiers of
``config.KDIFF_CUDA_BITPARALLEL_TIERS`` in turn, each re-running the starts the
last could not settle (its overlap too short, or its words too few), then an
exact tier sized to the longest suffix. With the ``neighbours`` flag, for the
starts the 32-bit pass hands on, the starts' bounds decide instead
(neighbours.py): c(r) <= c(y) + (y - r) for a settled start y > r (drop the
first symbol of an approximate occurrence), so a start with a settled start to
its right has an upper bound U, and one scan with U // 64 + 1 words and overlap
U + K + 1 settles it (the proof is at ``BitparallelDriver._rounds``); a start
between two settled ones whose bounds meet needs no scan at all. The starts
left are settled in rounds, a few scans per run of them; only a run at a
slice's end, with nothing settled to its right, starts one rung at a time. The
32-bit pass is sparse too: every other start first, then the rest but those
the bounds settle and those between two starts that outgrew the word (the
rounds settle such runs mostly without scans), about half of a shared
stretch's lanes work.

**Memory layout.** ``table[s, p]`` holds the 64-bit match word of alpha[p:p+64]
for IUPAC symbol s (bit i set when alpha[p+i] & s), so block b of start r is
``table[s, r + 64b]``. Consecutive threads take consecutive r of the same
chunk: their table reads are consecutive words (coalesced) and they read the
same background symbol (one broadcast).
"""

from __future__ import annotations

import math

import numpy as np
from numba import cuda, int32, int64, uint64
from numba import uint64 as U  # unsigned indices: numba then skips the negative-index wraparound

from engine import config
from engine.gpu import imin, kernel_factory, kernel_jit, register_cap
from engine.kdiff.cuda_lanes import (WORDS, LanesStage, TargetTables, chunk_plan, count_deltas,
                                     level_floors, named, settle_row, w_and, w_sub)
from engine.kdiff.neighbours import SliceBounds

_ONE = np.uint64(1)
_ALL = np.uint64(0xFFFFFFFFFFFFFFFF)
_ZERO = np.uint64(0)
_SIXTYTHREE = np.uint64(63)
#: kdiff --all-k: the lower levels the register tiers probe (the top ones, in block 0); a
#: start with more levels past the lanes' word takes the tiers that probe every level.
TIER_TOP_LEVELS = 2


@cuda.jit(device=True, inline=True)
def advance_block(pv, mv, eq, hin_p, hin_m):
    """One column of one 64-row block (Myers 1999, block form), as on the CPU."""
    p, m, hout_p, hout_m, _, _ = advance_block_rows(pv, mv, eq, hin_p, hin_m)
    return p, m, hout_p, hout_m


@cuda.jit(device=True, inline=True)
def advance_block_rows(pv, mv, eq, hin_p, hin_m):
    """:func:`advance_block`, also returning the rows' +1/-1 horizontal deltas (row i of
    the block at bit i-1): the every-level tiers move their levels' scores by them."""
    xv = eq | mv
    eq = eq | hin_m
    xh = (((eq & pv) + pv) ^ pv) | eq
    ph = mv | ~(xh | pv)
    mh = pv & xh
    hout_p = ph >> _SIXTYTHREE
    hout_m = mh >> _SIXTYTHREE
    phs = (ph << _ONE) | hin_p
    mhs = (mh << _ONE) | hin_m
    return mhs | ~(xv | phs), phs & xv, hout_p, hout_m, ph, mh


@cuda.jit(device=True, inline=True)
def delta_at(p, m, bit):
    """A +1/-1 delta word pair's value at ``bit``: 1, 0 or -1."""
    sh = uint64(bit)
    return int32((p >> sh) & _ONE) - int32((m >> sh) & _ONE)


@cuda.jit(device=True, inline=True)
def score_at(score, pv, mv, below):
    """D at a row of a block whose bottom row scores ``score``; ``below`` masks the rows
    under it (see :func:`rows_below`)."""
    return int32(score - int32(cuda.popc(pv & below)) + int32(cuda.popc(mv & below)))


@cuda.jit(device=True, inline=True)
def rows_below(bit):
    """The mask of a block's rows below row ``bit`` (0..63): bits bit+1..63."""
    return (_ALL << uint64(bit + 1)) if bit < 63 else _ZERO


@cuda.jit(device=True, inline=True)
def run_stretch(yy, NB, pv, mv, eqs, table, beta, row, r, j, hi, sy, c, pb, below, Kc, mp,
                nblocks, lt, lm, ntop, tbase):
    """The register tiers' column loop while block ``yy`` is the last live one. ``yy`` is a
    constant at every call site, so every word index is one (the words stay in registers:
    indices are clamped to NB-1 for the call sites a small tier never reaches) and a column
    costs only its yy+1 block steps and the bookkeeping: no test per block, no step counter
    per column (steps are (yy+1) a column, counted once a stretch).

    Per column: the match words of the live blocks are loaded first (their latencies
    overlap), blocks 0..yy advance, and one score is kept, block yy's bottom ``sy``. Row c+1
    (the probe) is scored from block yy's words when it lies there; when block yy's bottom
    reaches K+64 (rare) the bottoms of the blocks below are scored from their words by
    popcounts until one may hold a row <= K. Returns (j, y, sy, c, pb, below, done, over,
    steps) at the first column where y changes, the chunk ends, c reaches the suffix's
    length, or the thread would need more than NB words (``over``).

    ``ntop`` lower levels (kdiff --all-k; a constant at every call site, 0 without levels),
    those of tbase .. tbase+ntop-1 edits, are probed in block 0 (always computed, exact):
    ``lt`` their c, ``lm`` the masks of their rows 1..c+1. Row c_t+1 scores <= t by the
    popcounts of block 0's vertical deltas down to it (D of the top row is 0); a level
    whose row leaves block 0 (c_t = 64, below its suffix's end) sets ``over`` (the driver
    re-runs such a start on the tier that probes every level in any block). With levels,
    ``done`` waits for the lowest one too."""
    live = int32(Kc + 64)  # a block whose bottom scores less may hold a row <= K
    j0 = j
    grown = int32(0)
    y = int32(yy)
    done = False
    over = False
    while True:
        s = U(beta[U(j)])
        at = s * row + U(r)  # block b's match word: table[at + 64 b]
        for b in range(1, yy + 1):  # every load first: their latencies overlap
            eqs[imin(b, NB - 1)] = table[at + U(b << 6)]
        p, m, hp, hm = advance_block(pv[0], mv[0], table[at], _ZERO, _ZERO)
        pv[0] = p
        mv[0] = m
        for b in range(1, yy + 1):
            w = imin(b, NB - 1)
            p, m, hp, hm = advance_block(pv[w], mv[w], eqs[w], hp, hm)
            pv[w] = p
            mv[w] = m
        prev = sy  # block yy's bottom in the column before
        last = int32(sy + int32(hp) - int32(hm))
        sy = last
        # Ukkonen: row c+1 is the only row whose score can raise c (by one a column), and
        # it is never above block y: c >= 64 y, since block y grew only after row 64 y
        # scored <= K (and c tracks the last row <= K, see the grow step).
        hit = pb == yy and score_at(last, p, m, below) <= Kc
        if last >= live:  # rare: down to the last block that may hold a row <= K
            found = False
            for i in range(yy + 1):
                b = yy - i
                if not found:
                    if sy < live or b == 0:
                        y = int32(b)
                        found = True
                    else:  # block b-1's bottom
                        w = imin(b, NB - 1)
                        sy = int32(sy - cuda.popc(pv[w]) + cuda.popc(mv[w]))
        elif (prev <= Kc or last < Kc) and yy + 1 < nblocks:
            # Grow: the first row of block yy+1 can only become active from the bottom of
            # block yy (diagonal from j-1, or vertical in j); most columns stop at `prev`.
            eq = table[at + U((yy + 1) << 6)]
            delta = int32(0) if (eq & _ONE) else int32(1)
            if prev + delta <= Kc or last < Kc:
                if yy + 1 >= NB:
                    over = True  # needs more words than this kernel holds
                else:
                    w = imin(yy + 1, NB - 1)
                    p, m, hp2, hm2 = advance_block(_ALL, _ZERO, eq, hp, hm)
                    v = int32(prev + 64 + int32(hp2) - int32(hm2))
                    pv[w] = p
                    mv[w] = m
                    if v < live:
                        y = int32(yy + 1)
                        sy = v
                    if yy + 1 == pb and score_at(v, p, m, below) <= Kc:
                        hit = True
                    grown += 1
        if hit and c < mp:  # Ukkonen: at most one more row per column, and only row c+1
            c = int32(c + 1)
            pb = int32(c >> 6)
            below = rows_below(c & 63)
            done = c >= mp and (ntop == 0 or lt[0] >= mp)
        if ntop > 0:
            p0 = pv[0]
            m0 = mv[0]
            for u in range(ntop):
                cv = lt[u]
                if cv < mp:
                    rows = lm[u]
                    if int32(cuda.popc(p0 & rows)) - int32(cuda.popc(m0 & rows)) <= tbase + u:
                        cv = int32(cv + 1)
                        lt[u] = cv
                        if cv < 64:
                            lm[u] = _ALL >> U(63 - cv)
                        elif cv < mp:
                            over = True  # its next row is in block 1
                        if u == 0:
                            done = c >= mp and cv >= mp
        j = int32(j + 1)
        if y != yy or done or over or j >= hi:
            return (j, y, sy, c, pb, below, done, over,
                    int64(j - j0) * int64(yy + 1) + int64(grown))


@cuda.jit(device=True, inline=True)
def row_score(p0, m0, pv, mv, cv):
    """D at row cv+1 (bit cv & 63 of block cv >> 6): the sum of the vertical deltas of rows
    1..cv+1 (the top row is 0), block 0's from ``p0``/``m0``, the others' from ``pv``/``mv``."""
    rb = int32(cv >> 6)
    rows = _ALL >> uint64(63 - (cv & 63))  # the block's rows down to row cv+1
    if rb == 0:
        return int32(cuda.popc(p0 & rows)) - int32(cuda.popc(m0 & rows))
    acc = int32(cuda.popc(p0)) - int32(cuda.popc(m0))
    for b in range(1, rb):
        acc += int32(cuda.popc(pv[b])) - int32(cuda.popc(mv[b]))
    return acc + int32(cuda.popc(pv[rb] & rows)) - int32(cuda.popc(mv[rb] & rows))


@cuda.jit(device=True, inline=True)
def block0_level_rows(ct, levels, mp):
    """The rows of block 0 whose falling counter can raise a lower level: 1..c_(L-1)+1 (a
    row below it is over L-1 edits: Ukkonen) and within the suffix, as cuda_lanes does."""
    n = imin(imin(ct[levels - 1] + 1, mp), 64)
    return (_ALL >> U(64 - n)) if n > 0 else _ZERO


@cuda.jit(device=True, inline=True)
def track_levels(p0, m0, pv, mv, carried, top, ct, sd, levels, mp):
    """The lower levels of kdiff --all-k whose rows lie past block 0 (c_t >= 64; those in
    block 0 are counted word-parallel, see :func:`chunk_kernel`) after one column: level
    t's c grows by one where row c_t+1 scores <= t (Ukkonen, as for c at K). ``sd[t]``
    keeps that row's score from column to column: a row's score moves by its horizontal
    delta (the blocks 1..``carried`` the column advanced from their words of the column
    before add theirs in the block loop), and when c_t grows the new row's is the old one's
    plus its vertical delta. Only where the words are new (a block grown or re-entered this
    column, a level that just left block 0, or a chunk's first column: ``sd`` < 0) is the
    row scored afresh by popcounts (:func:`row_score`). A row below the column's last block
    (``top``) is inactive, > K >= t: it cannot grow, and is scored afresh when the band
    returns."""
    for t in range(levels):
        cv = ct[t]
        if cv >= 64 and cv < mp:
            rb = int32(cv >> 6)
            if rb > top:
                sd[t] = -1
            else:
                d = sd[t]
                if d < 0 or rb > carried:
                    d = row_score(p0, m0, pv, mv, cv)
                if d <= t:
                    cv = int32(cv + 1)
                    ct[t] = cv
                    nb = int32(cv >> 6)
                    if cv >= mp or nb > top:
                        d = int32(-1)
                    else:
                        d += delta_at(pv[nb], mv[nb], cv & 63)
                sd[t] = d


@kernel_factory
def chunk_kernel(words: int, registers: int = 255, levels: int = 0, top: int = 0):
    """The chunk kernel holding up to ``words`` blocks per thread in registers, or, for
    ``words == 0``, as many as the global arrays ``spv/smv`` of shape (capacity, threads)
    hold. Its registers are capped at ``registers``.

    The register tiers run their columns in stretches (:func:`run_stretch`), one code path
    for each count of live blocks, chosen again whenever the count changes; the words in
    global memory take the same steps in plain loops. All bookkeeping is 32-bit.

    ``levels`` > 0 (kdiff --all-k) also finds c at lower levels, into ``out_lv``; a thread
    then runs until the lowest it finds has its whole suffix. With words in global memory
    every level, 0..levels-1 edits, in any block: those whose rows lie in block 0 (the band
    in most columns) by counters of e = D - M over its 64 rows, word-parallel as the lanes
    do (cuda_lanes.count_deltas: a few dozen instructions a column whatever the levels,
    where scoring each level's row cost ~12 a level), the rest one by one
    (:func:`track_levels`). In registers
    (``top`` > 0) only the ``top`` highest, levels-top .. levels-1 edits, in block 0 (a
    stretch scores only its last live block, and block 0 is the one always computed): the
    driver sends a start here only when the lanes stage settled its levels below them, and
    one whose level leaves block 0 comes back flagged ``over`` with that level at 64.
    """
    assert not (levels and words) or 0 < top <= levels, "register tiers probe the top levels"
    NB = max(1, words)
    REG = words > 0
    CAP = registers
    LV = 0 if REG else levels  # the levels track_levels finds (words in global memory)
    TOP = top if REG else 0  # the levels run_stretch finds (words in registers)
    TOPN = max(1, TOP)
    LVN = max(1, LV)  # (a local array is never empty)

    def kernel(table, beta, rs, nr, m_end, K, chunk_lo, chunk_hi, out_c, overflow, counters,
               spv, smv, out_lv):
        # CAP, LVN and TOPN are never 0: naming them puts the register cap and the levels in
        # the kernel's closure, which numba's disk cache keys on (it ignores max_registers).
        if CAP == 0 or LVN == 0 or TOPN == 0:
            return
        tid = cuda.grid(1)
        block_steps = cuda.shared.array(1, int64)
        if cuda.threadIdx.x == 0:
            block_steps[0] = 0
        cuda.syncthreads()
        steps = int64(0)
        if tid < nr * chunk_lo.shape[0]:
            q = tid % nr
            r = int32(rs[q])
            mp = int32(m_end - r)
            Kc = int32(K)
            live = int32(Kc + 64)  # a block whose bottom scores less may hold a row <= K
            c = imin(Kc, mp)
            if REG:
                pv = cuda.local.array(NB, uint64)
                mv = cuda.local.array(NB, uint64)
            else:
                pv = spv[:, tid]
                mv = smv[:, tid]
            eqs = cuda.local.array(NB, uint64)  # a column's match words (register tiers)
            capacity = int32(NB) if REG else int32(spv.shape[0])  # (words in global memory)
            nblocks = int32((mp + 63) >> 6)
            y = int32((Kc - 1) >> 6) if Kc >= 1 else int32(0)
            # With words in global memory block 0, the one every column computes, stays in
            # registers (its slot in spv/smv is unused): most columns touch no other word.
            p0 = _ALL
            m0 = _ZERO
            for b in range(0 if REG else 1, NB if REG else y + 1):
                if b <= y:
                    pv[b] = _ALL
                    mv[b] = _ZERO
            sy = int32(64 * (y + 1))  # block y's bottom row: D = its row in column -1
            over = False
            ct = cuda.local.array(LVN, int32)  # c of each lower level (words in global memory)
            sd = cuda.local.array(LVN, int32)  # D at their rows c+1 past block 0 (< 0: afresh)
            for t in range(LV):
                ct[t] = imin(t, mp)
                sd[t] = -1
            # block 0's counters of e = D - M, bit b of each row's in eb (cuda_lanes): D = M =
            # the row's index in the column before the chunk
            e0 = e1 = e2 = e3 = _ZERO
            valid = block0_level_rows(ct, LVN, mp) if LV > 0 else _ZERO
            tbase = int32(levels - TOP)
            lt = cuda.local.array(TOPN, int32)  # c of the top levels (words in registers)
            lm = cuda.local.array(TOPN, uint64)  # their rows 1..c+1 in block 0
            for u in range(TOP):
                lt[u] = imin(tbase + u, mp)
                lm[u] = _ALL >> U(63 - imin(lt[u], 63))
                over = over or (lt[u] >= 64 and lt[u] < mp)  # (never: the lanes ran, K < 32)
            # the scan of a start ends when its whole suffix occurs (with levels: within the
            # fewest edits it finds)
            if LV > 0:
                done = ct[0] >= mp
            elif TOP > 0:
                done = c >= mp and lt[0] >= mp
            else:
                done = c >= mp
            pb = int32(c >> 6)  # the probe: row c+1 is bit c & 63 of block c >> 6
            below = rows_below(c & 63)
            j = int32(chunk_lo[tid // nr])
            hi = int32(chunk_hi[tid // nr])
            row = U(m_end)  # table holds 16 rows of m_end words, flattened
            while REG and j < hi and not done and not over:
                # One stretch of columns at a time, each specialised to its last live block
                # (calls spelled out: a device function takes no *args).
                if y == 0:
                    j, y, sy, c, pb, below, done, over, n = run_stretch(
                        0, NB, pv, mv, eqs, table, beta, row, r, j, hi, sy, c, pb, below, Kc, mp,
                        nblocks, lt, lm, TOP, tbase)
                elif y == 1:
                    j, y, sy, c, pb, below, done, over, n = run_stretch(
                        1, NB, pv, mv, eqs, table, beta, row, r, j, hi, sy, c, pb, below, Kc, mp,
                        nblocks, lt, lm, TOP, tbase)
                elif y == 2:
                    j, y, sy, c, pb, below, done, over, n = run_stretch(
                        2, NB, pv, mv, eqs, table, beta, row, r, j, hi, sy, c, pb, below, Kc, mp,
                        nblocks, lt, lm, TOP, tbase)
                elif y == 3:
                    j, y, sy, c, pb, below, done, over, n = run_stretch(
                        3, NB, pv, mv, eqs, table, beta, row, r, j, hi, sy, c, pb, below, Kc, mp,
                        nblocks, lt, lm, TOP, tbase)
                elif NB > 4 and y == 4:
                    j, y, sy, c, pb, below, done, over, n = run_stretch(
                        4, NB, pv, mv, eqs, table, beta, row, r, j, hi, sy, c, pb, below, Kc, mp,
                        nblocks, lt, lm, TOP, tbase)
                elif NB > 5 and y == 5:
                    j, y, sy, c, pb, below, done, over, n = run_stretch(
                        5, NB, pv, mv, eqs, table, beta, row, r, j, hi, sy, c, pb, below, Kc, mp,
                        nblocks, lt, lm, TOP, tbase)
                elif NB > 6 and y == 6:
                    j, y, sy, c, pb, below, done, over, n = run_stretch(
                        6, NB, pv, mv, eqs, table, beta, row, r, j, hi, sy, c, pb, below, Kc, mp,
                        nblocks, lt, lm, TOP, tbase)
                elif NB > 7 and y == 7:
                    j, y, sy, c, pb, below, done, over, n = run_stretch(
                        7, NB, pv, mv, eqs, table, beta, row, r, j, hi, sy, c, pb, below, Kc, mp,
                        nblocks, lt, lm, TOP, tbase)
                elif NB > 8 and y == 8:
                    j, y, sy, c, pb, below, done, over, n = run_stretch(
                        8, NB, pv, mv, eqs, table, beta, row, r, j, hi, sy, c, pb, below, Kc, mp,
                        nblocks, lt, lm, TOP, tbase)
                elif NB > 9 and y == 9:
                    j, y, sy, c, pb, below, done, over, n = run_stretch(
                        9, NB, pv, mv, eqs, table, beta, row, r, j, hi, sy, c, pb, below, Kc, mp,
                        nblocks, lt, lm, TOP, tbase)
                elif NB > 10 and y == 10:
                    j, y, sy, c, pb, below, done, over, n = run_stretch(
                        10, NB, pv, mv, eqs, table, beta, row, r, j, hi, sy, c, pb, below, Kc, mp,
                        nblocks, lt, lm, TOP, tbase)
                elif NB > 11 and y == 11:
                    j, y, sy, c, pb, below, done, over, n = run_stretch(
                        11, NB, pv, mv, eqs, table, beta, row, r, j, hi, sy, c, pb, below, Kc, mp,
                        nblocks, lt, lm, TOP, tbase)
                elif NB > 12 and y == 12:
                    j, y, sy, c, pb, below, done, over, n = run_stretch(
                        12, NB, pv, mv, eqs, table, beta, row, r, j, hi, sy, c, pb, below, Kc, mp,
                        nblocks, lt, lm, TOP, tbase)
                elif NB > 13 and y == 13:
                    j, y, sy, c, pb, below, done, over, n = run_stretch(
                        13, NB, pv, mv, eqs, table, beta, row, r, j, hi, sy, c, pb, below, Kc, mp,
                        nblocks, lt, lm, TOP, tbase)
                elif NB > 14 and y == 14:
                    j, y, sy, c, pb, below, done, over, n = run_stretch(
                        14, NB, pv, mv, eqs, table, beta, row, r, j, hi, sy, c, pb, below, Kc, mp,
                        nblocks, lt, lm, TOP, tbase)
                elif NB > 15 and y == 15:
                    j, y, sy, c, pb, below, done, over, n = run_stretch(
                        15, NB, pv, mv, eqs, table, beta, row, r, j, hi, sy, c, pb, below, Kc, mp,
                        nblocks, lt, lm, TOP, tbase)
                else:  # never: y < NB always (a start that would need block NB is "over")
                    over = True
                    n = int64(0)
                steps += n
            while not REG and j < hi and not done:  # words in global memory: plain loops
                s = U(beta[U(j)])
                at = s * row + U(r)
                p, m, hp, hm, ph0, mh0 = advance_block_rows(p0, m0, table[at], _ZERO, _ZERO)
                p0 = p
                m0 = m
                for b in range(1, y + 1):
                    p, m, hp, hm, ph, mh = advance_block_rows(pv[b], mv[b], table[at + U(b << 6)],
                                                              hp, hm)
                    pv[b] = p
                    mv[b] = m
                    for t in range(LV):  # the levels' rows in block b move by their h
                        if (ct[t] >> 6) == b and sd[t] >= 0:
                            sd[t] += delta_at(ph, mh, ct[t] & 63)
                carried = y  # the blocks advanced from their words of the column before
                steps += y + 1
                prev = sy
                last = int32(sy + int32(hp) - int32(hm))
                sy = last
                hit = pb == y and score_at(last, p, m, below) <= Kc  # as in run_stretch
                keep = y
                computed = y  # the last block this column computed (track_levels)
                if last >= live:
                    keep = int32(0)
                    for i in range(y + 1):
                        b = y - i
                        if sy < live or b == 0:
                            keep = int32(b)
                            break
                        sy = int32(sy - cuda.popc(pv[b]) + cuda.popc(mv[b]))
                elif int32(y + 1) < nblocks and (prev <= Kc or last < Kc):
                    nxt = int32(y + 1)
                    eq = table[at + U(nxt << 6)]
                    delta = int32(0) if (eq & _ONE) else int32(1)
                    if prev + delta <= Kc or last < Kc:
                        if nxt >= capacity:
                            over = True  # needs more words than this kernel holds
                        else:
                            p, m, hp2, hm2 = advance_block(_ALL, _ZERO, eq, hp, hm)
                            v = int32(prev + 64 + int32(hp2) - int32(hm2))
                            pv[nxt] = p
                            mv[nxt] = m
                            if v < live:
                                keep = nxt
                                sy = v
                            if nxt == pb and score_at(v, p, m, below) <= Kc:
                                hit = True
                            steps += 1
                            computed = nxt
                y = keep
                if hit and c < mp:  # (with levels the scan goes on past c = mp)
                    c = int32(c + 1)
                    pb = int32(c >> 6)
                    below = rows_below(c & 63)
                    done = c >= mp
                if LV > 0:
                    e0, e1, e2, e3, fell = count_deltas(e0, e1, e2, e3, ph0, mh0, True)
                    fell = fell & valid
                    if fell != _ZERO:  # rare: settle the fallen rows exactly
                        while fell != _ZERO:
                            low = w_and(fell, w_sub(_ZERO, fell))  # the lowest (wraps: the simulator)
                            fell = fell ^ low
                            e0, e1, e2, e3 = settle_row(p0, m0, low, _ONE, ct, 0, LV, e0, e1, e2,
                                                        e3)
                        valid = block0_level_rows(ct, LV, mp)
                    if ct[LV - 1] >= 64 and computed > 0:
                        # Some level's row lies past block 0, and so does the band. While the
                        # band is block 0 alone such a row is inactive (> K): it cannot grow,
                        # and its kept score goes stale unread: a block re-enters the band
                        # only by growing, and a grown block's rows are scored afresh.
                        track_levels(p0, m0, pv, mv, carried, computed, ct, sd, LV, mp)
                    done = ct[0] >= mp
                if over:
                    break
                j = int32(j + 1)
            cuda.atomic.max(out_c, q, c)
            for t in range(LV):
                cuda.atomic.max(out_lv, (q, t), ct[t])
            for u in range(TOP):
                cuda.atomic.max(out_lv, (q, tbase + u), lt[u])
            if over:
                overflow[q] = 1
        cuda.atomic.add(block_steps, 0, steps)
        cuda.syncthreads()
        if cuda.threadIdx.x == 0:
            cuda.atomic.add(counters, 0, block_steps[0])

    # Named tier4, tier8, ... or tier_global (ncu and the disk cache tell them apart by it).
    name = ((f"tier{words}" if words else "tier_global") + (f"_levels{levels}" if levels else "")
            + (f"top{top}" if TOP else ""))
    return kernel_jit(registers)(named(kernel, name))


class BitparallelDriver:
    """Host side: the lanes stages, then the blocked tiers (chunk plans, launches, re-runs or
    sizes from the neighbour bounds).

    ``dev`` is the job's :class:`engine.kdiff.cuda.Device` (uploads, launches
    with clear errors, memory and occupancy figures); ``flags`` the job's flags.
    ``levels`` (kdiff --all-k: c for 0..levels-1 edits besides K) go through the lanes
    stages, then only the levels the lanes left open through the tiers (:meth:`_tiers`);
    the neighbours' bounds are on one k's c(r), so a job with levels has no neighbours flag
    (engine.kdiff.make_job).
    """

    def __init__(self, dev, K: int, counting: bool, flags=frozenset(), levels: int = 0):
        self.dev, self.K, self.counting, self.levels = dev, K, counting, levels
        self.tables = TargetTables(dev)
        # The lanes stages (engine/kdiff/cuda_lanes.py) whose word can hold a candidate.
        self.lanes = [LanesStage(dev, K, w, self.tables) for w in WORDS
                      if f"word{w}" in flags and K < w]
        # neighbours (the registry has it need word32) acts on what the 32-bit pass hands on;
        # a 64-bit stage then scans only the starts whose bound says they fit 64. Otherwise
        # every stage is a pass over what the last left.
        self.neighbours = "neighbours" in flags and bool(self.lanes) and self.lanes[0].word == 32
        self.passes = self.lanes[:1] if self.neighbours else self.lanes
        self.fit = self.lanes[1] if self.neighbours and len(self.lanes) > 1 else None
        y0 = (K - 1) // 64 if K >= 1 else 0
        # A tier needs room to grow past the y0+1 blocks every column starts with, and an
        # overlap that can settle some c >= K (c + K < overlap).
        self.tiers = [(w, v) for w, v in config.KDIFF_CUDA_BITPARALLEL_TIERS
                      if w >= y0 + 2 and v > 2 * K]
        # The first tier of a slice: at first one whose overlap fits c(r) up to about 4k
        # (typical c is near 2k), then adapted after each slice to the c(r) seen.
        self.first = next((i for i, (_, v) in enumerate(self.tiers) if v >= 4 * K + 64), 0)
        self._before = None  # (alpha, r, c(r)) of the previous slice's last start
        self._alpha = self._scratch = None

    # -- planning -------------------------------------------------------------------
    def plan(self, overlap: int, nr: int):
        """(chunk_lo, chunk_hi, truncated) of :func:`chunk_plan`: enough chunks to fill the
        GPU, each owning at least ratio x overlap columns where that still fills one wave.

        A thread's time is its chunk plus the overlap. With few starts (a sampled every-level
        pass, a ladder's last rungs) chunks of ratio x overlap leave most of the GPU idle
        while each thread runs (ratio + 1) x overlap columns: shorter chunks, down to one
        wave of threads, end sooner though they repeat more of the work."""
        nr = max(1, nr)
        total = int(self.dev.offsets[-1])
        wave = max(1, int(config.KDIFF_CUDA_TIER_OCCUPANCY * self.dev.resident_threads()))
        length = max(config.KDIFF_CUDA_MIN_CHUNK,
                     math.ceil(total * nr / max(1, self.dev.target_threads)),
                     min(config.KDIFF_CUDA_CHUNK_OVERLAP_RATIO * overlap,
                         math.ceil(total * nr / wave)))
        return chunk_plan(self.dev.offsets, length, overlap)

    def min_slice(self) -> int:
        """Starts per slice that fill the GPU with chunks no shorter than the plan allows."""
        overlap = self.tiers[self.first][1] if self.tiers else 0
        shortest = max(config.KDIFF_CUDA_MIN_CHUNK, config.KDIFF_CUDA_CHUNK_OVERLAP_RATIO * overlap)
        chunks = max(len(self.dev.offsets) - 1, int(self.dev.offsets[-1]) // max(1, shortest))
        return max(1, math.ceil(self.dev.target_threads / chunks))

    # -- running --------------------------------------------------------------------
    def run(self, alpha: np.ndarray, rs: np.ndarray, counters: np.ndarray,
            lv: np.ndarray | None = None) -> np.ndarray:
        """c(r) for every r in ``rs`` (increasing, as the slices come), settled through the
        lanes stages and the tiers (None when cancelled). With levels, ``lv`` (starts x
        levels) receives the lower levels."""
        K, m_end = self.K, alpha.shape[0]
        self._alpha = alpha  # the tiers' match words: self.tables.get(alpha, 64), when needed
        mps = m_end - rs
        c = np.minimum(K, mps).astype(np.int64)  # exact where known, else a lower bound
        levels = level_floors(mps, self.levels)[:, :self.levels].astype(np.int64)
        if self.neighbours:
            bounds = SliceBounds(rs, c, np.zeros(len(rs), dtype=bool), mps,
                                 self._previous(alpha, rs))
            if not self._sparse_pass(self.passes[0], alpha, rs, bounds, counters):
                return None
            if not self._rounds(alpha, rs, bounds, counters):
                return None
            c = bounds.c
        else:
            todo = np.arange(len(rs))
            for stage in self.passes:
                part = levels[todo] if self.levels else None
                got = self._lanes(stage, alpha, rs[todo], counters, lv=part)
                # Outgrew the word: c >= word is then a proven lower bound (and the lower
                # levels' maxima proven lower bounds of theirs).
                out = (got >= stage.word) & (mps[todo] > stage.word)
                c[todo] = got
                if self.levels:
                    levels[todo] = part
                todo = todo[out]
                if not len(todo):
                    break
            word = self.passes[-1].word if self.passes else 0  # (todo: every pass ran)
            if len(todo) and not self._tiers(rs, c, todo, m_end, mps, counters, levels, word):
                return None
            if lv is not None:
                lv[:] = levels
        self._adapt(c, mps)
        if len(rs):
            self._before = (alpha, int(rs[-1]), int(c[-1]))
        return c

    def _previous(self, alpha, rs):
        """(r, c(r)) of the previous slice's last start, when it lies before ``rs`` in ``alpha``."""
        before = self._before
        if before is None or before[0] is not alpha or not len(rs) or before[1] >= rs[0]:
            return None
        return before[1], before[2]

    def _lanes(self, stage, alpha, rs, counters, low=None, high=None, lv=None) -> np.ndarray:
        cells = int(counters[0])
        got = stage.run(alpha, rs, counters, low, high, lv)
        if self.counting:
            counters[1] += int(counters[0]) - cells  # one comparison per cell, as the tiers
        return got

    def _sparse_pass(self, stage, alpha, rs, bounds, counters) -> bool:
        """The first lanes pass with neighbours: every other start first; then the rest, but
        for those their bounds settle and those between two starts that outgrew the word (c >=
        word - 1 there: most are long too, and the rounds settle runs of long starts mostly
        without scans)."""
        n, word = len(rs), stage.word
        grown = np.zeros(n, dtype=bool)

        def scan(where):
            if not len(where):
                return
            lower, upper, _ = bounds.bounds()  # a scan climbs from L(r), stops at U(r)
            got = self._lanes(stage, alpha, rs[where], counters, lower[where], upper[where])
            out = (got >= word) & (bounds.mps[where] > word)  # outgrew: c >= word
            bounds.settle(where[~out], got[~out])
            bounds.raise_low(where[out], got[out])
            grown[where[out]] = True

        scan(np.arange(0, n, 2))
        bounds.infer()
        if self.dev.cancelled():
            return False
        rest = np.arange(1, n, 2)
        rest = rest[~bounds.known[rest]]
        inside = rest + 1 < n
        skip = np.zeros(len(rest), dtype=bool)
        skip[inside] = grown[rest[inside] - 1] & grown[rest[inside] + 1]
        bounds.raise_low(rest[skip], np.full(int(skip.sum()), word - 1))  # c(r) >= c(r-1) - 1
        scan(rest[~skip])
        return True

    def _tiers(self, rs, c, pending, m_end, mps, counters, levels, word) -> bool:
        """The ladder for the starts that outgrew the lanes (``word``: the last stage's, 0
        when none ran). With levels the lanes leave each start's levels below the word exact
        (cuda_lanes: a lane runs its levels over every column even after c at K outgrew), so
        a start whose levels all stayed below the word climbs the register tiers without
        levels, one whose only open levels are the top ``TIER_TOP_LEVELS`` (rows in block 0,
        word < 64) climbs them probing those, and the rest (and those whose level left block
        0) the tiers that probe every level, words in global memory."""
        if not self.levels:
            return self._ladder(rs, c, pending, m_end, mps, counters, None)
        K = self.levels
        open_ = (levels[pending] >= word) if word else np.ones((len(pending), K), dtype=bool)
        top = min(TIER_TOP_LEVELS, K) if 0 < word < 64 else 0
        some = open_.any(axis=1)
        below = open_[:, :K - top].any(axis=1)
        if not self._ladder(rs, c, pending[~some], m_end, mps, counters, None):
            return False
        left = []
        if top and not self._ladder(rs, c, pending[some & ~below], m_end, mps, counters, levels,
                                    top, left):
            return False
        rest = np.concatenate([pending[some & below]] + left)
        return self._every_level(rs, c, np.sort(rest), m_end, mps, counters, levels, word)

    def _every_level(self, rs, c, pending, m_end, mps, counters, levels, word) -> bool:
        """The ladder that probes every level, over samples of ``pending`` and what their
        neighbours' bounds then settle (engine/kdiff/neighbours.py; the proof holds at any
        number of edits, so for c at K and for each level alike). These starts lie where
        the target shares a stretch with the background (their lower levels outgrew the
        lanes' word), and there c and every level fall by one a start until the next
        difference: between two scanned starts whose every value falls by their distance,
        each start is settled without a scan. The starts left are sampled again, more
        densely (config.KDIFF_CUDA_LEVEL_STRIDES), the last time every one of them."""
        if not len(pending):
            return True
        # One SliceBounds a value: c at K (open), then each level, exact already where a
        # lanes stage left it below its word or at the whole suffix.
        at_start, suffix = rs[pending], mps[pending]
        lower = levels[pending]
        exact = (lower < word) | (lower >= suffix[:, None])
        cols = [SliceBounds(at_start, c[pending], np.zeros(len(pending), dtype=bool), suffix)]
        cols += [SliceBounds(at_start, lower[:, t], exact[:, t], suffix) for t in range(self.levels)]
        for stride in tuple(config.KDIFF_CUDA_LEVEL_STRIDES) + (1,):
            todo = np.flatnonzero(~np.logical_and.reduce([b.known for b in cols]))
            if not len(todo):
                break
            pick = todo if stride == 1 else np.unique(np.append(todo[::stride], todo[-1]))
            at = pending[pick]
            if not self._ladder(rs, c, at, m_end, mps, counters, levels):
                return False
            for t, bounds in enumerate(cols):
                bounds.settle(pick, c[at] if t == 0 else levels[at, t - 1])
                bounds.infer()
        c[pending] = cols[0].c
        for t in range(self.levels):
            levels[pending, t] = cols[t + 1].c
        return True

    def _ladder(self, rs, c, pending, m_end, mps, counters, levels, top=0, left=None) -> bool:
        """Tiers of growing reach from ``self.first``, each re-running only the starts it could
        not settle, then an exact tier sized to the longest suffix. ``levels`` (starts x
        levels, lower bounds in; None: none computed) receives the lower levels, every one or
        (``top`` > 0, in the register tiers) the top ``top``: a start whose level leaves block
        0 there is appended to ``left`` instead."""
        K = self.K
        if not len(pending):
            return True
        nlv = 0 if levels is None else self.levels
        more = {"top": top} if top else {}
        for index in range(self.first, len(self.tiers)):
            if self.dev.cancelled():
                return False
            words, overlap = self.tiers[index]
            lv = levels[pending] if nlv else None
            got, over, truncated = self._launch(rs[pending], c[pending], m_end, words, overlap,
                                                counters, lv=lv, **more)
            c[pending] = got
            if nlv:
                levels[pending] = lv
            if top:  # a top level at 64 below its suffix's end: its row left block 0
                gone = over & np.any((lv[:, nlv - top:] >= 64)
                                     & (lv[:, nlv - top:] < mps[pending, None]), axis=1)
                left.append(pending[gone])
                keep = ~gone
                pending, over, got, lv = pending[keep], over[keep], got[keep], lv[keep]
            unsure = over | (truncated & (got < mps[pending]) & (got + K >= overlap))
            for t in range(nlv):  # level t is exact when its occurrences fit the overlap
                unsure |= truncated & (lv[:, t] < mps[pending]) & (lv[:, t] + t >= overlap)
            pending = pending[unsure]
            if not len(pending):
                return True
        if self.dev.cancelled():
            return False
        # Exact tier: words for the longest suffix, an overlap past it, words in global memory
        # (with levels: every one).
        longest = int(mps[pending].max())
        lv = levels[pending] if nlv else None
        got, _, _ = self._launch(rs[pending], c[pending], m_end, (longest + 63) // 64 + 1,
                                 longest + K + 1, counters, exact=True, lv=lv)
        c[pending] = got
        if nlv:
            levels[pending] = lv
        return True

    def _rounds(self, alpha, rs, bounds, counters) -> bool:
        """Settle the pending starts in rounds (engine/kdiff/neighbours.py): settle what the
        neighbours' bounds decide, scan a few starts a run, sized from their upper bounds.

        Exactness of a scan sized from an upper bound U >= c(r) (the neighbour bound, or the
        suffix length): with ``words = U // 64 + 1`` and ``overlap = U + K + 1``,
        - no thread runs out of words: the kernel flags ``over`` only when it must grow block
          nxt = capacity, which it does only after row 64 * nxt (the last row of block nxt-1)
          had D <= K in that column or the previous one, i.e. a real occurrence of that prefix
          in the chunk's substring, so 64 * capacity <= c(r) <= U < 64 * (U // 64 + 1): not so;
        - every chunk that owns the end column of an occurrence of alpha[r:r+c(r)] sees it
          whole: it spans at most c(r) + K <= U + K < overlap columns, so the max over the
          chunks is c(r), and got + K < overlap (the tier's "sure" test) always holds.
        A 64-bit lanes scan (``fit``) of a start with U < 64 is exact likewise (c < 64).
        Starts with no settled start to their right (the slice's last run) and a suffix too
        long for the register tiers climb the tier ladder one rung a round instead.
        """
        K, m_end, mps = self.K, alpha.shape[0], bounds.mps
        rung = np.full(len(rs), self.first)
        register = [w for w, _ in self.tiers if w <= config.KDIFF_CUDA_REGISTER_WORDS]
        reach = 64 * max(register) if register else 0  # U below this fits a register tier
        while True:
            bounds.infer()
            if not len(bounds.pending):
                break
            if self.dev.cancelled():
                return False
            picks = bounds.picks(config.KDIFF_CUDA_NEIGHBOUR_SPLIT)
            lower, upper, right = bounds.bounds()
            up = upper[picks]
            direct = right[picks] | (up < reach) | (rung[picks] >= len(self.tiers))
            fit = direct & (up < 64) if self.fit is not None else np.zeros(len(picks), bool)
            if fit.any():
                sel = picks[fit]
                bounds.settle(sel, self._lanes(self.fit, alpha, rs[sel], counters, lower[sel],
                                               upper[sel]))
            sized = picks[direct & ~fit]
            if len(sized):
                self._sized(bounds, sized, upper[sized], rs, m_end, counters)
            climb = picks[~direct]
            for index in np.unique(rung[climb]):
                sel = climb[rung[climb] == index]
                words, overlap = self.tiers[index]
                got, over, truncated = self._launch(rs[sel], bounds.c[sel], m_end, words, overlap,
                                                    counters)
                unsure = over | (truncated & (got < mps[sel]) & (got + K >= overlap))
                bounds.settle(sel[~unsure], got[~unsure])
                bounds.raise_low(sel[unsure], got[unsure])
                rung[sel[unsure]] += 1
        return True

    def _sized(self, bounds, sel, upper, rs, m_end, counters) -> None:
        """Scan the starts at indices ``sel`` with words and overlap from their upper bounds
        (exact: see :meth:`_rounds`): one launch for those that fit a register tier, one a
        power of two of words for the rest (words in global memory)."""
        need = upper // 64 + 1
        register = sorted(w for w, _ in self.tiers if w <= config.KDIFF_CUDA_REGISTER_WORDS)
        fits = need <= (register[-1] if register else 0)
        groups = []
        if fits.any():
            groups.append((fits, next(w for w in register if w >= need[fits].max()), False))
        if (~fits).any():
            classes = 1 << np.ceil(np.log2(need[~fits])).astype(np.int64)
            for cls in np.unique(classes):
                part = ~fits
                part[part] = classes == cls
                groups.append((part, int(need[part].max()), True))
        for part, words, exact in groups:
            at = sel[part]
            overlap = int(upper[part].max()) + self.K + 1
            got, over, truncated = self._launch(rs[at], bounds.c[at], m_end, words, overlap,
                                                counters, exact=exact)
            if over.any() or (truncated and np.any(got + self.K >= overlap)):
                raise RuntimeError("kdiff: a scan sized from its neighbour bound came back "
                                   "unsettled (an internal error)")
            bounds.settle(at, got)

    def _adapt(self, c, mps) -> None:
        """Start the next slice at the first tier that would have settled nearly every r."""
        for index, (_, overlap) in enumerate(self.tiers):
            unsure = float(np.mean((c < mps) & (c + self.K >= overlap))) if len(c) else 0.0
            if unsure <= config.KDIFF_CUDA_RERUN_FRACTION:
                self.first = index
                return
        self.first = max(0, len(self.tiers) - 1)

    @staticmethod
    def kernel_words(words: int, exact: bool, every_level: bool) -> int:
        """A tier's words kept in registers: 0 keeps them in global memory (always for the
        exact tier and for every level at once)."""
        in_registers = not exact and not every_level and words <= config.KDIFF_CUDA_REGISTER_WORDS
        return words if in_registers else 0

    def _launch(self, rs, c0, m_end, words, overlap, counters, exact=False, lv=None, top=0):
        """One tier over ``rs`` (c0: their lower bounds); batched so that words kept in global
        memory fit the budget. Returns (c found, overflowed, some chunk truncated). With
        levels, ``lv`` (starts x levels: their lower bounds) receives the levels found."""
        nr = len(rs)
        lo, hi, truncated = self.plan(overlap, nr)
        per_r = len(lo)
        kernel_words = self.kernel_words(words, exact, lv is not None and not top)
        if kernel_words:
            group = nr
        else:
            per_thread = words * (8 + 8)
            group = max(1, self.dev.scratch_budget() // max(1, per_thread * per_r))
        got = np.empty(nr, dtype=np.int32)
        over = np.zeros(nr, dtype=bool)
        tpb = self.dev.threads_per_block
        kernel = chunk_kernel(kernel_words, register_cap(tpb), 0 if lv is None else self.levels,
                              top if kernel_words else 0)
        lo_d, hi_d = self.dev.upload_many("the chunk plan", lo, hi)
        for start in range(0, nr, group):
            part = slice(start, min(nr, start + group))
            n_part = part.stop - part.start
            threads = n_part * per_r
            # c(r) and the overflow flags in one array: one copy back.
            results = np.concatenate([c0[part], np.zeros(n_part, np.int64)]).astype(np.int32)
            lv_part = lv[part] if lv is not None else np.zeros((n_part, 1), np.int64)
            rs_d, res_d, steps_d, lv_d = self.dev.upload_many(
                "the starts and their results", rs[part].astype(np.int32), results,
                np.zeros(2, np.int64), (lv_part, np.int32))
            if kernel_words:
                spv = smv = self._no_scratch()
            else:
                what = f"{words} words for each of {threads} chunk threads"
                spv = self.dev.empty((words, threads), np.uint64, what)
                smv = self.dev.empty((words, threads), np.uint64, what)
            blocks = (threads + tpb - 1) // tpb
            table = self.tables.get(self._alpha, 64)  # flat: one index a word
            self.dev.launch(kernel, blocks, tpb, 0, table.reshape(table.size), self.dev.beta,
                            rs_d, n_part, m_end, self.K, lo_d, hi_d, res_d[:n_part],
                            res_d[n_part:], steps_d, spv, smv, lv_d)
            back = self.dev.fetch(res_d)
            got[part] = back[:n_part]
            if lv is not None:
                lv[part] = self.dev.fetch(lv_d)
            over[part] = back[n_part:] != 0
            cells = 64 * int(self.dev.fetch(steps_d)[0])
            counters[0] += cells
            if self.counting:
                counters[1] += cells  # 64 symbol comparisons per word operation, as on the CPU
        return got, over, truncated

    def _no_scratch(self):
        """The register kernels' unused scratch arguments (one tiny array per driver)."""
        if self._scratch is None:
            self._scratch = (self.dev.zeros((1, 1), np.uint64, "scratch"),
                             self.dev.zeros((1, 1), np.uint64, "scratch"))
        return self._scratch
