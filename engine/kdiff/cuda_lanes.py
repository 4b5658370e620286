"""kdiff ``bitparallel`` on CUDA, the lanes stages: one 32-bit or 64-bit word per start.

At small k most candidates are at most 32 long, so one 32-bit word (the GPU's native
integer width) holds every row that matters; many of the rest fit 64. A stage of word
width W (``word32``: W = 32 for every start; ``word64``: W = 64 for the starts that
outgrew 32, or for every start without ``word32``; with ``neighbours``, for those whose
bound says they fit 64) runs one kernel, made by one factory for both widths. A block
takes ``tpb x R`` starts on one background chunk: the starts' match words go to shared
memory once (``peq[s, lane]``, consecutive lanes in consecutive banks), every thread
advances R starts per column (their chains are independent, so they overlap in the
pipeline) and all threads read the same background symbol (a broadcast). Per column a
start costs the Myers step and the D[c+1] bookkeeping of ``cpu_lanes`` (shifts and masks,
no popcount): Ukkonen's bound lets c grow by at most one per column. The bookkeeping (c,
D[c+1], the limit) stays 32-bit at either width.

**Chunks.** A chunk owning columns [s, e) starts its DP ``W + K + 1`` columns earlier
(never before its record): an occurrence of a prefix of length L <= W with at most K
edits spans at most L + K columns, so the chunk owning its end sees it whole. c(r) is
the atomic max over the chunks, exact when below W (the first W rows of D do not depend
on the rows below). A start whose c reaches W while its suffix is longer has outgrown
the word: the host hands it on (to the 64-bit stage, or to the blocked tiers of
``cuda_bitparallel``); c >= W is then a proven lower bound, since a chunk's DP runs on a
substring of its record and finds only real occurrences.

**Lower levels** (``kdiff --all-k``: c for t = 0..L-1 edits besides c at K) come from
counters, as in cpu_lanes, not from a probe a level (two popcounts each, a quarter-rate
instruction here). M(i), the smallest D of row i over the columns so far, is non-decreasing
in i and c_t = #{i: M(i) <= t}; a level changes only where some row falls below its M. Each
row keeps e = D - M in a 4-bit counter sliced over four words: a column
adds the rows' horizontal deltas to all of them with about twenty word operations, whatever
L is. A counter at 0 that falls is held at 0 (and in 64-row words one at 15 that rises at
15; in 32 a wrap past 15 to 0 only lowers it), so a counter is always a lower bound of e
and a level never changes unseen; such a fall in a row 1..c_(L-1)+1 (no row below can
reach L-1 edits: Ukkonen) flags the lane, and the rare flagged row is
settled exactly: its D from the column's deltas, the levels it reaches, its counter afresh.
A lane lives until every level has reached its limit (the suffix's length, or W), even
after c at K outgrew the word: a level below W is then exact for good, and the tiers compute
only the levels that outgrew the word too (cuda_bitparallel; on W4 at k = 8 about 57% of
the starts outgrow 32 at K, 9% at K-1, none below). Level t's occurrences span at most
L + t <= W + K columns, so the chunks' overlap covers them and their max is exact too.

The word operations keep their width (numba would widen uint32 arithmetic to 64 bits,
two instructions each on the GPU): ``engine.bitops``' intrinsics, or plain numpy
arithmetic at the operands' width under the CUDA simulator, which runs kernels as Python.
"""

from __future__ import annotations


import numpy as np
from numba import cuda, int32, int64, uint32, uint64

from engine import config
from engine.gpu import SIMULATOR, imin, kernel_factory, kernel_jit

#: The lanes stages' word widths, in the order a job runs them.
WORDS = (32, 64)
_TYPES = {32: (uint32, np.uint32), 64: (uint64, np.uint64)}

