"""Assembly gaps (issue #28): a run of at least gap_min N matches nothing.

Every family with a background or text must give what its reference gives with each gap
replaced by a record break (tests/engine/gap_cases.py), on both strands, on the CPU
backends, in memory and streamed in small chunks; kdiff also on a 2-worker Dask cluster
(the CUDA simulator: test_gaps_cuda.py). Real data: E. coli 536 with 100-N scaffold gaps,
and a background flanked by 10,000 N as every human chromosome is.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine import config, edit, gaps, kdiff, kmismatch
from engine.jobs import drive
from engine.primers import offtarget
from engine.sequences import Record, SeqColumns, decode, encode, load
from tests.engine.gap_cases import (BASES, edit_expected, edit_rows, gapped, kdiff_expected, kdiff_rows,
                                    kmismatch_expected, kmismatch_rows, planted)
from tests.strategies import examples

ROOT = Path(__file__).resolve().parents[2]
DATA = Path("/work/shared/data")
ECOLI = DATA / "ecoli536_NC_008253.fna.gz"
LAMBDA = DATA / "lambda_NC_001416.fa"
if not ECOLI.exists():
    ECOLI = ROOT / "resources" / "demo" / "ecoli536_NC_008253.fna.gz"
    LAMBDA = ROOT / "resources" / "demo" / "lambda_NC_001416.fa"

CPU = [("bitparallel", "serial", None), ("bitparallel", "multicore", None),
       ("bitparallel", "serial", frozenset()), ("conventional", "serial", None),
       ("conventional", "multicore", None), ("alternative", "serial", None),
       ("alternative", "multicore", None)]
HEALTH = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.function_scoped_fixture]


@pytest.fixture
def streamed(monkeypatch):
    """Force the streamed path with chunks of ``bases`` (chunk edges fall inside gaps too)."""
    def setup(bases):
        monkeypatch.setattr(config, "STREAM_MEMORY_BASES", 0)
        monkeypatch.setattr(config, "STREAM_CHUNK_BASES", bases)
        monkeypatch.setattr(config, "STREAM_OVERLAP_RATIO", 1)
    return setup


# ------------------------------------------------------------------------ engine.gaps itself

@given(codes=st.lists(st.sampled_from([1, 2, 15, 15, 15]), max_size=60).map(
    lambda xs: np.array(xs, dtype=np.uint8)), gap_min=st.integers(1, 6))
@settings(max_examples=examples(100))
def test_mask_sets_exactly_the_long_n_runs_to_the_gap_code(codes, gap_min):
    masked = gaps.mask_gaps(codes, gap_min)
    text = decode(codes)
    want = codes.copy()
    for run_start in range(len(text)):  # brute force: each N whose run is long enough
        if text[run_start] != "N" or (run_start and text[run_start - 1] == "N"):
            continue
        end = run_start
        while end < len(text) and text[end] == "N":
            end += 1
        if end - run_start >= gap_min:
            want[run_start:end] = gaps.GAP_CODE
    assert masked.tolist() == want.tolist()
    assert masked.shape == codes.shape  # positions never move


def test_finding_runs_takes_a_few_bytes_a_base_of_scratch():
    """Masking a text with N runs takes two bytes a base at its peak (the N test, then where
    it changes; the masked copy after them), under three (the runs' edges were found by a
    np.diff computed in int64: 16 bytes a base, 1.6 GB beside a 98.8 MB text, some 50 GB
    beside a human genome in memory)."""
    import tracemalloc

    n = 1 << 21
    codes = np.ones(n, dtype=np.uint8)
    codes[:20] = codes[1000:1040] = codes[-30:] = 15
    tracemalloc.start()
    try:
        masked = gaps.mask_gaps(codes)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert [r.tolist() for r in gaps.gap_runs(masked)] == [[0, 1000, n - 30], [20, 1040, n]]
    assert peak < 3 * n, f"{peak:,} bytes for {n:,} bases"


def test_as_background_keeps_ids_offsets_and_asks_a_record_for_its_own_view():
    rec = Record("chr1", encode("ACGT" + "N" * 12 + "ACNNNG"), "desc", "file.fa", 1000)
    (masked,) = gaps.as_background([rec])
    assert (masked.id, masked.description, masked.source, masked.offset) == \
        ("chr1", "desc", "file.fa", 1000)
    assert masked.codes.tolist()[4:16] == [0] * 12 and masked.text[-4:] == "NNNG"
    clean = Record("c", encode("ACGT"))
    assert gaps.as_background([clean])[0] is clean

    class Stored(Record):
        def with_gap_min(self, gap_min):
            return ("own view", gap_min)

    assert gaps.as_background([Stored("s", encode("NNNNNNNNNNNN"))], 7) == [("own view", 7)]


def test_as_background_masks_a_record_once_while_it_lives(monkeypatch):
    """The same record solved again gets the same masked record back, without a second scan,
    so the GPU's text caches (kept by record identity) find it; another gap_min is its own."""
    import gc

    scans = []
    monkeypatch.setattr(gaps, "mask_gaps", lambda codes, gap_min, real=gaps.mask_gaps:
                        scans.append(gap_min) or real(codes, gap_min))
    rec = Record("chr1", encode("ACGT" + "N" * 12 + "ACGT"))
    first = gaps.as_background([rec])[0]
    assert gaps.as_background([rec])[0] is first and scans == [10]
    assert first.codes.tolist()[4:16] == [0] * 12
    wide = gaps.as_background([rec], 20)[0]
    assert wide is rec and scans == [10, 20]
    assert gaps.as_background([rec], 20)[0] is rec and scans == [10, 20]
    key = (id(rec), 10)
    del rec, first, wide
    gc.collect()
    assert key not in gaps._MASKED  # (the entry goes with its record)


