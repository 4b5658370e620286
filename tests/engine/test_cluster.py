"""The dask backend (engine/cluster.py): the same answers as one process, wherever chunk edges
fall, on either strand and from a genome store (kdiff, kmismatch, edit search and the
off-target report, pcr); a worker killed mid-job changes nothing; cancel stops the tasks
and keeps what was merged; --scheduler on the command line.

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

from engine import cli, cluster, config, kdiff, kmismatch, scheduler_address, store  # noqa: E402
from engine.jobs import CancelToken, drive  # noqa: E402
from engine.sequences import Record, decode, load, reverse_complement  # noqa: E402
from engine.streaming import plan_chunks  # noqa: E402
from tests.engine.edit.cuda_support import hit_rows, profile_rows  # noqa: E402

BASES = np.array([1, 2, 4, 8], dtype=np.uint8)


def _random(rng, n):
    return BASES[rng.integers(0, 4, n)]


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
        want = kmismatch.solve(patterns, records, 3, backend="serial", strands=strands)
        assert len(want.hits) > 10
        small_chunks(300)
        for text in (records, load(tmp_path / "text.psg")):
            got = kmismatch.solve(patterns, text, 3, backend="dask", strands=strands,
                                  scheduler=dask_cluster[0])
            assert got.info.backend == "dask" and got.info.complete
            assert list(got.hits) == list(want.hits)
            assert got.pattern_hits.tolist() == want.pattern_hits.tolist()
            assert [d.counts.tolist() for d in got.density] == \
                [d.counts.tolist() for d in want.density]
            assert got.scanned == want.scanned


def _edit_case():
    """Patterns planted across the chunk edges of 300-base chunks: one with an inserted base
    (an occurrence m + 1 long), its reverse complement with a substitution, several records
    (one shorter than any chunk, one a region keeping its record's numbering)."""
    rng = np.random.default_rng(29)
    pattern = _random(rng, 22)
    inserted = np.concatenate([pattern[:9], _random(rng, 1), pattern[9:]])
    sub = pattern.copy()
    sub[5] = BASES[(np.searchsorted(BASES, sub[5]) + 1) % 4]
    texts = [_random(rng, n) for n in (1500, 6, 1100)]
    texts[0][289:312] = inserted                 # across chunk edges (_straddled_edit)
    texts[0][555:577] = reverse_complement(sub)  # on the reverse strand
    texts[2][580:602] = pattern
    records = [Record("r0", texts[0]), Record("r1", texts[1]),
               Record("r2", texts[2], offset=5000)]
    patterns = [Record("p", pattern), Record("q", _random(rng, 9)),
                Record("s", pattern[3:17].copy())]
    return patterns, records


@pytest.mark.parametrize("variant,flags", [("myers", None), ("myers", frozenset()),
                                           ("myers-blocked", None), ("banded", None)])
def test_edit_search_dask_equals_in_memory_across_chunk_edges(dask_cluster, small_chunks,
                                                              tmp_path, variant, flags):
    """Hits (starts, CIGARs, matched strings), best hits and score profiles of a search on
    dask equal the in-memory ones, from memory and from a genome store."""
    from engine import edit

    patterns, records = _edit_case()
    fasta = tmp_path / "text.fa"
    fasta.write_text("".join(f">{r.id}\n{r.text}\n" for r in records))
    store.build(fasta, tmp_path / "text.psg")
    stored = load(tmp_path / "text.psg")
    for report, k in (("hits", 3), ("best", None)):
        overlap = 22 + (k if k is not None else 22)  # the longest pattern's reach
        pieces = [p for c in plan_chunks([1500, 6, 1100], overlap, 300) for p in c.pieces]
        planted = ((0, 289, 312), (0, 555, 577), (2, 580, 602))
        assert sum(any(p.record == rec and a < p.own < b for p in pieces)
                   for rec, a, b in planted) >= 2
        options = {"mode": "search", "k": k, "report": report, "strands": "both",
                   "variant": variant, "flags": flags}
        want = edit.solve(patterns, records, backend="serial", **options)
        assert {h.strand for h in want.hits if h.pattern_id == "p" and h.distance <= 1} == \
            {"+", "-"}
        want_stored = edit.solve(patterns, stored, backend="serial", **options)
        small_chunks(300)
        got = edit.solve(patterns, records, backend="dask", scheduler=dask_cluster[0], **options)
        assert got.info.backend == "dask" and got.info.complete
        assert hit_rows(got) == hit_rows(want)
        assert profile_rows(got) == profile_rows(want)
        got = edit.solve(patterns, stored, backend="dask", scheduler=dask_cluster[0], **options)
        assert hit_rows(got) == hit_rows(want_stored)
        assert profile_rows(got) == profile_rows(want_stored)


def test_offtarget_report_on_dask_equals_in_memory(dask_cluster, small_chunks):
    from engine.primers import offtarget

    patterns, records = _edit_case()
    want = offtarget.find_offtargets(patterns[0], records, 3, backend="multicore")
    assert {s.strand for s in want} == {"+", "-"}
    small_chunks(300)
    assert offtarget.find_offtargets(patterns[0], records, 3, backend="dask",
                                     scheduler=dask_cluster[0]) == want


def test_edit_dask_runs_searches_over_whole_records_only():
    """The registry says so (BackendSpec.takes): make_job refuses the rest."""
    from engine import edit, registry

    with pytest.raises(ValueError,
                       match="the dask backend of edit takes mode 'search' only, got 'global'"):
        edit.make_job([Record("p", BASES)], [Record("t", BASES)], backend="dask")
    with pytest.raises(ValueError, match="the dask backend of edit takes pairing 'all' only"):
        edit.make_job([Record("p", BASES)], [Record("t", BASES)], mode="search", k=1,
                      pairing="zip", backend="dask")
    fam = registry.family("edit")
    assert registry.backend_refusal(fam, "myers", "dask", {"mode": "search", "pairing": "all"}) \
        is None
    assert registry.backend_refusal(fam, "myers", "serial", {"mode": "global"}) is None
    with pytest.raises(ValueError, match="scheduler applies to the dask backend only"):
        edit.make_job([Record("p", BASES)], [Record("t", BASES)], mode="search", k=1,
                      backend="serial", scheduler="tcp://127.0.0.1:8786")


def _pcr_case(rng, shift):
    """Products of planted primer sites (one site with a substitution), on two records (one
    a region keeping its numbering): ``shift`` moves the sites across the chunk edges."""
    fwd, rev = _random(rng, 20), _random(rng, 18)
    site = fwd.copy()
    site[14] = BASES[(np.searchsorted(BASES, site[14]) + 1) % 4]
    primers = [Record("F", fwd), Record("R", rev)]
    background = [
        Record("b", np.concatenate([_random(rng, 60 + shift), site, _random(rng, 150),
                                    reverse_complement(rev), _random(rng, 40), rev,
                                    _random(rng, 90), reverse_complement(fwd),
                                    _random(rng, 30)])),
        Record("s", np.concatenate([fwd, reverse_complement(rev)]), offset=100)]
    return primers, background


@pytest.mark.parametrize("indels", [True, False])
def test_pcr_dask_equals_in_memory_across_chunk_edges(dask_cluster, small_chunks, tmp_path,
                                                      indels):
    """Sites are refined in the piece that owns their end on the workers, overlapping
    alignments merged and products paired on the client: the same sites and products
    (sequences included) as one process, wherever the chunk edges fall, and from a store."""
    from engine.primers import pcr

    rng = np.random.default_rng(31)
    settings = pcr.PcrSettings(max_edits=2, max_3prime_edits=1, max_product=400,
                               indels=indels, with_sequence=True)
    for shift in range(26):  # the edges fall at every offset (owned ranges of 26 columns)
        primers, background = _pcr_case(rng, shift)
        want = pcr.solve(primers, background, settings, backend="serial")
        assert len(want.products) >= 3
        small_chunks(48)
        got = pcr.solve(primers, background, settings, backend="dask",
                        scheduler=dask_cluster[0])
        assert got.info.backend == "dask" and got.info.complete
        assert got.sites == want.sites and got.products == want.products
    fasta = tmp_path / "bg.fa"
    fasta.write_text("".join(f">{r.id}\n{r.text}\n" for r in background))
    store.build(fasta, tmp_path / "bg.psg")
    want = pcr.solve(primers, load(fasta), settings, backend="multicore")
    small_chunks(64)
    got = pcr.solve(primers, load(tmp_path / "bg.psg"), settings, backend="dask",
                    scheduler=dask_cluster[0])
    assert got.sites == want.sites and got.products == want.products


def test_edit_cancel_on_dask_keeps_the_merged_chunks(dask_cluster, monkeypatch):
    """A cancel after the first chunks are merged: an incomplete result whose hits are
    in-memory ones, and whose profile bins are unscanned or no better than the in-memory ones
    (a bin across a chunk edge may lack the chunk not merged)."""
    from engine import edit

    rng = np.random.default_rng(37)
    text = [Record("t", _random(rng, 400_000))]
    pattern = [Record("p", text[0].codes[1000:1016].copy())]
    options = {"mode": "search", "k": 3, "strands": "both"}
    want = edit.solve(pattern, text, backend="multicore", **options)
    monkeypatch.setattr(config, "STREAM_CHUNK_BASES", 10_000)  # 40 tasks
    token = CancelToken()
    gen = edit.iter_solve(edit.make_job(pattern, text, backend="dask",
                                        scheduler=dask_cluster[0], **options), token)
    progress = next(gen)
    while progress.phase != "running" or not progress.done:
        progress = next(gen)
    token.cancel()
    got = drive(gen)
    assert not got.info.complete and got.info.backend == "dask"
    rows = set(hit_rows(got))
    assert rows <= set(hit_rows(want)) and len(rows) < len(want.hits)
    values, full = got.profiles[0].values, want.profiles[0].values
    scanned = values >= 0
    assert 0 < scanned.sum() < len(values)
    assert (values[scanned] >= full[scanned]).all()
    assert (values[scanned] == full[scanned]).mean() > 0.9


def test_pcr_cancel_on_dask_keeps_the_sites_of_the_merged_chunks(dask_cluster, monkeypatch):
    """A pcr cancel after the first chunks are merged: an incomplete result whose sites are
    in-memory ones (fewer of them), as for the other backends."""
    from engine.primers import pcr

    rng = np.random.default_rng(47)
    fwd = _random(rng, 20)
    parts = []
    for _ in range(40):  # a site every ~10 kb
        parts += [_random(rng, 10_000), fwd]
    background = [Record("b", np.concatenate(parts))]
    primers = [Record("F", fwd), Record("R", _random(rng, 18))]
    settings = pcr.PcrSettings(max_edits=1, max_3prime_edits=1)
    want = pcr.solve(primers, background, settings, backend="multicore")
    monkeypatch.setattr(config, "STREAM_CHUNK_BASES", 10_000)  # 40 tasks
    token = CancelToken()
    gen = pcr.iter_solve(pcr.make_job(primers, background, settings, backend="dask",
                                      scheduler=dask_cluster[0]), token)
    progress = next(gen)
    while progress.phase != "running" or 4 * progress.done < progress.total:  # a quarter merged
        progress = next(gen)
    token.cancel()
    got = drive(gen)
    assert not got.info.complete and got.info.backend == "dask"
    assert 0 < len(got.sites) < len(want.sites) == 40
    full = {(s.record_id, s.primer, s.strand, s.start, s.end) for s in want.sites}
    assert {(s.record_id, s.primer, s.strand, s.start, s.end) for s in got.sites} <= full


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


def test_cli_pcr_and_offtarget_run_on_the_cluster_at_scheduler(dask_cluster, tmp_path):
    from engine.primers import offtarget, pcr

    primers, background = _pcr_case(np.random.default_rng(41), 0)
    bg = tmp_path / "bg.fa"
    bg.write_text("".join(f">{r.id}\n{r.text}\n" for r in background))
    names = ",".join(f"{p.id}={p.text}" for p in primers)
    for argv, want in (
            (["pcr", names, str(bg), "--max-edits", "2", "--max-3prime-edits", "1"],
             pcr.solve(primers, load(bg), pcr.PcrSettings(max_edits=2, max_3prime_edits=1),
                       backend="serial")),
            (["offtarget", primers[0].text, str(bg), "--max-edits", "2"],
             offtarget.find_offtargets(primers[0], load(bg), 2, backend="serial"))):
        out = subprocess.run([sys.executable, "-m", "engine.cli", *argv, "--backend", "dask",
                              "--scheduler", dask_cluster[0], "--json"],
                             capture_output=True, text=True, timeout=300)
        assert out.returncode == 0, out.stderr
        payload = json.loads(out.stdout)
        assert payload["backend"] == "dask" and payload["complete"]
        if argv[0] == "pcr":
            assert len(payload["products"]) == len(want.products) >= 3
        else:
            assert [tuple(s[:5]) for s in payload["sites"]] == \
                [(s.record_id, s.start, s.end, s.strand, s.edits) for s in want]


@pytest.mark.parametrize("command", [
    ["kdiff", "ACGTACGTAC", "ACGGTACCAGT", "-k", "2"],
    ["pcr", "F=ACGTACGTAC,R=GGTACCAGTA", "ACGGTACCAGTTTACGTACGTA", "--max-edits", "1"],
    ["offtarget", "ACGTACGTAC", "ACGGTACCAGT", "--max-edits", "1"],
    ["edit", "ACGTACGTAC", "ACGGTACCAGT", "--mode", "search", "-k", "1"],
])
@pytest.mark.parametrize("argv,message", [
    (["--backend", "dask", "--scheduler", "tcp://127.0.0.1:{port}"],
     "cannot reach the Dask scheduler at tcp://127.0.0.1:{port}"),
    (["--backend", "dask", "--scheduler", "not an address"],
     "--scheduler must be an address like tcp://HOST:PORT"),
    (["--backend", "multicore", "--scheduler", "tcp://127.0.0.1:{port}"],
     "scheduler applies to the dask backend only"),
])
def test_a_bad_scheduler_is_one_line_and_exit_2(monkeypatch, capsys, command, argv, message):
    import socket

    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    monkeypatch.setattr(config, "CLUSTER_CONNECT_SECONDS", 1)
    argv = [a.format(port=port) for a in argv]
    status = cli.main([*command, "--no-progress", *argv])
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
    assert scheduler_address.check(" tcp://scheduler.example:8786 ") == "tcp://scheduler.example:8786"
    assert scheduler_address.check("[::1]:8786") == "[::1]:8786"
    assert scheduler_address.check("") is None and scheduler_address.check(None) is None
    with pytest.raises(ValueError, match="--scheduler must be"):
        scheduler_address.check("tcp://host:8786/path")


@pytest.fixture
def sessions(monkeypatch):
    """The scheduler address of every cluster session a job opens (None: a local cluster)."""
    seen = []
    original = cluster.Session.__init__

    def spy(self, scheduler=None):
        seen.append(scheduler)
        original(self, scheduler)

    monkeypatch.setattr(cluster.Session, "__init__", spy)
    return seen


def test_pairs_runs_both_steps_on_the_cluster_at_scheduler(dask_cluster, sessions,
                                                            lambda_record, ecoli_record):
    """Pair design with --backend dask --scheduler: the specificity scan (kdiff) and the
    in-silico PCR (edit search) both run on that cluster, and the pairs equal multicore's."""
    from engine.primers import pairs, pcr
    from engine.primers.primer3_design import DesignSettings

    target = [lambda_record.slice(20_000, 20_500)]
    background = [ecoli_record.slice(100_000, 140_000)]
    settings = pairs.PairSettings(DesignSettings(product_ranges=((100, 300),), num_return=3),
                                  pcr.PcrSettings())
    got = pairs.solve(target, background, 5, settings, backend="dask", scheduler=dask_cluster[0])
    want = pairs.solve(target, background, 5, settings, backend="multicore")
    assert len(sessions) >= 2 and set(sessions) == {dask_cluster[0]}, sessions
    assert [(p.left.start, p.right.start, p.products) for p in got.pairs] == \
        [(p.left.start, p.right.start, p.products) for p in want.pairs]
    assert got.pairs


def test_panel_cross_products_run_on_the_cluster_at_scheduler(dask_cluster, sessions):
    """panel --backend dask --scheduler: the cross-product search runs on that cluster and
    finds what the serial backend finds; without a background the address is refused."""
    from engine.primers import panel

    primers, background = _pcr_case(np.random.default_rng(43), 0)
    got = panel.solve(primers, background, backend="dask", scheduler=dask_cluster[0])
    want = panel.solve(primers, background, backend="serial")
    assert sessions == [dask_cluster[0]]
    assert got.products == want.products and len(want.products) >= 3
    with pytest.raises(ValueError, match="--scheduler needs a background"):
        panel.make_job(primers, (), backend="dask", scheduler=dask_cluster[0])


def test_gpu_workers_take_the_chunks_of_a_cuda_job(monkeypatch):
    """GPU workers' tasks get chunks as large as one cuda process streams (GPU_STREAM_BYTES
    of text, leads included), not a CPU worker's smaller ones: each task is then a launch
    that fills the GPU. Either way the chunks' pieces own every column once."""
    from engine import edit
    from engine.edit.problem import SearchProblem

    monkeypatch.setattr(config, "GPU_STREAM_BYTES", 4000)
    monkeypatch.setattr(config, "STREAM_CHUNK_BASES", 500)
    monkeypatch.setattr(config, "STREAM_OVERLAP_RATIO", 1)
    rng = np.random.default_rng(5)
    lengths = (9000, 2500)
    records = [Record(f"r{i}", _random(rng, n)) for i, n in enumerate(lengths)]
    job = edit.make_job([Record("p", _random(rng, 20))], records, mode="search", k=2,
                        strands="forward")
    problem = SearchProblem(job)

    def chunks(gpu: bool):
        plan = cluster.task_chunks(problem.records, problem.strands, problem.overlap, gpu=gpu)
        for index, n in enumerate(lengths):  # owned ranges tile each record
            owned = sorted((p.own, p.end) for c in plan for p in c.pieces if p.record == index)
            assert owned[0][0] == 0 and owned[-1][1] == n
            assert all(a[1] == b[0] for a, b in zip(owned, owned[1:]))
        return plan

    gpu_chunks = chunks(True)
    assert all(c.bases <= 4000 for c in gpu_chunks)
    assert max(c.bases for c in gpu_chunks) > 2000  # GPU-sized, not STREAM_CHUNK_BASES
    cpu_chunks = chunks(False)
    assert max(c.bases for c in cpu_chunks) <= 500 + problem.overlap


def test_a_script_without_a_main_guard_starts_its_local_cluster(tmp_path):
    """backend="dask" in a plain script: the local cluster's workers are spawned, and each
    imported the script again, so it ran in every worker and the nannies failed to start
    (engine.spawning). The script runs once and gets the in-memory answer."""
    script = tmp_path / "plain.py"
    script.write_text(
        "from engine import cluster, kdiff\n"
        "cluster.local_cores = lambda: 2\n"
        "print('top', flush=True)\n"
        "bg = 'TTTTGGGGACGTACGATCGATCGGGCCCAAATTT' * 20\n"
        "t = 'ACGTTGCAGGCTAGCATCGATTACG'\n"
        "r = kdiff.solve(t, bg, 3, backend='dask')\n"
        "print(r.candidates.to_records() == kdiff.solve(t, bg, 3).candidates.to_records())\n")
    root = os.path.dirname(os.path.dirname(os.path.dirname(__file__)))
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=300, cwd=tmp_path, env=dict(os.environ, PYTHONPATH=root))
    assert (done.returncode, done.stdout) == (0, "top\nTrue\n"), done.stderr[-2000:]