if SIMULATOR:
    _MASKS = {np.uint32: 0xFFFFFFFF, np.uint64: 0xFFFFFFFFFFFFFFFF}

    def _u(x, like):
        t = type(like)
        return t(int(x) & _MASKS[t])

    def w_add(a, b): return _u(int(a) + int(b), a)
    def w_sub(a, b): return _u(int(a) - int(b), a)
    def w_and(a, b): return _u(int(a) & int(b), a)
    def w_or(a, b): return _u(int(a) | int(b), a)
    def w_xor(a, b): return _u(int(a) ^ int(b), a)
    def w_shl(a, b): return _u(int(a) << int(b), a)
    def w_shr(a, b): return _u(int(a) >> int(b), a)
    def w_not(a): return _u(~int(a), a)
    def w_le(a, b): return int(a) <= int(b)
    def w_lt(a, b): return int(a) < int(b)
    # (not cuda.popc: the simulator swaps this module's ``cuda`` per call of a device function,
    # and the tiers' threads call settle_row at once)
    def popc(a): return int(a).bit_count()
else:
    from engine.bitops import w_add, w_and, w_le, w_lt, w_not, w_or, w_shl, w_shr, w_sub, w_xor

    @cuda.jit(device=True, inline=True)
    def popc(a):
        return cuda.popc(a)


def named(function, name: str):
    """Give a kernel's Python function its own name (ncu and the disk cache tell the
    widths apart by it)."""
    function.__name__ = function.__qualname__ = name
    return function


@kernel_factory
def match_table_kernel(word: int):
    """table[s, p] = bits i < word with alpha[p+i] & s != 0 (16 IUPAC sets x every position)."""
    WT = _TYPES[word][0]
    W = word

    def match_table(alpha, table):
        m = alpha.shape[0]
        idx = cuda.grid(1)
        if idx < 16 * m:
            s = idx // m
            p = idx - s * m
            w = WT(0)
            for i in range(imin(W, m - p)):
                if alpha[p + i] & s:
                    w |= WT(1) << WT(i)
            table[s, p] = w

    return kernel_jit()(named(match_table, f"match_table{word}"))


class TargetTables:
    """The match words of the current target record, one table per word width, built on the
    device once per record (the lanes stages and the blocked tiers share them)."""

    def __init__(self, dev):
        self.dev = dev
        self._alpha = None
        self._tables: dict = {}

    def get(self, alpha: np.ndarray, word: int):
        if self._alpha is not alpha:
            self._alpha, self._tables = alpha, {}
        if word not in self._tables:
            m = alpha.shape[0]
            table = self.dev.empty((16, m), _TYPES[word][1], f"the target's {word}-bit match words")
            self.dev.launch(match_table_kernel(word), (16 * m + 255) // 256, 256, 0,
                            self.dev.target(alpha), table)
            self._tables[word] = table
        return self._tables[word]


def chunk_plan(offsets: np.ndarray, length: int, overlap: int) -> tuple:
    """Chunks owning ``length`` columns each over every record, each read from ``overlap``
    columns before its own but never before its record's start: (lo, hi) as int32, and
    whether some chunk starts after its record's start (only then does the overlap matter)."""
    los, his, truncated = [], [], False
    for rec in range(len(offsets) - 1):
        a, b = int(offsets[rec]), int(offsets[rec + 1])
        starts = np.arange(a, b, length, dtype=np.int64)
        los.append(np.maximum(a, starts - overlap))
        his.append(np.minimum(b, starts + length))
        truncated = truncated or bool(np.any(starts - overlap > a))
    return np.concatenate(los).astype(np.int32), np.concatenate(his).astype(np.int32), truncated


def overlap(K: int, word: int) -> int:
    """Columns a chunk's DP starts before the columns it owns."""
    return word + K + 1


