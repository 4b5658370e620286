"""pcr's sites as a chunked problem (engine.executors): :class:`SitesProblem`.

One task per background chunk, the whole primer set: the edit search of the chunk
(engine.edit.problem: every end within ``max_edits`` that a piece owns), and the
refinement of those hits in that piece, whose overlap (longest primer + max_edits)
holds every alignment the refinement looks at (:class:`~engine.primers.pcr.Refinement`).
A task's answer is the hits that pass (:func:`~engine.primers.pcr.passing`), taken after
every slice, so a cancel keeps them. Merged in any order; overlapping alignments become
sites over whole records (:func:`~engine.primers.pcr.site_table`) once, at the end. In
this process and on Dask alike, the refinement runs inside the slices: progress and
cancel reach it however large the background.
"""

from __future__ import annotations

import dataclasses
from functools import cached_property

import numpy as np

from engine.edit.problem import ChunkSearch, SearchProblem
from engine.executors import ChunkedProblem, Task
from engine.jobs import Job


class ChunkSites:
    """One chunk's search and the refinement of its hits (an engine.executors.ChunkRun)."""

    def __init__(self, search: ChunkSearch, problem: "SitesProblem"):
        self.search, self.problem = search, problem
        self.first_slice = search.first_slice

    @property
    def total(self) -> int:
        return self.search.total

    @property
    def done(self) -> int:
        return self.search.done

    @property
    def finished(self) -> bool:
        return self.search.finished

    def step(self, budget: int):
        return self.search.step(budget)

    def take(self) -> tuple:
        """The passing refined hits found since the last call (the chunk's text still read)."""
        from engine.primers.pcr import passing

        problem = self.problem
        rows, piece, _ = self.search.new_hits()
        pat, rec = rows["pattern"].astype(np.int64), rows["record"].astype(np.int64)
        minus, dist = rows["strand"].astype(np.int64), rows["distance"].astype(np.int64)
        end = rows["end"] - 1 - problem.shifts[rec]
        d, e3, start = problem.refine.in_pieces(self.search.text, piece, pat, minus, end).T
        return passing(problem.settings, pat, rec, minus, dist, d, e3, start, end)


class SitesProblem(ChunkedProblem):
    """A pcr job's sites (``job.params``: ``settings`` and the edit ``search`` job);
    :meth:`sites` once run (after a cancel: those of the hits merged)."""

    family = "edit"

    def __init__(self, job: Job):
        super().__init__(job)
        self.settings = job.params["settings"]
        self.search = SearchProblem(job.params["search"])
        self.overlap = self.search.overlap
        self._parts: list[tuple] = []

    @property
    def records(self) -> tuple:
        return self.job.inputs["background"]

    @cached_property
    def refine(self):
        from engine.primers.pcr import Refinement

        return Refinement(self.job.inputs["primers"], self.settings)

    @cached_property
    def shifts(self) -> np.ndarray:
        from engine.primers.pcr import record_shifts

        return record_shifts(self.records)

    def total_units(self) -> int:
        return self.search.total_units()

    def weight(self, task: Task) -> int:
        return self.search.weight(task)

    def open(self, task: Task, text, abort: np.ndarray, threads: int | None) -> ChunkSites:
        return ChunkSites(self.search.open(task, text, abort, threads), self)

    def merge(self, task: Task, answer) -> None:
        if len(answer[0]):
            self._parts.append(answer)

    def worker_job(self, gpu: bool) -> Job:
        """The search as the workers run it (GPU workers: the cuda default variant)."""
        search = self.search.worker_job(gpu)
        return dataclasses.replace(self.job, backend=search.backend, variant=search.variant,
                                   parallel=search.parallel, flags=search.flags,
                                   threads=search.threads,
                                   params={**self.job.params, "search": search})

    def compiled(self) -> bool:
        from engine.primers import pcr_kernels

        return self.search.compiled() and pcr_kernels.compiled()

    def sites(self):
        """The sites of the hits merged (engine.primers.pcr.site_table)."""
        from engine.primers.pcr import site_table

        refined = tuple(np.concatenate(cols) for cols in zip(*self._parts)) \
            if self._parts else None
        return site_table(self.job.inputs["primers"], self.records, self.settings, refined)
