"""Linear scores, the value range of the DP matrix, and the narrowest integer type that holds it.

Kernels run in the narrowest integer type that cannot overflow: int16 doubles
the SIMD width of the vector loops compared with int32. The range comes from
two alignments that bound every cell (see :func:`value_range`), so the choice
is safe for every sub-matrix a tile, band or Hirschberg pass computes.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.nw.spec import SPEC
from engine.registry import check_params

_TYPES = (np.int16, np.int32, np.int64)


@dataclass(frozen=True)
class Scores:
    """Linear alignment scores: a matching column, a mismatching column and a gap column."""

    match: int = 1
    mismatch: int = 0
    gap: int = -1

    @classmethod
    def checked(cls, match, mismatch, gap) -> "Scores":
        """Three integer scores, checked by the registry entry's rule (engine.nw.spec, as the
        command line and the GUI check them); ValueError naming the bad one."""
        values = check_params(SPEC, match=match, mismatch=mismatch, gap=gap)
        for name, value in values.items():
            if value is None:  # ParamSpec.check lets None (not given) through
                raise ValueError(f"the {name} score must be an integer, got None")
        return cls(**values)

    @property
    def largest(self) -> int:
        return max(abs(self.match), abs(self.mismatch), abs(self.gap))


def _corners(m: int, n: int):
    """Where the bounds below peak: they are linear on the triangles either side of i = j,
    so their extremes lie on the box corners and on (min(m,n), min(m,n))."""
    k = min(m, n)
    return ((0, 0), (m, 0), (0, n), (m, n), (k, k))


def value_range(m: int, n: int, sc: Scores, shift: int = 0) -> tuple[int, int]:
    """Bounds (lo, hi) on H[i][j] - j*shift over 0 <= i <= m, 0 <= j <= n.

    H[i][j] is at least the score of "min(i,j) diagonal columns, then the gaps"
    and at most the best of an alignment with k diagonal columns, which is
    linear in k, so k = 0 or k = min(i,j).
    """
    g = sc.gap
    smax, smin = max(sc.match, sc.mismatch), min(sc.match, sc.mismatch)
    points = _corners(m, n)
    hi = max(max((i + j) * g, min(i, j) * smax + abs(i - j) * g) - j * shift for i, j in points)
    lo = min(min(i, j) * smin + abs(i - j) * g - j * shift for i, j in points)
    return lo, hi


def value_type(m: int, n: int, sc: Scores, *, shifted: bool = False):
    """(dtype, offset): the narrowest of int16/int32/int64 that holds H - offset for the whole
    m x n matrix and every intermediate sum, and the offset that centres the range.

    The recurrence is unchanged when every value moves by a constant, so kernels
    work on H - offset; a matrix whose values span less than 65,000 fits int16
    wherever its values lie. ``shifted``: the prefix variant also stores
    H[i][j] - j*gap, whose range is wider.
    """
    lo, hi = value_range(m, n, sc)
    if shifted:
        slo, shi = value_range(m, n, sc, sc.gap)
        lo, hi = min(lo, slo), max(hi, shi)
    offset = (lo + hi) // 2
    need = max(hi - offset, offset - lo) + 2 * sc.largest
    for dtype in _TYPES:
        if need < np.iinfo(dtype).max:
            return dtype, offset
    raise ValueError("scores too large for 64-bit arithmetic")  # unreachable: spec.py caps |s| at 1000


def cast_scores(sc: Scores, dtype) -> tuple:
    """The three scores as scalars of the kernel type (numba compiles one version per type)."""
    t = np.dtype(dtype).type
    return t(sc.match), t(sc.mismatch), t(sc.gap)


def snapshot_scale(m: int, n: int, sc: Scores) -> tuple[int, int]:
    """(offset, step) so that 1 + (H - offset) // step fits uint16; 0 marks cells not computed."""
    lo, hi = value_range(m, n, sc)
    step = max(1, -(-(hi - lo + 1) // 65534))
    return lo, step
