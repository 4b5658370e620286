"""lcs's slices and dispatch: score passes in slices, and linear-space recovery of one LCS.

A :class:`Pass` runs one variant's kernels over a tile grid, a few tile
anti-diagonals per call. :class:`Recovery` finds one LCS with Hirschberg's rule:
split ``a`` in half, run a forward pass of the top half and a pass of the reversed
bottom half against the reversed ``b`` (both with the variant's own kernels),
split ``b`` where the two last rows sum to the maximum, and recurse. Problems
whose traceback bits fit in ``config.LCS_TRACEBACK_WORDS`` words are solved
directly from those bits. Memory is therefore O(m + n) plus that fixed cap; no
m x n matrix is ever allocated.

The two phases of a job are the SliceRunners :class:`ScoreRunner` and
:class:`RecoveryRunner` (units: cells) for :func:`engine.slices.run_slices`;
:class:`Kernels` makes a job's passes (CPU, or GPU through engine.lcs.cuda,
imported only for cuda jobs) and compiles them.
"""

from __future__ import annotations

from typing import Generator

import numpy as np

from engine import registry
from engine import config
from engine.jobs import Job
from engine.lcs.cpu_common import BITS, PLAIN, SNAPSHOT, Sampling, traceback
from engine.sequences import DECODE_TABLE
from engine.slices import CallsRunner, Step

from engine.lcs.passes import FIRST_SLICE_CELLS, Pass, cpu_module


