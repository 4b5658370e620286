"""lcs ``wavefront`` on CUDA, parallel form ``diagonal``: the seed study's kernel.

Dhraief et al. compute the anti-diagonals of L one after another, "every
anti-diagonal uses the necessary number of blocks to calculate it in
parallel": one launch per anti-diagonal d = i + j, one thread per cell. The
three diagonals a cell reads or writes live in global memory, indexed by the
cell's row i: ``buf[d % 3, i]``. Row 0 of every diagonal stays 0 (L[0, j] = 0);
L[i, 0] is not stored, so cells of column 1 take 0 for their left and diagonal
neighbours. Row 3 of ``buf`` collects L[m, j], the last row that a
Hirschberg split needs.

A launch costs the host far more than the GPU spends on a diagonal, so the
kernel takes as few arguments as it can (the cell range and the buffer roles
follow from d).
"""

from __future__ import annotations

from functools import lru_cache

from numba import cuda, int32

from engine.gpu import imax, imin, kernel_jit


@cuda.jit(device=True, inline=True)
def cell_of(a, b, buf, d):
    """Compute this thread's cell (i, d - i) of anti-diagonal d; return (i, j, L) with
    i = 0 for a thread past the end of the diagonal."""
    m, n = a.shape[0], b.shape[0]
    i = imax(1, d - n) + cuda.grid(1)
    if i > imin(m, d - 1):
        return 0, 0, int32(0)
    j = d - i
    k1 = (d - 1) % 3
    if (a[i - 1] & b[j - 1]) != 0:
        v = int32(1)
        if j > 1:
            v = int32(buf[(d - 2) % 3, i - 1] + 1)
    else:
        up = buf[k1, i - 1]  # row 0 is never written: L[0, j] = 0
        left = buf[k1, i] if j > 1 else int32(0)
        v = imax(up, left)
    buf[d % 3, i] = v
    if i == m:
        buf[3, j] = v
    return i, j, v


@lru_cache(maxsize=None)
def diagonal_kernel(snapshots: bool):
    """The kernel of one anti-diagonal d (1-based cells i + j = d)."""
    if not snapshots:
        @kernel_jit()
        def kernel(a, b, buf, d):
            cell_of(a, b, buf, d)

        return kernel

    @kernel_jit()
    def snapshot_kernel(a, b, buf, d, image, row_map, col_map, shift):
        i, j, v = cell_of(a, b, buf, d)
        if i > 0:
            ir = row_map[i]
            jc = col_map[j]
            if ir >= 0 and jc >= 0:
                image[ir, jc] = imin(v >> shift, 65535)

    return snapshot_kernel
