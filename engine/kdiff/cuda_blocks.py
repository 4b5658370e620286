"""kdiff ``conventional`` and ``alternative`` on CUDA: the seed study's designs
(Feuser and Moreano 2018, sec. 4).

Both give one matrix (one start r) to one block, whose threads compute a wave
of cells at once; more starts than one launch should hold run in batches (see
engine/kdiff/cuda.py). The flags are compile-time constants, so each
combination is its own kernel. Shared by both:

- ``opt3``: each thread keeps its best row in its own shared slot, reduced by a
  tree at the end; without it every candidate row goes through an atomic max on
  the block's one shared result.
- cells and comparisons are counted per thread and added once per block.

**conventional** (matrix D; threads on the cells of an anti-diagonal):

- base (no ``opt4``): the whole matrix by anti-diagonals, three anti-diagonals
  per block in global memory. opt1 cannot apply (it needs whole rows).
- ``opt4``: rectangular tiles, stripes of tpb rows swept by anti-diagonals:
  thread t owns row i0+t+1 and meets column j = s-t+1 at step s; its up and
  diagonal neighbours come from thread t-1 through a double-buffered shared
  array, its left neighbour stays in a register. The stripe's bottom row is
  saved in global memory (O(n), the study's shaded cells) as the next stripe's
  top row.
- ``opt1`` (needs opt4): checked on those saved cells. When the saved row
  holds no value <= k-1, no later row can (row minima never decrease), so the
  remaining stripes are skipped.
- ``opt5`` (needs opt4): the stripe's alpha segment is prefetched to shared
  memory; without it every cell reads its alpha symbol from global memory.

**alternative** (matrix L; threads on the cells of a column):

- base (no ``opt4``): column e sweeps diagonals -e..n in strides of the block
  size; the two columns of L live in global memory (one pair per block).
- ``opt4``: parallelogram tiles. Thread t of tile T handles diagonal
  T*tpb + t - e in column e, so L[d+1,e-1], L[d,e-1] and L[d-1,e-1] come from
  threads t, t-1 and t-2 of the column before, exchanged through shared
  memory. Threads 0 and 1 take their missing neighbours from the previous
  tile's last two threads, which are kept per column in shared memory (the
  O(k) carried state), double-buffered by tile parity.
- ``opt5``: alpha[r : r + P_alpha] is prefetched to shared memory once, with
  P_alpha = ceil(c*k / tpb) * tpb (c: the prefetch factor).
- ``opt6`` (needs opt4): a ring of P_beta = P_alpha + tpb background symbols
  holds the window [T*tpb, T*tpb + P_beta) of tile T; each tile loads only its
  tpb new symbols. Rows on a diagonal grow with the edits (L[d,e] >= e), so a
  tile's reads start at T*tpb; reads outside the window go to global memory
  (the study's speculative prefetch).

The helpers that call ``cuda.*`` live here beside the kernels: numba's CUDA
simulator swaps in its fake ``cuda`` module only in the launched kernel's
module, so such a helper in another module would race between simulated threads.
"""

from __future__ import annotations


from numba import cuda, int32, int64
from numba import uint64 as U  # unsigned indices: numba then skips the negative-index wraparound

from engine.gpu import imax, imin, kernel_factory, kernel_jit


@cuda.jit(device=True, inline=True)
def keep_best(slots, best, t, row, opt3):
    """Record a candidate row: with opt3 in the thread's own shared slot, otherwise by an
    atomic max on the block's one shared result (``opt3`` is a kernel constant)."""
    if opt3:
        if row > slots[t]:
            slots[t] = row
    else:
        cuda.atomic.max(best, 0, row)


@cuda.jit(device=True)
def reduce_slots_max(slots, t, tpb):
    """Tree reduction of slots[0:tpb] into slots[0] (opt3); every thread of the block calls it."""
    stride = 1
    while stride < tpb:
        stride <<= 1
    stride >>= 1
    while stride > 0:
        if t < stride and t + stride < tpb and slots[t + stride] > slots[t]:
            slots[t] = slots[t + stride]
        cuda.syncthreads()
        stride >>= 1


# -- conventional ---------------------------------------------------------------------

