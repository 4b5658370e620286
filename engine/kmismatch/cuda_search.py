"""kmismatch on CUDA: the kernels (the host side is engine/kmismatch/cuda.py).

**Counters.** As in the study's PMASM, every slot (a pattern, or its reverse
complement) of one length group has a b-bit mismatch counter, ``rpw`` of them
packed in a 64-bit word; ``valid`` has one word per counter word. The
look-up memory is built with a bias folded into level 0, so that a counter's
top bit is set exactly when its mismatches exceed k: the hits of a word are
``valid & ~acc``, and a hit's mismatches are its field minus the bias.

**The methods.**

- ``thread`` (the study's 5.3.1): one thread per text window; its bit_vector
  adds the m fb-vectors ``fb[w, level, symbol]`` read from the look-up memory
  in global memory, and the text from global memory.
- ``shared-mem`` (5.3.3): a block first stages the text chunk its windows read in
  shared memory (whole text words: tiles start at multiples of 4), and the
  look-up memory when it fits. Each thread takes 8 consecutive windows: symbol
  p of their 7 + m symbols adds level p - i to window i, so each symbol is read
  once and, in a kernel compiled for its m, every look-up has a constant
  offset; the record checks and the hit bookkeeping run once per 8 windows.
- ``block-thread`` (5.3.2): one block per window and one thread per level; each
  thread leaves its fb-vector in shared memory (``fb_vec_rlt``) and thread 0
  adds them up. A block takes the windows of its tile one after the other.
- ``pair-tile`` (ours): two levels per look-up. The look-up memory of a level
  pair has 256 entries (one per pair of 4-bit codes, IUPAC included), staged in
  shared memory; the block stages the pair code of every text position once.
  Entry (c1, c2) sits at ``c1 << 4 | (c2 ^ s(c1))``: with s = 0, 1, 14, 15 for
  A, C, G, T the 16 plain-base pairs fall in 16 different bank pairs, so a
  warp's look-ups never conflict on DNA. Each thread takes four consecutive
  windows, so the hit bookkeeping below runs once per four windows.

Kernels compiled for one pattern length (``levels``/``groups`` > 0) have the
level loop unrolled, its table offsets constant; 0 compiles one kernel for any
length. Strided loops are while loops: numba's range() with a run-time step
divides.

**Hits in text order.** A block's windows form a tile, and each tile has its
own region of ``per_tile`` hits in the buffer (sized by the host from the hits
per window seen so far), so no atomic is needed to place them: the threads add
up their hit counts (``block_prefix``: warp shuffles, one barrier, then every
warp over the warps' sums, so that every thread knows the tile's total and
where its region starts) and write their hits, packed as ``window << 32 | slot
<< 16 | mismatches``, in window then slot order from the region's start. A tile
that finds more than its region holds takes room in a spill area after the
regions (thread 0's atomic add on a counter, rare, and a second barrier); when
the spill area is full it writes nothing, but the counter still counts it, so
the host knows the room needed and runs the launch again. Tiles end in regions
of different fill: ``order_hits`` (with the tiles' counts also summed per group
of ordering blocks as they finish) then copies each tile's hits to their place
in text order, unpacked into compact columns, after the hits of the launches
before it; ``finish_launch`` adds the launch's hits to that count on the GPU (or
records the room an overflowing launch asked for) and clears the counters, so
that the launches of a batch follow one another with no host round trip.

**After the search.** ``unpack_text`` turns the packed text (two codes a byte)
into one code a byte as each uploaded piece lands; ``merge_groups`` merges the
hits of several pattern lengths into one text order; ``tally_hits`` counts them
per pattern and per density bin. numba's CUDA simulator, in which CI runs these
kernels, has no warp shuffles; there ``block_prefix`` lets one thread add the
counts up (every other line of the kernels is the same).

The helpers that call ``cuda.*`` live here beside the kernels: numba's CUDA
simulator swaps in its fake ``cuda`` module only in the launched kernel's
module.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from numba import cuda, int32, int64, uint8, uint32, uint64
from numba import uint64 as U  # unsigned indices: numba then skips the negative-index wraparound

from engine.gpu import SIMULATOR, imax, imin, kernel_jit

_ZERO = np.uint64(0)
_ONE = np.uint64(1)
_TWO = np.uint64(2)
_FOUR = np.uint64(4)
_NIBBLE = np.uint64(15)
_SLOT_SHIFT = np.uint64(16)
_WINDOW_SHIFT = np.uint64(32)
_LOW16 = np.uint64(0xFFFF)
_ALL = np.uint64(0xFFFFFFFFFFFFFFFF)
_FULL = np.uint32(0xFFFFFFFF)
# A tile's shared scalars: where its hits start (-1: no room), how many of its first windows
# surely count, the end of its first window's record. Named apart from the hit status's _BASE
# below: kernels read module globals once the whole module ran, so the shared name made a
# tile's base land on its record end, which block-thread's other threads may still read.
_TILE_BASE, _LIM, _END = range(3)
_SCALARS = 3
#: s(c) of the pair layout in nibble c: s(A=1) = 0, s(C=2) = 1, s(G=4) = 14, s(T=8) = 15.
PAIR_SWIZZLE = 0xF000E0100
_SWIZZLE = np.uint64(PAIR_SWIZZLE)


# -- small helpers --------------------------------------------------------------------------
@cuda.jit(device=True, inline=True)
def pair_code(c1, c2):
    """Where the symbol pair (c1, c2) sits in a pair look-up memory."""
    a = U(c1)
    return (a << _FOUR) | (U(c2) ^ ((_SWIZZLE >> (a << _TWO)) & _NIBBLE))


@cuda.jit(device=True, inline=True)
def record_end(offsets, j):
    """End of the text record holding flat position j (offsets: record starts, then the end)."""
    a = 0
    z = offsets.shape[0] - 1
    while z - a > 1:
        mid = (a + z) >> 1
        if offsets[mid] <= j:
            a = mid
        else:
            z = mid
    return offsets[a + 1]


@cuda.jit(device=True, inline=True)
def tile_begin(offsets, j0, m, lo, hi, span, scal):
    """Thread 0, before the tile's first barrier: the end of the record of the tile's first
    window, and how many of the tile's first windows surely lie in [lo, hi) and in that
    record (the others are checked one by one, by ``window_ok``; all of them in a tile
    that starts before lo)."""
    end = record_end(offsets, j0)
    scal[_END] = end
    scal[_LIM] = imax(int64(0), imin(imin(hi, end - m + 1) - j0, span)) if j0 >= lo else int64(0)


@cuda.jit(device=True, inline=True)
def window_ok(j, m, lo, hi, tile_end, offsets):
    """Is the window at flat position j in [lo, hi) and inside one record?"""
    if j < lo or j >= hi:
        return False
    if j + m <= tile_end:
        return True
    if j < tile_end:
        return False
    return j + m <= record_end(offsets, j)


@cuda.jit(device=True, inline=True)
def hit_count(acc, valid_w):
    return int64(cuda.popc(valid_w & ~acc))


@cuda.jit(device=True, inline=True)
def packed_hit(window, hits, acc, slot0, b, binv, mask, bias):
    """The lowest hit of ``hits`` (top bits of a word ``acc``), packed. Its field is
    (bit + 1) / b - 1, with the division by b done as a multiplication by binv =
    ceil(2^16 / b) (exact for these small numbers). The field arithmetic is 32-bit
    (numba widens every integer sum to 64 bits; the casts let LLVM narrow them again)."""
    bit = uint32(cuda.popc((hits & (~hits + _ONE)) - _ONE))
    f = uint32(uint32(uint32(bit + uint32(1)) * uint32(binv)) >> uint32(16)) - uint32(1)
    mis = uint32(uint32(uint32(acc >> U(uint32(f * uint32(b)))) & uint32(mask)) - uint32(bias))
    low = uint32(uint32(uint32(uint32(slot0) + f) << uint32(16)) | mis)
    return (window << _WINDOW_SHIFT) | U(low)


@cuda.jit(device=True, inline=True)
def emit_word(acc, valid_w, slot0, b, binv, mask, bias, window, out, at):
    """One thread writes the hits of one counter word of a window from out[at] on; returns
    the next index."""
    hits = valid_w & ~acc
    while hits != _ZERO:
        out[U(at)] = packed_hit(window, hits, acc, slot0, b, binv, mask, bias)
        hits &= hits - _ONE
        at += 1
    return at


if SIMULATOR:
    @cuda.jit(device=True)
    def block_prefix(c, buf):
        """(Hits before this thread's in the block, the block's hits); every thread calls it.
        The simulator has no warp shuffles: thread 0 adds up buf[0:T+1] alone."""
        t = cuda.threadIdx.x
        T = cuda.blockDim.x
        buf[t] = c
        cuda.syncthreads()
        if t == 0:
            run = int32(0)
            for x in range(T):
                v = buf[x]
                buf[x] = run
                run += v
            buf[T] = run
        cuda.syncthreads()
        before = buf[t]
        total = buf[T]
        cuda.syncthreads()  # buf is free again
        return int32(before), int32(total)
else:
    @cuda.jit(device=True)
    def block_prefix(c, buf):
        """(Hits before this thread's in the block, the block's hits); every thread calls it
        (and the block does not write buf again). Each warp adds up its lanes with shuffles
        and leaves its sum in buf[0:32]; after the one barrier every warp adds up the
        warps' sums itself (a last, partial warp with fewer lanes than there are warps
        walks them), so that every thread knows the total."""
        t = int32(cuda.threadIdx.x)
        T = int32(cuda.blockDim.x)
        lane = int32(t & 31)
        warp = int32(t >> 5)
        warps = int32(int32(T + 31) >> 5)
        live = int32(imin(int32(32), int32(T - int32(32 * warp))))  # lanes of this warp
        mask = _FULL if live == 32 else uint32(uint32(1 << live) - uint32(1))
        x = int32(c)
        d = 1
        while d < 32:
            y = cuda.shfl_up_sync(mask, x, d)
            if lane >= d:
                x = int32(x + y)
            d <<= 1
        if lane == live - 1:
            buf[warp] = x
        cuda.syncthreads()
        x = int32(x - int32(c))
        if live >= warps:  # (every warp but a last one of fewer lanes than there are warps)
            v = buf[lane] if lane < warps else int32(0)
            d = 1
            while d < 32:
                y = cuda.shfl_up_sync(mask, v, d)
                if lane >= d:
                    v = int32(v + y)
                d <<= 1
            w = cuda.shfl_sync(mask, v, imax(warp - 1, 0))
            total = cuda.shfl_sync(mask, v, warps - 1)
            before = int32(x + w) if warp > 0 else x
        else:
            before = x
            total = int32(0)
            for u in range(warps):
                v = buf[u]
                total = int32(total + v)
                if u < warp:
                    before = int32(before + v)
        return before, total


def prefix_entries(tpb: int) -> int:
    """int32 entries block_prefix needs in its buffer."""
    return max(tpb + 1, 33)


@cuda.jit(device=True, inline=True)
def tile_place(tile, run, per_tile, regular, counters, spill_cap, group_sums, group_shift,
               tile_base, tile_hits):
    """Thread 0: where the tile's ``run`` hits go, recorded for ordering. A tile has its own
    region of ``per_tile`` hits (no atomics); one that finds more takes room in the spill
    area after the ``regular`` regions (counters[0] counts what spills: when that exceeds
    ``spill_cap`` the tile writes nothing, -1, and the host runs the launch again)."""
    base = tile * per_tile
    if run > per_tile:
        spilled = cuda.atomic.add(counters, 0, run)
        base = regular + spilled if spilled + run <= spill_cap else int64(-1)
    if run > 0:
        cuda.atomic.add(group_sums, tile >> group_shift, run)  # for the ordering pass
    tile_base[tile] = base
    tile_hits[tile] = run
    return base


@cuda.jit(device=True, inline=True)
def tile_start(tile, run, per_tile, regular, counters, spill_cap, group_sums, group_shift,
               tile_base, tile_hits, scal):
    """Every thread, after block_prefix: where the tile's hits start (-1: nowhere). Thread 0
    records the tile (``tile_place``); only a tile whose hits outgrow its region (rare, and
    the same answer in every thread) waits at a barrier for thread 0's place."""
    if cuda.threadIdx.x == 0:
        scal[_TILE_BASE] = tile_place(tile, int64(run), per_tile, regular, counters, spill_cap,
                                      group_sums, group_shift, tile_base, tile_hits)
    if run > per_tile:
        cuda.syncthreads()
        return scal[_TILE_BASE]
    return tile * per_tile


