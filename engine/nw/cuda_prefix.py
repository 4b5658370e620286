"""nw ``prefix`` on CUDA: Aluru's row-wise prefix-max scan (Dicker et al., sec. 2.2).

In W = H - (i + j) * gap (see engine/nw/cuda_diagonal.py) a row needs no shifting:

    X[j] = max(W[i-1][j], W[i-1][j-1] + s(a_i, b_j) - 2 * gap)   (independent cells)
    W[i][j] = max(W[i][0], X[1], ..., X[j])                        (a prefix maximum)

Thread t of a block owns a segment of ``seg`` consecutive columns (Aluru's processor),
stored striped (column t*seg + k at k*tpb + t) so that step k of every thread is one
coalesced access. For each row a thread computes X and the running maximum of its
segment; a block-wide scan of the segment maxima gives each thread its carry (the
maximum of everything to its left). Raising a segment to its carry is folded into the
next row's pass, as on the CPU: the stored row holds segment scans, and the true value
is max(stored, carry).

- **one-block**: one block scans whole rows.
- **multi-block**: block b owns a column segment of tpb * seg columns for all rows (one
  persistent launch). Its carry-in for row i is W[i][first column - 1], the last true
  value of block b-1 on that row, which block b-1 publishes in global memory (an
  atomic exchange over a sentinel; the reader polls with atomics, so no stale cache
  line is ever read). The read for row i is issued before the row's pass, so once
  block b-1 runs ahead it costs nothing; blocks take segments by ticket, so a block
  only waits for one that is running or done.
"""

from __future__ import annotations

from functools import lru_cache

from numba import cuda, int32
from numba import uint64 as U

from engine.gpu import imax, imin, kernel_jit

#: Below every W the kernels see (engine/nw/cuda.py keeps |W| < 2^30).
NEG = -(1 << 31) + 1
#: An edge value not published yet.
SENTINEL = -(1 << 31)


def shared_bytes(tpb: int) -> int:
    """Dynamic shared memory: carries, last values, the scan's two buffers and two scalars
    (no static shared arrays: numba's simulator allocates those per thread without a
    lock, so two simulated threads could get different ones)."""
    return 4 * (4 * tpb + 2)


@cuda.jit(device=True)
def scan_max(sh, base, t, n, value):
    """Inclusive prefix maximum over threads 0..n-1 (Hillis-Steele, ping-pong buffers at
    ``base``); every thread calls it. Returns the offset where the scan now lies."""
    src = base
    dst = base + n
    sh[U(src + t)] = value
    cuda.syncthreads()
    off = 1
    while off < n:
        x = sh[U(src + t)]
        if t >= off:
            x = imax(x, sh[U(src + t - off)])
        sh[U(dst + t)] = x
        cuda.syncthreads()
        src, dst = dst, src
        off *= 2
    return src


@cuda.jit(device=True, inline=True)
def row_pass(prow, bs, first, t, tpb, cnt, ai, dg, cv, sm2, sx2):
    """X and the running maximum of one thread's segment (stored in place as the new row);
    ``dg`` is W[i-1] left of the segment, ``cv`` the segment's carry on row i-1."""
    run = int32(NEG)
    for k in range(cnt):
        idx = U(first + k * tpb + t)
        upv = imax(prow[idx], cv)
        x = imax(upv, int32(dg + (sm2 if (ai & bs[idx]) != 0 else sx2)))
        run = imax(run, x)
        prow[idx] = run
        dg = upv
    return run


@cuda.jit(device=True, inline=True)
def record_row(prow, first, t, tpb, cnt, col0, seg, carry, rs, col_slot, snap):
    """Store the sampled columns of a sampled row (true values) in the snapshot."""
    for k in range(cnt):
        cs = col_slot[U(col0 + t * seg + k + 1)]
        if cs >= 0:
            snap[rs, cs] = imax(prow[U(first + k * tpb + t)], carry)


@lru_cache(maxsize=None)
def one_block_kernel(snap_on: bool, registers: int = 255):
    """All rows of the tile in one block."""
    SNAP, CAP = snap_on, registers

    @kernel_jit(registers)
    def kernel(a, bs, h, w, seg, prow, left, sm2, sx2, right, row_slot, col_slot, snap):
        """``prow`` (striped) holds W on row 0 on entry and W on row h on exit."""
        if CAP == 0:
            return
        t = cuda.threadIdx.x
        tpb = cuda.blockDim.x
        sh = cuda.shared.array(0, int32)  # carry [0, tpb) | last [tpb, 2 tpb) | scan [2 tpb, 4 tpb)
        nseg = (w + seg - 1) // seg
        cnt = imax(0, imin(seg, w - t * seg))
        sh[U(t)] = NEG
        if cnt > 0:
            sh[U(tpb + t)] = prow[U((cnt - 1) * tpb + t)]
        cuda.syncthreads()
        for i in range(1, h + 1):
            ai = int32(a[U(i - 1)])
            dg = left[U(i - 1)] if t == 0 else sh[U(tpb + t - 1)]
            run = row_pass(prow, bs, 0, t, tpb, cnt, ai, dg, sh[U(t)], sm2, sx2)
            res = scan_max(sh, 2 * tpb, t, tpb, run)
            carry = left[U(i)]
            if t > 0:
                carry = imax(carry, sh[U(res + t - 1)])
            sh[U(t)] = carry
            if cnt > 0:
                lastv = imax(run, carry)
                sh[U(tpb + t)] = lastv
                if t == nseg - 1:
                    right[U(i)] = lastv
            if SNAP:
                rs = row_slot[U(i)]
                if rs >= 0:
                    record_row(prow, 0, t, tpb, cnt, 0, seg, carry, rs, col_slot, snap)
            cuda.syncthreads()
        carry = sh[U(t)]
        for k in range(cnt):
            idx = U(k * tpb + t)
            prow[idx] = imax(prow[idx], carry)

    return kernel


