"""A new backend is one new file: the caller's own ``distributed.Client``
(engine/executors/client.py), as stumpy's ``stumped(client, ...)`` takes one.

The caller brings a client of a cluster of its own (here an in-process LocalCluster of
one worker thread); a family's job made for the dask backend runs its tasks there,
through the one Dask executor, and gives the in-process answer. The client stays open:
it is the caller's.
"""

from __future__ import annotations

import logging

import numpy as np
import pytest

from engine import config, kdiff, kmismatch
from engine.executors import client as on_client
from engine.sequences import Record, reverse_complement

distributed = pytest.importorskip("distributed")

BASES = np.array([1, 2, 4, 8], dtype=np.uint8)


@pytest.fixture(scope="module")
def own_client():
    """The caller's client: one worker thread in this process (no process to start)."""
    cluster = distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                                       dashboard_address=":0", silence_logs=logging.ERROR)
    client = distributed.Client(cluster, set_as_default=False)
    yield client
    client.close()
    cluster.close()


def _case(seed: int):
    rng = np.random.default_rng(seed)
    texts = [BASES[rng.integers(0, 4, n)] for n in (700, 40, 500)]
    patterns = [texts[0][100:114].copy(), texts[2][300:318].copy()]
    texts[2][190:204] = reverse_complement(patterns[0])  # (across the 200-base chunk edge)
    return ([Record(f"t{i}", t) for i, t in enumerate(texts)],
            [Record(f"p{i}", p) for i, p in enumerate(patterns)])


def _ran_there(client, tasks) -> int:
    """The primerscope tasks the client's cluster ran (its task stream)."""
    return sum(1 for t in tasks.data if t["key"] and "run_task" in str(t["key"]))


def test_a_kmismatch_job_runs_on_the_callers_client(own_client, monkeypatch):
    monkeypatch.setattr(config, "STREAM_CHUNK_BASES", 200)  # several tasks, edges between
    monkeypatch.setattr(config, "STREAM_OVERLAP_RATIO", 1)
    text, patterns = _case(5)
    want = kmismatch.solve(patterns, text, 2, backend="serial")
    with distributed.get_task_stream(own_client) as tasks:
        got = on_client.solve(own_client, kmismatch.make_job(patterns, text, 2, backend="dask"))
    assert got.info.backend == "dask" and got.info.complete
    assert _ran_there(own_client, tasks) >= 3
    assert list(got.hits.tuples()) == list(want.hits.tuples())
    assert len(want.hits) >= 3 and set(want.hits.strand.tolist()) == {0, 1}
    assert got.pattern_hits.tolist() == want.pattern_hits.tolist()
    assert own_client.status == "running"  # (borrowed, not closed)


def test_an_ordered_kdiff_job_runs_on_the_callers_client(own_client, monkeypatch):
    monkeypatch.setattr(config, "STREAM_CHUNK_BASES", 200)
    monkeypatch.setattr(config, "STREAM_OVERLAP_RATIO", 1)
    background, _ = _case(6)
    target = [Record("a", np.concatenate([background[0].codes[50:90],
                                          BASES[np.arange(30) % 4]]))]
    want = kdiff.solve(target, background, 3, backend="serial")
    with distributed.get_task_stream(own_client) as tasks:
        got = on_client.solve(own_client, kdiff.make_job(target, background, 3, backend="dask"))
    assert got.info.complete and _ran_there(own_client, tasks) >= 3
    assert got.candidates.start0.tolist() == want.candidates.start0.tolist()
    assert got.candidates.length.tolist() == want.candidates.length.tolist()
    assert len(want.candidates) > 0


def test_the_result_names_the_kernels_the_workers_ran(own_client, monkeypatch):
    """A Dask job's workers run the job of ChunkedProblem.worker_job (on GPU workers cuda's
    variant and flags); the result's info says so, the backend staying dask. Here the CPU
    workers are made to run kmismatch's naive variant for a pmasm job: the same hits, and
    the info names naive."""
    from engine import cluster

    chosen = cluster.worker_selection

    def naive(spec, variant, flags, gpu):
        _, backend, parallel, _ = chosen(spec, variant, flags, gpu)
        return "naive", backend, parallel, frozenset()

    monkeypatch.setattr(cluster, "worker_selection", naive)
    text, patterns = _case(7)
    want = kmismatch.solve(patterns, text, 2, backend="serial", variant="pmasm")
    got = on_client.solve(own_client, kmismatch.make_job(patterns, text, 2, backend="dask",
                                                         variant="pmasm"))
    assert (got.info.backend, got.info.variant, got.info.flags) == ("dask", "naive", ())
    assert want.info.variant == "pmasm"
    assert list(got.hits.tuples()) == list(want.hits.tuples())