@cuda.jit(device=True, inline=True)
def stage(dst, src, first, n):
    """dst[0:n] = src[first:first+n] by the whole block, between two barriers (so that
    nobody still reads the old dst, and everybody sees the new one)."""
    cuda.syncthreads()
    x = cuda.threadIdx.x
    while x < n:
        dst[x] = src[first + x]
        x += cuda.blockDim.x
    cuda.syncthreads()


# -- thread and shared-mem ----------------------------------------------------------------
@cuda.jit(device=True, inline=True)
def window_sum(src, start, table, first, m):
    """The study's bit_vector of the window at src[start:start+m]: the m fb-vectors
    table[first + 16 level + symbol] added up. (Indices are 32-bit: an address is then one
    multiply-add, not a 64-bit sum.)"""
    acc = _ZERO
    for level in range(m):
        acc += table[uint32(uint32(first) + uint32(16 * level) + uint32(src[U(start + level)]))]
    return acc


def window_shared_bytes(tpb: int) -> int:
    """``thread``: block_prefix's buffer."""
    return 4 * prefix_entries(tpb)


@lru_cache(maxsize=None)
def window_kernel(levels: int, one_word: bool):
    """``thread``, for patterns of length ``levels`` (0: any length) and, with ``one_word``,
    one word of counters (the look-up memory's offsets are then constants): one thread per
    window, the text and the look-up memory read from global memory (through L1: a warp
    reads 4 of the 16 fb-vectors of a level, one 128-byte line)."""
    M = levels
    ONE = one_word

    @kernel_jit()
    def kernel(text, offsets, lo, hi, m, fb, valid, b, binv, mask, bias, rpw, out,
               per_tile, regular, counters, spill_cap, group_sums, group_shift, tile_base,
               tile_hits):
        t = cuda.threadIdx.x
        T = cuda.blockDim.x
        tile = cuda.blockIdx.x
        mm = M if M > 0 else m
        W = 1 if ONE else valid.shape[0]
        buf = cuda.shared.array(0, int32)
        scal = cuda.shared.array(_SCALARS, int64)
        j0 = lo + tile * T
        if t == 0:
            tile_begin(offsets, j0, mm, lo, hi, T, scal)
        cuda.syncthreads()
        j = j0 + t
        ok = t < scal[_LIM] or window_ok(j, mm, lo, hi, scal[_END], offsets)
        hits = int64(0)
        acc0 = _ZERO
        if ok:
            for w in range(W):
                acc = window_sum(text, j, fb, 16 * mm * w, mm)
                if w == 0:
                    acc0 = acc
                hits += hit_count(acc, valid[w])
        before, run = block_prefix(hits, buf)
        base = tile_start(tile, run, per_tile, regular, counters, spill_cap, group_sums,
                          group_shift, tile_base, tile_hits, scal)
        if hits > 0 and base >= 0:
            at = base + before
            window = U(j - lo)
            if W == 1:
                emit_word(acc0, valid[0], 0, b, binv, mask, bias, window, out, at)
            else:  # the words' sums were not kept: add them up again
                for w in range(W):
                    acc = window_sum(text, j, fb, 16 * mm * w, mm)
                    at = emit_word(acc, valid[w], w * rpw, b, binv, mask, bias, window, out, at)

    return kernel