def test_record_runs_reads_a_record_once_while_it_lives(monkeypatch):
    """The runs of a record without tables of its own are found by one pass over it, read
    through Record.chunk; asked again (kmismatch drops hits over gaps at every solve: the
    T3x20 benchmark's 98.8 MB text was read for its gap bases each time, issue #29) they come
    without a read, as read-only arrays; another code is its own pass, and the runs go with
    the record."""
    import gc

    read = []
    real = Record.chunk
    monkeypatch.setattr(Record, "chunk", lambda self, a, z: read.append(z - a) or real(self, a, z))
    (rec,) = gaps.as_background([Record("chr1", encode("ACGT" + "N" * 12 + "AC" + "N" * 3))])
    runs = gaps.record_runs(rec, gaps.GAP_CODE)
    assert [r.tolist() for r in runs] == [[4], [16]] and read == [21]
    again = gaps.record_runs(rec, gaps.GAP_CODE)
    assert all(a is b for a, b in zip(again, runs)) and read == [21]
    assert not runs[0].flags.writeable and not runs[1].flags.writeable
    assert [r.tolist() for r in gaps.record_runs(rec, gaps.N_CODE)] == [[18], [21]]
    assert read == [21, 21]
    assert [r.tolist() for r in gaps.text_gaps([rec, rec])] == [[4, 25], [16, 37]]
    assert read == [21, 21]
    key = (id(rec), gaps.GAP_CODE)
    assert key in gaps._RUNS
    del rec, runs, again
    gc.collect()
    assert key not in gaps._RUNS  # (the entry goes with its record)


def test_touches_gap_and_runs_read_in_blocks(monkeypatch):
    codes = encode("ACGT" + "N" * 11 + "AC" + "N" * 30 + "G")
    masked = gaps.mask_gaps(codes)
    runs = gaps.gap_runs(masked)
    assert [r.tolist() for r in runs] == [[4, 17], [15, 47]]
    starts = np.arange(0, 48)
    got = gaps.touches_gap(runs, starts, starts + 3)
    assert got.tolist() == [bool((masked[s:s + 3] == 0).any()) for s in starts.tolist()]
    monkeypatch.setattr(gaps, "_BLOCK", 5)  # runs carried across block edges
    assert [r.tolist() for r in gaps.record_runs(Record("r", masked), gaps.GAP_CODE)] == \
        [r.tolist() for r in runs]


