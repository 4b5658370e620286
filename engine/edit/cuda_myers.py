"""edit on CUDA: the ``task`` and ``cooperative`` kernels (Myers' block algorithm, as in cpu_bits).

Both kernels read a *job table* (int64, field-major: ``jobs[J_*, pair]`` for each
(pattern, text range) pair) and write one output row per pair (``O_*``): in search
mode the best distance at the recorded columns and its first end (or every
hit within the threshold), in global mode C[m, n]. In search mode a pair's
columns before ``J_OWN`` only warm the DP up (a chunk's overlap with the chunk
before it): nothing is recorded there.

**Padded patterns.** A pattern of m rows is computed as nwp >= ceil(m/64)
whole words, with nwp * 64 - m *dummy rows on top*: their initial vertical
deltas are 0 and they match every symbol (search) or none (global), which
keeps each of them equal to row 0 (C[0,j] = 0, resp. j) in every column. So
the pattern's last row is always bit 63 of the last word, and C[m,j] - C[m,j-1]
is the horizontal carry leaving the last word, which the recurrence computes
anyway. Every word of a thread is then real work or dummy work alike, and the
word loops have no per-word conditions.

**Match words.** Symbols match when their IUPAC sets intersect, so the match
word of a text code is the OR of the pattern's A, C, G and T words over the
code's bases. ``peq_kernel`` builds those four words per padded word. The text
comes packed 16 symbols per uint64 as 4-bit *lookups* (``LOOKUP``; ``pack_kernel``
packs them on the GPU): the index of the code's base, or bit 2 set for a code of
several bases (or none): those rare columns OR the words of each base, reading the
code from the byte text.

**task** (one thread per pair): the words in registers (tiers of 1, 2, 4, 8,
16 words; loops of constant trip count, which NVVM unrolls and keeps in
registers), longer patterns in global memory interleaved per thread. Match
words are read from the global table (the study's task-parallel design).

**cooperative** (Chacon et al.): a pattern of nw words spans L = ceil(nw/W)
lanes of a warp, W words per lane, and a warp takes 32 // L pairs side by side
(the study's r queries per warp). The lanes form a diagonal pipeline: at step
t, lane r of a pair computes the COLS columns of group t - r for its W words,
with the carries lane r - 1 produced for those columns at step t - 1, received
by one warp shuffle (2 bits per column). Each lane keeps its W (pv, mv) pairs
in registers and its 4 W match words in shared memory (lane-interleaved: no
bank conflicts). A pattern longer than MAX_LANES x W words runs in stripes:
the last lane writes its carries to memory and the first lane of the next
stripe reads them.

Under numba's CUDA simulator (which has no warp shuffles) the shuffle is
emulated through shared memory and block barriers; the kernels are otherwise
the same code.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from numba import cuda, int32, int64, uint8, uint32, uint64

from engine.edit.cpu_common import MODE_GLOBAL, MODE_HITS
from engine.gpu import SIMULATOR, imax, imin, kernel_jit

_ZERO = np.uint64(0)
_ONE = np.uint64(1)
_TWO = np.uint64(2)
_THREE = np.uint64(3)
_FOUR = np.uint64(4)
_FIFTEEN = np.uint64(15)
_SIXTYTHREE = np.uint64(63)
_ALL = np.uint64(0xFFFFFFFFFFFFFFFF)

WARP = 32
#: Symbols before the packed text: a pipeline lane starts up to 31 x COLS columns early.
PAD = 128
#: Most columns one pipeline step may take (PAD / 32).
MAX_COLUMNS = 4
#: 4-bit lookup of each IUPAC code: its base's index (A 0, C 1, G 2, T 3), or 4 when the code
#: has several bases or none (an assembly gap base, engine.gaps, and the padding), whose match
#: word is an OR read the slow way (none: it matches nothing).
LOOKUP = np.array([4, 0, 1, 4, 2, 4, 4, 4, 3, 4, 4, 4, 4, 4, 4, 4], dtype=np.uint8)
#: LOOKUP as the packed text holds it (the same: a gap base must not read as A).
PACK_LOOKUP = LOOKUP.copy()
#: Running profile minimum before any column (above every distance).
HIGH = 1 << 40

# Job table fields (rows of the int64 job table; one column per pair).
J_SCAN = 0     # first text column (absolute index in the unpadded text)
J_N = 1        # columns
J_OWN = 2      # first recorded column, relative to J_SCAN (search)
J_M = 3        # pattern length
J_PEQ = 4      # offset of the pattern's match table (4 words per padded word)
J_THRESH = 5   # hits: record C[m,j] <= this; best: start at this + 1
J_ID = 6       # written with each hit (the caller's task id)
J_BINW = 7     # profile bin width
J_BIN = 8      # profile index of the bin of the first recorded column
J_EDGE = 9     # relative column c whose c + 1 ends that bin
J_CAP = 10     # profile values are min(C[m,j], this)
J_CARRY = 11   # cooperative stripes: offset of the pair's two carry rows
NJ = 12

# Output fields (int64).
O_BEST = 0     # search: smallest C[m,j] at a recorded column; J_THRESH + 1 when none
O_END = 1      # search: its first end (relative, exclusive); -1 when none
O_SCORE = 2    # C[m, n]
NO = 3


# -- device functions --------------------------------------------------------------------------
@cuda.jit(device=True, inline=True)
def myers_step(pv, mv, eq, hp, hm):
    """One column of one 64-row word (Myers 1999, block form; cpu_bits.advance_at).

    ``hp``/``hm``: the +1/-1 horizontal delta entering the top (0/1 words).
    Returns the new (pv, mv) and the +1/-1 delta leaving bit 63 (0/1 words).
    """
    xv = eq | mv
    eq = eq | hm
    xh = (((eq & pv) + pv) ^ pv) | eq
    ph = mv | ~(xh | pv)
    mh = pv & xh
    phs = (ph << _ONE) | hp
    mhs = (mh << _ONE) | hm
    return mhs | ~(xv | phs), phs & xv, ph >> _SIXTYTHREE, mh >> _SIXTYTHREE


@cuda.jit(device=True, inline=True)
def sixteen_symbols(text, nibble):
    """Lookups ``nibble`` .. ``nibble + 15`` of the packed text, lookup i at bits 4i."""
    q = uint64(nibble)
    w = q >> _FOUR
    sh = (q & _FIFTEEN) << _TWO
    # (hi << 1) << (63 - sh) is hi << (64 - sh), and 0 when sh = 0 (a shift by 64 is undefined).
    return (text[w] >> sh) | ((text[w + _ONE] << _ONE) << (_SIXTYTHREE - sh))


@cuda.jit(device=True, inline=True)
def initial_pv(word, dummy):
    """Vertical deltas of column 0 in a padded word: +1 on real rows, 0 on the dummy rows."""
    lo = word * 64
    if lo >= dummy:
        return _ALL
    if lo + 64 <= dummy:
        return _ZERO
    return _ALL << uint64(dummy - lo)


@cuda.jit(device=True, inline=True)
def note_hit(score, end_abs, ident, hits, hit_count):
    slot = cuda.atomic.add(hit_count, 0, 1)
    if slot < hits.shape[0]:
        hits[slot, 0] = end_abs
        hits[slot, 1] = score
        hits[slot, 2] = ident


@cuda.jit(device=True, inline=True)
def profile_at(prof, jobs, row, score, c, low, edge, pidx):
    """Lower the running bin minimum; at a bin's last column, fold it into ``prof``."""
    low = imin(low, score)
    if c + 1 == edge:
        cuda.atomic.min(prof, pidx, int64(imin(low, jobs[J_CAP, row])))
        low = int64(HIGH)
        edge += jobs[J_BINW, row]
        pidx += 1
    return low, edge, pidx


