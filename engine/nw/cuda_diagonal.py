"""nw ``diagonal`` on CUDA: the study's anti-diagonal kernels and the tiled wavefront.

Every nw kernel works on W[i][j] = H[i][j] - (i + j) * gap (tile-local i, j). With
linear gaps the recurrence then loses its additions but one:

    W[i][j] = max(W[i-1][j], W[i][j-1], W[i-1][j-1] + s(a_i, b_j) - 2 * gap)

so a cell is one selection, one addition and two maxima; W never decreases along a
row or a column. engine/nw/cuda.py converts boundaries and results and checks that
every value fits int32.

Forms (Dicker et al., sec. 2.1; the tiled one is ours):

- **one-block**: one block walks the anti-diagonals d = i + j of the tile, its threads
  striding over the cells of each; three anti-diagonals live in global memory and a
  barrier separates consecutive ones.
- **per-launch** (multi-block): the same cells, one launch per anti-diagonal with a
  grid-stride loop, so every SM helps; the launch boundary is the barrier.
- **tiled** (multi-block): a warp owns a *band* of 32 * R rows, R rows per lane held in
  registers, and sweeps it as a pipeline: at step s lane l computes K columns from
  (s - l) * K + 1 on of its R rows, taking the cells above its first row from lane l - 1
  by warp shuffles, so the band's cells of one step lie on K anti-diagonals and no step
  needs a barrier or shared memory. The K columns' chains overlap (each waits on the one
  before for a single cell), and the step's fixed cost (shuffles, the b word, the loop)
  is shared by K * R cells: with one warp per band and few warps per SM nothing hides
  latency, so every instruction a cell saves counts. The steps of a tile in which every
  lane is inside the matrix run without a check (the pipeline's fill and drain and the
  last tile take the checked path).

  Between bands, the last lane leaves the band's bottom row in ``ring`` (two rows that
  bands take turns at), every value stamped with the band's tag, so a value is its own
  "ready" flag: no fence, no counter, no polling granularity. All lanes of the band below
  fetch a tile of the row above a tile ahead (atomic reads, served by L2: the SMs' L1
  caches are not coherent) and, on entering that tile, read again only the values whose
  tag was still the older one. Band k + 2 overwrites band k's row only in columns that it
  has computed, which band k + 1 has taken before; and tags grow from launch to launch
  (engine/nw/cuda.py), so nothing stale matches. Blocks take bands by ticket
  (persistent blocks when the job caps the block count); a band only ever waits for a
  band with an earlier ticket, which is running or done, so the wait cannot deadlock
  (numba's simulator, which runs blocks one after another, included). Rows past the tile
  (the last band's padding) get a score so low that they copy the row above, so the last
  band's row of ``ring`` is the tile's bottom row (engine/nw/cuda.py unpacks it). This is
  the form that keeps anti-diagonals inside a block (a warp).

The helpers that call ``cuda.*`` live here beside the kernels: the simulator swaps its
fake ``cuda`` module into a helper's module for the length of each call, which races
when the simulated threads call helpers of another module (engine/lcs/cuda_band.py has
its own copies of the lane exchange for that reason). Under the simulator, which has no
warp shuffles, lanes exchange values through shared memory and every block holds one
band.
"""

from __future__ import annotations

from functools import lru_cache

from numba import cuda, int32, int64, uint32
from numba import uint64 as U  # unsigned indices: numba then skips the negative-index wraparound

from engine.gpu import SIMULATOR, WARP, imax, imin, kernel_jit

#: Subtracted from the scores of padding rows: W[i-1][j-1] + s - PENALTY < W[i-1][j], so a
#: padding row copies the row above (|W| <= 2**30 and |s| <= 3000 keep it inside int32).
PENALTY = 1 << 29


