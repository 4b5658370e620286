"""Host side of the nw kernels: bands of rows, Hirschberg's recursion and snapshots.

Everything is a generator that yields between kernel calls, so
:func:`engine.nw.iter_solve` can report progress and stop on a cancel between
slices; the kernels poll the cancel flag themselves inside a slice.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine import config
from engine.jobs import SliceClock, now
from engine.nw.scoring import Scores, cast_scores, value_type

_NO_ROWS = np.zeros(0, dtype=np.int64)


@dataclass
class Stats:
    """Work done so far (cells) and the solve time: the time the generators ran, not
    the time their consumer held them suspended between reports."""

    cells: int = 0
    seconds: float = 0.0
    _since: float | None = None

    def resume(self) -> None:
        self._since = now()

    def pause(self) -> None:
        if self._since is not None:
            self.seconds += now() - self._since
            self._since = None


class Kernels:
    """The tile kernel of one variant on one backend, behind the tile contract of
    :mod:`engine.nw.cpu_common`."""

    def __init__(self, variant: str, backend: str, threads: int | None = None):
        self.variant = variant
        self.backend = backend
        self.threads = threads
        if backend == "serial":
            if variant == "rows":
                from engine.nw.cpu_rows import rows_tile as tile
            elif variant == "diagonal":
                from engine.nw.cpu_diagonal import diagonal_tile as tile
            else:
                from engine.nw.cpu_prefix import prefix_tile as tile
            self._tile = tile
        elif variant == "prefix":
            from engine.nw.cpu_prefix import prefix_tile_parallel

            self._tile = prefix_tile_parallel
        else:
            from engine.nw import cpu_wavefront

            self._tile = cpu_wavefront.wavefront
            self._kind = cpu_wavefront.ROWS if variant == "rows" else cpu_wavefront.DIAGONAL

    def value_type(self, m: int, n: int, sc: Scores):
        """(dtype, offset) for an m x n problem: kernels hold H - offset in dtype (see
        :func:`engine.nw.scoring.value_type`; prefix also holds rows shifted by j*gap)."""
        return value_type(m, n, sc, shifted=self.variant == "prefix")

    def first_rows(self, m: int, n: int) -> int:
        """Rows of a sweep's first band."""
        return max(1, config.NW_FIRST_SLICE_CELLS // max(1, n))

    def warm_key(self, snapshots: bool) -> tuple:
        """What, besides variant, backend and dtype, decides the kernels a job compiles."""
        return ()

    def _nthreads(self) -> int:
        import numba

        limit = numba.config.NUMBA_NUM_THREADS
        wanted = self.threads or limit
        numba.set_num_threads(max(1, min(wanted, limit)))
        return numba.get_num_threads()

    def tile(self, a, b, top, left, bottom, right, scores, rec_rows, rec_cols, snap,
             row0, col0, abort) -> bool:
        """Compute one tile; False when the cancel flag stopped it."""
        args = (a, b, top, left, bottom, right, *scores, rec_rows, rec_cols, snap, row0, col0, abort)
        if self.variant == "prefix":
            if self.backend == "serial":
                return self._tile(*args, config.NW_PREFIX_LANES)
            return self._tile(*args, config.NW_PREFIX_LANES, self._nthreads())
        if self.backend == "serial":
            return self._tile(*args)
        threads = self._nthreads()
        th, tw = tile_shape(a.shape[0], b.shape[0], threads)
        return self._tile(self._kind, *args, th, tw)


def make_kernels(job) -> "Kernels":
    """The job's kernels: CPU ones here, CUDA ones from engine.nw.cuda (imported only for
    cuda jobs, so CPU paths never load numba.cuda)."""
    if job.backend == "cuda":
        from engine.nw.cuda import CudaKernels

        return CudaKernels(job.variant, job.parallel, job.flags,
                           job.params.get("threads_per_block", 0), job.params.get("blocks", 0))
    return Kernels(job.variant, job.backend, job.threads)


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

    def image(self, base: int, step: int) -> np.ndarray:
        """A new uint16 image: 0 where not computed yet, else 1 + (H - base) // step."""
        raw = self.raw.astype(np.int64) + self.offset
        img = 1 + (raw - base) // step
        img[self.raw == self.unset] = 0
        return img.astype(np.uint16)


def _samples(length: int, side: int) -> np.ndarray:
    """Matrix indices 0..length, all of them or ``side`` of them evenly spread."""
    if length + 1 <= side:
        return np.arange(length + 1, dtype=np.int64)
    return np.unique(np.linspace(0, length, side).round().astype(np.int64))


def sweep(kernels: Kernels, a, b, sc: Scores, vtype, abort, stats: Stats,
          recorder: Recorder | None = None, keep: int | None = None):
    """Generator: the rows of ``a`` against ``b`` from the global boundary down, in bands
    of about one slice each; yields after every band. ``vtype`` is (dtype, offset).

    Returns (last row, the row at index ``keep`` or None) as H - offset, or None when
    cancelled.
    """
    m, n = a.shape[0], b.shape[0]
    dtype, offset = vtype
    scores = cast_scores(sc, dtype)
    row = (np.arange(n + 1, dtype=np.int64) * sc.gap - offset).astype(dtype)
    kept = row.copy() if keep == 0 else None
    rec_rows, rec_cols, snap = ((recorder.rows, recorder.cols, recorder.raw)
                                if recorder is not None and recorder.enabled
                                else (_NO_ROWS, _NO_ROWS, np.zeros((0, 0), dtype=dtype)))
    clock = SliceClock(first=kernels.first_rows(m, n), maximum=max(1, m))
    r = 0
    while r < m:
        h = min(clock.size, m - r)
        if m - r - h < h // 4:
            h = m - r   # no thin last band: it would leave most of a GPU idle
        if keep is not None and r < keep < r + h:
            h = keep - r
        left = (np.arange(r, r + h + 1, dtype=np.int64) * sc.gap - offset).astype(dtype)
        bottom = np.empty(n + 1, dtype=dtype)
        right = np.empty(h + 1, dtype=dtype)
        t0 = now()
        done = kernels.tile(a[r:r + h], b, row, left, bottom, right, scores,
                            rec_rows, rec_cols, snap, r, 0, abort)
        dt = now() - t0
        if not done:
            return None
        stats.cells += h * n
        clock.update(h, dt)
        row = bottom
        r += h
        if r == keep:
            kept = row.copy()
        yield
    return row, kept


def hirschberg(kernels: Kernels, a, b, sc: Scores, vtype, abort, stats: Stats, top_row=None):
    """Generator: one optimal alignment in linear space (Hirschberg 1975, linear gaps).

    Each sub-problem's middle row of A is split where the forward scores of its
    upper half plus the reverse scores of its lower half peak (first such
    column); both passes are :func:`sweep` with the variant's own kernel (the
    offset in ``vtype`` cancels out of that comparison).
    Sub-problems of at most ``config.NW_FULL_MATRIX_CELLS`` cells are solved
    with the full-matrix traceback. ``top_row`` is the forward row at
    len(a) // 2 when the caller has it already (from the score pass).

    Returns the column operations (uint8, see :mod:`engine.nw.alignment`),
    or None when cancelled.
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
            stats.cells += h * w
            pieces.append(ops[h + w - count:])
            continue
        mid = (i0 + i1) // 2
        if top_row is not None and (i0, i1, j0, j1) == (0, m, 0, n):
            fwd = top_row
        else:
            out = yield from sweep(kernels, a[i0:mid], b[j0:j1], sc, vtype, abort, stats)
            if out is None:
                return None
            fwd = out[0]
        out = yield from sweep(kernels, a_rev[m - i1:m - mid], b_rev[n - j1:n - j0], sc, vtype,
                               abort, stats)
        if out is None:
            return None
        total = fwd.astype(np.int64) + out[0][::-1].astype(np.int64)
        split = j0 + int(np.argmax(total))
        stack.append((mid, i1, split, j1))   # popped after the upper half: pieces stay in order
        stack.append((i0, mid, j0, split))
    return np.concatenate(pieces) if pieces else np.zeros(0, dtype=np.uint8)
