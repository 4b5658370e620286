"""A backend in one file: jobs on the caller's own ``distributed.Client``.

As stumpy's ``stumped(client, ...)``: the caller has a cluster and a client already, and
wants primerscope's tasks there, without an address or a cluster of ours. The Dask
executor runs them; all this file adds is a session that borrows the client (and never
closes it) and a way to hand the executor to a job::

    from distributed import Client
    from engine import kmismatch
    from engine.executors import client as on_client

    with Client(cluster) as c:
        job = kmismatch.make_job(patterns, text, 2, backend="dask")
        result = on_client.solve(c, job)

or, the same in one call, ``kmismatch.solve(patterns, text, 2, backend=c)`` (engine.api).
Make the job with ``backend="dask"`` (the variant and flags its workers run are chosen
as for any Dask job, from whether every worker sees a GPU).
"""

from __future__ import annotations

from typing import Generator

from engine import cluster
from engine.executors import OVERRIDE
from engine.executors.dask import Dask
from engine.jobs import CancelToken, drive


class Borrowed:
    """A session over the caller's client (engine.cluster.Session's fields)."""

    def __init__(self, client):
        self.client, self.cluster = client, None
        self.gpu = all(client.run(cluster.worker_has_gpu).values())
        nthreads = client.nthreads()  # worker address -> its threads
        self.threads = sum(nthreads.values()) or 1
        self.workers = tuple(nthreads)

    def close(self) -> None:
        """Nothing: the client and its cluster are the caller's."""


class OnClient(Dask):
    """The Dask executor, connected to the caller's client."""

    def __init__(self, client):
        super().__init__(None)
        self.client = client

    def connect(self) -> Borrowed:
        return Borrowed(self.client)


def iter_on(client, run: Generator) -> Generator:
    """Re-yield a job's generator (a family's ``iter_solve(job)``) with its chunked
    problems on ``client``; return its result."""
    executor = OnClient(client)
    try:
        while True:
            token = OVERRIDE.set(executor)  # (for each step only: other jobs are not moved)
            try:
                progress = next(run)
            except StopIteration as stop:
                return stop.value
            finally:
                OVERRIDE.reset(token)
            yield progress
    finally:
        run.close()  # (closed early: the job's cleanup runs)


def solve(client, job, cancel: CancelToken | None = None, solver=None):
    """Run ``job`` (made with ``backend="dask"``) on ``client`` to its result; ``solver``:
    the job's iter_solve when it is not a registry family's (pcr, pairs...)."""
    import engine

    solver = solver or engine.iter_solve
    return drive(iter_on(client, solver(job, cancel)))