def test_summary_counts_gaps_ambiguity_codes_and_warns_of_long_short_runs():
    rec = Record("b", encode("N" * 10 + "ACGRY" + "N" * 25 + "ACGT" + "N" * 100))
    summary = gaps.summarize(gaps.as_background([rec]))
    assert (summary.gaps, summary.gap_bases, summary.ambiguous) == (3, 135, 2)
    assert summary.line() == "3 gaps (135 bases, runs of >= 10 N), 2 ambiguity codes"
    assert summary.warning() is None
    wide = gaps.summarize(gaps.as_background([rec], 30), 30)
    assert (wide.gaps, wide.gap_bases, wide.ambiguous, wide.short_runs) == (1, 100, 37, 1)
    assert "1 N run of 18-29 bases" in wide.warning()


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.text(alphabet="ACGTACGTNNRYKMSWBDHVacgtn", min_size=0, max_size=70), min_size=1,
                max_size=4), st.integers(1, 12))
def test_a_store_counts_its_ambiguity_codes_as_the_loaded_fasta(tmp_path, texts, gap_min):
    """The summary reads a store's counts from its packed bytes (16 codes a word, odd
    offsets at record edges): the same figures as the FASTA read into memory."""
    from engine import store

    fasta = tmp_path / f"b{len(list(tmp_path.iterdir()))}.fa"
    fasta.write_text("".join(f">r{i}\n{t or 'A'}\n" for i, t in enumerate(texts)))
    store.build(fasta, fasta.with_suffix(".psg"))
    want = gaps.summarize(gaps.as_background(load(fasta), gap_min), gap_min)
    got = gaps.summarize(gaps.as_background(store.open_store(fasta.with_suffix(".psg")).records(), gap_min), gap_min)
    assert got == want


def test_a_gap_base_reads_as_n_and_seqcolumns_take_it():
    masked = gaps.mask_gaps(encode("AC" + "N" * 10))
    assert decode(masked) == "AC" + "N" * 10
    batch = SeqColumns.from_offsets(masked, [0, 12])
    assert batch[0].codes.tolist() == masked.tolist()


# ------------------------------------------------------------------------------------ kdiff

@given(data=st.data(), k=st.integers(1, 3), gap_min=st.integers(5, 10),
       strands=st.sampled_from(["both", "forward"]), combo=st.sampled_from(CPU))
@settings(max_examples=examples(60), deadline=None, suppress_health_check=HEALTH)
def test_kdiff_equals_the_oracle_with_gaps_as_record_breaks(data, k, gap_min, strands, combo):
    variant, backend, flags = combo
    background = data.draw(gapped(gap_min, piece_len=(0, 50)))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    target = planted(rng, background, data.draw(st.integers(1, 40)))
    if data.draw(st.booleans()):  # a gap in the target too
        at = int(rng.integers(0, target.size + 1))
        target = np.concatenate([target[:at], np.full(gap_min, 15, np.uint8), target[at:]])
    t, b = [Record("t", target)], [Record("b", background)]
    got = kdiff.solve(t, b, k, variant=variant, backend=backend, flags=flags, strands=strands,
                      gap_min=gap_min)
    assert kdiff_rows(got) == kdiff_expected(t, b, k, gap_min, strands)


@given(data=st.data(), k=st.integers(1, 3), chunk=st.integers(8, 40))
@settings(max_examples=examples(30), deadline=None, suppress_health_check=HEALTH)
def test_kdiff_streamed_with_gaps_across_chunk_edges(streamed, data, k, chunk):
    streamed(chunk)
    background = data.draw(gapped(10, pieces=(2, 5), piece_len=(5, 60)))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    t, b = [Record("t", planted(rng, background, 30))], [Record("b", background)]
    got = kdiff.solve(t, b, k, backend="multicore")
    assert kdiff_rows(got) == kdiff_expected(t, b, k, 10)


def _real_case(flank: int = 0, gap_every: int = 0):
    """A 2 kb lambda region and the first 60 kb of E. coli 536, with 100-N scaffold gaps
    every ``gap_every`` bases and ``flank`` N at both ends."""
    target = load(str(LAMBDA))[0].codes[20_000:22_000]
    ecoli = load(str(ECOLI))[0].codes[:60_000].copy()
    if gap_every:
        parts = [ecoli[i:i + gap_every] for i in range(0, ecoli.size, gap_every)]
        joined = [parts[0]]
        for part in parts[1:]:
            joined += [np.full(100, 15, np.uint8), part]
        ecoli = np.concatenate(joined)
    flank_n = np.full(flank, 15, np.uint8)
    return [Record("lambda", target)], [Record("ecoli", np.concatenate([flank_n, ecoli, flank_n]))]