@kernel_jit()
def pack_kernel(codes, lookups):
    """lookups[w]: the 4-bit lookups (PACK_LOOKUP) of codes[16 w .. 16 w + 15], lookup i at
    bits 4i: the packed text that ``sixteen_symbols`` reads, built on the GPU from the codes."""
    w = cuda.grid(1)
    if w < lookups.shape[0]:
        base = uint64(16 * w)
        word = _ZERO
        for i in range(16):
            word |= uint64(PACK_LOOKUP[codes[base + uint64(i)]]) << uint64(4 * i)
        lookups[w] = word


@kernel_jit()
def peq_kernel(pats, p_offs, word_inst, word_index, word_dummy, search, peq):
    """peq[4 k + b]: rows of padded word ``word_index[k]`` of pattern ``word_inst[k]`` whose
    symbol holds base b (A, C, G, T), ``word_dummy[k]`` dummy rows on top (set in all four
    words when ``search``: they match everything)."""
    k = cuda.grid(1)
    if k < word_inst.shape[0]:
        inst = word_inst[k]
        p0 = p_offs[inst]
        m = p_offs[inst + 1] - p0
        first = word_index[k] * 64 - word_dummy[k]  # pattern row of bit 0
        dummy = _ALL if search else _ZERO
        a = _ZERO
        c = _ZERO
        g = _ZERO
        t = _ZERO
        for b in range(64):
            i = first + b
            bit = _ONE << uint64(b)
            if i < 0:
                a |= bit & dummy
                c |= bit & dummy
                g |= bit & dummy
                t |= bit & dummy
            elif i < m:
                code = pats[uint64(p0 + i)]
                if code & 1:
                    a |= bit
                if code & 2:
                    c |= bit
                if code & 4:
                    g |= bit
                if code & 8:
                    t |= bit
        out = uint64(4 * k)
        peq[out] = a
        peq[out + _ONE] = c
        peq[out + _TWO] = g
        peq[out + _THREE] = t


