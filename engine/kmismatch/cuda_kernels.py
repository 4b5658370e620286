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
  shared memory (and the look-up memory, when it fits). Each thread takes 8
  consecutive windows: symbol p of their 7 + m symbols adds level p - i to
  window i, so each symbol is read once and, in a kernel compiled for its m,
  every look-up has a constant offset; the record checks and the hit
  bookkeeping run once per 8 windows.
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
up their hit counts (``block_prefix``: warp shuffles, then warp 0 over the
warps' sums) and write their hits, packed as ``window << 32 | slot << 16 |
mismatches``, in window then slot order from the region's start. A tile that
finds more than its region holds takes room in a spill area after the regions
(an atomic add on a counter, rare); when the spill area is full it writes
nothing, but the counter still counts it, so the host knows the room needed and
runs the launch again. Tiles end in regions of different fill: ``scan_groups``
(with the tiles' counts summed per group of ordering blocks as they finish) and
``order_hits`` then copy each tile's hits to their place in text order,
unpacked into the columns the host fetches. numba's CUDA simulator, in which CI
runs these kernels, has no warp shuffles; there ``block_prefix`` lets one thread
add the counts up (every other line of the kernels is the same).

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
# surely count, the end of its first window's record.
_BASE, _LIM, _END = range(3)
_SCALARS = 3
#: s(c) of the pair layout in nibble c: s(A=1) = 0, s(C=2) = 1, s(G=4) = 14, s(T=8) = 15.
PAIR_SWIZZLE = 0xF000E0100
_SWIZZLE = np.uint64(PAIR_SWIZZLE)


# -- small helpers --------------------------------------------------------------------------
@cuda.jit(device=True, inline=True)
def lowest_bit(x):
    """Index of the lowest set bit of a nonzero uint64 (the popcount of the bits below it)."""
    return int64(cuda.popc((x & (~x + _ONE)) - _ONE))


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
def tile_begin(offsets, j0, m, hi, span, scal):
    """Thread 0, before the tile's first barrier: the end of the record of the tile's first
    window, and how many of the tile's first windows surely lie in [lo, hi) and in that
    record (the others are checked one by one, by ``window_ok``)."""
    end = record_end(offsets, j0)
    scal[_END] = end
    scal[_LIM] = imax(int64(0), imin(imin(hi, end - m + 1) - j0, span))


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
    ceil(2^16 / b) (exact for these small numbers)."""
    f = (((lowest_bit(hits) + 1) * binv) >> 16) - 1
    mis = ((acc >> U(f * b)) & mask) - bias
    return (window << _WINDOW_SHIFT) | (U(slot0 + f) << _SLOT_SHIFT) | mis


@cuda.jit(device=True, inline=True)
def emit_word(acc, valid_w, slot0, b, binv, mask, bias, window, out, at):
    """One thread writes the hits of one counter word of a window from out[at] on; returns
    the next index (kernels with several counter words)."""
    hits = valid_w & ~acc
    while hits != _ZERO:
        out[at] = packed_hit(window, hits, acc, slot0, b, binv, mask, bias)
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
        return int64(before), int64(total)
else:
    @cuda.jit(device=True)
    def block_prefix(c, buf):
        """(Hits before this thread's in the block, the block's hits); every thread calls it.
        Each warp adds up its lanes with shuffles, warp 0 the warps' sums (in buf[0:32])."""
        t = cuda.threadIdx.x
        T = cuda.blockDim.x
        lane = t & 31
        warp = t >> 5
        warps = (T + 31) >> 5
        live = imin(32, T - 32 * warp)  # lanes of this warp (the last one may be partial)
        mask = _FULL if live == 32 else uint32((1 << live) - 1)
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
        if warp == 0:
            v = buf[lane] if lane < warps else int32(0)
            d = 1
            while d < 32:
                y = cuda.shfl_up_sync(mask, v, d)
                if lane >= d:
                    v = int32(v + y)
                d <<= 1
            if lane < warps:
                buf[lane] = v
        cuda.syncthreads()
        before = x - int32(c) + (buf[warp - 1] if warp > 0 else int32(0))
        total = buf[warps - 1]
        cuda.syncthreads()  # buf is free again
        return int64(before), int64(total)


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
            tile_begin(offsets, j0, mm, hi, T, scal)
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
        if t == 0:
            scal[_BASE] = tile_place(tile, run, per_tile, regular, counters, spill_cap,
                                     group_sums, group_shift, tile_base, tile_hits)
        cuda.syncthreads()
        base = scal[_BASE]
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
def eight_count(a0, a1, a2, a3, a4, a5, a6, a7, vw, okm):
    """Hits of each of the 8 windows in one counter word (bit i of okm: window i counts)."""
    n0 = hit_count(a0, vw) if okm & 1 else int64(0)
    n1 = hit_count(a1, vw) if okm & 2 else int64(0)
    n2 = hit_count(a2, vw) if okm & 4 else int64(0)
    n3 = hit_count(a3, vw) if okm & 8 else int64(0)
    n4 = hit_count(a4, vw) if okm & 16 else int64(0)
    n5 = hit_count(a5, vw) if okm & 32 else int64(0)
    n6 = hit_count(a6, vw) if okm & 64 else int64(0)
    n7 = hit_count(a7, vw) if okm & 128 else int64(0)
    return n0, n1, n2, n3, n4, n5, n6, n7


@cuda.jit(device=True, inline=True)
def pick8(i, a0, a1, a2, a3, a4, a5, a6, a7):
    """a_i (selects, not a local array: the eight stay in registers)."""
    x = a0
    x = a1 if i == 1 else x
    x = a2 if i == 2 else x
    x = a3 if i == 3 else x
    x = a4 if i == 4 else x
    x = a5 if i == 5 else x
    x = a6 if i == 6 else x
    return a7 if i == 7 else x


def shared_mem_shared_bytes(tpb: int, m: int, words: int, table_staged: bool) -> int:
    """The staged look-up memory (uint64), block_prefix's buffer, the text chunk (the tile's
    SHARED_WINDOWS * tpb + m - 1 symbols, in whole 4-byte words)."""
    return ((128 * m * words if table_staged else 0) + 4 * prefix_entries(tpb)
            + 4 * ((SHARED_WINDOWS * tpb + m + 2) // 4))


@lru_cache(maxsize=None)
def shared_mem_kernel(levels: int, one_word: bool, table_staged: bool, cap: int = 255):
    """``shared-mem`` for patterns of length ``levels`` (0: any length); ``one_word``: one
    word of counters (kept from the count to the writing of the hits). A block stages its
    tile's text chunk in shared memory (realigned so that word x holds the tile's symbols
    4x to 4x + 3), and with ``table_staged`` the look-up memory too (16 fb-vectors of 128
    bytes a level: the 4 plain bases of a level fall in different banks, so a warp's
    look-ups never conflict on DNA; otherwise it is read from global memory). Each thread
    takes SHARED_WINDOWS consecutive windows, so that the record checks and the hit
    bookkeeping (block_prefix, three barriers) run once per 8 windows, and a tile that lies
    inside one record skips the per-window checks. ``cap``: at most that many registers a
    thread (the kernels of several counter words take more than a block of 1024 threads
    may have)."""
    M = levels
    ONE = one_word
    TS = table_staged
    V = SHARED_WINDOWS
    SPELL = 0 < levels <= 33

    @kernel_jit(cap)
    def kernel(text32, offsets, lo, hi, m, fb, valid, b, binv, mask, bias, rpw, out,
               per_tile, regular, counters, spill_cap, group_sums, group_shift, tile_base,
               tile_hits):
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
        j0 = lo + tile * span
        if t == 0:
            tile_begin(offsets, j0, mm, hi, span, scal)
        if TS:
            x = t
            while x < nt:
                lut[x] = fb[x]
                x += T
        # Word x of the chunk: text[j0 + 4x : j0 + 4x + 4], from two words of the text.
        w0 = j0 >> 2
        sh = U(8 * (j0 & 3))
        n32 = text32.shape[0]
        x = t
        while x < (span + mm + 2) >> 2:
            y = w0 + x
            a = U(text32[y]) if y < n32 else _ZERO
            z = U(text32[y + 1]) if y + 1 < n32 else _ZERO
            chunk[c_at + x] = uint32((a | (z << _WINDOW_SHIFT)) >> sh)
            x += T
        cuda.syncthreads()
        lim = scal[_LIM]
        j = j0 + V * t
        okm = 255
        if V * t + V > lim:  # a window of this thread may lie outside [lo, hi) or a record
            okm = 0
            for i in range(V):
                if V * t + i < lim or window_ok(j + i, mm, lo, hi, scal[_END], offsets):
                    okm |= 1 << i
        q = c_at + 2 * t
        n0 = n1 = n2 = n3 = n4 = n5 = n6 = n7 = int64(0)
        a0 = a1 = a2 = a3 = a4 = a5 = a6 = a7 = _ZERO
        for w in range(W):
            first = 16 * mm * w
            if TS:
                a0, a1, a2, a3, a4, a5, a6, a7 = eight_sums(lut, chunk, q, first, mm, SPELL)
            else:
                a0, a1, a2, a3, a4, a5, a6, a7 = eight_sums(fb, chunk, q, first, mm, SPELL)
            c0, c1, c2, c3, c4, c5, c6, c7 = eight_count(a0, a1, a2, a3, a4, a5, a6, a7,
                                                         valid[w], okm)
            n0 += c0
            n1 += c1
            n2 += c2
            n3 += c3
            n4 += c4
            n5 += c5
            n6 += c6
            n7 += c7
        hits = n0 + n1 + n2 + n3 + n4 + n5 + n6 + n7
        # The windows with hits (one word: their bit_vectors are still at hand).
        pend = ((n0 > 0) * 1 + (n1 > 0) * 2 + (n2 > 0) * 4 + (n3 > 0) * 8 + (n4 > 0) * 16
                + (n5 > 0) * 32 + (n6 > 0) * 64 + (n7 > 0) * 128)
        before, run = block_prefix(hits, buf[b_at:])
        if t == 0:
            scal[_BASE] = tile_place(tile, run, per_tile, regular, counters, spill_cap,
                                     group_sums, group_shift, tile_base, tile_hits)
        cuda.syncthreads()
        base = scal[_BASE]
        if ONE and hits > 0 and base >= 0:
            # One loop over the windows with hits, in order (hits are sparse: eight loops,
            # one a window, would each run as often as the warp's busiest lane needs).
            at = base + before
            vw = valid[0]
            while pend != 0:
                i = lowest_bit(U(pend))
                pend &= pend - 1
                acc = pick8(i, a0, a1, a2, a3, a4, a5, a6, a7)
                at = emit_word(acc, vw, 0, b, binv, mask, bias, U(j - lo + i), out, at)
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
            window = U(j - lo)
            for w in range(W):
                if not ONE:  # the words' sums were not kept: add them up again
                    if TS:
                        a0, a1, a2, a3, a4, a5, a6, a7 = eight_sums(lut, chunk, q,
                                                                    16 * mm * w, mm, SPELL)
                    else:
                        a0, a1, a2, a3, a4, a5, a6, a7 = eight_sums(fb, chunk, q,
                                                                    16 * mm * w, mm, SPELL)
                vw = valid[w]
                s0 = w * rpw
                if okm & 1:
                    e0 = emit_word(a0, vw, s0, b, binv, mask, bias, window, out, e0)
                if okm & 2:
                    e1 = emit_word(a1, vw, s0, b, binv, mask, bias, window + U(1), out, e1)
                if okm & 4:
                    e2 = emit_word(a2, vw, s0, b, binv, mask, bias, window + U(2), out, e2)
                if okm & 8:
                    e3 = emit_word(a3, vw, s0, b, binv, mask, bias, window + U(3), out, e3)
                if okm & 16:
                    e4 = emit_word(a4, vw, s0, b, binv, mask, bias, window + U(4), out, e4)
                if okm & 32:
                    e5 = emit_word(a5, vw, s0, b, binv, mask, bias, window + U(5), out, e5)
                if okm & 64:
                    e6 = emit_word(a6, vw, s0, b, binv, mask, bias, window + U(6), out, e6)
                if okm & 128:
                    e7 = emit_word(a7, vw, s0, b, binv, mask, bias, window + U(7), out, e7)

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
                tile_begin(offsets, j0, m, hi, C, scal)
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
                scal[_BASE] = tile_place(tile, run, per_tile, regular, counters, spill_cap,
                                         group_sums, group_shift, tile_base, tile_hits)
            cuda.syncthreads()
            base = scal[_BASE]
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
            tile_begin(offsets, j0, m, hi, 4 * T, scal)
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
        if t == 0:
            scal[_BASE] = tile_place(tile, run, per_tile, regular, counters, spill_cap,
                                     group_sums, group_shift, tile_base, tile_hits)
        cuda.syncthreads()
        base = scal[_BASE]
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


@kernel_jit()
def scan_groups(group_sums, n, counters):
    """group_sums[0:n] becomes its exclusive prefix sums, counters[1] their total (one
    block, any n)."""
    t = cuda.threadIdx.x
    T = cuda.blockDim.x
    buf = cuda.shared.array(0, int64)
    per = (n + T - 1) // T
    a = t * per
    z = imin(n, a + per)
    part = int64(0)
    for i in range(a, z):
        part += group_sums[i]
    buf[t] = part
    inclusive_scan(buf, t, T)
    run = buf[t] - part
    for i in range(a, z):
        c = group_sums[i]
        group_sums[i] = run
        run += c
    if t == T - 1:
        counters[1] = buf[t]


@kernel_jit()
def order_hits(tile_base, tile_hits, tiles, group_sums, found, lo, slot_code, pos, code, mis):
    """Block (g, y) copies the hits of tiles [g T, (g + 1) T) from where they were placed to
    their place in text order (group_sums[g] holds where its group starts), unpacked:
    window start, slot code (2 * pattern + strand), mismatches. The gridDim.y blocks of a
    group share its hits (many when tiles are large), so that a thread copies only a few."""
    t = cuda.threadIdx.x
    T = cuda.blockDim.x
    g = cuda.blockIdx.x
    ends = cuda.shared.array(0, int64)
    e = g * T + t
    ends[t] = tile_hits[e] if e < tiles else int64(0)
    inclusive_scan(ends, t, T)
    dst = group_sums[g]
    h = t + cuda.blockIdx.y * T
    while h < ends[T - 1]:
        a = 0
        z = T - 1
        while a < z:  # the first tile whose hits end after h
            mid = (a + z) >> 1
            if ends[mid] > h:
                z = mid
            else:
                a = mid + 1
        first = ends[a - 1] if a > 0 else int64(0)
        v = found[tile_base[g * T + a] + h - first]
        pos[dst + h] = lo + int64(v >> _WINDOW_SHIFT)
        code[dst + h] = slot_code[(v >> _SLOT_SHIFT) & _LOW16]
        mis[dst + h] = int32(v & _LOW16)
        h += T * cuda.gridDim.y


@kernel_jit()
def hold(microseconds):
    """Keep the GPU busy for about that long: a timing queues it first, so that the CUDA
    events around the launches it measures time the kernels, not numba's launch overhead."""
    if cuda.threadIdx.x == 0:
        for _ in range(microseconds):
            cuda.nanosleep(1000)