@cuda.jit(device=True, inline=True)
def edit_cell(diag, up, left, a, b):
    """D[i,j] from its three neighbours; symbols match when their IUPAC sets intersect."""
    v = diag + (0 if (a & b) else 1)
    if up + 1 < v:
        v = up + 1
    if left + 1 < v:
        v = left + 1
    return v


def conventional_shared_bytes(tpb: int) -> int:
    """Dynamic shared memory: slots, the exchange pair and the alpha segment (int32 each)."""
    return 4 * 4 * tpb


@kernel_factory
def conventional_kernel(opt1: bool, opt3: bool, opt4: bool, opt5: bool, registers: int = 255):
    """The kernel for one flag combination, its registers capped at ``registers``."""
    OPT1, OPT3, OPT4, OPT5 = opt1, opt3, opt4, opt5
    CAP = registers

    @kernel_jit(registers)
    def kernel(alpha, m_end, rs, beta, offsets, K, out_c, counters, rows):
        # CAP is never 0: naming it puts the register cap in the kernel's closure, which
        # numba's disk cache keys on (it ignores max_registers).
        if CAP == 0:
            return
        q = cuda.blockIdx.x
        t = cuda.threadIdx.x
        tpb = cuda.blockDim.x
        r = rs[q]
        mp = m_end - r
        c0 = imin(K, mp)
        dyn = cuda.shared.array(0, int32)  # slots [0, tpb) | exchange [tpb, 3tpb) | alpha [3tpb, 4tpb)
        best = cuda.shared.array(1, int32)
        flag = cuda.shared.array(1, int32)
        acc = cuda.shared.array(1, int64)
        if t == 0:
            best[0] = c0
            acc[0] = 0
        if OPT3:
            dyn[t] = c0
        cuda.syncthreads()
        cells = int64(0)
        for rec in range(offsets.shape[0] - 1):
            lo = offsets[rec]
            n = offsets[rec + 1] - lo
            if OPT4:
                width = rows.shape[1] // 2
                top = 0            # offsets of the saved row and of the row being saved
                newtop = width
                for x in range(t, n + 1, tpb):
                    rows[q, x] = 0
                i0 = 0
                while i0 < mp:
                    h = imin(tpb, mp - i0)
                    if OPT5 and t < h:
                        dyn[3 * tpb + t] = alpha[r + i0 + t]
                    if t == 0:
                        rows[q, top] = i0  # D[i0, 0]
                        flag[0] = 0
                    cuda.syncthreads()
                    i = i0 + t + 1
                    left = i          # D[i, j-1], starting at D[i, 0]
                    prev_up = i - 1   # D[i-1, j-1], starting at D[i-1, 0]
                    for s in range(h + n - 1):
                        j = s - t + 1
                        if t < h and j >= 1 and j <= n:
                            if t == 0:
                                up = rows[q, U(top + j)]
                                diag = rows[q, U(top + j - 1)]
                            else:
                                up = dyn[U(tpb + ((s - 1) & 1) * tpb + t - 1)]
                                diag = prev_up
                            if OPT5:
                                a = dyn[U(3 * tpb + t)]
                            else:
                                a = int32(alpha[U(r + i - 1)])
                            v = edit_cell(diag, up, left, a, beta[U(lo + j - 1)])
                            left = v
                            prev_up = up
                            dyn[U(tpb + (s & 1) * tpb + t)] = v
                            if v <= K:
                                keep_best(dyn, best, t, i, OPT3)
                            if t == h - 1:
                                rows[q, U(newtop + j)] = v
                                if v <= K:
                                    flag[0] = 1
                            cells += 1
                        cuda.syncthreads()
                    stop = i0 + h >= mp or (OPT1 and flag[0] == 0)
                    top, newtop = newtop, top
                    i0 += h
                    cuda.syncthreads()
                    if stop:
                        break
            else:
                third = rows.shape[1] // 3
                for t2 in range(2, mp + n + 1):
                    cur = (t2 % 3) * third
                    p1 = ((t2 + 2) % 3) * third
                    p2 = ((t2 + 1) % 3) * third
                    i = imax(1, t2 - n) + t
                    i_hi = imin(mp, t2 - 1)
                    while i <= i_hi:
                        j = t2 - i
                        up = 0 if i == 1 else rows[q, U(p1 + i - 1)]
                        left = i if j == 1 else rows[q, U(p1 + i)]
                        if i == 1:
                            diag = 0
                        elif j == 1:
                            diag = i - 1
                        else:
                            diag = rows[q, U(p2 + i - 1)]
                        v = edit_cell(diag, up, left, alpha[U(r + i - 1)], beta[U(lo + j - 1)])
                        rows[q, U(cur + i)] = v
                        if v <= K:
                            keep_best(dyn, best, t, i, OPT3)
                        cells += 1
                        i += tpb
                    cuda.syncthreads()
        cuda.atomic.add(acc, 0, cells)
        cuda.syncthreads()
        if OPT3:
            reduce_slots_max(dyn, t, tpb)
        if t == 0:
            out_c[q] = dyn[0] if OPT3 else best[0]
            cuda.atomic.add(counters, 0, acc[0])

    return kernel


