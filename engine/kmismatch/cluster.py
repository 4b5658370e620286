"""kmismatch on a Dask cluster (``--backend dask``): :class:`ClusterScanRunner` and its tasks.

One task per text chunk, all patterns (:func:`cluster_task`, run on a worker by
:class:`_WorkerSearch`): a task scans its chunk's pieces with an in-memory
:class:`~engine.kmismatch.driver.ScanRunner` and keeps the hits its pieces own
(:func:`~engine.kmismatch.driver.owned_hits`), so the client (engine.cluster.ChunkTasks)
adds them as tasks complete, in any order, and sorts and counts them once at the end.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from engine.cluster import ChunkTasks
from engine.jobs import Job
from engine.kmismatch.driver import Kernels, ScanRunner, OwnedHits, owned_hits


@dataclass(frozen=True)
class ClusterJob:
    """What every worker of a dask job gets once (scattered): the job as a worker runs it
    (engine.cluster.worker_selection), its text records (a store's travel as its path)."""

    token: str
    job: Job


class _WorkerSearch:
    """A dask job's state on one worker process: its kernels, and per thread a chunk reader."""

    def __init__(self, shared: ClusterJob):
        from engine.streaming import FlatText

        self.job = shared.job
        self.records = self.job.inputs["text"]
        self.offsets = FlatText(self.records).offsets
        self.pattern_lengths = np.array([len(p) for p in self.job.inputs["patterns"]],
                                        dtype=np.int64)
        self.kernels = Kernels(self.job)
        self.abort = np.zeros(1, dtype=np.uint8)

    def _background(self):
        from engine.streaming import Background

        return Background(self.records, "forward")

    def run(self, chunk):
        """The hits the chunk's pieces own (whole-text coordinates), cells, comparisons."""
        from engine import cluster
        from engine.streaming import piece_records

        cluster.task_threads(self.job.backend)
        background = cluster.per_thread(self, self._background)
        text = background.text(chunk)
        pieces = piece_records(self.records, text)
        inner = ScanRunner(dataclasses.replace(self.job, inputs={
            "text": tuple(pieces), "patterns": self.job.inputs["patterns"]}),
            self.kernels, self.abort, cache_text=False)  # (pieces: views of a reused buffer)
        cells = comparisons = 0
        while not inner.finished:
            step = inner.step(inner.total)
            cells += step.cells
            comparisons += step.comparisons
        background.release(chunk)
        n = len(inner.found)
        pos, code, mis = (col[:n] for col in inner.found.columns)
        pos, code, mis = owned_hits(pos, code, mis, inner.offsets, chunk.pieces, self.offsets,
                                    self.pattern_lengths)
        return pos, code, mis, cells, comparisons


def _worker_search(shared: ClusterJob) -> _WorkerSearch:
    from engine import cluster

    return cluster.worker_state(shared, _WorkerSearch)


def cluster_warm(shared: ClusterJob) -> None:
    """A dask job's first call on each worker: its kernels compiled or loaded."""
    from engine import cluster

    search = _worker_search(shared)
    cluster.task_threads(search.job.backend)
    search.kernels.warm_up()


def cluster_task(shared: ClusterJob, chunk):
    """A dask task: the hits of one text chunk (:meth:`_WorkerSearch.run`)."""
    return _worker_search(shared).run(chunk)


class ClusterScanRunner(OwnedHits, ChunkTasks):
    """The scan on a Dask cluster (backend dask): one task per text chunk, all patterns.

    Chunks overlap by the longest pattern - 1 and a task keeps the hits its pieces own
    (:func:`owned_hits`, as :class:`StreamedScanRunner`), so hits are merged as tasks
    complete, in any order; progress counts the text positions of the chunks merged.
    """

    def __init__(self, job: Job, abort: np.ndarray):
        OwnedHits.__init__(self, job)
        ChunkTasks.__init__(self, job.params.get("scheduler"), cluster_task, cluster_warm, abort)

    def _shared(self, gpu: bool) -> ClusterJob:
        from engine import cluster
        from engine.kmismatch.spec import SPEC

        worker = cluster.worker_job(SPEC, self.job, gpu)
        if worker.backend == "cuda":  # the GPU kernels' limits, said before any task (make_job's)
            from engine.kmismatch.cuda_options import check_cuda_limits

            check_cuda_limits(self.job.inputs["patterns"], self.job.params["strands"])
        return ClusterJob(self.grid.token(), worker)

    def _plan(self) -> list:
        return self.grid.chunks(self.records, "forward", int(self.pattern_lengths.max()) - 1)

    def _merge(self, chunk, answer) -> tuple[int, int]:
        pos, code, mis, cells, comparisons = answer
        self._add(pos, code, mis)
        return cells, comparisons