# -- shared-mem ----------------------------------------------------------------------------
#: Windows a shared-mem thread takes (consecutive: the symbols they share are read once).
SHARED_WINDOWS = 8


@cuda.jit(device=True, inline=True)
def symbol_adds(tab, c, p, m, a0, a1, a2, a3, a4, a5, a6, a7):
    """Symbol p of the 8 windows' stretch (look-up entry c of level 0) adds level p - i
    to window i."""
    if p < m:
        a0 += tab[c + U(16 * p)]
    if p >= 1 and p - 1 < m:
        a1 += tab[c + U(16 * (p - 1))]
    if p >= 2 and p - 2 < m:
        a2 += tab[c + U(16 * (p - 2))]
    if p >= 3 and p - 3 < m:
        a3 += tab[c + U(16 * (p - 3))]
    if p >= 4 and p - 4 < m:
        a4 += tab[c + U(16 * (p - 4))]
    if p >= 5 and p - 5 < m:
        a5 += tab[c + U(16 * (p - 5))]
    if p >= 6 and p - 6 < m:
        a6 += tab[c + U(16 * (p - 6))]
    if p >= 7 and p - 7 < m:
        a7 += tab[c + U(16 * (p - 7))]
    return a0, a1, a2, a3, a4, a5, a6, a7


@cuda.jit(device=True, inline=True)
def word_adds(tab, chunk, q, g, first, m, a0, a1, a2, a3, a4, a5, a6, a7):
    """Word g of the 8 windows' stretch: its 4 symbols, p = 4g to 4g + 3."""
    wd = chunk[U(q + g)]
    for k in range(4):
        c = U(first) + U((wd >> uint32(8 * k)) & uint32(15))
        a0, a1, a2, a3, a4, a5, a6, a7 = symbol_adds(tab, c, 4 * g + k, m, a0, a1, a2, a3,
                                                     a4, a5, a6, a7)
    return a0, a1, a2, a3, a4, a5, a6, a7