# -- alternative ----------------------------------------------------------------------

NEG = -(1 << 30)


def alternative_shared_layout(tpb: int, K: int, prefetch_alpha: int, prefetch_beta: int, flags) -> tuple:
    """Offsets (int32 slots) of the dynamic shared memory parts and its size in bytes."""
    slots = tpb if "opt3" in flags else 0
    exchange = 2 * tpb if "opt4" in flags else 0
    carry = 4 * (K + 1) if "opt4" in flags else 0
    pa = prefetch_alpha if "opt5" in flags else 0
    pb = prefetch_beta if "opt6" in flags else 0
    o_buf = slots
    o_carry = o_buf + exchange
    o_alpha = o_carry + carry
    o_beta = o_alpha + pa
    return (o_buf, o_carry, o_alpha, o_beta), 4 * (o_beta + pb)


@cuda.jit(device=True, inline=True)
def extend(alpha, r, mp, beta, lo, n, d, row, dyn, o_alpha, pa, o_beta, pb, win, ring0, opt5, opt6):
    """Cap the row, then slide along matches; returns (row, comparisons).

    With ``opt5`` the first ``pa`` alpha symbols come from shared memory; with
    ``opt6`` background positions in [win, win + pb) come from the shared ring
    (slot of ``win`` at ``ring0``). The flags are the kernel's constants, so the
    branches fold away once this is inlined.
    """
    if row > mp:
        row = mp
    if row > n - d:
        row = n - d
    cmps = 0
    while row < mp and row + d < n:
        cmps += 1
        if opt5 and row < pa:
            a = dyn[U(o_alpha + row)]
        else:
            a = int32(alpha[U(r + row)])
        pos = row + d
        b = int32(0)
        hit = False
        if opt6:
            off = pos - win
            if off >= 0 and off < pb:
                slot = ring0 + off
                if slot >= pb:
                    slot -= pb
                b = dyn[U(o_beta + slot)]
                hit = True
        if not hit:
            b = int32(beta[U(lo + pos)])
        if a & b:
            row += 1
        else:
            break
    return row, cmps