@cuda.jit(device=True, inline=True)
def diagonal_cells(d, first, step, a, b, h, w, top, left, diags, stride, sm2, sx2, bottom, right,
                   row_slot, col_slot, snap, snap_on):
    """Cells (i, d - i) for i = lo + first, lo + first + step, ... of anti-diagonal d.

    ``diags`` holds three anti-diagonals (indexed by i, ``stride`` apart), d at d % 3;
    boundary cells are copied from ``top``/``left`` so that the next two diagonals find
    them. Cells on the last row and column also go to ``bottom`` and ``right``.
    """
    cur = (d % 3) * stride
    p1 = ((d + 2) % 3) * stride
    p2 = ((d + 1) % 3) * stride
    i = imax(0, d - w) + first
    hi = imin(h, d)
    while i <= hi:
        j = d - i
        if i == 0:
            v = top[j]
        elif j == 0:
            v = left[i]
        else:
            s = sm2 if (a[U(i - 1)] & b[U(j - 1)]) != 0 else sx2
            v = imax(int32(diags[U(p2 + i - 1)] + s), imax(diags[U(p1 + i - 1)], diags[U(p1 + i)]))
        diags[U(cur + i)] = v
        if i == h:
            bottom[j] = v
        if j == w:
            right[i] = v
        if snap_on:
            rs = row_slot[i]
            if rs >= 0:
                cs = col_slot[j]
                if cs >= 0:
                    snap[rs, cs] = v
        i += step


@lru_cache(maxsize=None)
def one_block_kernel(snap_on: bool, registers: int = 255):
    """The whole tile in one block, one anti-diagonal after another."""
    SNAP, CAP = snap_on, registers

    @kernel_jit(registers)
    def kernel(a, b, h, w, top, left, diags, stride, sm2, sx2, bottom, right, row_slot, col_slot,
               snap):
        # CAP is never 0: naming it puts the register cap in the kernel's closure, which
        # numba's disk cache keys on (it ignores max_registers).
        if CAP == 0:
            return
        t = cuda.threadIdx.x
        tpb = cuda.blockDim.x
        for d in range(h + w + 1):
            diagonal_cells(d, t, tpb, a, b, h, w, top, left, diags, stride, sm2, sx2, bottom, right,
                           row_slot, col_slot, snap, SNAP)
            cuda.syncthreads()

    return kernel


@lru_cache(maxsize=None)
def per_launch_kernel(snap_on: bool, registers: int = 255):
    """Anti-diagonal d of the tile over the whole grid (one launch per anti-diagonal)."""
    SNAP, CAP = snap_on, registers

    @kernel_jit(registers)
    def kernel(a, b, h, w, top, left, diags, stride, d, sm2, sx2, bottom, right, row_slot, col_slot,
               snap):
        if CAP == 0:
            return
        diagonal_cells(d, cuda.grid(1), cuda.gridsize(1), a, b, h, w, top, left, diags, stride,
                       sm2, sx2, bottom, right, row_slot, col_slot, snap, SNAP)

    return kernel



# -- the tiled wavefront -------------------------------------------------------------------
if SIMULATOR:
    @cuda.jit(device=True)
    def from_lane_above(value, lane, mask, exch):
        """``value`` of lane - 1 (lane 0 gets its own)."""
        exch[lane] = value
        cuda.syncthreads()
        got = exch[lane - 1] if lane > 0 else value
        cuda.syncthreads()
        return got

    @cuda.jit(device=True)
    def band_sync(mask):
        cuda.syncthreads()

    @cuda.jit(device=True)
    def back_off():
        """No back-off: the simulator has no nanosleep (and runs blocks one after another)."""
else:
    @cuda.jit(device=True, inline=True)
    def from_lane_above(value, lane, mask, exch):
        """``value`` of lane - 1 (lane 0 gets its own)."""
        return cuda.shfl_up_sync(mask, value, 1)

    @cuda.jit(device=True, inline=True)
    def band_sync(mask):
        cuda.syncwarp(mask)

    @cuda.jit(device=True, inline=True)
    def back_off():
        # A waiting band polls less often, leaving the L2 atomics to the bands at work.
        cuda.nanosleep(uint32(64))


#: Columns per step the tiled kernel supports: b's codes of one step are one word of
#: this many bytes (uint8, uint16, uint32).
STEP_COLUMNS = (1, 2, 4)


#: A band's bottom row goes to ``ring`` stamped: W + BIAS (never negative, below 2**32) in
#: the low 32 bits, the writing band's tag in the high 32 bits.
BIAS = 1 << 31
LOW = (1 << 32) - 1
FLIP = -(1 << 31)


