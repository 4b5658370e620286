"""lcs on CUDA: the band pipeline behind ``bitparallel`` and the tiled ``wavefront``.

Both kernels sweep the LCS matrix (rows: ``a``, columns: ``b``) in *bands* of
units, one unit per lane: a 64-row word of the Allison-Dix/Hyyrö bit-vector
for ``bitparallel``, one matrix row for ``wavefront``. A band is a warp (32
lanes; fewer with fewer threads per block, one band per block then).

**Inside a band** lane w works on column j - w at step j (a pipeline): unit w
needs what unit w-1 produced for the same column one step earlier, the carry
out of the word below it (bitparallel) or L one row up (wavefront), and gets it
through a warp shuffle. At each step the band's cells lie on one
anti-diagonal, so the wavefront kernel is the seed study's anti-diagonal
sweep kept inside a warp, and the bit-parallel one is Hyyrö's column step
with the addition's carry rippling from lane to lane.

**Between bands** the columns are cut into tiles of ``tile`` columns. The last
lane of band s writes its outputs (the carry into band s+1, or L on band s's
bottom row) to ``edge``, one value per column, and publishes in ``flags[s]``
how many tiles it has finished (fence, then an atomic). Before its lane 0
enters tile c, band s+1 waits until ``flags[s] > c`` and reads the tile's
edge values with atomics, which are served by the L2 cache (the L1 caches of
the SMs are not coherent). So tiles (s, c) run as a wavefront of tiles along
tile anti-diagonals s + c, all bands at once, each a tile or so behind the one
above. One ``edge`` array serves every band: band s+1 reads a tile before it
overwrites it, and band s+2 reads it only after band s+1's flag says so.

**Launches** cover tile anti-diagonals [d0, d1) (a slice of the job, so the
host can report progress and cancel between launches). A band's first tile
in a launch only needs tiles of earlier launches, so every band starts at
once and no launch refills the pipeline. Each block takes a ticket from an
atomic counter and runs the bands of that ticket: a band only waits for bands
of earlier tickets, whose blocks have already started, so spinning never
deadlocks. Between launches each unit keeps its state in global memory: V of
its word (bitparallel), L at its row in the last column (wavefront), and the
count of carries that entered its word (the word's top row L, for snapshots).

Rows past ``m`` are padding: an all-ones V without matches passes any carry
on unchanged, and a row of symbol 0 copies the row above, so the last band's
edge is always row m's.

Under numba's CUDA simulator (no warp shuffles there) lanes exchange values
through shared memory and ``syncthreads``, and every block holds one band:
the simulator runs one block at a time, so a band never waits for one that
has not run.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from numba import cuda, int32, uint8, uint32, uint64
from numba import uint64 as U  # unsigned indices: no negative-index wraparound

from engine.gpu import SIMULATOR, WARP, imax, imin, kernel_jit

_ALL = np.uint64(0xFFFFFFFFFFFFFFFF)
_SIXTYTHREE = np.uint64(63)
#: Zeros on each side of ``b`` on the device, so that lanes ahead of or behind the
#: columns of a launch read in bounds without a check.
PAD = WARP

# -- lane exchange ------------------------------------------------------------------------
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
        # Waiting bands poll less often, leaving the L2 atomics to the bands at work.
        cuda.nanosleep(uint32(128))


@cuda.jit(device=True)
def wait_for(flags, index, need, limit):
    """Spin until ``flags[index] >= need`` (atomic reads, then an acquire fence).
    Returns 1 when ``limit`` polls were not enough (the host reports a failure)."""
    spins = 0
    while cuda.atomic.add(flags, index, 0) < need:
        spins += 1
        if spins > limit:
            return 1
        back_off()
    cuda.threadfence()
    return 0


@kernel_jit()
def match_words_kernel(a, pm):
    """pm[x, u]: bit i set when a[64u + i] & x (all 16 IUPAC sets; words past ``a`` are 0),
    the match words of Allison-Dix/Hyyrö, built on the device (one thread per word and set)."""
    nunits = pm.shape[1]
    idx = cuda.grid(1)
    if idx < 16 * nunits:
        x = idx // nunits
        u = idx - x * nunits
        w = uint64(0)
        first = 64 * u
        for i in range(imax(0, imin(64, a.shape[0] - first))):
            if a[first + i] & x:
                w |= uint64(1) << uint64(i)
        pm[x, u] = w


@lru_cache(maxsize=None)
def band_kernel(bits: bool, snapshots: bool, lanes: int, per_block: int, tile: int):
    """The band kernel: ``bits`` selects bitparallel (else the tiled wavefront),
    ``snapshots`` also writes the sampled cells of the GUI's heatmap."""
    LANES, PB, TILE = lanes, per_block, tile
    BITS, SNAP = bits, snapshots
    LAST = lanes - 1
    MASK = 0xFFFFFFFF if lanes == WARP else (1 << lanes) - 1
    SYMBOLS = 16 if bits else 1

    @kernel_jit()
    def kernel(b_pad, n, pm, a_units, edge, v_state, i_state, corner, flags, tickets, slot, d0,
               d1, s_lo, s_hi, nchunks, spin_limit, status, image, row_map, col_map, smask, shift):
        tid = cuda.threadIdx.x
        lane = tid % LANES
        lb = tid // LANES
        ticket = cuda.shared.array(1, int32)
        failed = cuda.shared.array(PB, int32)
        edge_sh = cuda.shared.array((PB, TILE), int32)
        match_sh = cuda.shared.array((PB, SYMBOLS, LANES), uint64)
        exch = cuda.shared.array(LANES, int32)
        if tid == 0:
            ticket[0] = cuda.atomic.add(tickets, slot, 1)
        cuda.syncthreads()
        band = s_lo + ticket[0] * PB + lb
        c_first = imax(0, d0 - band)
        c_stop = imin(nchunks, d1 - band)
        if band > s_hi or c_first >= c_stop:
            return
        C0 = c_first * TILE
        width = imin(n, c_stop * TILE) - C0
        u = band * LANES + lane
        # Unit state. bits: V, and L on the word's top row (snapshots). wavefront: L at
        # the unit's row in the previous column (left) and one row up (diag).
        V = uint64(0)
        keep = i_state[u]
        a_sym = uint8(0)
        up_prev = int32(0)
        if BITS:
            V = v_state[u]
            for x in range(SYMBOLS):
                match_sh[lb, x, lane] = pm[x, u]
        else:
            a_sym = a_units[u]
            up_prev = corner[band] if lane == 0 else i_state[u - 1]
        sampled = smask[u] if SNAP else uint64(0)
        out = int32(0)
        # Step s: lane 0 is at column C0 + s, this lane at j = C0 + s - lane; b_pad holds
        # PAD zeros on each side, so b_pad[j + PAD] needs no bounds.
        j = C0 - lane
        x_next = b_pad[U(j + PAD)]
        to_entry = 0            # steps until lane 0 enters a tile
        to_publish = TILE - 1 + LAST  # steps until the last lane finishes a tile
        pos = 0                 # lane 0's column within its tile
        last_step = width + LAST - 1
        stop = width + lane       # this lane is busy at steps lane .. stop - 1
        for s in range(width + LAST):
            x = x_next
            x_next = b_pad[U(j + PAD + 1)]
            if to_entry == 0 and s < width:
                # Lane 0 enters a tile: wait for the band above, then stage its edge.
                tile0 = C0 + s
                if band > 0:
                    if lane == 0:
                        failed[lb] = wait_for(flags, band - 1, tile0 // TILE + 1, spin_limit)
                    band_sync(MASK)
                    if failed[lb] != 0:
                        if lane == 0:
                            status[0] = 1
                        return
                count = imin(TILE, n - tile0)
                q = lane
                while q < count:
                    edge_sh[lb, q] = cuda.atomic.add(edge, tile0 + q, 0)
                    q += LANES
                band_sync(MASK)
                to_entry = TILE
                pos = 0
            to_entry -= 1
            # Every lane reads lane 0's edge value (a broadcast) before the exchange, so
            # lane 0 picks it with a select rather than a branch of its own.
            above = edge_sh[lb, imin(pos, TILE - 1)]
            M = match_sh[lb, x, lane] if BITS else uint64(0)  # x is a code 0..15, padding too
            recv = from_lane_above(out, lane, MASK, exch)
            if lane == 0:
                recv = above
            pos += 1
            if s >= lane and s < stop:
                if BITS:
                    # Hyyrö: V' = (V + (V & M)) | (V & ~M), the carry in from the word
                    # above; u1 is a subset of V, so the carry out of bit 63 is
                    # majority(V, u1, carry into bit 63) = (u1 | (V & ~y)) >> 63.
                    u1 = V & M
                    y = V + u1 + uint64(recv)
                    out = int32((u1 | (V & ~y)) >> _SIXTYTHREE)
                    V = y | (V & ~M)
                    if SNAP:
                        keep = int32(keep + recv)
                else:
                    val = int32(up_prev + 1) if (a_sym & x) != 0 else imax(recv, keep)
                    up_prev = recv
                    keep = val
                    out = val
                if SNAP and sampled != 0:
                    jc = col_map[j + 1]
                    if jc >= 0:
                        if BITS:
                            for r in range(64):
                                if (sampled >> uint64(r)) & uint64(1):
                                    ones = int32(cuda.popc(V & (_ALL >> uint64(63 - r))))
                                    level = keep + r + 1 - ones
                                    image[row_map[64 * u + r + 1], jc] = imin(level >> shift, 65535)
                        else:
                            image[row_map[u + 1], jc] = imin(keep >> shift, 65535)
                if lane == LAST:
                    edge[U(j)] = out
            if to_publish == 0 or s == last_step:
                # The last lane finished a tile (or the launch's last column): publish it.
                if lane == LAST:
                    cuda.threadfence()
                    cuda.atomic.max(flags, band, j // TILE + 1)
                to_publish = TILE
            to_publish -= 1
            j += 1
        if BITS:
            v_state[u] = V
        elif lane == 0:
            corner[band] = up_prev
        i_state[u] = keep

    return kernel