@kernel_factory
def alternative_kernel(opt3: bool, opt4: bool, opt5: bool, opt6: bool, counting: bool,
                       registers: int = 255):
    """The kernel for one flag combination, its registers capped at ``registers``."""
    OPT3, OPT4, OPT5, OPT6, COUNT = opt3, opt4, opt5, opt6, counting
    CAP = registers

    @kernel_jit(registers)
    def kernel(alpha, m_end, rs, beta, offsets, K, prefetch_alpha, pb, o_buf, o_carry, o_alpha,
               o_beta, out_c, counters, cols):
        # CAP is never 0: naming it puts the register cap in the kernel's closure, which
        # numba's disk cache keys on (it ignores max_registers).
        if CAP == 0:
            return
        q = cuda.blockIdx.x
        t = cuda.threadIdx.x
        tpb = cuda.blockDim.x
        r = rs[q]
        mp = m_end - r
        c0 = imin(K, mp)
        dyn = cuda.shared.array(0, int32)
        best = cuda.shared.array(1, int32)
        acc = cuda.shared.array(2, int64)
        if t == 0:
            best[0] = c0
            acc[0] = 0
            acc[1] = 0
        if OPT3:
            dyn[t] = c0
        pa = imin(prefetch_alpha, mp) if OPT5 else 0
        if OPT5:
            for x in range(t, pa, tpb):
                dyn[o_alpha + x] = alpha[r + x]
        cuda.syncthreads()
        cells = int64(0)
        cmps = int64(0)
        for rec in range(offsets.shape[0] - 1):
            lo = offsets[rec]
            n = offsets[rec + 1] - lo
            if OPT4:
                ntiles = (n + K + 1 + tpb - 1) // tpb
                for x in range(t, 4 * (K + 1), tpb):
                    dyn[o_carry + x] = NEG  # parity 1 stands for "tile -1": nothing left of tile 0
                ring0 = 0
                if OPT6:
                    for x in range(t, pb, tpb):
                        dyn[o_beta + x] = beta[lo + x] if x < n else 0
                cuda.syncthreads()
                for tile in range(ntiles):
                    d0 = tile * tpb
                    cp = tile & 1
                    pp = 1 - cp
                    if OPT6 and tile > 0:
                        # Window [d0, d0 + pb): the tpb new symbols take the slots of [d0 - tpb, d0).
                        pos = d0 + pb - tpb + t
                        dyn[o_beta + ring0 + t] = beta[lo + pos] if pos < n else 0
                        ring0 += tpb
                        if ring0 >= pb:
                            ring0 -= pb
                        cuda.syncthreads()
                    for e in range(K + 1):
                        d = d0 + t - e
                        row = NEG
                        if d <= n:
                            if e == 0:
                                row = 0
                            else:
                                src = o_buf + ((e - 1) & 1) * tpb
                                carry = o_carry + (pp * (K + 1) + e - 1) * 2
                                # L[d+1, e-1], L[d, e-1] and L[d-1, e-1]: threads t, t-1, t-2
                                from_self = dyn[U(src + t)]
                                from_left = dyn[U(src + t - 1)] if t >= 1 else dyn[U(carry + 1)]
                                from_left2 = dyn[U(src + t - 2)] if t >= 2 else dyn[U(carry + t)]
                                row = imax(imax(from_left + 1, from_self + 1), from_left2)
                            if row >= 0:
                                row, cm = extend(alpha, r, mp, beta, lo, n, d, row, dyn, o_alpha, pa,
                                                 o_beta, pb, d0, ring0, OPT5, OPT6)
                                if COUNT:
                                    cmps += cm
                            else:
                                row = NEG
                            cells += 1
                        dyn[U(o_buf + (e & 1) * tpb + t)] = row
                        if t >= tpb - 2:
                            dyn[U(o_carry + (cp * (K + 1) + e) * 2 + t - (tpb - 2))] = row
                        if (e == K or row == mp) and row > c0:
                            keep_best(dyn, best, t, row, OPT3)
                        cuda.syncthreads()
            else:
                width = cols.shape[1] // 2
                base = K + 1
                for x in range(t, n + K + 3, tpb):
                    cols[q, x] = NEG
                    cols[q, width + x] = NEG
                cuda.syncthreads()
                for e in range(K + 1):
                    cur = (e & 1) * width + base
                    prv = ((e + 1) & 1) * width + base
                    d = -e + t
                    while d <= n:
                        if e == 0:
                            row = 0
                        else:
                            row = imax(imax(cols[q, U(prv + d)] + 1, cols[q, U(prv + d + 1)] + 1),
                                       cols[q, U(prv + d - 1)])
                        if row >= 0:
                            row, cm = extend(alpha, r, mp, beta, lo, n, d, row, dyn, o_alpha, pa,
                                             o_beta, 0, 0, 0, OPT5, False)
                            if COUNT:
                                cmps += cm
                        else:
                            row = NEG
                        cols[q, U(cur + d)] = row
                        cells += 1
                        if (e == K or row == mp) and row > c0:
                            keep_best(dyn, best, t, row, OPT3)
                        d += tpb
                    cuda.syncthreads()
        cuda.atomic.add(acc, 0, cells)
        if COUNT:
            cuda.atomic.add(acc, 1, cmps)
        cuda.syncthreads()
        if OPT3:
            reduce_slots_max(dyn, t, tpb)
        if t == 0:
            out_c[q] = dyn[0] if OPT3 else best[0]
            cuda.atomic.add(counters, 0, acc[0])
            cuda.atomic.add(counters, 1, acc[1])

    return kernel