def test_a_background_flanked_by_10000_n_gives_the_same_candidates_as_without():
    target, plain = _real_case()
    _, flanked = _real_case(flank=10_000)
    want = kdiff_rows(kdiff.solve(target, plain, 3, backend="multicore"))
    got = kdiff.solve(target, flanked, 3, backend="multicore")
    assert len(want) > 1000 and kdiff_rows(got) == want
    assert got.background_summary.gaps == 2 and got.background_summary.gap_bases == 20_000
    # The old rule (every N a wildcard): 10 kb of N matches the whole 2 kb target.
    assert len(kdiff.solve(target, flanked, 3, backend="multicore", gap_min=20_000).candidates) == 0


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "engine.cli", *map(str, args)],
                          capture_output=True, text=True, cwd=ROOT, timeout=600)


def _fasta(path: Path, records) -> Path:
    path.write_text("".join(f">{r.id}\n{r.text}\n" for r in records))
    return path


def test_scaffold_gaps_then_and_now_side_by_side(tmp_path):
    """The issue's measurement, smaller: 100-N scaffold gaps. With the gap rule the candidates
    are what they are without gaps; --gap-min 1000 (the old rule: N matches anything) gives
    only candidates longer than a gap, i.e. no usable primer."""
    target, gapped_bg = _real_case(gap_every=6_000)
    t = _fasta(tmp_path / "t.fa", target)
    b = _fasta(tmp_path / "b.fa", gapped_bg)
    now = _cli("kdiff", t, b, "-k", "3", "--backend", "multicore")
    old = _cli("kdiff", t, b, "-k", "3", "--backend", "multicore", "--gap-min", "1000")
    assert now.returncode == 0 and old.returncode == 0, now.stderr + old.stderr
    lengths_now = [int(row.split(",")[3]) for row in now.stdout.splitlines()[1:]]
    lengths_old = [int(row.split(",")[3]) for row in old.stdout.splitlines()[1:]]
    assert lengths_now and max(lengths_now) < 40
    assert lengths_old and min(lengths_old) > 100  # the 100-N gap matched everything shorter
    # The same as the family over the gaps as record breaks (no substring spans a gap).
    broken = gaps.split_at_gaps(gapped_bg)
    assert len(broken) == 10
    want = kdiff_rows(kdiff.solve(target, broken, 3, backend="multicore"))
    got = sorted((row.split(",")[0], int(row.split(",")[1]), int(row.split(",")[2]))
                 for row in now.stdout.splitlines()[1:])
    assert got == want
    assert "primerscope: background: 9 gaps (900 bases, runs of >= 10 N), 0 ambiguity codes" \
        in now.stderr
    assert "warning" not in now.stderr
    assert "9 N runs of 18-999 bases" in old.stderr  # the old rule warns that they hide candidates


def test_kdiff_target_gaps_never_inside_a_candidate():
    target = [Record("t", encode("ACGTTGCAAGGCTTAGC" + "N" * 12 + "GGATCCAATTGGCCAATGC"))]
    background = [Record("b", encode("ACGTAGCAAGCCTTAGCGGATCAAATTGGCCTATGC"))]
    got = kdiff.solve(target, background, 2)
    assert got.candidates and all("N" not in c.sequence for c in got.candidates)
    assert kdiff_rows(got) == kdiff_expected(target, background, 2, 10)


# -------------------------------------------------------------------------------- kmismatch

@given(data=st.data(), k=st.integers(0, 3), strands=st.sampled_from(["both", "forward"]),
       variant=st.sampled_from(["naive", "shift-add", "pmasm"]),
       backend=st.sampled_from(["serial", "multicore"]))
@settings(max_examples=examples(60), deadline=None, suppress_health_check=HEALTH)
def test_kmismatch_equals_the_oracle_with_gaps_as_record_breaks(data, k, strands, variant,
                                                                backend):
    text = data.draw(gapped(8, piece_len=(0, 50)))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    patterns = [Record(f"p{i}", planted(rng, text, int(rng.integers(4, 8)))) for i in range(3)]
    t = [Record("t", text)]
    got = kmismatch.solve(patterns, t, k, variant=variant, backend=backend, strands=strands,
                          gap_min=8)
    assert kmismatch_rows(got) == kmismatch_expected(t, patterns, k, 8, strands)
    assert got.pattern_hits.tolist() == [sum(r[0] == p.id for r in kmismatch_rows(got))
                                         for p in patterns]