def fits_traceback(m: int, n: int, max_words: int) -> bool:
    return (n + 1) * ((m + 63) // 64) <= max_words


class Recovery:
    """Hirschberg's linear-space recovery of one LCS of ``a`` and ``b``.

    Subproblems are solved left to right, so :attr:`pieces` always holds a
    prefix of one optimal LCS, even after an abort.
    """

    def __init__(self, a: np.ndarray, b: np.ndarray, new_pass, max_words: int | None = None):
        # new_pass(a, b, mode) -> a pass; the CUDA backend runs its score passes on the GPU.
        self.new_pass = new_pass
        self.a = np.ascontiguousarray(a, dtype=np.uint8)
        self.b = np.ascontiguousarray(b, dtype=np.uint8)
        self.max_words = config.LCS_TRACEBACK_WORDS if max_words is None else max_words
        self.stack = [(0, self.a.shape[0], 0, self.b.shape[0])]
        self.current: tuple[int, int, int, int] | None = None  # the subproblem under way
        self.pieces: list[np.ndarray] = []
        self.active_left = 0  # cells still to run in the passes under way

    @property
    def finished(self) -> bool:
        return not self.stack and self.current is None

    def _cost(self, m: int, n: int) -> int:
        """Cells a subproblem will take: m*n as a leaf, about 2*m*n when split."""
        return m * n if fits_traceback(m, n, self.max_words) else 2 * m * n

    def remaining(self) -> int:
        return self.active_left + sum(self._cost(ah - al, bh - bl) for al, ah, bl, bh in self.stack)

    def pairs(self) -> np.ndarray:
        """0-based (i, j) pairs recovered so far, increasing."""
        if not self.pieces:
            return np.zeros((0, 2), dtype=np.int64)
        return np.concatenate(self.pieces)

    def _run(self, p: Pass, budget, abort, after: int):
        while not p.finished and abort[0] == 0:
            cells = p.run(budget(), abort)
            self.active_left = p.total - p.done + after
            yield cells
        self.active_left = after

    def steps(self, budget, abort: np.ndarray) -> Generator[int, None, bool | None]:
        """Yield the cells of each kernel call (``budget()``: cells for the next one); return
        True when done, or None early when ``abort[0]`` is set."""
        a, b = self.a, self.b
        while self.stack:
            # Stays set until the subproblem is done, so an abort leaves it unfinished.
            self.current = alo, ahi, blo, bhi = self.stack.pop()
            m, n = ahi - alo, bhi - blo
            if m == 0 or n == 0:  # an empty side has no pairs to add
                pass
            elif fits_traceback(m, n, self.max_words):
                leaf = self.new_pass(a[alo:ahi], b[blo:bhi], BITS)
                yield from self._run(leaf, budget, abort, 0)
                if not leaf.finished:
                    return
                buf = np.empty((min(m, n), 2), dtype=np.int64)
                count = traceback(leaf.bits(), m, n, buf)
                self.pieces.append(buf[:count][::-1] + np.array([alo, blo], dtype=np.int64))
            elif m == 1:
                # A single row has L = 1 at its first matching column; no pass needed.
                hits = np.flatnonzero(b[blo:bhi] & a[alo])
                if hits.size:
                    self.pieces.append(np.array([[alo, blo + hits[0]]], dtype=np.int64))
            else:
                mid = alo + m // 2
                forward = self.new_pass(a[alo:mid], b[blo:bhi], PLAIN)
                backward = self.new_pass(a[mid:ahi][::-1], b[blo:bhi][::-1], PLAIN)
                yield from self._run(forward, budget, abort, backward.total)
                if not forward.finished:
                    return
                yield from self._run(backward, budget, abort, 0)
                if not backward.finished:
                    return
                # top[J] = L(a[alo:mid], b[blo:blo+J]); bottom[K] = L(a[mid:ahi], b[bhi-K:bhi]).
                total = forward.last_row() + backward.last_row()[::-1]
                split = blo + int(np.argmax(total))
                self.stack.append((mid, ahi, split, bhi))
                self.stack.append((alo, mid, blo, split))
            self.current = None
        return True


def lcs_text(a: np.ndarray, b: np.ndarray, pairs0: np.ndarray) -> str:
    """The LCS of 0-based pairs: each symbol the intersection of the two matched base sets."""
    common = a[pairs0[:, 0]] & b[pairs0[:, 1]]
    return DECODE_TABLE[common].tobytes().decode("ascii")


class Kernels:
    """A job's passes.

    CPU jobs run every pass on the variant's kernels; cuda jobs run the score passes
    (and the recovery's last-row passes) on the GPU and the recovery's traceback-bit
    leaves on the variant's serial CPU kernels.
    """

    def __init__(self, job: Job, abort: np.ndarray):
        self.backend = job.backend
        self.mod = cpu_module(job.variant)  # (a cuda job's recovery leaves run on it)
        #: a full score pass runs for the length alone, or to sample the GUI's heatmap
        self.score_pass = job.params["task"] == "length" or job.snapshots
        self.score_mode = SNAPSHOT if job.snapshots else PLAIN
        if registry.on_gpu(job.backend):
            self.gpu = registry.kernels(job)(job, abort)  # engine.lcs.cuda.CudaPasses
        else:
            self.gpu = None

    def new_pass(self, a: np.ndarray, b: np.ndarray, mode: int, sampling: Sampling | None = None):
        if self.gpu is not None:
            return self.gpu.new_pass(a, b, mode, sampling)
        return Pass(self.mod, a, b, self.backend, mode, sampling)

    def recovery(self, a: np.ndarray, b: np.ndarray) -> Recovery:
        return Recovery(a, b, self.new_pass, self.gpu.max_words if self.gpu is not None else None)

class ScoreRunner:
    """The score pass over the whole matrix, whole tile anti-diagonals per slice (units: cells)."""

    def __init__(self, p, abort: np.ndarray, sampling: Sampling | None, shape):
        self.p, self.abort = p, abort
        self.sampling, self.shape = sampling, shape
        self.total = p.total
        self.first_slice = FIRST_SLICE_CELLS

    @property
    def done(self) -> int:
        return self.p.done

    @property
    def finished(self) -> bool:
        return self.p.finished

    def step(self, budget: int) -> Step:
        cells = self.p.run(budget, self.abort)
        return Step(cells, cells, cells, aborted=self.abort[0] != 0 and not self.p.finished)

    def report(self) -> dict:
        image = self.sampling.image.copy() if self.sampling is not None else None
        return {"message": "score pass", "snapshot": image, "snapshot_shape": self.shape}


class RecoveryRunner(CallsRunner):
    """Hirschberg's recovery (units: cells; ``total`` is an estimate until it ends).

    Its subproblems make many small kernel calls, so a slice runs calls until about
    ``budget`` cells: each report copies the pairs found so far, and stays rare.
    """

    def __init__(self, recovery: Recovery, abort: np.ndarray, shape, first=1):
        super().__init__(recovery.steps(lambda: max(1, self.left), abort))
        self.recovery, self.shape = recovery, shape
        self.first = first  # 1-based position of a[0], b[0] in the loaded records
        self.first_slice = FIRST_SLICE_CELLS

    @property
    def total(self) -> int:
        return self.done + self.recovery.remaining()

    def report(self) -> dict:
        return {"message": "recovering the LCS", "snapshot_shape": self.shape,
                "partial": self.recovery.pairs() + self.first}
