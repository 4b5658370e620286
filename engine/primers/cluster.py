"""pcr on a Dask cluster (``--backend dask``): :class:`ClusterSites` and its tasks.

One task per background chunk, the whole primer set: a worker searches the chunk with
the edit family's dask task body (engine.edit.cluster.WorkerSearch: every end within
``max_edits`` that a piece owns) and refines those hits in that piece, whose overlap
(longest primer + max_edits) holds every alignment the refinement looks at, as the
streamed path does (:class:`~engine.primers.pcr.Refinement`); it sends back the hits
that pass (:func:`~engine.primers.pcr.passing`). The client gathers them as tasks
complete, in any order; candidates become sites over whole records
(:func:`~engine.primers.pcr.site_table`) and sites are paired into products once, at
the end, exactly as in one process.
"""

from __future__ import annotations

import numpy as np

from engine.cluster import ChunkTasks
from engine.edit import cluster as edit_cluster
from engine.jobs import Job


def _sites(search, refine, settings, shifts):
    """The passing refined hits of a searched chunk (its text still read)."""
    from engine.primers.pcr import passing

    rows, piece, _ = search.new_hits()
    pat, rec = rows["pattern"].astype(np.int64), rows["record"].astype(np.int64)
    minus, dist = rows["strand"].astype(np.int64), rows["distance"].astype(np.int64)
    end = rows["end"] - 1 - shifts[rec]
    refined = refine.in_pieces(search.text, piece, pat, minus, end).T
    return passing(settings, np.diff(refine.p_offs), pat, rec, minus, dist, end, *refined)


class _WorkerSites(edit_cluster.WorkerSearch):
    """A pcr job's state on one worker: the search's, and the refinement of its primers."""

    def __init__(self, shared):
        from engine.primers.pcr import Refinement, record_shifts

        super().__init__(shared)
        self.refine = Refinement(self.job.inputs["pattern"], shared.settings)
        self.shifts = record_shifts(self.records)

    def warm_up(self) -> None:
        from engine.primers import pcr_kernels

        super().warm_up()
        pcr_kernels.warm_up()

    def sites(self, chunk):
        return self.search(chunk, lambda search: _sites(search, self.refine,
                                                        self.shared.settings, self.shifts))


def _worker(shared) -> _WorkerSites:
    from engine import cluster

    return cluster.worker_state(shared, _WorkerSites)


def cluster_warm(shared) -> None:
    """A dask job's first call on each worker: the search's and the refinement's kernels."""
    _worker(shared).warm_up()


def cluster_task(shared, chunk):
    """A dask task: the passing refined hits whose ends one chunk's pieces own."""
    return _worker(shared).sites(chunk)


class ClusterSites(ChunkTasks):
    """A pcr job's sites on a Dask cluster (backend dask): one task per background chunk;
    :meth:`sites` once they are merged (after a cancel: those of the chunks merged)."""

    def __init__(self, job: Job, abort: np.ndarray):
        self.job = job
        self.search_job: Job = job.params["search"]
        ChunkTasks.__init__(self, self.search_job.params.get("scheduler"), cluster_task,
                            cluster_warm, abort)
        self.total = sum(len(r) for r in job.inputs["background"])
        self._parts: list[tuple] = []

    def _shared(self, gpu: bool):
        return edit_cluster.shared_job(self.search_job, self.grid.token(), gpu,
                                       self.job.params["settings"])

    def _plan(self) -> list:
        return edit_cluster.search_chunks(self.search_job, self.grid)

    def _merge(self, chunk, answer) -> tuple[int, int]:
        refined, cells, comparisons = answer
        self._parts.append(refined)
        return cells, comparisons

    def report(self) -> dict:
        return {}

    def sites(self):
        """The sites of the chunks merged (engine.primers.pcr.site_table)."""
        from engine.primers.pcr import site_table

        refined = tuple(np.concatenate(cols) for cols in zip(*self._parts)) if self._parts else None
        return site_table(self.job.inputs["primers"], self.job.inputs["background"],
                          self.job.params["settings"], refined)