@given(data=st.data(), chunk=st.integers(8, 40))
@settings(max_examples=examples(30), deadline=None, suppress_health_check=HEALTH)
def test_kmismatch_streamed_with_gaps_across_chunk_edges(streamed, data, chunk):
    streamed(chunk)
    text = data.draw(gapped(10, pieces=(2, 5), piece_len=(5, 60)))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    patterns = [Record(f"p{i}", planted(rng, text, 6)) for i in range(2)]
    t = [Record("t", text)]
    got = kmismatch.solve(patterns, t, 2, backend="multicore")
    assert kmismatch_rows(got) == kmismatch_expected(t, patterns, 2, 10)


# ------------------------------------------------------------------------------ edit search

@given(data=st.data(), k=st.integers(0, 3), strands=st.sampled_from(["both", "forward"]),
       variant=st.sampled_from(["dp", "myers", "myers-blocked", "banded"]),
       backend=st.sampled_from(["serial", "multicore"]))
@settings(max_examples=examples(60), deadline=None, suppress_health_check=HEALTH)
def test_edit_search_equals_the_oracle_with_gaps_as_record_breaks(data, k, strands, variant,
                                                                  backend):
    text = data.draw(gapped(8, piece_len=(0, 40)))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    patterns = [Record(f"p{i}", planted(rng, text, int(rng.integers(5, 9)))) for i in range(2)]
    t = [Record("t", text)]
    got = edit.solve(patterns, t, mode="search", k=k, variant=variant, backend=backend,
                     strands=strands, gap_min=8)
    assert edit_rows(got) == edit_expected(patterns, t, k, 8, strands)


@given(data=st.data(), chunk=st.integers(8, 40), bins=st.sampled_from([4096, 7, 3]))
@settings(max_examples=examples(30), deadline=None, suppress_health_check=HEALTH)
def test_edit_search_streamed_with_gaps_across_chunk_edges(monkeypatch, streamed, data, chunk,
                                                           bins):
    """Hits as the oracle's; score profiles (bins of 1 column, or wider: ``bins`` per record)
    as the in-memory scan's, bins inside the skipped middle of a long gap included."""
    from engine.edit import plan

    monkeypatch.setattr(plan, "PROFILE_BINS", bins)
    text = data.draw(gapped(10, pieces=(2, 5), piece_len=(5, 60)))
    text = np.concatenate([text, np.full(data.draw(st.integers(0, 60)), 15, np.uint8)])
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    patterns = [Record(f"p{i}", planted(rng, text, 8)) for i in range(2)]
    t = [Record("t", text)]

    def solve():
        return edit.solve(patterns, t, mode="search", k=2, strands="both", backend="multicore",
                          profile=True)

    whole = solve()
    streamed(chunk)
    got = solve()
    assert edit_rows(got) == edit_expected(patterns, t, 2, 10)
    assert [p.values.tolist() for p in got.profiles] == [p.values.tolist()
                                                         for p in whole.profiles]


@given(data=st.data(), chunk=st.integers(8, 40), profile=st.booleans())
@settings(max_examples=examples(30), deadline=None, suppress_health_check=HEALTH)
def test_edit_streamed_tasks_never_end_before_they_begin(monkeypatch, streamed, data, chunk,
                                                        profile):
    """The piece after a skipped gap owns the gap's columns, which are not in its text: its
    tasks must still scan forward from its text (a task of negative length sent the
    cooperative CUDA kernel before the text: tests/engine/gaps_cuda_cases.py)."""
    from engine.edit.cpu_common import T_HI, T_OWN_LO, T_SCAN_LO
    from engine.edit.problem import SearchProblem
    from engine.executors.protocol import Task
    from engine.streaming import Background

    streamed(chunk)
    monkeypatch.setattr(config, "EDIT_MIN_CHUNK_COLUMNS", 4)  # tasks shorter than a gap
    text = data.draw(gapped(10, pieces=(2, 4), piece_len=(5, 40)))
    text = np.concatenate([np.full(data.draw(st.integers(0, 120)), 15, np.uint8), text])
    job = edit.make_job([Record("p", encode("ACGTACGT"))], [Record("t", text)], mode="search",
                        k=2, strands="both", backend="multicore", profile=profile)
    problem = SearchProblem(job)
    background = Background(problem.records, problem.strands)
    for chunk_ in background.chunks(problem.overlap):
        run = problem.open(Task(chunk_), background.text(chunk_), np.zeros(1, np.uint8), 2)
        plan = run.runner.plan
        tasks = plan.tasks
        assert np.all(tasks[:, T_HI] > tasks[:, T_SCAN_LO])
        assert np.all(tasks[:, T_OWN_LO] >= tasks[:, T_SCAN_LO])
        assert np.all(tasks[:, T_OWN_LO] < tasks[:, T_HI])
        assert np.all(tasks[:, T_SCAN_LO] >= plan.t_lo[plan.g_rec[plan.task_group]])