@cuda.jit(device=True, inline=True)
def eight_sums(tab, chunk, q, first, m, spelled):
    """The bit_vectors of the 8 windows whose symbols start at word q of the staged chunk
    (4 symbols a word): the 7 + m symbols are walked once, a word at a time, and symbol
    p adds level p - i of window i; so each symbol is taken out of its word once. With
    ``spelled`` (a kernel compiled for its m <= 33) the words are spelled out (LLVM does
    not unroll a loop this long): every level offset and every test is then a constant."""
    a0 = a1 = a2 = a3 = a4 = a5 = a6 = a7 = _ZERO
    if spelled and m <= 33:
        a0, a1, a2, a3, a4, a5, a6, a7 = word_adds(tab, chunk, q, 0, first, m, a0, a1, a2,
                                                   a3, a4, a5, a6, a7)
        a0, a1, a2, a3, a4, a5, a6, a7 = word_adds(tab, chunk, q, 1, first, m, a0, a1, a2,
                                                   a3, a4, a5, a6, a7)
        if m > 1:
            a0, a1, a2, a3, a4, a5, a6, a7 = word_adds(tab, chunk, q, 2, first, m, a0, a1,
                                                       a2, a3, a4, a5, a6, a7)
        if m > 5:
            a0, a1, a2, a3, a4, a5, a6, a7 = word_adds(tab, chunk, q, 3, first, m, a0, a1,
                                                       a2, a3, a4, a5, a6, a7)
        if m > 9:
            a0, a1, a2, a3, a4, a5, a6, a7 = word_adds(tab, chunk, q, 4, first, m, a0, a1,
                                                       a2, a3, a4, a5, a6, a7)
        if m > 13:
            a0, a1, a2, a3, a4, a5, a6, a7 = word_adds(tab, chunk, q, 5, first, m, a0, a1,
                                                       a2, a3, a4, a5, a6, a7)
        if m > 17:
            a0, a1, a2, a3, a4, a5, a6, a7 = word_adds(tab, chunk, q, 6, first, m, a0, a1,
                                                       a2, a3, a4, a5, a6, a7)
        if m > 21:
            a0, a1, a2, a3, a4, a5, a6, a7 = word_adds(tab, chunk, q, 7, first, m, a0, a1,
                                                       a2, a3, a4, a5, a6, a7)
        if m > 25:
            a0, a1, a2, a3, a4, a5, a6, a7 = word_adds(tab, chunk, q, 8, first, m, a0, a1,
                                                       a2, a3, a4, a5, a6, a7)
        if m > 29:
            a0, a1, a2, a3, a4, a5, a6, a7 = word_adds(tab, chunk, q, 9, first, m, a0, a1,
                                                       a2, a3, a4, a5, a6, a7)
    else:
        for g in range((m + 10) >> 2):
            a0, a1, a2, a3, a4, a5, a6, a7 = word_adds(tab, chunk, q, g, first, m, a0, a1,
                                                       a2, a3, a4, a5, a6, a7)
    return a0, a1, a2, a3, a4, a5, a6, a7


@cuda.jit(device=True, inline=True)
def eight_hits(a0, a1, a2, a3, a4, a5, a6, a7, vw, okm):
    """The hit bits (top bits of the counters past k) of the 8 windows in one counter word;
    bit i of okm: window i counts (all 8 but near the ends of a range or a record, where
    the others are masked out)."""
    h0 = vw & ~a0
    h1 = vw & ~a1
    h2 = vw & ~a2
    h3 = vw & ~a3
    h4 = vw & ~a4
    h5 = vw & ~a5
    h6 = vw & ~a6
    h7 = vw & ~a7
    if okm != 255:
        h0 = h0 if okm & 1 else _ZERO
        h1 = h1 if okm & 2 else _ZERO
        h2 = h2 if okm & 4 else _ZERO
        h3 = h3 if okm & 8 else _ZERO
        h4 = h4 if okm & 16 else _ZERO
        h5 = h5 if okm & 32 else _ZERO
        h6 = h6 if okm & 64 else _ZERO
        h7 = h7 if okm & 128 else _ZERO
    return h0, h1, h2, h3, h4, h5, h6, h7


@cuda.jit(device=True, inline=True)
def bits(h):
    """Set bits of a uint64, as int32."""
    return int32(cuda.popc(h))


@cuda.jit(device=True, inline=True)
def pick8(i, a0, a1, a2, a3, a4, a5, a6, a7):
    """a_i for 0 <= i < 8: a tree of selects on the bits of i (not a local array: the eight
    stay in registers)."""
    odd = (i & 1) != 0
    b0 = a1 if odd else a0
    b1 = a3 if odd else a2
    b2 = a5 if odd else a4
    b3 = a7 if odd else a6
    two = (i & 2) != 0
    c0 = b1 if two else b0
    c1 = b3 if two else b2
    return c1 if (i & 4) != 0 else c0