@cuda.jit(device=True, inline=True)
def count_deltas(e0, e1, e2, e3, hp, hm, hold):
    """The lower levels' counters after one column (module docstring): every row's e += its
    horizontal delta (+1 in ``hp``, -1 in ``hm``, row r at bit r-1), held at 0, and with
    ``hold`` (a constant of the call site: 64-row words) at 15 too. A counter that wraps
    past 15 to 0 flags its row at the next -1; a 64-row word's lower rows sit tens of edits
    above M after a near match and did so all the time, while in 32 rows e rarely passes
    15 and the five operations cost more than the settles they save. Returns the new
    counter words and the rows that fell at 0 (a new minimum, or a counter under e:
    :func:`settle_row` tells them apart). Shared by the lanes and the tiers."""
    z = w_and(hm, w_not(w_or(w_or(e0, e1), w_or(e2, e3))))
    keep = w_not(z)
    carry = w_and(hp, e0)
    borrow = w_and(hm, w_not(e0))
    n0 = w_and(w_xor(e0, w_or(hp, hm)), keep)
    step = w_or(carry, borrow)
    carry = w_and(carry, e1)
    borrow = w_and(borrow, w_not(e1))
    n1 = w_and(w_xor(e1, step), keep)
    step = w_or(carry, borrow)
    carry = w_and(carry, e2)
    borrow = w_and(borrow, w_not(e2))
    n2 = w_and(w_xor(e2, step), keep)
    n3 = w_and(w_xor(e3, w_or(carry, borrow)), keep)
    if hold:
        over = w_and(carry, e3)  # 15 + 1: held at 15
        return w_or(n0, over), w_or(n1, over), w_or(n2, over), w_or(n3, over), z
    return n0, n1, n2, n3, z


@cuda.jit(device=True, inline=True)
def settle_row(p, m, low, one, ct, off, levels, e0, e1, e2, e3):
    """A counted row (its bit ``low``; ``one`` is 1 of the words' type) fell below its
    counter: the levels ``ct[off:off+levels]`` its D now reaches, from the column's vertical
    deltas ``p``/``m`` (D of rows 1..r), and its counter afresh: min(e, 15), or 0 where M is
    not known exactly (no lower level has reached the row: M >= L). Returns the counter
    words. ``levels`` is a constant at every call site (the loop unrolls)."""
    rows = w_sub(w_add(low, low), one)  # rows 1..r (wraps to every row at the top bit)
    r = int32(popc(w_sub(low, one))) + 1
    d = int32(popc(w_and(p, rows))) - int32(popc(w_and(m, rows)))
    under = 0  # M(r): the levels still above row r
    for v in range(levels):
        cv = ct[off + v]
        if v >= d and cv < r:  # row r within v edits: c_v reaches it (by one: Ukkonen)
            cv = r
            ct[off + v] = r
        if cv < r:
            under += 1
    x = imin(d - under, 15) if under < levels else 0
    keep = w_not(low)
    zero = w_and(low, keep)
    return (w_or(w_and(e0, keep), low if x & 1 else zero),
            w_or(w_and(e1, keep), low if x & 2 else zero),
            w_or(w_and(e2, keep), low if x & 4 else zero),
            w_or(w_and(e3, keep), low if x & 8 else zero))