def _edge_case(seed: int):
    """A 30 kb text of 150-base stretches between gaps of 10-30 N, and patterns whose window
    runs 3 bases over the start of a gap (a 3-mismatch or 3-edit hit with the gap as bases)."""
    rng = np.random.default_rng(seed)
    parts = []
    while sum(map(len, parts)) < 30_000:
        parts += [BASES[rng.integers(0, 4, 150)], np.full(int(rng.integers(10, 31)), 15, np.uint8)]
    codes = np.concatenate(parts)
    patterns = [Record(f"e{i}", np.concatenate([codes[at - 6:at], BASES[rng.integers(0, 4, 3)]]))
                for i, at in enumerate((150, 1_500, 15_000))]
    return codes, patterns


def _partials_and_answer(job_iter, cancel_after=None):
    """Every Progress.partial of a run (and the run's answer); ``cancel_after``: cancel once
    that many partials came."""
    from engine.jobs import CancelToken

    cancel = CancelToken()
    gen = job_iter(cancel)
    partials = []
    try:
        while True:
            progress = next(gen)
            if progress.partial is not None:
                partials.append(progress.partial)
                if cancel_after is not None and len(partials) >= cancel_after:
                    cancel.cancel()
    except StopIteration as stop:
        return partials, stop.value


def _on_gap(masked: np.ndarray, rows) -> list:
    """The rows (start, end: 1-based, inclusive) whose window holds a gap base."""
    return [r for r in rows if (masked[r[0] - 1:r[1]] == gaps.GAP_CODE).any()]


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
@pytest.mark.parametrize("cancel_after", [None, 2], ids=["run", "cancel"])
def test_kmismatch_partials_follow_the_gap_rule(monkeypatch, streamed, stream, cancel_after):
    """Progress.partial during a run, and after a cancel, holds no hit on a gap: the final
    result's rule (a window of 3 gap bases is a 3-mismatch hit without it)."""
    monkeypatch.setattr(config, "KMISMATCH_FIRST_SLICE_CELLS", {"pmasm": 1 << 12})
    if stream:
        streamed(3_000)
    codes, patterns = _edge_case(31)
    t = [Record("t", codes)]
    masked = gaps.mask_gaps(codes)
    job = kmismatch.make_job(patterns, t, 3, variant="pmasm", backend="serial")
    partials, result = _partials_and_answer(lambda c: kmismatch.iter_solve(job, c), cancel_after)
    assert len(partials) >= 2
    for partial in partials:
        assert not _on_gap(masked, [(h.start, h.end) for h in partial])
    assert list(partials[-1].tuples()) == list(result.hits.tuples())
    # counted from the hits kept (the dropped ones were counted as found)
    assert result.pattern_hits.tolist() == [sum(h.pattern_id == p.id for h in result.hits)
                                            for p in patterns]
    if cancel_after is None:
        assert kmismatch_rows(result) == kmismatch_expected(t, patterns, 3, 10)


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
@pytest.mark.parametrize("cancel_after", [None, 2], ids=["run", "cancel"])
def test_edit_partials_follow_the_gap_rule(monkeypatch, streamed, stream, cancel_after):
    """As kmismatch: no partial hit ends on a gap, during a run or after a cancel."""
    monkeypatch.setattr(config, "EDIT_FIRST_SLICE_COLUMNS", 1_000)
    monkeypatch.setattr(config, "EDIT_MIN_CHUNK_COLUMNS", 500)
    if stream:
        streamed(3_000)
    codes, patterns = _edge_case(32)
    t = [Record("t", codes)]
    masked = gaps.mask_gaps(codes)
    job = edit.make_job(patterns, t, mode="search", k=3, strands="both", backend="serial")
    partials, result = _partials_and_answer(lambda c: edit.iter_solve(job, c), cancel_after)
    assert len(partials) >= 2
    for partial in partials:
        assert not [e for e in partial.end.tolist() if masked[e - 1] == gaps.GAP_CODE]
    assert len(partials[-1]) == len(result.hits)
    if cancel_after is None:
        assert edit_rows(result) == edit_expected(patterns, t, 3, 10)


