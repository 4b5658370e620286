"""The dask backend (engine/cluster.py): the same answers as one process, wherever chunk edges
fall, on either strand and from a genome store; a worker killed mid-job changes nothing;
cancel stops the tasks and keeps what was merged; --scheduler on the command line.

One LocalCluster of 2 single-threaded worker processes serves the module (jobs reach it
through ``scheduler=``); one test starts a job's own local cluster (no address)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

distributed = pytest.importorskip("distributed")

from engine import cli, cluster, config, kdiff, kmismatch, store  # noqa: E402
from engine.jobs import CancelToken, drive  # noqa: E402
from engine.sequences import Record, decode, load, reverse_complement  # noqa: E402
from engine.streaming import plan_chunks  # noqa: E402

BASES = np.array([1, 2, 4, 8], dtype=np.uint8)


def _random(rng, n):
    return BASES[rng.integers(0, 4, n)]


@pytest.fixture(scope="module")
def dask_cluster():
    """(address, client) of a LocalCluster with 2 worker processes of one thread each."""
    import logging

    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=":0", silence_logs=logging.ERROR)
    client = distributed.Client(cluster, set_as_default=False)
    yield cluster.scheduler_address, client
    client.close()
    cluster.close()


@pytest.fixture
def small_chunks(monkeypatch):
    """Chunks of about ``bases`` (overlap ratio 1): many chunk edges in a small background."""
    def setup(bases):
        monkeypatch.setattr(config, "STREAM_CHUNK_BASES", bases)
        monkeypatch.setattr(config, "STREAM_OVERLAP_RATIO", 1)
    return setup


def _same_kdiff(want, got):
    assert got.info.backend == "dask" and got.info.complete
    assert got.candidates == want.candidates
    assert got.settled == want.settled
    assert got.profiles.keys() == want.profiles.keys()
    for key in want.profiles:
        assert got.profiles[key].tolist() == want.profiles[key].tolist()


def _planted_case():
    """Targets and a multi-record background with pieces of the targets planted on both
    strands (one with a substitution), a record shorter than any chunk, and the whole tail
    of one target (its scan stops early, before its last range)."""
    rng = np.random.default_rng(17)
    t0, t1, t2 = _random(rng, 400), _random(rng, 90), _random(rng, 30)
    b0 = _random(rng, 3000)
    b0[940:1060] = t0[50:170]
    b0[1570:1630] = t1[30:]                       # the whole suffix from 30: t1 stops there
    b2 = _random(rng, 2500)
    piece = t0[200:330].copy()
    piece[60] = BASES[(np.searchsorted(BASES, piece[60]) + 1) % 4]
    b2[2150:2280] = reverse_complement(piece)      # on the reverse strand
    targets = [Record("t0", t0), Record("t1", t1), Record("t2", t2)]
    background = [Record("b0", b0), Record("b1", _random(rng, 7)), Record("b2", b2)]
    return targets, background


def _straddled(background, overlap: int, chunk: int) -> set:
    """The planted stretches (record, start, end) that an edge of an owned range cuts."""
    planted = {(0, 940, 1060), (0, 1570, 1630), (2, 2150, 2280)}
    pieces = [p for c in plan_chunks([len(r) for r in background], overlap, chunk) for p in c.pieces]
    return {(rec, a, b) for rec, a, b in planted
            if any(p.record == rec and a < p.own < b for p in pieces)}


@pytest.mark.parametrize("strands,flags", [("both", None), ("forward", None),
                                           ("both", frozenset())])  # simd (default) or not
def test_kdiff_dask_equals_in_memory_across_chunk_edges(dask_cluster, small_chunks, strands,
                                                        flags):
    targets, background = _planted_case()
    want = kdiff.solve(targets, background, 4, backend="serial", strands=strands, flags=flags)
    assert want.settled["t1"] <= 31  # the planted tail stopped t1's scan early
    assert max(want.profiles["t0"]) >= 100
    chunk = 1000
    small_chunks(chunk)
    assert len(_straddled(background, 400 + 3, chunk)) == 3  # chunk edges cut every plant
    got = kdiff.solve(targets, background, 4, backend="dask", strands=strands, flags=flags,
                      scheduler=dask_cluster[0])
    _same_kdiff(want, got)


def test_kdiff_dask_reads_a_store_by_path_on_the_workers(dask_cluster, small_chunks, tmp_path):
    targets, background = _planted_case()
    fasta = tmp_path / "bg.fa"
    fasta.write_text("".join(f">{r.id}\n{r.text}\n" for r in background))
    store.build(fasta, tmp_path / "bg.psg")
    stored = load(tmp_path / "bg.psg")
    assert isinstance(stored[0], store.StoreRecord)
    want = kdiff.solve(targets, background, 5, backend="multicore")
    small_chunks(700)
    got = kdiff.solve(targets, stored, 5, backend="dask", scheduler=dask_cluster[0])
    _same_kdiff(want, got)


def test_kmismatch_dask_equals_in_memory_across_chunk_edges(dask_cluster, small_chunks,
                                                            tmp_path):
    rng = np.random.default_rng(5)
    texts = [_random(rng, n) for n in (4000, 3, 1800)]
    patterns = [Record("p12", texts[0][997:1009].copy()), Record("p20", _random(rng, 20)),
                Record("p9", reverse_complement(texts[2][1200:1209])),
                Record("p20b", texts[2][480:500].copy())]
    texts[0][2000:2020] = patterns[1].codes        # more hits on both strands
    texts[2][50:70] = reverse_complement(patterns[1].codes)
    records = [Record(f"r{i}", c) for i, c in enumerate(texts)]
    fasta = tmp_path / "text.fa"
    fasta.write_text("".join(f">r{i}\n{decode(c)}\n" for i, c in enumerate(texts)))
    store.build(fasta, tmp_path / "text.psg")
    for strands in ("both", "forward"):
        want = kmismatch.solve(records, patterns, 3, backend="serial", strands=strands)
        assert len(want.hits) > 10
        small_chunks(300)
        for text in (records, load(tmp_path / "text.psg")):
            got = kmismatch.solve(text, patterns, 3, backend="dask", strands=strands,
                                  scheduler=dask_cluster[0])
            assert got.info.backend == "dask" and got.info.complete
            assert list(got.hits) == list(want.hits)
            assert got.pattern_hits.tolist() == want.pattern_hits.tolist()
            assert [d.counts.tolist() for d in got.density] == \
                [d.counts.tolist() for d in want.density]
            assert got.scanned == want.scanned


def test_a_job_without_an_address_starts_and_closes_its_own_local_cluster(small_chunks):
    targets, background = _planted_case()
    want = kdiff.solve(targets[:1], background, 4, backend="serial")
    small_chunks(2000)
    got = kdiff.solve(targets[:1], background, 4, backend="dask")
    _same_kdiff(want, got)
    assert got.info.threads == cluster.local_cores()  # one single-threaded worker per core


# ---------------------------------------------------------------------------- longer jobs

@pytest.fixture(scope="module")
def long_job():
    """A job of a few seconds on 2 workers and its in-memory answer."""
    rng = np.random.default_rng(23)
    target = [Record("t", _random(rng, 1500))]
    background = [Record("b", _random(rng, 300_000)), Record("c", _random(rng, 100_000))]
    background[0].codes[150_000:150_150] = target[0].codes[900:1050]
    want = kdiff.solve(target, background, 6, backend="multicore")
    return target, background, want


def test_a_worker_killed_mid_job_changes_nothing(dask_cluster, long_job, monkeypatch):
    """Issue 17: kill one of 2 worker processes while a kdiff job runs; Dask runs its tasks
    again (the nanny starts a new worker) and the answer is identical."""
    address, client = dask_cluster
    target, background, want = long_job
    monkeypatch.setattr(config, "STREAM_CHUNK_BASES", 25_000)
    job = kdiff.make_job(target, background, 6, backend="dask", scheduler=address)
    gen = kdiff.iter_solve(job)
    killed = None
    while True:
        try:
            progress = next(gen)
        except StopIteration as stop:
            got = stop.value
            break
        if killed is None and progress.phase == "running" and progress.done > 0:
            assert progress.done < progress.total  # mid-job
            pids = client.run(os.getpid)
            victim = sorted(pids)[0]
            killed = pids[victim]
            os.kill(killed, signal.SIGKILL)
    assert killed is not None
    _same_kdiff(want, got)
    client.wait_for_workers(2, timeout=30)  # the nanny's new worker, for the tests after
    assert killed not in client.run(os.getpid).values()


@pytest.mark.alone  # a latency bound: run it with -n 0, not beside other workers
def test_cancel_stops_the_tasks_within_2_s_and_keeps_the_partial_result(dask_cluster, long_job,
                                                                       monkeypatch):
    address, client = dask_cluster
    target, background, want = long_job
    monkeypatch.setattr(config, "STREAM_CHUNK_BASES", 25_000)
    job = kdiff.make_job(target, background, 6, backend="dask", scheduler=address)
    token = CancelToken()
    gen = kdiff.iter_solve(job, token)
    progress = next(gen)
    while progress.phase != "running" or not len(progress.partial):  # a range committed
        progress = next(gen)
    token.cancel()
    t_cancel = time.perf_counter()
    result = drive(gen)
    latency = time.perf_counter() - t_cancel
    while any(client.processing().values()) and time.perf_counter() - t_cancel < 5:
        time.sleep(0.02)
    idle = time.perf_counter() - t_cancel
    assert latency < 2, f"cancel took {latency:.2f} s"
    assert idle < 2, f"the workers ran the job's tasks for {idle:.2f} s after the cancel"
    assert not result.info.complete
    settled = result.settled["t"]
    assert 0 < settled < len(target[0]) - 5
    assert result.profiles["t"].tolist() == want.profiles["t"][:settled].tolist()
    assert list(result.candidates) == [c for c in want.candidates if c.start <= settled]


# ---------------------------------------------------------------------------- command line

def test_cli_runs_on_the_cluster_at_scheduler(dask_cluster, tmp_path):
    targets, background = _planted_case()
    paths = []
    for name, records in (("t.fa", targets), ("b.fa", background)):
        (tmp_path / name).write_text("".join(f">{r.id}\n{r.text}\n" for r in records))
        paths.append(tmp_path / name)
    out = subprocess.run([sys.executable, "-m", "engine.cli", "kdiff", *map(str, paths), "-k", "4",
                          "--backend", "dask", "--scheduler", dask_cluster[0], "--json"],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    payload = json.loads(out.stdout)
    want = kdiff.solve(targets, background, 4, backend="serial")
    assert payload["backend"] == "dask" and payload["complete"]
    assert payload["candidates"] == [[c.target_id, c.start, c.end] for c in want.candidates]


@pytest.mark.parametrize("argv,message", [
    (["--backend", "dask", "--scheduler", "tcp://127.0.0.1:{port}"],
     "cannot reach the Dask scheduler at tcp://127.0.0.1:{port}"),
    (["--backend", "dask", "--scheduler", "not an address"],
     "--scheduler must be an address like tcp://HOST:PORT"),
    (["--backend", "multicore", "--scheduler", "tcp://127.0.0.1:{port}"],
     "scheduler applies to the dask backend only"),
])
def test_a_bad_scheduler_is_one_line_and_exit_2(monkeypatch, capsys, argv, message):
    import socket

    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    monkeypatch.setattr(config, "CLUSTER_CONNECT_SECONDS", 1)
    argv = [a.format(port=port) for a in argv]
    status = cli.main(["kdiff", "ACGTACGTAC", "ACGGTACCAGT", "-k", "2", "--no-progress", *argv])
    err = capsys.readouterr().err
    assert status == 2
    assert err.count("\n") == 1 and err.startswith("primerscope: error: ")
    assert message.format(port=port) in err


def test_workers_run_the_jobs_variant_on_their_backend_or_that_backends_default():
    """GPU workers run the CUDA kernels (kdiff bitparallel with the cuda defaults; kmismatch's CPU
    variants become pair-tile), CPU workers the multicore ones with the job's flags."""
    assert cluster.worker_selection(kdiff.SPEC, "bitparallel", {"simd"}, False) == \
        ("bitparallel", "multicore", "coarse", frozenset({"simd"}))
    cuda_defaults = frozenset(kdiff.SPEC.variant("bitparallel").backend("cuda").default_flags)
    assert cuda_defaults >= {"word32"}
    assert cluster.worker_selection(kdiff.SPEC, "bitparallel", {"simd"}, True) == \
        ("bitparallel", "cuda", None, cuda_defaults)
    assert cluster.worker_selection(kmismatch.SPEC, "pmasm", (), True) == \
        ("pair-tile", "cuda", None, frozenset())
    assert cluster.worker_selection(kmismatch.SPEC, "naive", (), False) == \
        ("naive", "multicore", None, frozenset())
    assert cluster.check_scheduler(" tcp://scheduler.example:8786 ") == "tcp://scheduler.example:8786"
    assert cluster.check_scheduler("[::1]:8786") == "[::1]:8786"
    assert cluster.check_scheduler("") is None and cluster.check_scheduler(None) is None
    with pytest.raises(ValueError, match="--scheduler must be"):
        cluster.check_scheduler("tcp://host:8786/path")