@kernel_factory
def lanes_kernel(word: int, per_thread: int, tpb: int, registers: int = 255, levels: int = 0):
    """The stage's kernel for words of ``word`` bits, ``per_thread`` starts a thread and
    blocks of ``tpb`` (named lanes32 or lanes64), with ``levels`` lower levels (kdiff --all-k;
    named lanes32_levels3 ...)."""
    WT = _TYPES[word][0]
    W = word
    R = per_thread
    LV = levels
    LVN = max(1, levels)  # (a local array is never empty)
    CTN = R * LVN  # (a local array's size is a constant of the closure, not an expression)
    SPAN = tpb * R
    SHARED = 16 * SPAN  # a compile-time constant: the shared array's size
    CAP = registers
    # A done start's D[c+1] tracker: far above any k, and a chunk's columns (< 2**29, see
    # config.GPU_STREAM_BYTES) can move it by less than LIVE, so it never wraps or hits.
    DONE = uint32(1 << 31)
    COLS = 4  # columns whose match words are loaded together (divides 256)
    EQS = COLS * R
    LIVE = uint32(1 << 30)
    HOLD = W == 64  # the levels' counters held at 15 (count_deltas)

    @cuda.jit(device=True, inline=True)
    def level_rows(ct, off, lim):
        """The rows whose falling counter can raise a lower level: 1..c_(L-1)+1 (a row below
        it is over L-1 edits: Ukkonen), none once every level is at its limit."""
        if LV == 0 or ct[off] >= lim:
            return WT(0)
        return w_shr(w_not(WT(0)), WT(W - imin(ct[off + LV - 1] + 1, lim)))

    def lanes(table, beta, rs, nr, m_end, K, low, high, chunk_lo, chunk_hi, nrb, out_c, counters,
              out_lv):
        # W, CAP, SPAN and LVN in the closure: numba's disk cache keys on them.
        if CAP == 0 or SPAN == 0 or W == 0 or LVN == 0:
            return
        t = cuda.threadIdx.x
        chunk = cuda.blockIdx.x // nrb
        base = (cuda.blockIdx.x - chunk * nrb) * SPAN
        peq = cuda.shared.array(SHARED, WT)
        for i in range(t, SHARED, tpb):
            s = i // SPAN
            q = base + i - s * SPAN
            peq[i] = table[s, rs[q]] if q < nr else WT(0)
        cuda.syncthreads()
        zero = WT(0)
        one = WT(1)
        full = w_not(zero)
        one32 = uint32(1)
        kk = uint32(K)
        pv = cuda.local.array(R, WT)
        mv = cuda.local.array(R, WT)
        c = cuda.local.array(R, uint32)
        dc = cuda.local.array(R, uint32)
        lim = cuda.local.array(R, uint32)
        eqs = cuda.local.array(EQS, WT)
        ct = cuda.local.array(CTN, int32)  # c of each lower level
        # the lower levels' counters of e = D - M, bit b of each row's in eb (module docstring)
        e0 = cuda.local.array(R, WT)
        e1 = cuda.local.array(R, WT)
        e2 = cuda.local.array(R, WT)
        e3 = cuda.local.array(R, WT)
        valid = cuda.local.array(R, WT)  # the rows whose falling counter matters
        fell = cuda.local.array(R, WT)  # the column's rows that fell below their counter
        for i in range(R):
            q = base + t + i * tpb
            c0 = 0
            top = 0
            mp = 0
            if q < nr:
                c0 = low[q]
                mp = m_end - rs[q]
                top = imin(imin(mp, W), high[q])
            lim[i] = uint32(top)
            for v in range(LV):
                ct[i * LVN + v] = int32(imin(v, mp))
            e0[i] = zero  # D = M = the row's index in the column before the chunk
            e1[i] = zero
            e2[i] = zero
            e3[i] = zero
            valid[i] = level_rows(ct, i * LVN, int32(lim[i]))
            pv[i] = full
            mv[i] = zero
            if c0 < top:
                c[i] = uint32(c0)
                dc[i] = w_add(c[i], one32)  # D[c+1][first column - 1] = c + 1
            else:  # settled before any column: its c is already in out_c
                c[i] = uint32(0)
                dc[i] = DONE
        j = chunk_lo[chunk]
        hi = chunk_hi[chunk]
        steps = int64(0)
        while j < hi:
            stop = imin(hi, j + 256)
            for jj in range(j, stop, COLS):
                # COLS columns at a time: every match word they need is loaded first, so
                # the loads' latency overlaps instead of stalling each column. Columns past
                # the chunk's end read symbol 0, which matches nothing: such a column never
                # lowers a D (D[i][j] >= D[i][j-1] by induction on i), so c never grows there.
                # With levels the rare settle below makes the column loop too long to
                # unroll, so its match words are loaded a column at a time (a local array
                # indexed by u would live in local memory): the symbols, packed, come first.
                syms = uint32(0)
                for u in range(COLS):
                    sym = beta[uint64(jj + u)] if jj + u < stop else 0
                    if LV == 0:
                        row = uint64(sym) * uint64(SPAN) + uint64(t)
                        for i in range(R):
                            eqs[u * R + i] = peq[row + uint64(i * tpb)]
                    else:
                        syms |= uint32(sym) << uint32(8 * u)
                for u in range(COLS):
                    alarm = zero  # some lane's counted row fell below its minimum
                    srow = uint64((syms >> uint32(8 * u)) & uint32(255)) * uint64(SPAN) + uint64(t)
                    for i in range(R):
                        eq = eqs[u * R + i] if LV == 0 else peq[srow + uint64(i * tpb)]
                        p = pv[i]
                        m = mv[i]
                        xv = w_or(eq, m)
                        xh = w_or(w_xor(w_add(w_and(eq, p), p), p), eq)
                        ph = w_or(m, w_not(w_or(xh, p)))
                        mh = w_and(p, xh)
                        at = WT(c[i])
                        # D[c+1] of this column: the row's horizontal delta added.
                        d = w_sub(w_add(dc[i], uint32(w_and(w_shr(ph, at), one))),
                                  uint32(w_and(w_shr(mh, at), one)))
                        hp = ph  # the rows' horizontal deltas, row r at bit r-1 (the levels)
                        hm = mh
                        ph = w_shl(ph, one)
                        mh = w_shl(mh, one)
                        pn = w_or(mh, w_not(w_or(xv, ph)))
                        mn = w_and(ph, xv)
                        pv[i] = pn
                        mv[i] = mn
                        if w_le(d, kk):
                            # Rare: row c+1 is reached, c grows by one (Ukkonen: at most one a
                            # column). Below the limit, D[c+2] = D[c+1] + the column's vertical
                            # delta at row c+2; at the limit the start is done.
                            cn = w_add(c[i], one32)
                            if w_lt(cn, lim[i]):
                                sh = WT(cn)
                                d = w_sub(w_add(d, uint32(w_and(w_shr(pn, sh), one))),
                                          uint32(w_and(w_shr(mn, sh), one)))
                                c[i] = cn
                            else:
                                cuda.atomic.max(out_c, base + t + i * tpb, int32(cn))
                                c[i] = uint32(0)
                                d = DONE
                        dc[i] = d
                        if LV > 0:  # e += ph - mh on every row (see the module docstring)
                            e0[i], e1[i], e2[i], e3[i], z = count_deltas(
                                e0[i], e1[i], e2[i], e3[i], hp, hm, HOLD)
                            fell[i] = w_and(z, valid[i])
                            alarm = w_or(alarm, fell[i])
                    if LV > 0 and w_lt(zero, alarm):  # rare: settle the lanes exactly
                        alarm = zero
                        for i in range(R):
                            a = fell[i]
                            while w_lt(zero, a):  # each fallen row, top down
                                low = w_and(a, w_sub(zero, a))
                                a = w_xor(a, low)
                                e0[i], e1[i], e2[i], e3[i] = settle_row(
                                    pv[i], mv[i], low, one, ct, i * LVN, LV, e0[i], e1[i], e2[i],
                                    e3[i])
                            if w_lt(zero, fell[i]):
                                valid[i] = level_rows(ct, i * LVN, int32(lim[i]))
            steps += (stop - j) * R
            j = stop
            live = False
            for i in range(R):
                live = live | w_lt(dc[i], LIVE)
                if LV > 0:  # every level under its limit (level 0 is the lowest)
                    live = live | (ct[i * LVN] < int32(lim[i]))
            if not live:
                break
        for i in range(R):
            q = base + t + i * tpb
            if q < nr:
                cuda.atomic.max(out_c, q, int32(c[i]))
                for v in range(LV):
                    cuda.atomic.max(out_lv, (q, v), ct[i * LVN + v])
        cuda.atomic.add(counters, 0, steps)

    name = f"lanes{word}" + (f"_levels{levels}" if levels else "")
    return kernel_jit(registers)(named(lanes, name))


