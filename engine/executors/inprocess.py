"""The in-process executor: a problem on this process's serial, multicore or cuda kernels.

A background that fits (``config.STREAM_MEMORY_BASES``; cuda: ``config.GPU_STREAM_BYTES``)
runs as the family's whole-text run; a larger one as its tasks, one chunk after another
(:class:`ChunkLoop`, one reused buffer, a store's pages released behind the reader). Both
go through :func:`engine.slices.run_slices`: progress, cancel and a kernel's abort.
"""

from __future__ import annotations

import numpy as np

from engine import registry
from engine.executors.protocol import ChunkedProblem, Task
from engine.slices import Step, compile_once, run_slices, warm_key
from engine.streaming import Background


class InProcess:
    """Runs problems here; ``gpu``: a cuda job (its chunks fit the GPU's budget)."""

    def __init__(self, backend: str = "serial", scheduler: str | None = None):
        self.gpu = registry.on_gpu(backend)

    def run(self, problem: ChunkedProblem, meter, cancel):
        """Compile if needed, then run the whole-text run when the background fits and the
        family has one, else a :class:`ChunkLoop`, to the end, a cancel or an abort; return
        the answer: the whole run, or the problem with its merged answers."""
        key = warm_key(problem.job, *problem.warm_key())
        yield from compile_once(key, problem.warm_up, problem.total_units())
        abort, threads = cancel.flag, meter.threads

        def make():
            background = Background(problem.records, problem.strands, gpu=self.gpu)
            whole = problem.whole(abort, threads) if background.fits() else None
            return whole if whole is not None else ChunkLoop(problem, background, abort, threads)

        runner = meter.timed(make) if problem.setup_is_solve_time else make()
        yield from run_slices(runner, meter, cancel, scale=problem.slice_scale)
        return problem if isinstance(runner, ChunkLoop) else runner


class ChunkLoop:
    """A problem's tasks run one after another, each a slice at a time (a SliceRunner):
    every slice's partial answer is merged at once, so a cancel keeps it. Progress
    counts the finished tasks' units and the open one's share."""

    def __init__(self, problem: ChunkedProblem, background: Background, abort: np.ndarray,
                 threads: int | None):
        self.problem, self.background = problem, background
        self.abort, self.threads = abort, threads
        self._todo = iter(problem.tasks(background.chunks(problem.overlap,
                                                           max_edits=problem.gap_reach)))
        self.total = problem.total_units()
        self.done = 0
        self._before = 0  # units of the tasks finished
        self._task: Task | None = None
        self._run = None
        self._open_next()
        self.first_slice = self._run.first_slice if self._run is not None else 1

    @property
    def finished(self) -> bool:
        return self._run is None

    def _open_next(self) -> None:
        for task in self._todo:
            if self.problem.wanted(task):
                self._task = task
                self._run = self.problem.open(task, self.background.text(task.chunk),
                                              self.abort, self.threads)
                return
        self._task = self._run = None
        self.done = self.total

    def step(self, budget: int) -> Step:
        problem, run, task = self.problem, self._run, self._task
        step = run.step(budget)
        problem.merge(task, run.take())
        if step.aborted:
            return step
        units = problem.weight(task)
        self.done = self._before + units * min(run.done, run.total) // max(1, run.total)
        if run.finished:
            self._run = run = None  # (a cuda chunk's memory goes before the next's)
            self.background.release(task.chunk)
            problem.task_done(task)
            self._before += units
            self.done = self._before
            if problem.settle():
                self._open_next()
            else:
                self.done = self.total
        known = problem.units_done()
        if known is not None:
            self.done = known
        return step

    def report(self) -> dict:
        return self.problem.report()
