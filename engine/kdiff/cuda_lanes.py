"""kdiff ``bitparallel`` on CUDA, first stage: one 32-bit word per start.

At small k most candidates are at most 32 long, so one 32-bit word (the GPU's native
integer width) holds every row that matters. A block takes ``tpb x R`` starts on one
background chunk: the starts' match words go to shared memory once (``peq[s, lane]``,
consecutive lanes in consecutive banks), every thread advances R starts per column
(their chains are independent, so they overlap in the pipeline) and all threads read
the same background symbol (a broadcast). Per column a start costs the Myers step and
the D[c+1] bookkeeping of ``cpu_lanes`` (shifts and masks, no popcount): Ukkonen's
bound lets c grow by at most one per column.

**Chunks.** A chunk owning columns [s, e) starts its DP ``32 + K + 1`` columns
earlier (never before its record): an occurrence of a prefix of length L <= 32 with
at most K edits spans at most L + K columns, so the chunk owning its end sees it
whole. c(r) is the atomic max over the chunks, exact when below 32. A start whose c
reaches 32 while its suffix is longer has outgrown the word: the host hands it to the
blocked tiers of ``cuda_bitparallel`` (which start from scratch; such starts are few
at small k).

The word operations keep 32 bits (numba would widen uint32 arithmetic to 64 bits,
two instructions each on the GPU): ``engine.bitops``' intrinsics, or plain numpy
uint32 arithmetic under the CUDA simulator, which runs kernels as Python.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from numba import cuda, int32, int64, uint32

from engine import config
from engine.gpu import SIMULATOR, imin, kernel_jit

WORD = 32

if SIMULATOR:
    _M = 0xFFFFFFFF

    def _u(x):
        return np.uint32(int(x) & _M)

    def w_add(a, b): return _u(int(a) + int(b))
    def w_sub(a, b): return _u(int(a) - int(b))
    def w_and(a, b): return _u(int(a) & int(b))
    def w_or(a, b): return _u(int(a) | int(b))
    def w_xor(a, b): return _u(int(a) ^ int(b))
    def w_shl(a, b): return _u(int(a) << int(b))
    def w_shr(a, b): return _u(int(a) >> int(b))
    def w_not(a): return _u(~int(a))
    def w_le(a, b): return int(a) <= int(b)
    def w_lt(a, b): return int(a) < int(b)
else:
    from engine.bitops import w_add, w_and, w_le, w_lt, w_not, w_or, w_shl, w_shr, w_sub, w_xor


@kernel_jit()
def match_table32_kernel(alpha, table):
    """table[s, p] = bits i < 32 with alpha[p+i] & s != 0."""
    m = alpha.shape[0]
    idx = cuda.grid(1)
    if idx < 16 * m:
        s = idx // m
        p = idx - s * m
        w = uint32(0)
        for i in range(imin(WORD, m - p)):
            if alpha[p + i] & s:
                w |= uint32(1) << uint32(i)
        table[s, p] = w


def overlap(K: int) -> int:
    """Columns a chunk's DP starts before the columns it owns."""
    return WORD + K + 1


@lru_cache(maxsize=None)
def lanes_kernel(per_thread: int, tpb: int, registers: int = 255):
    """The stage's kernel for ``per_thread`` starts a thread and blocks of ``tpb``."""
    R = per_thread
    SPAN = tpb * R
    SHARED = 16 * SPAN  # a compile-time constant: the shared array's size
    CAP = registers

    @kernel_jit(registers)
    def lanes32(table, beta, rs, nr, m_end, K, chunk_lo, chunk_hi, nrb, out_c, counters):
        # CAP and SPAN in the closure: numba's disk cache keys on them.
        if CAP == 0 or SPAN == 0:
            return
        t = cuda.threadIdx.x
        chunk = cuda.blockIdx.x // nrb
        base = (cuda.blockIdx.x - chunk * nrb) * SPAN
        peq = cuda.shared.array(SHARED, uint32)
        for i in range(t, SHARED, tpb):
            s = i // SPAN
            q = base + i - s * SPAN
            peq[i] = table[s, rs[q]] if q < nr else uint32(0)
        cuda.syncthreads()
        one = uint32(1)
        zero = uint32(0)
        full = w_not(zero)
        mask = uint32(WORD - 1)
        kk = uint32(K)
        pv = cuda.local.array(R, uint32)
        mv = cuda.local.array(R, uint32)
        c = cuda.local.array(R, uint32)
        dc = cuda.local.array(R, uint32)
        lim = cuda.local.array(R, uint32)
        for i in range(R):
            q = base + t + i * tpb
            mp = m_end - rs[q] if q < nr else 0
            lim[i] = uint32(imin(mp, WORD))
            c[i] = uint32(imin(K, mp))
            pv[i] = full
            mv[i] = zero
            dc[i] = w_add(c[i], one)  # D[i][first column - 1] = i
        j = chunk_lo[chunk]
        hi = chunk_hi[chunk]
        steps = int64(0)
        while j < hi:
            stop = imin(hi, j + 256)
            for jj in range(j, stop):
                row = int(beta[jj]) * SPAN + t
                for i in range(R):
                    eq = peq[row + i * tpb]
                    p = pv[i]
                    m = mv[i]
                    xv = w_or(eq, m)
                    xh = w_or(w_xor(w_add(w_and(eq, p), p), p), eq)
                    ph = w_or(m, w_not(w_or(xh, p)))
                    mh = w_and(p, xh)
                    cl = c[i]
                    d = w_sub(w_add(dc[i], w_and(w_shr(ph, cl), one)), w_and(w_shr(mh, cl), one))
                    ph = w_shl(ph, one)
                    mh = w_shl(mh, one)
                    pn = w_or(mh, w_not(w_or(xv, ph)))
                    mn = w_and(ph, xv)
                    hit = w_le(d, kk) & w_lt(cl, lim[i])
                    cn = w_add(cl, one) if hit else cl
                    sh = w_and(cn, mask)
                    vd = w_sub(w_add(d, w_and(w_shr(pn, sh), one)), w_and(w_shr(mn, sh), one))
                    dc[i] = vd if hit else d
                    c[i] = cn
                    pv[i] = pn
                    mv[i] = mn
            steps += (stop - j) * R
            j = stop
            live = False
            for i in range(R):
                live = live | w_lt(c[i], lim[i])
            if not live:
                break
        for i in range(R):
            q = base + t + i * tpb
            if q < nr:
                cuda.atomic.max(out_c, q, int32(c[i]))
        cuda.atomic.add(counters, 0, steps)

    return lanes32