@lru_cache(maxsize=None)
def tiled_kernel(rows: int, cols: int, tile: int, lanes: int, per_block: int, snap_on: bool,
                 registers: int = 255):
    """The tiled wavefront: ``rows`` rows and ``cols`` columns per lane and step, bands of
    ``lanes`` lanes (``per_block`` to a block), the row above taken ``tile`` columns at a
    time (compile-time constants, so a lane's cells stay in registers and its loops
    unroll). The ``cols`` columns of a step are independent chains but for one cell each,
    so the step's fixed cost (shuffles, the b word, the loop) is shared and the chains
    overlap."""
    R, K, T, L, PB, SNAP, CAP = rows, cols, tile, lanes, per_block, snap_on, registers
    LAST = L - 1
    TS = T // K           # steps per tile
    TPL = T // L          # values of a tile each lane fetches (the host checks L and K divide T)
    MASK = 0xFFFFFFFF if L == WARP else (1 << L) - 1

    @cuda.jit(device=True, inline=True)
    def step(s, pos, check, lane, lb, word, outk, diag, v, ac, smq, sxq, edge_sh, exch, ring, put,
             stamp, w, snap_any, rslot, col_slot, snap):
        """Step s of the band: the lane's R x K cells in columns (s - lane) * K + 1 ..
        (when ``check``, only the columns that exist); ``word`` holds their b codes and
        ``outk`` the lane's last row in them. Returns the new diag."""
        codes = int64(word)
        for kk in range(K):
            # Every lane reads lane 0's value of the row above (a broadcast) before the
            # exchange, which (under the simulator) orders the read before the next tile's
            # values overwrite it.
            above = edge_sh[lb, pos * K + kk]
            recv = from_lane_above(outk[kk], lane, MASK, exch)
            if lane == 0:
                recv = above
            j = (s - lane) * K + kk + 1
            if not check or (j >= 1 and j <= w):
                bj = int32((codes >> (8 * kk)) & 255)
                d = diag
                diag = recv
                up = recv
                for q in range(R):
                    lft = v[q]
                    x = int32(d + (smq[q] if int32(ac[q] & bj) != 0 else sxq[q]))
                    up = imax(up, imax(lft, x))
                    v[q] = up
                    d = lft
                outk[kk] = up
                if lane == LAST:   # (a predicated store: a branch here would split the chains)
                    # up ^ FLIP is up + BIAS modulo 2**32; the stamp's low half is zero, so
                    # the or is just a register pair (no 64-bit add).
                    ring[U(put + j)] = stamp | int64(uint32(up ^ FLIP))
                if SNAP and snap_any:
                    cs = col_slot[U(j)]
                    if cs >= 0:
                        for q in range(R):
                            if rslot[q] >= 0:
                                snap[rslot[q], cs] = v[q]
        return diag

    @kernel_jit(registers)
    def kernel(a, b_words, h, w, top, left, ring, stride, epoch, tickets, sm2, sx2, right,
               row_slot, col_slot, snap, spin_limit, status):
        """Rows 1..h of the tile: ``top`` is W on row 0; ``b_words`` holds b's codes K to a
        word, after L words of zeros.

        Band k (rows k*L*R + 1 ..) leaves its bottom row in ``ring`` (columns 1..w), in row
        0 (from ``ring[0]`` on) or 1 (from ``ring[stride]``) by parity, such that the last
        band's, the tile's bottom row, is row 0; each value stamped with the tag
        ``epoch + k``. ``tickets[0]`` hands out blocks of bands.
        """
        if CAP == 0:
            return
        tid = cuda.threadIdx.x
        lane = tid % L
        lb = tid // L
        ticket = cuda.shared.array(1, int32)
        failed = cuda.shared.array(PB, int32)
        edge_sh = cuda.shared.array((PB, T), int32)
        exch = cuda.shared.array(L, int32)
        ac = cuda.local.array(R, int32)      # a's codes of the lane's rows
        v = cuda.local.array(R, int32)       # W of the lane's rows in the last column done
        smq = cuda.local.array(R, int32)     # each row's match and mismatch scores
        sxq = cuda.local.array(R, int32)
        rslot = cuda.local.array(R, int32)
        outk = cuda.local.array(K, int32)    # W on the lane's last row in the step's columns
        pre = cuda.local.array(TPL, int64)   # the next tile of the row above, as stamped
        hb = L * R
        nbands = (h + hb - 1) // hb
        while True:
            if tid == 0:
                ticket[0] = cuda.atomic.add(tickets, 0, 1)
            cuda.syncthreads()
            band = ticket[0] * PB + lb
            cuda.syncthreads()
            if band - lb >= nbands:
                return
            if band < nbands:
                r0 = band * hb + lane * R           # the row above the lane's first row
                corner = left[imin(r0, h)]
                snap_any = False
                for q in range(R):
                    i = r0 + q + 1
                    if i <= h:
                        ac[q] = int32(a[U(i - 1)])
                        v[q] = left[U(i)]
                        smq[q] = sm2
                        sxq[q] = sx2
                    else:
                        ac[q] = 0
                        v[q] = left[U(h)]
                        smq[q] = int32(sm2 - PENALTY)
                        sxq[q] = int32(sx2 - PENALTY)
                    rslot[q] = -1
                    if SNAP and i <= h:
                        rslot[q] = row_slot[U(i)]
                        if rslot[q] >= 0:
                            snap_any = True
                for kk in range(K):
                    outk[kk] = 0
                put = ((nbands - 1 - band) % 2) * stride   # this band's row of the ring
                take = ((nbands - band) % 2) * stride      # the band above's
                stamp = int64(epoch + band) << 32
                want = int64(epoch + band - 1)      # the band above's tag
                if lane == 0:
                    failed[lb] = 0
                band_sync(MASK)
                # The first tile of the row above; the loop then fetches a tile ahead.
                fetch_tile(pre, TPL, L, T, 0, band, lane, w, top, ring, take, want)
                total = (w + K - 1) // K + LAST
                diag = corner                       # W one row up, one column left
                word_next = b_words[U(L - lane)]    # b's codes at the lane's next step
                s = 0                               # lane 0 is at columns s*K + 1 ..
                c = 0                               # tiles lane 0 has entered
                while s < total:
                    if s * K < w and s == c * TS:
                        # Lane 0 enters tile c: its row above goes to shared memory (once
                        # lane 0 has read the last tile's). Values the fetch a tile ago
                        # found not yet written (an older tag) are read again until they
                        # are there; then the next tile is fetched.
                        band_sync(MASK)
                        for x in range(TPL):
                            col = c * T + x * L + lane + 1
                            got = pre[x]
                            spins = 0
                            while col <= w and (got >> 32) != want:
                                spins += 1
                                if spins > spin_limit:
                                    failed[lb] = 1
                                    status[0] = 1
                                    break
                                back_off()
                                got = cuda.atomic.add(ring, U(take + col), 0)
                            edge_sh[lb, x * L + lane] = int32((got & LOW) - BIAS)
                        band_sync(MASK)
                        if failed[lb] != 0:
                            break
                        if (c + 1) * T < w:
                            fetch_tile(pre, TPL, L, T, c + 1, band, lane, w, top, ring, take, want)
                        c += 1
                    if s == (c - 1) * TS and s >= LAST and (s + TS) * K <= w:
                        # A whole tile with every lane inside the matrix: no checks.
                        for u in range(TS):
                            word = word_next
                            word_next = b_words[U(s + u + 1 + L - lane)]
                            diag = step(s + u, u, False, lane, lb, word, outk, diag, v, ac, smq,
                                        sxq, edge_sh, exch, ring, put, stamp, w, snap_any, rslot,
                                        col_slot, snap)
                        s += TS
                    else:
                        word = word_next
                        word_next = b_words[U(s + 1 + L - lane)]
                        diag = step(s, s % TS, True, lane, lb, word, outk, diag, v, ac, smq, sxq,
                                    edge_sh, exch, ring, put, stamp, w, snap_any, rslot, col_slot,
                                    snap)
                        s += 1
                for q in range(R):
                    if r0 + q + 1 <= h:
                        right[U(r0 + q + 1)] = v[q]
            cuda.syncthreads()

    return kernel


@cuda.jit(device=True, inline=True)
def fetch_tile(pre, count, lanes, tile, c, band, lane, w, top, ring, take, want):
    """The lane's ``count`` values of tile ``c`` of the row above the band (columns
    c*tile + x*lanes + lane + 1), stamped: ``top`` for the first band (stamped here), else
    what the band above left in ``ring`` (atomic reads: L2, never a stale L1 line; a value
    not yet written still has an older tag). They land in registers; the loop checks and
    stores them to shared memory a tile later, so the reads are not waited for."""
    for x in range(count):
        col = c * tile + x * lanes + lane + 1
        if col <= w:
            if band == 0:
                pre[x] = (want << 32) + (int64(top[U(col)]) + BIAS)
            else:
                pre[x] = cuda.atomic.add(ring, U(take + col), 0)
