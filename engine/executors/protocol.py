"""The chunked-problem protocol (see engine.executors): :class:`ChunkedProblem`, its
:class:`Task` and :class:`ChunkRun`, and the generic tiny-chunk warm-up. Below the
executors and the families' problems, which all import it."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from engine import config
from engine.slices import SliceRunner
from engine.streaming import Background, Chunk, Piece

#: Bases of the tiny chunk the warm-up runs on (beyond the overlap).
WARM_BASES = 64


@dataclass(frozen=True)
class Task:
    """One task: ``chunk`` of the background and, where the family cuts its work further,
    a ``key`` (kdiff: target record and range of starts). Small to ship."""

    chunk: Chunk
    key: tuple = ()

    @property
    def owned(self) -> int:
        """Background columns the chunk's pieces own (what progress counts)."""
        return sum(p.end - p.own for p in self.chunk.pieces)


class ChunkRun(SliceRunner, Protocol):
    """A task running on one chunk's text (its slices' :meth:`report` unused), and
    :meth:`take`: the partial answer found since the last call (picklable; taken while
    the chunk's text is still read)."""

    def take(self) -> Any: ...


class InnerRunnerRun:
    """A ChunkRun whose slices are those of the family's in-memory runner over the chunk
    (``self.runner``, set by the subclass): progress, finishing and stepping are its; the
    subclass gives :meth:`take` (and sets ``first_slice`` from the runner)."""

    runner: Any

    @property
    def total(self) -> int:
        return self.runner.total

    @property
    def done(self) -> int:
        return self.runner.done

    @property
    def finished(self) -> bool:
        return self.runner.finished

    def step(self, budget: int):
        return self.runner.step(budget)


class ChunkedProblem(ABC):
    """A family's problem over a background (see the module docstring). A subclass sets
    :attr:`spec`, :attr:`role`, :attr:`overlap` and :attr:`strands` and gives :meth:`open`,
    :meth:`merge` and, when it has one, :meth:`whole`; the client's merge
    state is built lazily or in :meth:`tasks` (which only the client calls), so a worker
    that only runs tasks never builds it.

    Made from a job alone (``type(problem)(job)``): that is how workers rebuild it from
    :meth:`worker_job`."""

    #: the family's FamilySpec (the variant and flags a Dask worker runs come from it)
    spec = None
    #: the job's input that is the background the chunks cut
    role: str = "background"
    #: merges must come in task order (kdiff: a record's scan stops at the first start
    #: whose suffix occurs whole, so later tasks may be dropped)
    ordered: bool = False
    strands: str = "forward"
    overlap: int = 0
    #: the most gap bases a hit can hold (its edits): a streamed plan reads that many at each
    #: end of a long assembly gap (engine.streaming.gap_skips); None: ``overlap``
    gap_reach: int | None = None
    #: whether making the run (a text packed or uploaded, tables built) counts as solve time
    #: (kmismatch: yes; kdiff and edit count their kernels' time only)
    setup_is_solve_time: bool = False
    #: about how long one task should take (an ordered problem sizes its tasks by it): a
    #: slice in this process; the Dask executor sets config.CLUSTER_TASK_SECONDS
    task_seconds: float = config.SLICE_SECONDS
    #: how many config.SLICE_SECONDS a slice of the run in this process lasts (kdiff on a
    #: GPU: longer slices give each slice's tier launches enough starts to fill the device)
    slice_scale: float = 1.0

    def __init__(self, job):
        self.job = job

    # -- described once, known to every process ----------------------------------------------
    @property
    def records(self) -> tuple:
        """The background records, the job's input :attr:`role` (a genome store's travel to
        workers as its path)."""
        return self.job.inputs[self.role]

    def tasks(self, chunks) -> list[Task]:
        """The tasks over a chunk plan, in the order to run them: one per chunk."""
        return [Task(chunk) for chunk in chunks]

    def warm_task(self, chunk: Chunk) -> Task:
        """The task :meth:`warm_up` runs on a tiny chunk (the first of :meth:`tasks`'
        kind, without the client's bookkeeping)."""
        return Task(chunk)

    def wanted(self, task: Task) -> bool:
        """Whether a task not run yet is still needed (ordered problems may stop early)."""
        return True

    def total_units(self) -> int:
        """Progress units of the whole problem: the background's columns (every column is
        owned by one piece of any chunk plan)."""
        return sum(len(r) for r in self.records)

    def units_done(self) -> int | None:
        """Progress units done when the problem knows better than the sum of its finished
        tasks' weights (kdiff: starts committed and skipped), else None."""
        return None

    def weight(self, task: Task) -> int:
        """Progress units of a task: the columns it owns (edit: times pattern instances)."""
        return task.owned

    @abstractmethod
    def open(self, task: Task, text, abort: np.ndarray, threads: int | None) -> ChunkRun:
        """The task on ``text`` (its chunk's engine.streaming.ChunkText) with the job's
        kernels."""

    def whole(self, abort: np.ndarray, threads: int | None):
        """The in-memory run over the whole background when it fits (a SliceRunner the
        family reads its result from), or None to run chunks whatever the size."""
        return None

    # -- the client's side ----------------------------------------------------------------------
    @abstractmethod
    def merge(self, task: Task, answer) -> None:
        """Fold a task's partial answer in (several per task in one process)."""

    def task_done(self, task: Task) -> None:
        """Every answer of ``task`` is merged."""

    def settle(self) -> bool:
        """After merges (ordered problems): commit what can be; False once nothing more is
        needed (an early stop)."""
        return True

    def report(self) -> dict:
        """Extra Progress fields after a slice (the partial answer)."""
        return {}

    def worker_job(self, gpu: bool):
        """The job as a Dask worker runs it (engine.cluster.worker_job: the job's variant on
        the workers' backend, one numba thread a task)."""
        from engine import cluster

        return cluster.worker_job(self.spec, self.job, gpu)

    # -- kernels ----------------------------------------------------------------------------------
    def warm_key(self) -> tuple:
        """What, besides the job's selection and parameters, decides the kernels its tasks
        compile (engine.slices.warm_key): e.g. the pattern lengths kernels specialise on."""
        return ()

    def warm_up(self) -> None:
        """The generic warm-up: the first task run on a tiny chunk of the background (its
        answer dropped), so the kernels compile or load on the job's own types. Kernels it
        does not reach load at their first call, as compile time (engine.slices)."""
        chunk = tiny_chunk(self.records, self.overlap)
        if chunk is not None:
            self.run_task(self.warm_task(chunk), Background(self.records, self.strands),
                          np.zeros(1, dtype=np.uint8))

    def run_task(self, task: Task, background: Background, abort: np.ndarray) -> tuple:
        """``task`` run to its end in one go on one numba thread (the warm-up, a Dask
        worker's task): (answer, cells, comparisons); its chunk's text released after."""
        run = self.open(task, background.text(task.chunk), abort, 1)
        cells = comparisons = 0
        while not run.finished:
            step = run.step(max(1, run.total))
            cells += step.cells
            comparisons += step.comparisons
        answer = run.take()
        background.release(task.chunk)
        return answer, cells, comparisons


def tiny_chunk(records, overlap: int) -> Chunk | None:
    """The first overlap + WARM_BASES columns of the longest record, owned whole (None when
    every record is empty)."""
    lengths = [len(r) for r in records]
    if not lengths or max(lengths) == 0:
        return None
    index = int(np.argmax(lengths))
    return Chunk((Piece(index, 0, min(lengths[index], int(overlap) + WARM_BASES), 0),))
