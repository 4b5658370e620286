"""nw's slices and dispatch: the score pass and Hirschberg's traceback as SliceRunners.

:class:`Kernels` (CPU) and :class:`engine.nw.cuda.CudaKernels` (imported only for cuda
jobs) compute a tile of H behind the contract of :mod:`engine.nw.cpu_common`; a
:class:`Sweep` runs such tiles down the rows of a problem, a band at a time.
:class:`ScoreRunner` is the score pass (one sweep of the whole matrix, with the
snapshot's :class:`Recorder`) and :class:`TracebackRunner` Hirschberg's linear-space
recursion, whose many sub-problem sweeps run a slice's worth of bands per step.
Both count in cells for :func:`engine.slices.run_slices`; the kernels poll the
cancel flag themselves inside a band.
"""

from __future__ import annotations

from typing import Iterator

import numpy as np

from engine import registry
from engine import config
from engine.nw.scoring import Scores, cast_scores, snapshot_scale, value_type
from engine.slices import CallsRunner, Step

_NO_ROWS = np.zeros(0, dtype=np.int64)

class Kernels:
    """The tile kernel of one variant on one backend, behind the tile contract of
    :mod:`engine.nw.cpu_common`."""

    def __init__(self, variant: str, backend: str):
        self.variant = variant
        self.backend = backend
        import numba

        self._threads = numba.get_num_threads  # of the calling thread: set per slice
        self._tile = registry.named_kernels("nw", variant, backend)  # (engine/nw/spec.py)
        if registry.threaded(backend) and variant != "prefix":
            from engine.nw import cpu_wavefront

            self._kind = cpu_wavefront.ROWS if variant == "rows" else cpu_wavefront.DIAGONAL

    def value_type(self, m: int, n: int, sc: Scores):
        """(dtype, offset) for an m x n problem: kernels hold H - offset in dtype (see
        :func:`engine.nw.scoring.value_type`; prefix also holds rows shifted by j*gap)."""
        return value_type(m, n, sc, shifted=self.variant == "prefix")

    def first_rows(self, m: int, n: int) -> int:
        """Rows of a sweep's first band."""
        return max(1, config.NW_FIRST_SLICE_CELLS // max(1, n))

    def tile(self, a, b, top, left, bottom, right, scores, rec_rows, rec_cols, snap,
             row0, col0, abort) -> bool:
        """Compute one tile; False when the cancel flag stopped it."""
        args = (a, b, top, left, bottom, right, *scores, rec_rows, rec_cols, snap, row0, col0, abort)
        if self.variant == "prefix":
            if registry.serial(self.backend):
                return self._tile(*args, config.NW_PREFIX_LANES)
            return self._tile(*args, config.NW_PREFIX_LANES, self._threads())
        if registry.serial(self.backend):
            return self._tile(*args)
        th, tw = tile_shape(a.shape[0], b.shape[0], self._threads())
        return self._tile(self._kind, *args, th, tw)


def make_kernels(job) -> "Kernels":
    """The job's kernels, as engine/nw/spec.py names them: a CPU tile kernel behind
    :class:`Kernels`, or engine.nw.cuda's (imported only for cuda jobs, so CPU paths never
    load numba.cuda)."""
    if registry.on_gpu(job.backend):
        return registry.kernels(job)(job.variant, job.parallel, job.flags,
                                     job.params.get("threads_per_block", 0),
                                     job.params.get("blocks", 0))
    return Kernels(job.variant, job.backend)


def tile_shape(h: int, w: int, threads: int) -> tuple[int, int]:
    """Tiles for the wavefront: at most the configured size, and small enough that a
    band has a few tile rows and columns per thread (otherwise the wavefront is serial)."""
    split = 2 * max(1, threads)
    th = max(config.NW_MIN_TILE, min(config.NW_TILE_ROWS, -(-h // split)))
    tw = max(config.NW_MIN_TILE, min(config.NW_TILE_COLUMNS, -(-w // split)))
    return th, tw


class Recorder:
    """The sampled rows and columns of the snapshot and the raw values found so far."""

    def __init__(self, m: int, n: int, sc: Scores, dtype, offset: int, enabled: bool):
        side = config.SNAPSHOT_MAX_SIDE
        self.base, self.step = snapshot_scale(m, n, sc)
        self.shape = (m + 1, n + 1)
        if not enabled:
            self.rows, self.cols = _NO_ROWS, _NO_ROWS
            self.raw = np.zeros((0, 0), dtype=dtype)
            return
        self.rows = _samples(m, side)
        self.cols = _samples(n, side)
        self.offset = offset
        self.unset = np.iinfo(dtype).min      # below every H - offset (value_type's headroom)
        self.raw = np.full((self.rows.shape[0], self.cols.shape[0]), self.unset, dtype=dtype)
        self.raw[0, :] = self.cols * sc.gap - offset    # row 0 and column 0 are the boundary
        self.raw[:, 0] = self.rows * sc.gap - offset

    @property
    def enabled(self) -> bool:
        return self.rows.shape[0] > 0

    def image(self) -> np.ndarray | None:
        """A new uint16 image (None without snapshots): 0 where not computed yet, else
        1 + (H - base) // step (:func:`engine.nw.scoring.snapshot_scale`)."""
        if not self.enabled:
            return None
        raw = self.raw.astype(np.int64) + self.offset
        img = 1 + (raw - self.base) // self.step
        img[self.raw == self.unset] = 0
        return img.astype(np.uint16)

    def report(self) -> dict:
        """The snapshot fields of a Progress."""
        image = self.image()
        return {} if image is None else {"snapshot": image, "snapshot_shape": self.shape}


def _samples(length: int, side: int) -> np.ndarray:
    """Matrix indices 0..length, all of them or ``side`` of them evenly spread."""
    if length + 1 <= side:
        return np.arange(length + 1, dtype=np.int64)
    return np.unique(np.linspace(0, length, side).round().astype(np.int64))


class Sweep:
    """The rows of ``a`` against ``b`` from the global boundary down, a band of rows per
    :meth:`band`. ``row`` is the last row done as H - offset in the kernels' dtype
    (``vtype`` is (dtype, offset)); ``kept`` is the row at index ``keep`` once passed."""

    def __init__(self, kernels, a, b, sc: Scores, vtype, abort, recorder: Recorder | None = None,
                 keep: int | None = None):
        m, n = a.shape[0], b.shape[0]
        dtype, offset = vtype
        self.kernels, self.a, self.b, self.abort = kernels, a, b, abort
        self.gap, self.offset, self.dtype = sc.gap, offset, dtype
        self.scores = cast_scores(sc, dtype)
        self.row = (np.arange(n + 1, dtype=np.int64) * sc.gap - offset).astype(dtype)
        self.keep = keep
        self.kept = self.row.copy() if keep == 0 else None
        self.rec = ((recorder.rows, recorder.cols, recorder.raw)
                    if recorder is not None and recorder.enabled
                    else (_NO_ROWS, _NO_ROWS, np.zeros((0, 0), dtype=dtype)))
        self.min_rows = kernels.first_rows(m, n)
        self.r = 0

    @property
    def finished(self) -> bool:
        return self.r >= self.a.shape[0]

    def band(self, rows: int) -> int | None:
        """Run a band of about ``rows`` rows (at least the kernels' first band, whose
        size may matter to a GPU); return its cells, or None when the cancel flag
        stopped the kernel."""
        m, n, r, keep = self.a.shape[0], self.b.shape[0], self.r, self.keep
        h = min(max(rows, self.min_rows), m - r)
        if m - r - h < h // 4:
            h = m - r   # no thin last band: it would leave most of a GPU idle
        if keep is not None and r < keep < r + h:
            h = keep - r
        left = (np.arange(r, r + h + 1, dtype=np.int64) * self.gap - self.offset).astype(self.dtype)
        bottom = np.empty(n + 1, dtype=self.dtype)
        right = np.empty(h + 1, dtype=self.dtype)
        if not self.kernels.tile(self.a[r:r + h], self.b, self.row, left, bottom, right,
                                 self.scores, *self.rec, r, 0, self.abort):
            return None
        self.row = bottom
        self.r = r + h
        if self.r == keep:
            self.kept = bottom.copy()
        return h * n


class ScoreRunner:
    """The score pass: one sweep of the whole matrix, a band per slice (units: cells)."""

    def __init__(self, sweep: Sweep, recorder: Recorder):
        self.sweep, self.recorder = sweep, recorder
        self.n = sweep.b.shape[0]
        self.total = sweep.a.shape[0] * self.n
        self.first_slice = sweep.min_rows * self.n

    @property
    def done(self) -> int:
        return self.sweep.r * self.n

    @property
    def finished(self) -> bool:
        return self.sweep.finished

    def step(self, budget: int) -> Step:
        cells = self.sweep.band(max(1, budget // self.n))
        if cells is None:
            return Step(0, aborted=True)
        return Step(cells, cells, cells)

    def report(self) -> dict:
        return {"message": "score pass", **self.recorder.report()}


class TracebackRunner(CallsRunner):
    """Hirschberg's recursion in slices (units: cells; ``total`` is the 1.5 m n estimate
    until it ends). A slice runs sub-problem bands and base cases until about ``budget``
    cells; :attr:`answer` holds the column operations once finished."""

    def __init__(self, kernels, a, b, sc: Scores, vtype, abort, recorder: Recorder, top_row=None):
        m, n = a.shape[0], b.shape[0]
        super().__init__(hirschberg(kernels, a, b, sc, vtype, abort,
                                    lambda w: max(1, self.left // max(1, w)), top_row))
        self.recorder = recorder
        self.estimate = int(1.5 * m * n)   # at most about 1.5 m n: the halves shrink per level
        self.first_slice = kernels.first_rows(m, n) * n

    @property
    def total(self) -> int:
        return self.done if self.finished else max(self.done, self.estimate)

    def report(self) -> dict:
        return {"message": "traceback", **self.recorder.report()}


def _run_sweep(sweep: Sweep, rows):
    """Generator: the sweep's bands (``rows(w)`` rows each), yielding their cells; returns
    False when cancelled."""
    w = sweep.b.shape[0]
    while not sweep.finished:
        cells = sweep.band(rows(w))
        if cells is None:
            return False
        yield cells
    return True


def hirschberg(kernels, a, b, sc: Scores, vtype, abort, rows, top_row=None) -> Iterator[int]:
    """Generator: one optimal alignment in linear space (Hirschberg 1975, linear gaps).

    Each sub-problem's middle row of A is split where the forward scores of its
    upper half plus the reverse scores of its lower half peak (first such
    column); both passes are a :class:`Sweep` with the variant's own kernel (the
    offset in ``vtype`` cancels out of that comparison), ``rows(w)`` rows a band.
    Sub-problems of at most ``config.NW_FULL_MATRIX_CELLS`` cells are solved
    with the full-matrix traceback. ``top_row`` is the forward row at
    len(a) // 2 when the caller has it already (from the score pass).

    Yields the cells of each band and base case; returns the column operations
    (uint8, see :mod:`engine.nw.alignment`), or None when cancelled.
    """
    from engine.nw.alignment import OP_D, OP_I
    from engine.nw.cpu_traceback import full_traceback

    m, n = a.shape[0], b.shape[0]
    a_rev = a[::-1].copy()
    b_rev = b[::-1].copy()
    pieces = []
    stack = [(0, m, 0, n)]
    limit = config.NW_FULL_MATRIX_CELLS
    while stack:
        i0, i1, j0, j1 = stack.pop()
        h, w = i1 - i0, j1 - j0
        if h == 0 or w == 0:
            pieces.append(np.full(h + w, OP_D if w == 0 else OP_I, dtype=np.uint8))
            continue
        if h == 1 or (h + 1) * (w + 1) <= limit:
            if abort[0] != 0:
                return None
            ops = np.empty(h + w, dtype=np.uint8)
            _, count = full_traceback(a[i0:i1], b[j0:j1], sc.match, sc.mismatch, sc.gap, ops)
            pieces.append(ops[h + w - count:])
            yield h * w
            continue
        mid = (i0 + i1) // 2
        if top_row is not None and (i0, i1, j0, j1) == (0, m, 0, n):
            fwd = top_row
        else:
            forward = Sweep(kernels, a[i0:mid], b[j0:j1], sc, vtype, abort)
            if not (yield from _run_sweep(forward, rows)):
                return None
            fwd = forward.row
        backward = Sweep(kernels, a_rev[m - i1:m - mid], b_rev[n - j1:n - j0], sc, vtype, abort)
        if not (yield from _run_sweep(backward, rows)):
            return None
        total = fwd.astype(np.int64) + backward.row[::-1].astype(np.int64)
        split = j0 + int(np.argmax(total))
        stack.append((mid, i1, split, j1))   # popped after the upper half: pieces stay in order
        stack.append((i0, mid, j0, split))
    return np.concatenate(pieces) if pieces else np.zeros(0, dtype=np.uint8)
