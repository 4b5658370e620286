"""kdiff ``bitparallel`` on CUDA: one thread per (start r, background chunk).

The CPU kernel (cpu_bitparallel.py) walks the whole background once per r.
One thread per r would leave most of a GPU idle when alpha is a few thousand
long, and one long candidate would hold its thread for the whole run. Here the
background is cut into chunks, and each thread runs the same block recurrence
with Ukkonen's cut-off over one chunk for one r; c(r) is the atomic max over
its chunks.

**Overlap.** A chunk owning columns [s, e) starts its DP V columns earlier
(never before its record's start). An occurrence of a prefix of length L with
at most K = k-1 edits spans at most L+K columns, so the chunk owning its end
sees it whole when L+K <= V. A chunk's DP runs on a substring of the record,
so every cell it finds active is truly active (no false hits). Hence, with m
the max over chunks: if m < V-K then m = c(r) (had c(r) >= V-K, the prefix of
length V-K of that occurrence would have been seen whole, giving m >= V-K).
The host re-runs only the few r with m >= V-K, with a larger V.

**Words.** A thread keeps its live 64-row blocks in registers: a
``cuda.local.array`` of compile-time size indexed only inside loops of
constant trip count, which NVVM unrolls and promotes (ptxas reports no stack
frame). A thread that would need more words than it holds stops and flags its
r, which is re-run by a kernel with more words. The last tier keeps its words
in global memory sized to the longest suffix, interleaved per thread so that a
warp's accesses coalesce, and uses an overlap past the whole suffix, so it is
exact.

**Memory layout.** ``table[s, p]`` holds the 64-bit match word of alpha[p:p+64]
for IUPAC symbol s (bit i set when alpha[p+i] & s), so block b of start r is
``table[s, r + 64b]``. Consecutive threads take consecutive r of the same
chunk: their table reads are consecutive words (coalesced) and they read the
same background symbol (one broadcast).
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from numba import cuda, int32, int64, uint64
from numba import uint64 as U  # unsigned indices: numba then skips the negative-index wraparound

from engine import config
from engine.gpu import imin, kernel_jit, register_cap

_ONE = np.uint64(1)
_ALL = np.uint64(0xFFFFFFFFFFFFFFFF)
_ZERO = np.uint64(0)
_SIXTYTHREE = np.uint64(63)


@cuda.jit(device=True, inline=True)
def advance_block(pv, mv, eq, hin_p, hin_m):
    """One column of one 64-row block (Myers 1999, block form), as on the CPU."""
    xv = eq | mv
    eq = eq | hin_m
    xh = (((eq & pv) + pv) ^ pv) | eq
    ph = mv | ~(xh | pv)
    mh = pv & xh
    hout_p = ph >> _SIXTYTHREE
    hout_m = mh >> _SIXTYTHREE
    ph = (ph << _ONE) | hin_p
    mh = (mh << _ONE) | hin_m
    return mh | ~(xv | ph), ph & xv, hout_p, hout_m


@cuda.jit(device=True, inline=True)
def score_at(score, pv, mv, bit):
    """D at row ``bit`` (0..63) of a block whose bottom row scores ``score``."""
    if bit == 63:
        return score
    sh = uint64(bit + 1)
    return score - int32(cuda.popc(pv >> sh)) + int32(cuda.popc(mv >> sh))


@kernel_jit()
def match_table_kernel(alpha, table):
    """table[s, p] = bits i with alpha[p+i] & s != 0 (16 IUPAC sets x every position)."""
    m = alpha.shape[0]
    idx = cuda.grid(1)
    if idx < 16 * m:
        s = idx // m
        p = idx - s * m
        w = _ZERO
        for i in range(imin(64, m - p)):
            if alpha[p + i] & s:
                w |= _ONE << uint64(i)
        table[s, p] = w


@lru_cache(maxsize=None)
def chunk_kernel(words: int, registers: int = 255):
    """The chunk kernel holding up to ``words`` blocks per thread in registers
    (loops of constant trip count), or, for ``words == 0``, as many as the
    global arrays ``spv/smv/ssc`` of shape (capacity, threads) hold. Its
    registers are capped at ``registers``.
    """
    NB = max(1, words)
    REG = words > 0
    CAP = registers

    @kernel_jit(registers)
    def kernel(table, beta, rs, nr, m_end, K, chunk_lo, chunk_hi, out_c, overflow, counters,
               spv, smv, ssc):
        # CAP is never 0: naming it puts the register cap in the kernel's closure, which
        # numba's disk cache keys on (it ignores max_registers).
        if CAP == 0:
            return
        tid = cuda.grid(1)
        block_steps = cuda.shared.array(1, int64)
        if cuda.threadIdx.x == 0:
            block_steps[0] = 0
        cuda.syncthreads()
        steps = int64(0)
        if tid < nr * chunk_lo.shape[0]:
            q = tid % nr
            r = rs[q]
            mp = m_end - r
            Kc = int32(K)
            c = int32(imin(K, mp))
            if REG:
                pv = cuda.local.array(NB, uint64)
                mv = cuda.local.array(NB, uint64)
                sc = cuda.local.array(NB, int32)
            else:
                pv = spv[:, tid]
                mv = smv[:, tid]
                sc = ssc[:, tid]
            capacity = NB if REG else spv.shape[0]
            nblocks = (mp + 63) >> 6
            y = (Kc - 1) >> 6 if Kc >= 1 else 0
            for b in range(NB if REG else y + 1):
                if b <= y:
                    pv[b] = _ALL
                    mv[b] = _ZERO
                    sc[b] = int32(64 * (b + 1))
            over = False
            done = c >= mp
            pb = c >> 6      # the probe: row c+1 is bit (c & 63) of block c >> 6
            pbit = c & 63
            j = chunk_lo[tid // nr]
            hi = chunk_hi[tid // nr]
            while j < hi and not done:
                s = beta[U(j)]
                hp = _ZERO
                hm = _ZERO
                last = int32(0)
                keep = 0
                hit = False
                for b in range(NB if REG else y + 1):
                    if b <= y:
                        p, m, hp, hm = advance_block(pv[b], mv[b], table[s, U(r + (b << 6))], hp, hm)
                        pv[b] = p
                        mv[b] = m
                        v = sc[b] + int32(hp) - int32(hm)
                        sc[b] = v
                        last = v
                        if v < Kc + 64:
                            keep = b  # shrink: trailing blocks with bottom >= K+64 are inactive
                        if b == pb and score_at(v, p, m, pbit) <= Kc:
                            hit = True
                steps += y + 1
                # Grow: the first row of block y+1 can only become active from the bottom of
                # block y (diagonal from j-1, or vertical in j); most columns stop at `prev`.
                if y + 1 < nblocks:
                    prev = last - (int32(hp) - int32(hm))
                    if prev <= Kc or last < Kc:
                        nxt = y + 1
                        eq = table[s, U(r + (nxt << 6))]
                        delta = 0 if (eq & _ONE) else 1
                        if prev + delta <= Kc or last < Kc:
                            if nxt >= capacity:
                                over = True  # needs more words than this kernel holds
                            else:
                                p, m, hp2, hm2 = advance_block(_ALL, _ZERO, eq, hp, hm)
                                v = prev + 64 + int32(hp2) - int32(hm2)
                                for b in range(0 if REG else nxt, NB if REG else nxt + 1):
                                    # Selects, not conditional stores: LLVM would merge those
                                    # into one store at a computed index and keep the words in
                                    # local memory instead of registers.
                                    grow = b == nxt
                                    pv[b] = p if grow else pv[b]
                                    mv[b] = m if grow else mv[b]
                                    sc[b] = v if grow else sc[b]
                                if v < Kc + 64:
                                    keep = nxt
                                if nxt == pb and score_at(v, p, m, pbit) <= Kc:
                                    hit = True
                                steps += 1
                y = keep
                if hit:  # Ukkonen: at most one more row per column, and only row c+1
                    c += 1
                    pb = c >> 6
                    pbit = c & 63
                    done = c >= mp
                if over:
                    break
                j += 1
            cuda.atomic.max(out_c, q, c)
            if over:
                overflow[q] = 1
        cuda.atomic.add(block_steps, 0, steps)
        cuda.syncthreads()
        if cuda.threadIdx.x == 0:
            cuda.atomic.add(counters, 0, block_steps[0])

    return kernel


class BitparallelDriver:
    """Host side: tiers of word capacity and overlap, chunk plans, launches, re-runs.

    ``dev`` is the job's :class:`engine.kdiff.cuda.Device` (uploads, launches
    with clear errors, memory and occupancy figures).
    """

    def __init__(self, dev, K: int, counting: bool, word32: bool = False):
        self.dev, self.K, self.counting = dev, K, counting
        # The 32-bit first pass (engine/kdiff/cuda_lanes.py), when candidates can fit a word.
        if word32 and K < 32:
            from engine.kdiff.cuda_lanes import LanesStage

            self.lanes = LanesStage(dev, K)
        else:
            self.lanes = None
        y0 = (K - 1) // 64 if K >= 1 else 0
        # A tier needs room to grow past the y0+1 blocks every column starts with, and an
        # overlap that can settle some c >= K (c + K < overlap).
        self.tiers = [(w, v) for w, v in config.KDIFF_CUDA_BITPARALLEL_TIERS
                      if w >= y0 + 2 and v > 2 * K]
        # The first tier of a slice: at first one whose overlap fits c(r) up to about 4k
        # (typical c is near 2k), then adapted after each slice to the c(r) seen.
        self.first = next((i for i, (_, v) in enumerate(self.tiers) if v >= 4 * K + 64), 0)
        self.lengths = np.diff(dev.offsets)
        self._table = None
        self._alpha = None

    def kernels(self) -> list:
        """Every kernel a run may launch (the warm-up compiles them all)."""
        words = sorted({self._words(w) for w, _ in self.tiers} | {0})
        return [self._kernel(w) for w in words]  # (the word32 pass warms up its own)

    def _kernel(self, words: int):
        return chunk_kernel(words, register_cap(self.dev.threads_per_block))

    @staticmethod
    def _words(words: int) -> int:
        return words if words <= config.KDIFF_CUDA_REGISTER_WORDS else 0

    # -- planning -------------------------------------------------------------------
    def plan(self, overlap: int, nr: int):
        """(chunk_lo, chunk_hi, truncated) over every record: enough chunks to fill the
        GPU, each owning at least ratio x overlap columns; truncated when some window
        starts after its record's start (only then does the overlap matter)."""
        offsets = self.dev.offsets
        total = int(offsets[-1])
        want = max(1, self.dev.target_threads // max(1, nr))
        length = max(config.KDIFF_CUDA_MIN_CHUNK, config.KDIFF_CUDA_CHUNK_OVERLAP_RATIO * overlap,
                     math.ceil(total / want))
        los, his, firsts = [], [], []
        for rec in range(len(self.lengths)):
            a, b = int(offsets[rec]), int(offsets[rec + 1])
            starts = np.arange(a, b, length, dtype=np.int64)
            los.append(np.maximum(a, starts - overlap))
            his.append(np.minimum(b, starts + length))
            firsts.append(np.full(len(starts), a, dtype=np.int64))
        lo, hi = np.concatenate(los), np.concatenate(his)
        truncated = bool(np.any(lo > np.concatenate(firsts)))
        return lo.astype(np.int32), hi.astype(np.int32), truncated

    def min_slice(self) -> int:
        """Starts per slice that fill the GPU with chunks no shorter than the plan allows."""
        overlap = self.tiers[self.first][1] if self.tiers else 0
        shortest = max(config.KDIFF_CUDA_MIN_CHUNK, config.KDIFF_CUDA_CHUNK_OVERLAP_RATIO * overlap)
        chunks = max(len(self.lengths), int(self.dev.offsets[-1]) // max(1, shortest))
        return max(1, math.ceil(self.dev.target_threads / chunks))

    # -- running --------------------------------------------------------------------
    def _set_target(self, alpha: np.ndarray) -> None:
        """The match-word table of a target record, built on the device once per record."""
        if self._alpha is alpha:
            return
        m = alpha.shape[0]
        alpha_d = self.dev.target(alpha)
        table = self.dev.empty((16, m), np.uint64, "the target's match words")
        tpb = self.dev.threads_per_block
        self.dev.launch(match_table_kernel, (16 * m + tpb - 1) // tpb, tpb, 0, alpha_d, table)
        self._table, self._alpha = table, alpha

    def run(self, alpha: np.ndarray, rs: np.ndarray, counters: np.ndarray) -> np.ndarray:
        """c(r) for every r in ``rs``, settled through the tiers (None when cancelled)."""
        self._set_target(alpha)
        K, m_end = self.K, alpha.shape[0]
        mps = m_end - rs
        c = np.minimum(K, mps).astype(np.int32)
        pending = np.arange(len(rs))
        if self.lanes is not None:
            from engine.kdiff.cuda_lanes import WORD

            cells0 = int(counters[0])
            c[:] = self.lanes.run(alpha, rs, counters)
            if self.counting:
                counters[1] += int(counters[0]) - cells0  # one comparison per cell, as below
            pending = np.flatnonzero((c >= WORD) & (mps > WORD))  # outgrew the word
            c[pending] = np.minimum(K, mps[pending])
            if not len(pending):
                return c.astype(np.int64)
        for index in range(self.first, len(self.tiers)):
            if self.dev.cancelled():
                return None
            words, overlap = self.tiers[index]
            got, over, truncated = self._launch(rs[pending], c[pending], m_end, words, overlap,
                                                counters)
            c[pending] = got
            unsure = over | (truncated & (got < mps[pending]) & (got + K >= overlap))
            pending = pending[unsure]
            if not len(pending):
                break
        if len(pending):
            if self.dev.cancelled():
                return None
            # Exact tier: words for the longest suffix, an overlap past it, words in global memory.
            longest = int(mps[pending].max())
            got, _, _ = self._launch(rs[pending], c[pending], m_end, (longest + 63) // 64 + 1,
                                     longest + K + 1, counters, exact=True)
            c[pending] = got
        self._adapt(c, mps)
        return c.astype(np.int64)

    def _adapt(self, c, mps) -> None:
        """Start the next slice at the first tier that would have settled nearly every r."""
        for index, (_, overlap) in enumerate(self.tiers):
            unsure = float(np.mean((c < mps) & (c + self.K >= overlap))) if len(c) else 0.0
            if unsure <= config.KDIFF_CUDA_RERUN_FRACTION:
                self.first = index
                return
        self.first = max(0, len(self.tiers) - 1)

    def _launch(self, rs, c0, m_end, words, overlap, counters, exact=False):
        """One tier over ``rs``; batched so that words kept in global memory fit the budget."""
        nr = len(rs)
        lo, hi, truncated = self.plan(overlap, nr)
        per_r = len(lo)
        kernel_words = 0 if exact else self._words(words)
        if kernel_words:
            group = nr
        else:
            per_thread = words * (8 + 8 + 4)
            group = max(1, self.dev.scratch_budget() // max(1, per_thread * per_r))
        got = np.empty(nr, dtype=np.int32)
        over = np.zeros(nr, dtype=bool)
        kernel = self._kernel(kernel_words)
        lo_d = self.dev.upload(lo, "the chunk plan")
        hi_d = self.dev.upload(hi, "the chunk plan")
        tpb = self.dev.threads_per_block
        for start in range(0, nr, group):
            part = slice(start, min(nr, start + group))
            n_part = part.stop - part.start
            threads = n_part * per_r
            rs_d = self.dev.upload(rs[part].astype(np.int32), "start positions")
            out_d = self.dev.upload(c0[part].astype(np.int32), "results")
            over_d = self.dev.zeros(n_part, np.int32, "overflow flags")
            if kernel_words:
                spv = smv = self.dev.zeros((1, 1), np.uint64, "scratch")
                ssc = self.dev.zeros((1, 1), np.int32, "scratch")
            else:
                what = f"{words} words for each of {threads} chunk threads"
                spv = self.dev.empty((words, threads), np.uint64, what)
                smv = self.dev.empty((words, threads), np.uint64, what)
                ssc = self.dev.empty((words, threads), np.int32, what)
            steps_d = self.dev.zeros(2, np.int64, "counters")
            blocks = (threads + tpb - 1) // tpb
            self.dev.launch(kernel, blocks, tpb, 0, self._table, self.dev.beta, rs_d, n_part,
                            m_end, self.K, lo_d, hi_d, out_d, over_d, steps_d, spv, smv, ssc)
            got[part] = self.dev.fetch(out_d)
            over[part] = self.dev.fetch(over_d) != 0
            cells = 64 * int(self.dev.fetch(steps_d)[0])
            counters[0] += cells
            if self.counting:
                counters[1] += cells  # 64 symbol comparisons per word operation, as on the CPU
        return got, over, truncated

    def warm_up(self) -> None:
        """Compile every kernel of the run on a tiny input."""
        if self.lanes is not None:
            self.lanes.warm_up()
        alpha = np.array([1, 2, 4, 8, 1, 2, 4, 8], dtype=np.uint8)
        table = self.dev.empty((16, alpha.shape[0]), np.uint64, "warm-up")
        tpb = self.dev.threads_per_block
        self.dev.launch(match_table_kernel, (16 * alpha.shape[0] + tpb - 1) // tpb, tpb, 0,
                        self.dev.upload(alpha, "warm-up"), table)
        beta = self.dev.upload(np.array([1, 2, 4, 8, 8], dtype=np.uint8), "warm-up")
        one = self.dev.upload(np.zeros(1, dtype=np.int32), "warm-up")
        lo = self.dev.upload(np.zeros(1, dtype=np.int32), "warm-up")
        hi = self.dev.upload(np.full(1, 5, dtype=np.int32), "warm-up")
        for kernel in self.kernels():
            spv = smv = self.dev.zeros((2, 1), np.uint64, "warm-up")
            ssc = self.dev.zeros((2, 1), np.int32, "warm-up")
            out = self.dev.zeros(1, np.int32, "warm-up")
            self.dev.launch(kernel, 1, tpb, 0, table, beta, one, 1, alpha.shape[0], 1, lo, hi, out,
                            self.dev.zeros(1, np.int32, "warm-up"), self.dev.zeros(2, np.int64, "warm-up"),
                            spv, smv, ssc)
            self.dev.fetch(out)