class LanesStage:
    """Host side of the stage: the 32-bit match table of a target record, the chunk plan
    and the launch; returns c(r), with 32 meaning "outgrew the word"."""

    def __init__(self, dev, K: int):
        self.dev, self.K = dev, K
        self.R = config.KDIFF_CUDA_LANES_PER_THREAD
        self.tpb = config.KDIFF_CUDA_LANES_THREADS_PER_BLOCK
        self._alpha = self._table = None

    def kernels(self) -> list:
        return [lanes_kernel(self.R, self.tpb)]

    def _set_target(self, alpha: np.ndarray) -> None:
        if self._alpha is alpha:
            return
        m = alpha.shape[0]
        table = self.dev.empty((16, m), np.uint32, "the target's 32-bit match words")
        self.dev.launch(match_table32_kernel, (16 * m + 255) // 256, 256, 0, self.dev.target(alpha),
                        table)
        self._table, self._alpha = table, alpha

    def plan(self, nr: int) -> tuple[np.ndarray, np.ndarray]:
        """Chunks over every record, enough of them (with the blocks of starts) to fill the GPU."""
        offsets = self.dev.offsets
        v = overlap(self.K)
        span = self.tpb * self.R
        start_blocks = max(1, -(-nr // span))
        want_blocks = max(1, 4 * self.dev.resident_threads() // self.tpb)
        chunks = max(1, -(-want_blocks // start_blocks))
        length = max(config.KDIFF_CUDA_LANES_MIN_CHUNK, 8 * v, -(-int(offsets[-1]) // chunks))
        los, his = [], []
        for rec in range(len(offsets) - 1):
            a, b = int(offsets[rec]), int(offsets[rec + 1])
            starts = np.arange(a, b, length, dtype=np.int64)
            los.append(np.maximum(a, starts - v))
            his.append(np.minimum(b, starts + length))
        return np.concatenate(los).astype(np.int32), np.concatenate(his).astype(np.int32)

    def run(self, alpha: np.ndarray, rs: np.ndarray, counters: np.ndarray) -> np.ndarray:
        self._set_target(alpha)
        nr = rs.shape[0]
        lo, hi = self.plan(nr)
        span = self.tpb * self.R
        nrb = -(-nr // span)
        c0 = np.minimum(self.K, alpha.shape[0] - rs).astype(np.int32)
        rs_d, out_d, lo_d, hi_d = self.dev.upload_many(
            "the starts and chunk plan", rs.astype(np.int32), c0, lo, hi)
        steps_d = self.dev.zeros(2, np.int64, "counters")
        self.dev.launch(lanes_kernel(self.R, self.tpb), nrb * lo.shape[0], self.tpb, 0,
                        self._table, self.dev.beta, rs_d, nr, alpha.shape[0], self.K, lo_d, hi_d,
                        nrb, out_d, steps_d)
        got = self.dev.fetch(out_d).astype(np.int64)
        counters[0] += WORD * int(self.dev.fetch(steps_d)[0])
        return got

    def warm_up(self) -> None:
        alpha = np.array([1, 2, 4, 8, 1, 2, 4, 8], dtype=np.uint8)
        saved = self._alpha, self._table
        try:
            self._alpha = None
            self.run(alpha, np.arange(2, dtype=np.int64), np.zeros(2, dtype=np.int64))
        finally:
            self._alpha, self._table = saved