# -- warp exchange ------------------------------------------------------------------------------
if SIMULATOR:
    _EXCHANGE_SLOTS = 1024

    @cuda.jit(device=True)
    def pass_down(value, exchange):
        """The value of the lane before (lane 0 gets its own back), as shfl_up_sync(.., 1).

        The simulator releases a barrier when every live thread of the block waits
        at one, and all lanes of a warp run the same exchanges, so two barriers
        order one exchange."""
        tid = cuda.threadIdx.x
        exchange[tid] = value
        cuda.syncthreads()
        got = value
        if tid & 31:
            got = exchange[tid - 1]
        cuda.syncthreads()
        return got

    @cuda.jit(device=True)
    def warp_sync():
        cuda.syncthreads()
else:
    _EXCHANGE_SLOTS = 1

    @cuda.jit(device=True, inline=True)
    def pass_down(value, exchange):
        """The value of the lane before (lane 0 gets its own back)."""
        return cuda.shfl_up_sync(0xFFFFFFFF, value, 1)

    @cuda.jit(device=True, inline=True)
    def warp_sync():
        cuda.syncwarp(0xFFFFFFFF)


# -- task: one thread per pair --------------------------------------------------------------
# The hot loops count in int32 (numba widens integer arithmetic to 64 bits; the int32() casts
# let LLVM narrow it back), branch on bits rather than 64-bit compares, and run while-loops
# (numba's range() keeps a second 64-bit counter).
_BIG = (1 << 31) - 1


@lru_cache(maxsize=None)
def task_kernel(words: int, mode: int, profile: bool, registers: int = 255):
    """The task kernel for patterns padded to ``words`` words kept in registers, or for
    ``words == 0`` to any number, kept in the global arrays ``spv/smv`` (words x threads).
    ``rows[k]`` is the job row of thread k."""
    NB = max(1, words)
    REG = words > 0
    GLOBAL = mode == MODE_GLOBAL
    HITS = mode == MODE_HITS
    PROFILE = profile
    TOP = _ONE if GLOBAL else _ZERO
    CAP = registers

    @kernel_jit(registers)
    def kernel(text, codes, peq, jobs, rows, out, hits, hit_count, prof, spv, smv):
        # CAP is never 0: naming it puts the register cap in the closure that numba's disk
        # cache keys on (it ignores max_registers).
        if CAP == 0:
            return
        k = cuda.grid(1)
        if k >= rows.shape[0]:
            return
        row = rows[k]
        scan = jobs[J_SCAN, row]
        n = int32(jobs[J_N, row])
        own = int32(jobs[J_OWN, row])
        m = jobs[J_M, row]
        tbase = uint64(jobs[J_PEQ, row])
        nwp = NB if REG else (m + 63) >> 6
        dummy = nwp * 64 - m
        if REG:
            pv = cuda.local.array(NB, uint64)
            mv = cuda.local.array(NB, uint64)
        else:
            pv = spv[:, k]
            mv = smv[:, k]
        for i in range(nwp):
            pv[i] = initial_pv(i, dummy)
            mv[i] = _ZERO
        score = int32(m)
        thresh = jobs[J_THRESH, row]  # read once: in the loop it would be a load per column
        best = int32(imin(thresh + 1, _BIG))
        end = int32(-1)
        low = int64(HIGH)
        pidx = jobs[J_BIN, row]
        edge = jobs[J_EDGE, row]
        buf = _ZERO
        c = int32(0)
        while c < n:
            if (c & 15) == 0:
                buf = sixteen_symbols(text, scan + c + PAD)
            hp = TOP
            hm = _ZERO
            if (buf & _FOUR) == _ZERO:
                ix = tbase + (buf & _THREE)
                for i in range(nwp):
                    pv[i], mv[i], hp, hm = myers_step(pv[i], mv[i], peq[ix + uint64(4 * i)], hp, hm)
            else:  # a code of several bases: OR the words of each
                code = codes[uint64(scan + c + PAD)]
                for i in range(nwp):
                    at = tbase + uint64(4 * i)
                    eq = _ZERO
                    for b in range(4):
                        if code & (1 << b):
                            eq |= peq[at + uint64(b)]
                    if code == 0 and not GLOBAL:  # a gap base: only the dummy rows match it
                        eq = ~initial_pv(i, dummy)
                    pv[i], mv[i], hp, hm = myers_step(pv[i], mv[i], eq, hp, hm)
            buf >>= _FOUR
            score = int32(score + int32(hp) - int32(hm))
            if not GLOBAL and c >= own:
                if HITS:
                    if score <= thresh:
                        note_hit(score, scan + c + 1, jobs[J_ID, row], hits, hit_count)
                elif score < best:
                    best = score
                    end = int32(c + 1)
                if PROFILE:
                    low, edge, pidx = profile_at(prof, jobs, row, score, c, low, edge, pidx)
            c = int32(c + 1)
        if PROFILE and low < HIGH:
            cuda.atomic.min(prof, pidx, int64(imin(low, jobs[J_CAP, row])))
        out[row, O_BEST] = best
        out[row, O_END] = end
        out[row, O_SCORE] = score

    return kernel


