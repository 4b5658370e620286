"""lcs' CPU passes: a variant's kernel module and one pass of it over a grid, in slices.

Below engine.lcs.driver and engine.lcs.cuda (whose recovery leaves run on the CPU), so
that neither imports the other for them.
"""

from __future__ import annotations

from types import ModuleType

import numpy as np

from engine import registry
from engine import config
from engine.lcs.cpu_common import Sampling, no_sampling

#: Cells of a phase's first slice (later slices adapt to ``config.SLICE_SECONDS``).
FIRST_SLICE_CELLS = 1 << 20


def cpu_module(variant: str) -> ModuleType:
    """The CPU kernel module of a variant (engine/lcs/spec.py; imports numba)."""
    return registry.named_kernels("lcs", variant, "serial")


def _chunk_columns(n: int) -> int:
    if config.LCS_TILE_COLUMNS:
        return int(config.LCS_TILE_COLUMNS)
    import numba

    return max(1, -(-n // numba.get_num_threads()))


def _band_rows(mod: ModuleType, m: int, backend: str) -> int:
    """Rows per band of tiles: one strip on serial; on multicore about m / LCS_TILE_BANDS,
    in whole strips (bitparallel strips are fixed by its register block)."""
    strip = getattr(mod, "STRIP_ROWS", None) or config.LCS_STRIP_ROWS[mod.VARIANT]
    if registry.serial(backend):
        return strip
    want = -(-m // config.LCS_TILE_BANDS)
    return max(1, -(-want // strip)) * strip


class DiagonalSlices:
    """Cells per unit of work (tile anti-diagonal or anti-diagonal), and how far a pass is: the
    CPU passes and the CUDA passes (engine/lcs/cuda.py) share it."""

    def __init__(self, cells: np.ndarray):
        self.cumulative = np.zeros(cells.shape[0] + 1, dtype=np.int64)
        np.cumsum(cells, out=self.cumulative[1:])
        self.diagonal = 0

    @property
    def total(self) -> int:
        return int(self.cumulative[-1])

    @property
    def done(self) -> int:
        return int(self.cumulative[self.diagonal])

    @property
    def finished(self) -> bool:
        return self.diagonal == self.cumulative.shape[0] - 1

    def plan(self, budget_cells: int) -> tuple[int, int]:
        """(first, stop): whole diagonals worth about ``budget_cells``, at least one."""
        start = self.diagonal
        goal = int(np.searchsorted(self.cumulative, self.cumulative[start] + budget_cells,
                                   side="right")) - 1
        return start, min(self.cumulative.shape[0] - 1, max(start + 1, goal))

    def advance(self, stop: int) -> int:
        cells = int(self.cumulative[stop] - self.cumulative[self.diagonal])
        self.diagonal = stop
        return cells


class Pass(DiagonalSlices):
    """One pass of a variant over ``a`` (rows) and ``b`` (columns), run in slices.

    Serial grids are strips (bands of one strip) spanning all columns; multicore grids
    are about ``config.LCS_TILE_BANDS`` bands by ``config.LCS_TILE_COLUMNS``
    columns per chunk, or one chunk per thread.
    """

    def __init__(self, mod: ModuleType, a: np.ndarray, b: np.ndarray, backend: str, mode: int,
                 sampling: Sampling | None = None):
        a = np.ascontiguousarray(a, dtype=np.uint8)
        b = np.ascontiguousarray(b, dtype=np.uint8)
        chunk = b.shape[0] if registry.serial(backend) else _chunk_columns(b.shape[0])
        self.mod = mod
        self.grid = mod.prepare(a, b, _band_rows(mod, a.shape[0], backend), chunk, mode,
                                sampling or no_sampling())
        self.sweep = mod.sweep_serial if registry.serial(backend) else mod.sweep_multicore
        super().__init__(self.grid.cells_per_diagonal())

    def run(self, budget_cells: int, abort: np.ndarray) -> int:
        """Run whole tile anti-diagonals worth about ``budget_cells``; return the cells done."""
        start, stop = self.plan(budget_cells)
        g = self.grid
        return self.advance(int(self.sweep(g.mode, start, stop, g.nbands, g.nchunks, g.state,
                                           abort)))

    def last_row(self) -> np.ndarray:
        """L[m, 0..n] (int64) once finished."""
        return self.mod.last_row(self.grid)

    def bits(self) -> np.ndarray:
        return self.mod.bits(self.grid)