@lru_cache(maxsize=None)
def multi_block_kernel(snap_on: bool, registers: int = 255):
    """Rows g0+1..g1 of the tile, one column segment per block."""
    SNAP, CAP = snap_on, registers

    @kernel_jit(registers)
    def kernel(a, bs, g0, g1, w, seg, prow, top, left, edge, ticket, sm2, sx2, right, row_slot,
               col_slot, snap):
        """``prow`` (striped per block) holds W on row g0 on entry and on row g1 on exit;
        ``top`` is W on row g0 in column order. Block b publishes the true value of its
        last column on row g0 + r at edge[b * (g1 - g0) + r - 1] (SENTINEL before)."""
        if CAP == 0:
            return
        t = cuda.threadIdx.x
        tpb = cuda.blockDim.x
        # carry [0, tpb) | last [tpb, 2 tpb) | scan [2 tpb, 4 tpb) | this block's segment |
        # the row's carry-in
        sh = cuda.shared.array(0, int32)
        o_seg = U(4 * tpb)
        o_cin = U(4 * tpb + 1)
        if t == 0:
            sh[o_seg] = cuda.atomic.add(ticket, 0, 1)
        cuda.syncthreads()
        b = sh[o_seg]
        sb = tpb * seg
        nb = (w + sb - 1) // sb
        if b >= nb:
            return
        c0 = b * sb                          # the block's columns are c0+1 .. c0+sb
        rows = g1 - g0
        nseg = imin(tpb, (w - c0 + seg - 1) // seg)
        cnt = imax(0, imin(seg, w - c0 - t * seg))
        sh[U(t)] = NEG
        if cnt > 0:
            sh[U(tpb + t)] = prow[U(c0 + (cnt - 1) * tpb + t)]
        bdiag = top[U(c0)] if b > 0 else left[U(g0)]   # W[i-1][c0], kept by thread 0
        mine = U(b * rows)
        theirs = U((b - 1) * rows) if b > 0 else U(0)
        cuda.syncthreads()
        for r in range(1, rows + 1):
            i = g0 + r
            ai = int32(a[U(i - 1)])
            pre = int32(SENTINEL)
            if t == 0 and b > 0:
                pre = cuda.atomic.max(edge, theirs + U(r - 1), SENTINEL)   # W[i][c0], if ready
            dg = bdiag if t == 0 else sh[U(tpb + t - 1)]
            run = row_pass(prow, bs, c0, t, tpb, cnt, ai, dg, sh[U(t)], sm2, sx2)
            res = scan_max(sh, 2 * tpb, t, tpb, run)
            if t == 0:
                if b == 0:
                    cin = left[U(i)]
                else:
                    cin = pre
                    while cin == SENTINEL:
                        cin = cuda.atomic.max(edge, theirs + U(r - 1), SENTINEL)
                sh[o_cin] = cin
                bdiag = cin
            cuda.syncthreads()
            carry = sh[o_cin]
            if t > 0:
                carry = imax(carry, sh[U(res + t - 1)])
            sh[U(t)] = carry
            if cnt > 0:
                lastv = imax(run, carry)
                sh[U(tpb + t)] = lastv
                if t == nseg - 1:
                    if b < nb - 1:
                        cuda.atomic.exch(edge, mine + U(r - 1), lastv)
                    else:
                        right[U(i)] = lastv
            if SNAP:
                rs = row_slot[U(i)]
                if rs >= 0:
                    record_row(prow, c0, t, tpb, cnt, c0, seg, carry, rs, col_slot, snap)
            cuda.syncthreads()
        carry = sh[U(t)]
        for k in range(cnt):
            idx = U(c0 + k * tpb + t)
            prow[idx] = imax(prow[idx], carry)

    return kernel


@lru_cache(maxsize=None)
def fill_kernel(registers: int = 255):
    """arr[:] = value (the edge buffers start at SENTINEL)."""
    CAP = registers

    @kernel_jit(registers)
    def kernel(arr, value):
        if CAP == 0:
            return
        for x in range(cuda.grid(1), arr.shape[0], cuda.gridsize(1)):
            arr[x] = value

    return kernel