# -- cooperative: a warp shares the words of its queries ----------------------------------------
def cooperative_shared_bytes(words: int, threads_per_block: int) -> int:
    """Dynamic shared memory of a block: four match words per word of every lane."""
    return threads_per_block * 4 * words * 8


@lru_cache(maxsize=None)
def cooperative_kernel(words: int, columns: int, mode: int, profile: bool, striped: bool,
                       registers: int = 255):
    """The cooperative kernel: ``words`` words per lane, ``columns`` columns per step;
    ``striped``: for warps whose pairs run in several stripes (else one stripe each, and
    no carry code in the loop).

    ``warps[w]`` = (first job row, pairs, lanes per pair L, stripes S, steps per stripe)
    for warp w; its pairs are the rows first .. first + pairs - 1, padded to S * L *
    ``words`` words.
    """
    W = words
    C = columns
    WS = np.uint64(WARP)          # a lane's consecutive words in shared memory
    BS = np.uint64(W * WARP)      # its base tables (A, C, G, T)
    SLOTS = 4 * W * WARP          # shared uint64 per warp
    RELOAD = 16 // C - 1          # 16 lookups in a buffer: reload every 16 / C steps
    GLOBAL = mode == MODE_GLOBAL
    HITS = mode == MODE_HITS
    PROFILE = profile
    STRIPED = striped
    TOP = int32(sum(1 << (2 * u) for u in range(C))) if GLOBAL else int32(0)  # C[0,j] = j: +1
    CAP = registers
    EXCHANGE = _EXCHANGE_SLOTS

    @kernel_jit(registers)
    def kernel(text, codes, peq, jobs, warps, out, hits, hit_count, prof, carry):
        if CAP == 0:
            return
        table = cuda.shared.array(0, uint64)
        exchange = cuda.shared.array(EXCHANGE, int32)
        tid = cuda.threadIdx.x
        lane = tid & 31
        warp = (cuda.blockIdx.x * cuda.blockDim.x + tid) >> 5
        if warp >= warps.shape[0]:
            return
        first = warps[warp, 0]
        pairs = warps[warp, 1]
        L = warps[warp, 2]
        S = warps[warp, 3]
        steps = int32(warps[warp, 4])
        g = lane // L
        r = int32(lane - g * L)
        last_lane = int32(L - 1)
        live = g < pairs
        row = first + (g if live else 0)  # idle lanes shadow the first pair, recording nothing
        scan = jobs[J_SCAN, row]
        n = int32(jobs[J_N, row])
        own = int32(jobs[J_OWN, row])
        m = jobs[J_M, row]
        tbase = jobs[J_PEQ, row]
        dummy = S * L * W * 64 - m
        base = uint64((tid >> 5) * SLOTS + lane)
        pv = cuda.local.array(W, uint64)
        mv = cuda.local.array(W, uint64)
        eq = cuda.local.array(W, uint64)
        score = int32(m)
        thresh = jobs[J_THRESH, row]  # read once: in the loop it would be a load per column
        best = int32(imin(thresh + 1, _BIG))
        end = int32(-1)
        low = int64(HIGH)
        pidx = jobs[J_BIN, row]
        edge = jobs[J_EDGE, row]
        for s in range(S):
            word0 = (s * L + r) * W
            for i in range(W):
                at = uint64(tbase + 4 * (word0 + i))
                for b in range(4):
                    table[base + uint64(b) * BS + uint64(i) * WS] = peq[at + uint64(b)]
                pv[i] = initial_pv(word0 + i, dummy)
                mv[i] = _ZERO
            records = live and s == S - 1 and r == last_lane
            passes = live and s < S - 1 and r == last_lane
            out_bits = int32(0)
            buf = _ZERO
            t = int32(0)
            while t < steps:
                q = int32(t - r)  # this lane's column group
                # A lane runs the warp's steps, so a pair shorter than the warp's longest reads
                # on past its own end (those columns are never recorded): reads stop at column
                # n, whose 16 lookups lie within the text's trailing padding (PAD + 32).
                if (t & RELOAD) == 0:
                    buf = sixteen_symbols(text, scan + imin(C * q, n) + PAD)
                got = pass_down(out_bits, exchange)
                if r == 0:
                    got = TOP
                    if STRIPED and s > 0:
                        got = int32(carry[jobs[J_CARRY, row] + ((s - 1) & 1) * n
                                          + imax(0, imin(q, n - 1))])
                bits = _ZERO
                for u in range(C):
                    if (buf & _FOUR) == _ZERO:
                        ix = base + (buf & _THREE) * BS
                        for i in range(W):
                            eq[i] = table[ix + uint64(i) * WS]
                    else:  # a code of several bases: OR the words of each
                        code = codes[uint64(scan + imin(C * q + u, n) + PAD)]
                        for i in range(W):
                            e = _ZERO
                            for b in range(4):
                                if code & (1 << b):
                                    e |= table[base + uint64(b) * BS + uint64(i) * WS]
                            if code == 0 and not GLOBAL:  # a gap base: the dummy rows match
                                e = ~initial_pv(word0 + i, dummy)
                            eq[i] = e
                    buf >>= _FOUR
                    hp = uint64((got >> (2 * u)) & 1)
                    hm = uint64((got >> (2 * u + 1)) & 1)
                    for i in range(W):
                        pv[i], mv[i], hp, hm = myers_step(pv[i], mv[i], eq[i], hp, hm)
                    bits |= (hp | (hm << _ONE)) << uint64(2 * u)
                    if records:
                        col = int32(C * q + u)
                        if uint32(col) < uint32(n):
                            score = int32(score + int32(hp) - int32(hm))
                            if not GLOBAL and col >= own:
                                if HITS:
                                    if score <= thresh:
                                        note_hit(score, scan + col + 1, jobs[J_ID, row], hits,
                                                 hit_count)
                                elif score < best:
                                    best = score
                                    end = int32(col + 1)
                                if PROFILE:
                                    low, edge, pidx = profile_at(prof, jobs, row, score, col, low,
                                                                 edge, pidx)
                out_bits = int32(bits)
                if t < last_lane:
                    if q < 0:  # pipeline fill: this lane's column 0 is still ahead
                        for i in range(W):
                            pv[i] = initial_pv(word0 + i, dummy)
                            mv[i] = _ZERO
                if STRIPED and passes and q >= 0 and C * q < n:
                    carry[jobs[J_CARRY, row] + (s & 1) * n + q] = uint8(out_bits)
                t = int32(t + 1)
            if STRIPED and s < S - 1:
                warp_sync()  # the carries written above are read by lane 0 in the next stripe
        if live and r == last_lane:
            if PROFILE and low < HIGH:
                cuda.atomic.min(prof, pidx, int64(imin(low, jobs[J_CAP, row])))
            out[row, O_BEST] = best
            out[row, O_END] = end
            out[row, O_SCORE] = score

    return kernel