def shared_mem_shared_bytes(tpb: int, m: int, words: int, table_staged: bool) -> int:
    """The staged look-up memory (uint64), block_prefix's buffer, the text chunk (the words
    holding the tile's SHARED_WINDOWS * tpb + m - 1 symbols)."""
    return ((128 * m * words if table_staged else 0) + 4 * prefix_entries(tpb)
            + 4 * ((SHARED_WINDOWS * tpb + m + 2) // 4))


@lru_cache(maxsize=None)
def shared_mem_kernel(levels: int, one_word: bool, table_staged: bool, cap: int = 255):
    """``shared-mem`` for patterns of length ``levels`` (0: any length); ``one_word``: one
    word of counters (kept from the count to the writing of the hits). A block stages its
    tile's text chunk in shared memory, and with ``table_staged`` the look-up memory too
    (16 fb-vectors of 128 bytes a level: the 4 plain bases of a level fall in different
    banks, so a warp's look-ups never conflict on DNA; otherwise it is read from global
    memory). Tiles start at multiples of 4 symbols (from ``lo`` rounded down, the windows
    before ``lo`` masked out), so that the chunk is a plain copy of whole text words.
    Each thread takes SHARED_WINDOWS consecutive windows, so that the record checks and
    the hit bookkeeping (block_prefix, one barrier) run once per 8 windows, and a tile
    that lies inside one record skips the per-window checks. ``cap``: at most that many
    registers a thread (the kernels of several counter words take more than a block of
    1024 threads may have)."""
    M = levels
    ONE = one_word
    TS = table_staged
    V = SHARED_WINDOWS
    SPELL = 0 < levels <= 33
    CAP = cap

    @cuda.jit(device=True, inline=True)
    def word_sums(lut, fb, chunk, q, w, mm):
        """The 8 windows' sums of counter word w, from the staged look-up memory (TS, a
        compile-time choice) or from global memory."""
        if TS:
            return eight_sums(lut, chunk, q, 16 * mm * w, mm, SPELL)
        return eight_sums(fb, chunk, q, 16 * mm * w, mm, SPELL)

    @kernel_jit(cap)
    def kernel(text32, offsets, lo, hi, m, fb, valid, b, binv, mask, bias, rpw, out,
               per_tile, regular, counters, spill_cap, group_sums, group_shift, tile_base,
               tile_hits):
        if CAP < 1:  # never: CAP is read so that numba's disk cache, keyed by the closure's
            return   # values but not by max_registers, keeps kernels of other caps apart
        t = cuda.threadIdx.x
        T = cuda.blockDim.x
        tile = cuda.blockIdx.x
        mm = M if M > 0 else m
        W = 1 if ONE else valid.shape[0]
        lut = cuda.shared.array(0, uint64)     # [0, nt): the look-up memory (TS)
        buf = cuda.shared.array(0, int32)      # block_prefix's, from b_at
        chunk = cuda.shared.array(0, uint32)   # the text chunk, from c_at
        scal = cuda.shared.array(_SCALARS, int64)
        nt = 16 * mm * W if TS else 0
        b_at = 2 * nt
        c_at = b_at + imax(T + 1, 33)
        span = V * T
        j0 = lo - (lo & 3) + tile * span
        if t == 0:
            tile_begin(offsets, j0, mm, lo, hi, span, scal)
        if TS:
            x = t
            while x < nt:
                lut[x] = fb[x]
                x += T
        # Word x of the chunk: text[j0 + 4x : j0 + 4x + 4] (32-bit indices: the text is
        # shorter than 2^32 symbols).
        w0 = uint32(j0 >> 2)
        n32 = uint32(text32.shape[0])
        nw = uint32((span + mm + 2) >> 2)
        x = uint32(t)
        while x < nw:
            y = uint32(w0 + x)
            chunk[uint32(c_at + x)] = text32[y] if y < n32 else uint32(0)
            x = uint32(x + T)
        cuda.syncthreads()
        lim = scal[_LIM]
        j = j0 + V * t
        okm = int32(255)
        if V * t + V > lim:  # a window of this thread may lie outside [lo, hi) or a record
            okm = int32(0)
            for i in range(V):
                if V * t + i < lim or window_ok(j + i, mm, lo, hi, scal[_END], offsets):
                    okm = int32(okm | (1 << i))
        q = c_at + 2 * t
        a0 = a1 = a2 = a3 = a4 = a5 = a6 = a7 = _ZERO
        n0 = n1 = n2 = n3 = n4 = n5 = n6 = n7 = int32(0)
        pend = int32(0)
        vw = valid[0]
        if ONE:
            a0, a1, a2, a3, a4, a5, a6, a7 = word_sums(lut, fb, chunk, q, 0, mm)
            h0, h1, h2, h3, h4, h5, h6, h7 = eight_hits(a0, a1, a2, a3, a4, a5, a6, a7, vw, okm)
            n0 = bits(h0)
            n1 = bits(h1)
            n2 = bits(h2)
            n3 = bits(h3)
            n4 = bits(h4)
            n5 = bits(h5)
            n6 = bits(h6)
            n7 = bits(h7)
            # The windows with hits (their bit_vectors are still at hand).
            pend = int32(int32(n0 != 0) | (int32(n1 != 0) << 1) | (int32(n2 != 0) << 2)
                         | (int32(n3 != 0) << 3) | (int32(n4 != 0) << 4)
                         | (int32(n5 != 0) << 5) | (int32(n6 != 0) << 6)
                         | (int32(n7 != 0) << 7))
        else:
            for w in range(W):
                a0, a1, a2, a3, a4, a5, a6, a7 = word_sums(lut, fb, chunk, q, w, mm)
                h0, h1, h2, h3, h4, h5, h6, h7 = eight_hits(a0, a1, a2, a3, a4, a5, a6, a7,
                                                            valid[w], okm)
                n0 = int32(n0 + bits(h0))
                n1 = int32(n1 + bits(h1))
                n2 = int32(n2 + bits(h2))
                n3 = int32(n3 + bits(h3))
                n4 = int32(n4 + bits(h4))
                n5 = int32(n5 + bits(h5))
                n6 = int32(n6 + bits(h6))
                n7 = int32(n7 + bits(h7))
        hits = int32(n0 + n1 + n2 + n3 + n4 + n5 + n6 + n7)
        before, run = block_prefix(hits, buf[b_at:])
        base = tile_start(tile, run, per_tile, regular, counters, spill_cap, group_sums,
                          group_shift, tile_base, tile_hits, scal)
        if ONE and hits > 0 and base >= 0:
            # One loop over the windows with hits, in order (hits are sparse: eight loops,
            # one a window, would each run as often as the warp's busiest lane needs).
            at = base + before
            jl = j - lo  # (negative in a tile that starts before lo: such windows have no hits)
            while pend != 0:
                i = int32(cuda.popc(int32(int32(pend & -pend) - 1)))
                pend = int32(pend & int32(pend - 1))
                acc = pick8(i, a0, a1, a2, a3, a4, a5, a6, a7)
                at = emit_word(acc, vw, 0, b, binv, mask, bias, U(jl + i), out, at)
        elif hits > 0 and base >= 0:
            # Where each window's hits start: the 8 windows' hits follow one another; the
            # cursors move on word by word (hits in window, then slot, order).
            e0 = base + before
            e1 = e0 + n0
            e2 = e1 + n1
            e3 = e2 + n2
            e4 = e3 + n3
            e5 = e4 + n4
            e6 = e5 + n5
            e7 = e6 + n6
            jl = j - lo
            for w in range(W):  # the words' sums were not kept: add them up again
                a0, a1, a2, a3, a4, a5, a6, a7 = word_sums(lut, fb, chunk, q, w, mm)
                vw = valid[w]
                s0 = w * rpw
                if okm & 1:
                    e0 = emit_word(a0, vw, s0, b, binv, mask, bias, U(jl), out, e0)
                if okm & 2:
                    e1 = emit_word(a1, vw, s0, b, binv, mask, bias, U(jl + 1), out, e1)
                if okm & 4:
                    e2 = emit_word(a2, vw, s0, b, binv, mask, bias, U(jl + 2), out, e2)
                if okm & 8:
                    e3 = emit_word(a3, vw, s0, b, binv, mask, bias, U(jl + 3), out, e3)
                if okm & 16:
                    e4 = emit_word(a4, vw, s0, b, binv, mask, bias, U(jl + 4), out, e4)
                if okm & 32:
                    e5 = emit_word(a5, vw, s0, b, binv, mask, bias, U(jl + 5), out, e5)
                if okm & 64:
                    e6 = emit_word(a6, vw, s0, b, binv, mask, bias, U(jl + 6), out, e6)
                if okm & 128:
                    e7 = emit_word(a7, vw, s0, b, binv, mask, bias, U(jl + 7), out, e7)

    return kernel


# -- block-thread --------------------------------------------------------------------------
@cuda.jit(device=True)
def block_sum(text, j, fb, level0, m, sums):
    """Block-thread: thread t leaves the fb-vector of level t (of levels t, t + tpb, ... when
    m > tpb) in sums[t]; thread 0 adds them up (the study's one-thread sum; only its
    return value is the bit_vector)."""
    t = cuda.threadIdx.x
    T = cuda.blockDim.x
    part = _ZERO
    level = t
    while level < m:
        part += fb[U(level0 + 16 * level) + U(text[U(j + level)])]
        level += T
    sums[t] = part
    cuda.syncthreads()
    acc = _ZERO
    if t == 0:
        for x in range(T):
            acc += sums[x]
    cuda.syncthreads()
    return acc


def block_thread_shared_bytes(tpb: int, windows: int) -> int:
    """fb_vec_rlt and the word-0 bit_vectors (uint64), the windows' hit counts (int32)."""
    return 8 * (tpb + windows) + 4 * windows


@lru_cache(maxsize=None)
def block_thread_kernel():
    @kernel_jit()
    def kernel(text, offsets, lo, hi, m, fb, valid, b, binv, mask, bias, rpw, C, tiles, out,
               per_tile, regular, counters, spill_cap, group_sums, group_shift, tile_base,
               tile_hits):
        t = cuda.threadIdx.x
        T = cuda.blockDim.x
        W = valid.shape[0]
        sums = cuda.shared.array(0, uint64)    # fb_vec_rlt [0, T) | word-0 sums [T, T + C)
        counts = cuda.shared.array(0, int32)   # the windows' hits from 2(T + C)
        scal = cuda.shared.array(_SCALARS, int64)
        c_at = 2 * (T + C)
        tile = cuda.blockIdx.x
        while tile < tiles:
            j0 = lo + tile * C
            cuda.syncthreads()  # the previous tile's hits are written
            if t == 0:
                tile_begin(offsets, j0, m, lo, hi, C, scal)
            cuda.syncthreads()
            run = int64(0)
            for i in range(C):  # one window after the other, all threads on its levels
                j = j0 + i
                hits = int64(0)
                if i < scal[_LIM] or window_ok(j, m, lo, hi, scal[_END], offsets):
                    for w in range(W):
                        acc = block_sum(text, j, fb, 16 * m * w, m, sums)
                        if t == 0:
                            hits += hit_count(acc, valid[w])
                            if w == 0:
                                sums[T + i] = acc
                if t == 0:
                    counts[c_at + i] = hits
                    run += hits
            if t == 0:  # thread 0 knows every count: it places the tile itself
                scal[_TILE_BASE] = tile_place(tile, run, per_tile, regular, counters, spill_cap,
                                              group_sums, group_shift, tile_base, tile_hits)
            cuda.syncthreads()
            base = scal[_TILE_BASE]
            if base >= 0:
                at = base
                for i in range(C):  # the windows with hits, in order (a uniform loop)
                    if counts[c_at + i] > 0:
                        if W == 1:
                            if t == 0:
                                at = emit_word(sums[T + i], valid[0], 0, b, binv, mask, bias,
                                               U(j0 + i - lo), out, at)
                        else:  # its words summed again, all threads on the levels
                            for w in range(W):
                                acc = block_sum(text, j0 + i, fb, 16 * m * w, m, sums)
                                if t == 0:
                                    at = emit_word(acc, valid[w], w * rpw, b, binv, mask, bias,
                                                   U(j0 + i - lo), out, at)
            tile += cuda.gridDim.x

    return kernel


# -- pair-tile -----------------------------------------------------------------------------
@cuda.jit(device=True, inline=True)
def tile_sums(lut, w, G, P, pieces, table, codes, q):
    """The bit_vectors of word w of a thread's four windows (pair codes from codes[q]): the
    word's pair look-up memory is staged in shared memory P pair levels at a time."""
    a0 = _ZERO
    a1 = _ZERO
    a2 = _ZERO
    a3 = _ZERO
    for piece in range(pieces):
        g0 = piece * P
        ng = imin(P, G - g0)
        stage(table, lut, (w * G + g0) * 256, ng * 256)
        for g in range(ng):
            row = U(256 * g)
            r = q + 2 * (g0 + g)
            a0 += table[row + U(codes[U(r)])]
            a1 += table[row + U(codes[U(r + 1)])]
            a2 += table[row + U(codes[U(r + 2)])]
            a3 += table[row + U(codes[U(r + 3)])]
    return a0, a1, a2, a3


def pair_tile_shared_bytes(tpb: int, m: int, piece: int) -> int:
    """The staged pair look-up memory, block_prefix's buffer, the pair codes."""
    return 8 * 256 * piece + 4 * prefix_entries(tpb) + 4 * tpb + m - 1


@lru_cache(maxsize=None)
def pair_tile_kernel(groups: int, one_word: bool):
    """``pair-tile`` for patterns of 2*groups - 1 or 2*groups symbols (the whole look-up
    memory of a word staged at once); 0: any length, staged ``piece`` pair levels at a time.
    ``one_word``: one word of counters (kept from the count to the writing of the hits)."""
    GG = groups
    ONE = one_word

    @kernel_jit()
    def kernel(text, offsets, lo, hi, m, lut, valid, b, binv, mask, bias, rpw, piece, out,
               per_tile, regular, counters, spill_cap, group_sums, group_shift, tile_base,
               tile_hits):
        t = cuda.threadIdx.x
        T = cuda.blockDim.x
        tile = cuda.blockIdx.x
        W = 1 if ONE else valid.shape[0]
        G = GG if GG > 0 else (m + 1) >> 1
        P = GG if GG > 0 else piece
        pieces = (G + P - 1) // P
        table = cuda.shared.array(0, uint64)   # [0, 256 P): a piece of the look-up memory
        buf = cuda.shared.array(0, int32)      # block_prefix's, from 512 P
        codes = cuda.shared.array(0, uint8)    # pair codes of the tile's text from byte q_at
        scal = cuda.shared.array(_SCALARS, int64)
        p_at = 512 * P
        q_at = 4 * (p_at + imax(T + 1, 33))
        j0 = lo + tile * 4 * T
        n = text.shape[0]
        i = t
        while i < 4 * T + m - 1:
            p = j0 + i
            c1 = text[p] if p < n else uint8(0)
            c2 = text[p + 1] if p + 1 < n else uint8(0)
            codes[q_at + i] = pair_code(c1, c2)
            i += T
        if t == 0:
            tile_begin(offsets, j0, m, lo, hi, 4 * T, scal)
        cuda.syncthreads()
        lim = scal[_LIM]
        tile_end = scal[_END]
        j = j0 + 4 * t
        ok0 = 4 * t < lim or window_ok(j, m, lo, hi, tile_end, offsets)
        ok1 = 4 * t + 1 < lim or window_ok(j + 1, m, lo, hi, tile_end, offsets)
        ok2 = 4 * t + 2 < lim or window_ok(j + 2, m, lo, hi, tile_end, offsets)
        ok3 = 4 * t + 3 < lim or window_ok(j + 3, m, lo, hi, tile_end, offsets)
        q = q_at + 4 * t
        n0 = int64(0)
        n1 = int64(0)
        n2 = int64(0)
        n3 = int64(0)
        a0 = _ZERO
        a1 = _ZERO
        a2 = _ZERO
        a3 = _ZERO
        for w in range(W):
            a0, a1, a2, a3 = tile_sums(lut, w, G, P, pieces, table, codes, q)
            vw = valid[w]
            if ok0:
                n0 += hit_count(a0, vw)
            if ok1:
                n1 += hit_count(a1, vw)
            if ok2:
                n2 += hit_count(a2, vw)
            if ok3:
                n3 += hit_count(a3, vw)
        hits = n0 + n1 + n2 + n3
        before, run = block_prefix(hits, buf[p_at:])
        base = tile_start(tile, run, per_tile, regular, counters, spill_cap, group_sums,
                          group_shift, tile_base, tile_hits, scal)
        if base >= 0:
            # Where each window's hits start: the four windows' hits follow one another.
            e0 = base + before
            e1 = e0 + n0
            e2 = e1 + n1
            e3 = e2 + n2
            window = U(j - lo)
            for w in range(W):
                if not ONE:  # the words' sums were not kept: again (every thread stages)
                    a0, a1, a2, a3 = tile_sums(lut, w, G, P, pieces, table, codes, q)
                if hits > 0:
                    vw = valid[w]
                    s0 = w * rpw
                    if ok0:
                        e0 = emit_word(a0, vw, s0, b, binv, mask, bias, window, out, e0)
                    if ok1:
                        e1 = emit_word(a1, vw, s0, b, binv, mask, bias, window + _ONE, out, e1)
                    if ok2:
                        e2 = emit_word(a2, vw, s0, b, binv, mask, bias, window + _TWO, out, e2)
                    if ok3:
                        e3 = emit_word(a3, vw, s0, b, binv, mask, bias, window + U(3), out, e3)

    return kernel


# -- hits in text order --------------------------------------------------------------------
@cuda.jit(device=True)
def inclusive_scan(buf, t, T):
    """buf[0:T] becomes its inclusive prefix sums (Hillis-Steele; every thread calls it)."""
    d = 1
    while d < T:
        cuda.syncthreads()
        x = buf[t - d] if t >= d else int64(0)
        cuda.syncthreads()
        buf[t] += x
        d <<= 1
    cuda.syncthreads()


#: Hits a lane of the ordering pass copies after one search for their tile.
ORDER_RUN = 8

#: A launch's row of the hit status: hits written so far, spill room asked for (nonzero: a
#: launch overflowed, and the launches after it write nothing), where the group's hits start.
_COUNT, _NEED, _BASE = range(3)


@kernel_jit()
def order_hits(tile_base, tile_hits, tiles, group_sums, found, lo, slot_code, pos, code, mis,
               status, counters, spill_cap):
    """Block (g, y) copies hits of the tiles [g T, (g + 1) T) from where they were placed to
    their place in text order, unpacked into the hit columns (window start, slot code
    2 * pattern + strand, mismatches, in whatever integer types the columns have), after
    the ``status[_COUNT]`` hits the launches before wrote from ``status[_BASE]`` on. A launch
    whose spill area overflowed (or that follows one that did) writes nothing. The block
    first adds up the hits of the groups before g (group_sums: where its group starts) and
    of its tiles (their ends, and where each tile's hits sit in ``found``) in shared memory.
    Then each team of up to 32 threads takes runs of ORDER_RUN * 32 consecutive hits, lane l
    hits l, l + 32, ... (coalesced): a lane finds the tile of its first hit by a binary
    search and walks on from there, one search per ORDER_RUN hits rather than one a hit. The
    gridDim.y blocks of a group share its runs."""
    if counters[0] > spill_cap or status[_NEED] != 0:
        return
    t = cuda.threadIdx.x
    T = cuda.blockDim.x
    g = cuda.blockIdx.x
    ends = cuda.shared.array(0, int64)   # [0, T): the tiles' ends (an inclusive scan)
    at = cuda.shared.array(0, int64)     # [T, 2T): hit h of tile a sits at found[at[T + a] + h]
    part = int64(0)
    i = t
    while i < g:
        part += group_sums[i]
        i += T
    ends[t] = part
    inclusive_scan(ends, t, T)
    dst = ends[T - 1] + status[_BASE] + status[_COUNT]
    cuda.syncthreads()
    e = g * T + t
    n = tile_hits[e] if e < tiles else int64(0)
    ends[t] = n
    inclusive_scan(ends, t, T)
    if e < tiles:
        at[T + t] = tile_base[e] - (ends[t] - n)
    cuda.syncthreads()
    total = ends[T - 1]
    L = imin(32, T)  # (T is a power of two)
    lane = t % L
    teams = T // L
    span = L * ORDER_RUN
    r = cuda.blockIdx.y * teams + t // L
    while r * span < total:
        h = r * span + lane
        a = 0
        z = T - 1
        while a < z:  # the first tile whose hits end after h
            mid = (a + z) >> 1
            if ends[U(mid)] > h:
                z = mid
            else:
                a = mid + 1
        for _ in range(ORDER_RUN):
            if h >= total:
                break
            while ends[U(a)] <= h:
                a += 1
            v = found[U(at[U(T + a)] + h)]
            d = U(dst + h)
            pos[d] = lo + int64(v >> _WINDOW_SHIFT)
            code[d] = slot_code[(v >> _SLOT_SHIFT) & _LOW16]
            mis[d] = int32(v & _LOW16)
            h += L
        r += teams * cuda.gridDim.y


@kernel_jit()
def finish_launch(counters, groups, spill_cap, status):
    """One block, after a launch's ordering pass: add its hits to ``status[_COUNT]``, or, when
    its spill area overflowed or an earlier launch's did, ask for room in ``status[_NEED]``
    (the most that spilled in one launch); then clear the counters for the next launch.
    Launches follow one another on one stream: no host round trip between them."""
    t = cuda.threadIdx.x
    T = cuda.blockDim.x
    sums = cuda.shared.array(0, int64)
    part = int64(0)
    i = t
    while i < groups:
        part += counters[1 + i]
        i += T
    sums[t] = part
    inclusive_scan(sums, t, T)
    spilled = counters[0]
    if t == 0:
        if spilled > spill_cap or status[_NEED] != 0:
            status[_NEED] = imax(imax(status[_NEED], spilled), int64(1))
        else:
            status[_COUNT] += sums[T - 1]
    cuda.syncthreads()
    i = t
    while i <= groups:
        counters[i] = 0
        i += T


@cuda.jit(device=True, inline=True)
def spread_nibbles(x):
    """The 4 nibbles of x (16 bits) as the 4 bytes of a word, lowest first."""
    x = uint32(x)
    return uint32((x & uint32(0xF)) | ((x & uint32(0xF0)) << uint32(4))
                  | ((x & uint32(0xF00)) << uint32(8)) | ((x & uint32(0xF000)) << uint32(12)))


@kernel_jit()
def unpack_text(packed32, text32, first, last):
    """Words [first, last) of a packed text (8 codes a word, low nibble first) into the
    words 2w and 2w + 1 of the text (one code a byte): the upload takes half the bytes."""
    w = first + cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if w < last:
        p = packed32[w]
        text32[2 * w] = spread_nibbles(p & uint32(0xFFFF))
        text32[2 * w + 1] = spread_nibbles(p >> uint32(16))


@cuda.jit(device=True, inline=True)
def lower_bound(pos, code, first, n, p, c):
    """How many of the n hits from ``first`` (sorted by position, then code) come before
    (p, c)."""
    a = int64(0)
    z = n
    while a < z:
        mid = (a + z) >> 1
        q = pos[first + mid]
        if q < p or (q == p and code[first + mid] < c):
            a = mid + 1
        else:
            z = mid
    return a


@kernel_jit()
def merge_groups(src_pos, src_code, src_mis, status, total, pos, code, mis):
    """The hits of several length groups, each in text order from ``status[g, _BASE]``
    (``status[g, _COUNT]`` of them), merged into one text order (position, then code: the
    in-memory order of the CPU backends) in the columns from 0: each hit's place is its
    index in its group plus the hits of the other groups before it (a binary search in
    each)."""
    i = int64(cuda.blockIdx.x) * cuda.blockDim.x + cuda.threadIdx.x
    if i >= total:
        return
    G = status.shape[0]
    g = 0
    j = i
    while j >= status[g, _COUNT]:
        j -= status[g, _COUNT]
        g += 1
    at = status[g, _BASE] + j
    p = src_pos[at]
    c = src_code[at]
    d = j
    for h in range(G):
        if h != g:
            d += lower_bound(src_pos, src_code, status[h, _BASE], status[h, _COUNT], p, c)
    pos[d] = p
    code[d] = c
    mis[d] = src_mis[at]


#: Consecutive hits a thread of the counting pass takes.
TALLY_RUN = 32


@kernel_jit()
def tally_hits(pos, code, n, offsets, shifts, bin_starts, pattern_hits, bins, shared_patterns):
    """Count hits 0..n-1 (in text order) per pattern into ``pattern_hits`` and per bin of
    their record's hit-density profile into ``bins`` (record r's bins start at
    ``bin_starts[r]`` and are ``1 << shifts[r]`` positions wide), as the CPU's tally does.
    A thread takes TALLY_RUN consecutive hits: they come in runs of one bin, each added with
    one atomic. Per-pattern counts go through a block histogram in shared memory when
    ``shared_patterns`` (few patterns)."""
    t = cuda.threadIdx.x
    T = cuda.blockDim.x
    hist = cuda.shared.array(0, int32)
    P = pattern_hits.shape[0]
    if shared_patterns:
        i = t
        while i < P:
            hist[i] = 0
            i += T
        cuda.syncthreads()
    first = (int64(cuda.blockIdx.x) * T + t) * TALLY_RUN
    if first < n:
        last = imin(n, first + TALLY_RUN)
        p = int64(pos[first])
        a = 0
        z = offsets.shape[0] - 1
        while z - a > 1:  # the record of the first hit
            mid = (a + z) >> 1
            if offsets[mid] <= p:
                a = mid
            else:
                z = mid
        r = a
        rec_lo = offsets[r]
        rec_hi = offsets[r + 1]
        shift = shifts[r]
        b0 = bin_starts[r]
        current = int64(-1)
        run = int64(0)
        for h in range(first, last):
            p = int64(pos[h])
            while p >= rec_hi:
                r += 1
                rec_lo = offsets[r]
                rec_hi = offsets[r + 1]
                shift = shifts[r]
                b0 = bin_starts[r]
            b = b0 + ((p - rec_lo) >> shift)
            if b != current:
                if run > 0:
                    cuda.atomic.add(bins, current, run)
                current = b
                run = 0
            run += 1
            pc = int64(code[h]) >> 1
            if shared_patterns:
                cuda.atomic.add(hist, pc, 1)
            else:
                cuda.atomic.add(pattern_hits, pc, int64(1))
        if run > 0:
            cuda.atomic.add(bins, current, run)
    if shared_patterns:
        cuda.syncthreads()
        i = t
        while i < P:
            if hist[i] != 0:
                cuda.atomic.add(pattern_hits, i, int64(hist[i]))
            i += T


@kernel_jit()
def hold(microseconds):
    """Keep the GPU busy for about that long: a timing queues it first, so that the CUDA
    events around the launches it measures time the kernels, not numba's launch overhead."""
    if cuda.threadIdx.x == 0:
        for _ in range(microseconds):
            cuda.nanosleep(1000)
