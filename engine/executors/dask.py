"""The Dask executor: a problem's tasks on a cluster (engine.cluster's sessions).

The job as the workers run it (:meth:`ChunkedProblem.worker_job`) and the problem's type
are scattered once; each worker rebuilds the problem from them once per job and process
(engine.cluster.worker_state), warms it (the generic tiny-chunk run), and runs tasks to
their end: ``(answer, cells, comparisons)`` per task. The client keeps a window of tasks
in flight, merges answers as they complete (in any order; an ordered problem settles in
task order and drops the tasks it no longer wants), inside run_slices' slices.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass
from typing import Any, Iterator

import numpy as np

from engine import cluster, config
from engine.executors.protocol import ChunkedProblem, Task
from engine.jobs import Progress
from engine.slices import Step, run_slices, warm_key, warm_once
from engine.streaming import Background


@dataclass(frozen=True)
class Shared:
    """What every worker gets once: the problem's type and the job it is made from."""

    token: str
    problem: type
    job: Any


class _WorkerState:
    """A job's problem on one worker process, and per thread a chunk reader."""

    def __init__(self, shared: Shared):
        self.job = shared.job
        self.problem: ChunkedProblem = shared.problem(shared.job)
        self.abort = np.zeros(1, dtype=np.uint8)

    def background(self):
        return Background(self.problem.records, self.problem.strands)


def warm(shared: Shared) -> None:
    """A job's first call on each worker: its kernels compiled or loaded."""
    state = cluster.worker_state(shared, _WorkerState)
    cluster.task_threads(state.job.backend)
    warm_once(warm_key(state.job, *state.problem.warm_key()), state.problem.warm_up)


def run_task(shared: Shared, task: Task):
    """One task run to its end on a worker: (answer, cells, comparisons)."""
    state = cluster.worker_state(shared, _WorkerState)
    cluster.task_threads(state.job.backend)
    background = cluster.per_thread(state, state.background)
    return state.problem.run_task(task, background, state.abort)


class Dask:
    """Runs problems on a Dask cluster: a local one (LocalCluster, or LocalCUDACluster with
    a GPU and dask_cuda) or the one at ``scheduler``."""

    def __init__(self, backend: str = "dask", scheduler: str | None = None):
        self.scheduler = scheduler

    def connect(self):
        """The session the tasks run in (closed when the job ends)."""
        return cluster.Session(self.scheduler)

    def run(self, problem: ChunkedProblem, meter, cancel):
        """Start or reach the cluster (the compile phase), run the tasks; return the problem
        with its merged answers, the session closed whatever happens."""
        runner = DaskTasks(problem, self, cancel.flag)
        try:
            yield Progress(0, runner.total, 0, 0, 0.0, phase="compiling",
                           message="starting the Dask cluster…")
            runner.start()
            meter.threads = runner.threads
            meter.ran = runner.worker_job
            yield from run_slices(runner, meter, cancel)
        finally:
            runner.close()
        return problem


class DaskTasks:
    """A problem's tasks on a cluster (a SliceRunner). :meth:`start` (the job's compile
    phase) reaches the cluster, scatters the :class:`Shared` to every worker and warms
    each; tasks are then submitted in order, at most :attr:`window` in flight, and each
    slice waits up to config.SLICE_SECONDS for answers, merged as they complete."""

    first_slice = 1

    def __init__(self, problem: ChunkedProblem, executor: Dask, abort: np.ndarray):
        self.problem, self.executor, self.abort = problem, executor, abort
        self.session = None
        self.worker_job = None  # the job as the workers run it (after start)
        self._shared = None  # the scattered Shared's future
        self._futures: dict = {}  # future -> its task, in flight
        self.total = problem.total_units()
        self.done = 0
        self._todo: Iterator[Task] | None = None
        self._next: Task | None = None
        self._stopped = False

    def start(self) -> None:
        """The cluster reached, the job's data on every worker, each warm (a worker that cannot
        open the store says so here), the tasks planned."""
        problem = self.problem
        self.session = session = self.executor.connect()
        self.worker_job = problem.worker_job(session.gpu)
        shared = Shared(uuid.uuid4().hex, type(problem), self.worker_job)
        client = session.client
        self._shared = client.scatter(shared, broadcast=True, hash=False)
        client.gather([client.submit(warm, self._shared, workers=[w], pure=False,
                                     allow_other_workers=True) for w in session.workers])
        problem.task_seconds = config.CLUSTER_TASK_SECONDS
        self._todo = iter(problem.tasks(cluster.task_chunks(
            problem.records, problem.strands, problem.overlap, problem.gap_reach, session.gpu)))
        self._next = next(self._todo, None)

    @property
    def threads(self) -> int:
        return self.session.threads if self.session else 1

    @property
    def window(self) -> int:
        """Tasks kept in flight: two per worker thread, so none waits for the next."""
        return 2 * self.threads + 1

    def close(self) -> None:
        """Cancel what is in flight, release the job's data, close the session."""
        if self.session is None:
            return
        session, self.session = self.session, None
        try:
            pending = list(self._futures) + ([self._shared] if self._shared is not None else [])
            if pending:
                session.client.cancel(pending, force=True)
        finally:
            self._futures.clear()
            self._shared = None
            session.close()

    # -- the SliceRunner protocol -------------------------------------------------------------
    @property
    def finished(self) -> bool:
        return self._stopped or (self._todo is not None and self._next is None
                                 and not self._futures)

    def report(self) -> dict:
        return self.problem.report()

    def _fill(self) -> None:
        while self._next is not None and len(self._futures) < self.window:
            task, self._next = self._next, next(self._todo, None)
            if self.problem.wanted(task):
                future = self.session.client.submit(run_task, self._shared, task, pure=False)
                self._futures[future] = task

    def _collect(self) -> list:
        """The futures in flight that completed within config.SLICE_SECONDS (returns as soon
        as one has, or when the abort flag is set)."""
        if not self._futures:
            return []
        deadline = time.perf_counter() + config.SLICE_SECONDS
        while True:  # futures' states are local: polling them costs nothing on the cluster
            done = [f for f in self._futures if f.done()]
            if done or time.perf_counter() >= deadline or self.abort[0]:
                return done
            time.sleep(0.005)

    def step(self, budget: int) -> Step:
        problem = self.problem
        self._fill()
        units = cells = comparisons = 0
        for future in self._collect():
            task = self._futures.pop(future)
            answer, c, q = cluster.task_result(future)
            problem.merge(task, answer)
            problem.task_done(task)
            owned = problem.weight(task)
            self.done = min(self.total, self.done + owned)
            units += owned
            cells += c
            comparisons += q
        if self.abort[0]:
            return Step(units, cells, comparisons, aborted=True)
        if not problem.settle():
            self._stopped = True
            self.done = self.total
        elif problem.ordered:  # cancel the tasks in flight no longer wanted
            gone = [f for f, task in self._futures.items() if not problem.wanted(task)]
            for future in gone:
                del self._futures[future]
            if gone:
                self.session.client.cancel(gone)
        known = problem.units_done()
        if known is not None:
            self.done = known
        self._fill()
        return Step(units, cells, comparisons)