def level_floors(mps: np.ndarray, levels: int) -> np.ndarray:
    """The lower levels' starting values, min(t, suffix length) for t = 0..levels-1 (rows
    1..t are within t edits everywhere), as int32 starts x max(1, levels): the kernels'
    atomic maxima start from them (one unused column without levels)."""
    t = np.arange(max(1, levels), dtype=np.int64)
    return np.minimum(t[None, :], np.asarray(mps, dtype=np.int64)[:, None]).astype(np.int32)


class LanesStage:
    """Host side of one stage: the chunk plan and the launch over the starts it is given;
    returns c(r), with ``word`` meaning "outgrew the word" where the suffix is longer."""

    def __init__(self, dev, K: int, word: int, tables: TargetTables):
        self.dev, self.K, self.word, self.tables = dev, K, word, tables
        self.R = config.KDIFF_CUDA_LANES_PER_THREAD[word]
        self.tpb = config.KDIFF_CUDA_LANES_THREADS_PER_BLOCK

    def kernel(self, levels: int = 0):
        return lanes_kernel(self.word, self.R, self.tpb, 255, levels)

    def plan(self, nr: int) -> tuple[np.ndarray, np.ndarray]:
        """Chunks over every record, enough of them (with the blocks of starts) to fill the GPU."""
        offsets = self.dev.offsets
        v = overlap(self.K, self.word)
        span = self.tpb * self.R
        start_blocks = max(1, -(-nr // span))
        want_blocks = max(1, 4 * self.dev.resident_threads() // self.tpb)
        chunks = max(1, -(-want_blocks // start_blocks))
        ratio = config.KDIFF_CUDA_LANES_CHUNK_OVERLAP_RATIO
        length = max(config.KDIFF_CUDA_LANES_MIN_CHUNK, ratio * v, -(-int(offsets[-1]) // chunks))
        return chunk_plan(offsets, length, v)[:2]

    def run(self, alpha: np.ndarray, rs: np.ndarray, counters: np.ndarray,
            low: np.ndarray | None = None, high: np.ndarray | None = None,
            lv: np.ndarray | None = None) -> np.ndarray:
        """c(r) for the starts ``rs``; adds the cells (word-steps x word bits) to counters[0].

        ``low``/``high``, when given, are proven bounds on each c(r) (engine/kdiff/neighbours.py):
        a start's DP climbs from ``low`` instead of k (exact for any start value between k and
        c(r): rows above it are tracked as before) and is done on reaching ``high`` (then
        c(r) = high). ``lv`` (starts x L), when given, receives the lower levels (kdiff
        --all-k): exact where below the word, whatever c(r) did (a level at the word, with a
        longer suffix, outgrew it: a proven lower bound)."""
        table = self.tables.get(alpha, self.word)
        nr = rs.shape[0]
        lo, hi = self.plan(nr)
        span = self.tpb * self.R
        nrb = -(-nr // span)
        c0 = np.minimum(self.K, alpha.shape[0] - rs)
        if low is not None:
            c0 = np.maximum(c0, low)
        c0 = c0.astype(np.int32)
        cap = (np.full(nr, self.word, np.int32) if high is None
               else np.minimum(high, self.word).astype(np.int32))
        levels = 0 if lv is None else lv.shape[1]
        lv0 = level_floors(alpha.shape[0] - rs, levels)
        rs_d, low_d, cap_d, out_d, lo_d, hi_d, steps_d, lv_d = self.dev.upload_many(
            "the starts and chunk plan", rs.astype(np.int32), c0, cap, c0, lo, hi,
            np.zeros(2, np.int64), lv0)
        self.dev.launch(self.kernel(levels), nrb * lo.shape[0], self.tpb, 0, table, self.dev.beta,
                        rs_d, nr, alpha.shape[0], self.K, low_d, cap_d, lo_d, hi_d, nrb, out_d,
                        steps_d, lv_d)
        got = self.dev.fetch(out_d).astype(np.int64)
        if levels:
            lv[:] = self.dev.fetch(lv_d)
        counters[0] += self.word * int(self.dev.fetch(steps_d)[0])
        return got