def test_offtarget_sites_never_in_a_gap():
    """A 100-N gap used to be a 0-edit site of every primer of up to 100 nt."""
    primer = Record("p", encode("ACGTTGCAAGGCTTAGCA"))
    background = [Record("b", encode("GGCC" * 10 + "N" * 100 + "ACGTTGCAAGGCTTAGCA" + "TTAA" * 5))]

    def sites(gap_min):
        job = offtarget.make_job(primer, background, 3, gap_min=gap_min)
        return offtarget.sites_from_result(primer.text, drive(edit.iter_solve(job)))

    assert [(s.start, s.end, s.strand, s.edits) for s in sites(10)] == [(141, 158, "+", 0)]
    old = sites(1000)  # the old rule: the gap binds the primer on both strands
    assert {s.strand for s in old if s.edits == 0 and 41 <= s.start <= 140} == {"+", "-"}


# ---------------------------------------------------------------------------- Dask cluster

def test_kdiff_on_dask_with_gaps_across_chunk_edges(dask_cluster, monkeypatch):
    monkeypatch.setattr(config, "STREAM_CHUNK_BASES", 50)
    monkeypatch.setattr(config, "STREAM_OVERLAP_RATIO", 1)
    rng = np.random.default_rng(28)
    parts = []
    for n in (40, 70, 33, 90):
        parts += [BASE[rng.integers(0, 4, n)], np.full(int(rng.integers(10, 30)), 15, np.uint8)]
    background = np.concatenate(parts)
    t, b = [Record("t", planted(rng, background, 60))], [Record("b", background)]
    got = kdiff.solve(t, b, 2, backend="dask", scheduler=dask_cluster[0])
    assert kdiff_rows(got) == kdiff_expected(t, b, 2, 10)


BASE = np.array([1, 2, 4, 8], dtype=np.uint8)


def test_a_genome_store_background_is_masked_as_it_is_read(tmp_path, streamed):
    """A store's records are read a range at a time; their gaps too (never unpacked whole)."""
    from engine import store

    rng = np.random.default_rng(5)
    parts = []
    for n in (300, 120, 500):
        parts += [BASE[rng.integers(0, 4, n)], np.full(int(rng.integers(10, 200)), 15, np.uint8)]
    background = [Record("b", np.concatenate(parts))]
    fasta = _fasta(tmp_path / "b.fa", background)
    store.build(fasta, tmp_path / "b.psg")
    stored = load(str(tmp_path / "b.psg"))
    (masked,) = gaps.as_background(stored)
    assert masked.codes.tolist() == gaps.mask_gaps(background[0].codes).tolist()
    assert masked.chunk(290, 320).tolist() == masked.codes[290:320].tolist()
    target = [Record("t", planted(rng, background[0].codes, 50))]
    streamed(64)
    got = kdiff.solve(target, stored, 2, backend="multicore")
    assert kdiff_rows(got) == kdiff_expected(target, background, 2, 10)
    assert got.background_summary.gaps == 3


def test_the_closest_match_of_a_candidate_is_never_in_a_gap():
    background = [Record("b", encode("GGCATTACGA" + "N" * 60 + "ACGTTGCATGGCTTAGCA"))]
    near = kdiff.closest_match("ACGTTGCAAGGCTTAGCA", background, strands="forward")
    assert (near.start, near.end, near.distance) == (71, 88, 1)
    old = kdiff.closest_match("ACGTTGCAAGGCTTAGCA", background, strands="forward", gap_min=100)
    assert old.distance == 0 and old.end <= 70  # the old rule: the gap matched it
