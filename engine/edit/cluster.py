"""edit search on a Dask cluster (``--backend dask``): :class:`ClusterRunner` and its tasks.

One task per background chunk (engine.streaming), all patterns and strands: a worker
(:class:`WorkerSearch`) searches the chunk's pieces with the streamed path's
:class:`~engine.edit.streamed.ChunkSearch` (the in-memory runner of the job's variant on
the workers' backend, one numba thread), whose pieces record only the ends they own.
The client merges the tasks' hits and profile bins as they complete, in any order, with
the streamed path's :class:`~engine.edit.streamed.ChunkMerge`: a record's best hit is
settled once all of its chunks are merged. The off-target report and pcr
(engine/primers/cluster.py) run the same tasks.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from engine.cluster import ChunkTasks
from engine.edit.streamed import ChunkMerge, ChunkSearch, search_overlap, whole_plan
from engine.jobs import Job
from engine.sequences import Record


@dataclass(frozen=True)
class ClusterJob:
    """What every worker of a dask job gets once (scattered): the search as a worker runs it
    (engine.cluster.worker_job; a store's records travel as its path) and, for pcr, the
    site settings."""

    token: str
    job: Job
    settings: object = None


class WorkerSearch:
    """A dask job's state on one worker process: the whole records' plan, and per thread a
    chunk reader."""

    def __init__(self, shared: ClusterJob):
        self.shared = shared
        self.job = shared.job
        self.records = self.job.inputs["text"]
        self.plan = whole_plan(self.job, self.records)
        self.abort = np.zeros(1, dtype=np.uint8)

    def _background(self):
        from engine.streaming import Background

        return Background(self.records, "forward")

    def warm_up(self) -> None:
        """The job's kernels compiled or loaded (a search of a tiny text, same patterns)."""
        from engine import cluster
        from engine.edit.driver import make_runner

        cluster.task_threads(self.job.backend)
        tiny = Record("w", np.array([1, 2, 4, 8, 15], dtype=np.uint8))
        lanes = make_runner(dataclasses.replace(self.job, inputs={
            "pattern": self.job.inputs["pattern"], "text": (tiny,)}), self.abort, 1).lanes
        if not lanes.compiled():
            lanes.warm_up()

    def search(self, chunk, answer):
        """(answer(search), cells, comparisons): the chunk searched to its end, ``answer``
        taken while its text is still read."""
        from engine import cluster

        cluster.task_threads(self.job.backend)
        background = cluster.per_thread(self, self._background)
        search = ChunkSearch(self.job, self.plan, background, chunk, self.abort, 1)
        runner = search.runner
        cells = comparisons = 0
        while not runner.finished:
            step = runner.step(runner.total)
            cells += step.cells
            comparisons += step.comparisons
        out = answer(search)
        background.release(chunk)
        return out, cells, comparisons


def worker(shared: ClusterJob) -> WorkerSearch:
    from engine import cluster

    return cluster.worker_state(shared, WorkerSearch)


def cluster_warm(shared: ClusterJob) -> None:
    """A dask job's first call on each worker: its kernels compiled or loaded."""
    worker(shared).warm_up()


def _hits(search: ChunkSearch):
    rows, _, cigar = search.new_hits()
    return rows, cigar, *search.profile()


def cluster_task(shared: ClusterJob, chunk):
    """A dask task: the hits one chunk's pieces own (with their CIGARs) and its profile bins."""
    return worker(shared).search(chunk, _hits)


def shared_job(job: Job, token: str, gpu: bool, settings=None) -> ClusterJob:
    """The search as the workers run it (GPU workers: the cuda default variant)."""
    from engine import cluster
    from engine.edit.spec import SPEC

    return ClusterJob(token, cluster.worker_job(SPEC, job, gpu), settings)


def search_chunks(job: Job, grid) -> list:
    """The chunks of the job's text that its tasks (on ``grid``, an engine.cluster.TaskGrid)
    search (overlap: the search's reach)."""
    return grid.chunks(job.inputs["text"], "forward", search_overlap(job))


class ClusterRunner(ChunkMerge, ChunkTasks):
    """The search on a Dask cluster (backend dask): one task per text chunk, merged as they
    complete (:class:`ChunkMerge`). Units are text columns x pattern instances."""

    def __init__(self, job: Job, abort: np.ndarray):
        ChunkMerge.__init__(self, job, job.inputs["text"])
        instances = len(self.plan.p_offs) - 1
        ChunkTasks.__init__(self, job.params.get("scheduler"), cluster_task, cluster_warm, abort,
                            weight=instances)
        self.total = instances * sum(len(r) for r in self.records)

    def _shared(self, gpu: bool) -> ClusterJob:
        return shared_job(self.job, self.grid.token(), gpu)

    def _plan(self) -> list:
        chunks = search_chunks(self.job, self.grid)
        self.expect(chunks)
        return chunks

    def _merge(self, chunk, answer) -> tuple[int, int]:
        (rows, cigar, where, values), cells, comparisons = answer
        self.add_hits(rows, cigar)
        self.add_profile(where, values)
        self.chunk_done(chunk)
        return cells, comparisons
