"""One seam between a family's problem over a background and the backends that run it.

A family that takes a background (kdiff, kmismatch, edit search, pcr) describes its
problem once, as a :class:`ChunkedProblem`: the chunks' overlap, the strands read,
whether merges must come in task order (kdiff's early stop), its tasks over a chunk
plan, how a task runs on a chunk's text with the family's kernels (:meth:`~ChunkedProblem.open`,
a SliceRunner whose :meth:`take` hands back the partial answer), how partial answers
merge, and what the whole-text run is when the background fits in memory.

An executor runs such a problem: made with ``(backend, scheduler)``, its
``run(problem, meter, cancel)`` yields Progress and returns what the family reads its
result from (the whole run, or the problem with its merged answers). Executors are the
only code that branches on the backend (engine.registry.EXECUTORS names each backend's):

- :class:`~engine.executors.inprocess.InProcess`: the serial, multicore and cuda kernels in
  this process, the whole text at once or one chunk after another, through
  :func:`engine.slices.run_slices` (progress, cancel, abort);
- :class:`~engine.executors.dask.Dask`: one task per chunk (or per task key) on a Dask
  cluster: a LocalCluster, a LocalCUDACluster, the one at ``--scheduler``, or a
  ``distributed.Client`` the caller brings (:mod:`engine.executors.client`).

Warm-up is generic: :meth:`ChunkedProblem.warm_up` runs the problem's first task on a
tiny chunk of its own background, so the kernels compile (or load) on the very types
the job will use, once per process and warm key (engine.slices.compile_once).
"""

from __future__ import annotations

from engine.executors.protocol import ChunkedProblem, ChunkRun, Task, tiny_chunk  # noqa: F401

