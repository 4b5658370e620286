"""Streaming backgrounds in chunks (engine/streaming.py) and kdiff over them: the same answers
as the in-memory path, wherever the chunk edges fall, and bounded memory."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from engine import config, kdiff, store
from engine.sequences import Record, decode, load, reverse_complement
from engine.streaming import Background, plan_chunks
from tests.engine.edit.cuda_support import hit_rows, profile_rows

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BASES = np.array([1, 2, 4, 8], dtype=np.uint8)


def _random(rng, n):
    return BASES[rng.integers(0, 4, n)]


@pytest.fixture
def streamed(monkeypatch):
    """Force streaming with small chunks: ``streamed(chunk_bases)``; ``streamed(None)``:
    whole texts again (any background fits in memory)."""
    def setup(chunk_bases, ratio=1):
        if chunk_bases is None:
            monkeypatch.setattr(config, "STREAM_MEMORY_BASES", 1 << 28)
            return
        monkeypatch.setattr(config, "STREAM_MEMORY_BASES", 0)
        monkeypatch.setattr(config, "STREAM_CHUNK_BASES", chunk_bases)
        monkeypatch.setattr(config, "STREAM_OVERLAP_RATIO", ratio)
    return setup


# ---------------------------------------------------------------------------- the plan

@pytest.mark.parametrize("lengths,overlap,size", [
    ([1000], 10, 100), ([5, 3, 1, 200, 7], 4, 16), ([50] * 9, 0, 64), ([1], 30, 8),
    ([300, 299, 301], 33, 97),
])
def test_plan_covers_every_short_substring(lengths, overlap, size):
    chunks = plan_chunks(lengths, overlap, size)
    pieces = [p for c in chunks for p in c.pieces]
    for rec, n in enumerate(lengths):
        mine = [p for p in pieces if p.record == rec]
        owned = sorted((p.own, p.end) for p in mine)
        assert owned[0][0] == 0 and owned[-1][1] == n
        assert all(a[1] == b[0] for a, b in zip(owned, owned[1:]))  # a partition
        for p in mine:
            assert p.start == max(0, p.own - overlap)
        for end in range(1, n + 1):  # the piece owning column end-1 holds [end-overlap-1, end)
            owner = next(p for p in mine if p.own <= end - 1 < p.end)
            assert owner.start <= max(0, end - overlap - 1)
    size = max(size, config.STREAM_OVERLAP_RATIO * overlap)  # a chunk is at least ratio x overlap
    for c in chunks:  # bounded: a chunk is its size, give or take one piece's lead
        assert c.bases <= size + overlap + 1


@pytest.mark.parametrize("kind", ["memory", "store"])
def test_chunk_text_matches_the_records(tmp_path, kind):
    rng = np.random.default_rng(3)
    codes = [rng.choice([1, 2, 4, 8, 15, 5], n).astype(np.uint8) for n in (1, 2, 37, 101)]
    records = [Record(f"r{i}", c) for i, c in enumerate(codes)]
    if kind == "store":
        path = tmp_path / "g.fa"
        path.write_text("".join(f">r{i}\n{decode(c)}\n" for i, c in enumerate(codes)))
        store.build(path, tmp_path / "g.psg")
        records = load(tmp_path / "g.psg")
    bg = Background(records, "both")
    for chunk in bg.chunks(overlap=5, chunk_bases=17):
        text = bg.text(chunk)
        for i, (piece, strand) in enumerate(zip(text.pieces, text.strands)):
            got = text.codes[text.offsets[i]:text.offsets[i + 1]]
            want = codes[piece.record][piece.start:piece.end]
            if strand == "-":
                want = reverse_complement(want)
            assert got.tolist() == want.tolist()
        bg.release(chunk)


# ---------------------------------------------------------------------------- kdiff

def _same(a, b):
    assert a.candidates == b.candidates
    assert a.settled == b.settled
    assert a.profiles.keys() == b.profiles.keys()
    for key in a.profiles:
        assert a.profiles[key].tolist() == b.profiles[key].tolist()


VARIANTS = [("bitparallel", "serial", None), ("bitparallel", "serial", frozenset()),
            ("bitparallel", "multicore", None)]


@pytest.mark.parametrize("variant,backend,flags", VARIANTS)
@pytest.mark.parametrize("strand", ["+", "-"])
def test_kdiff_chunk_edge_on_every_offset_around_a_planted_match(streamed, variant, backend, flags,
                                                                 strand):
    """A 40-base piece of the target, planted (with one substitution) in the background on
    either strand, with a chunk edge placed at every offset from well before it to well
    after it: every streamed answer equals the in-memory one."""
    rng = np.random.default_rng(11)
    target = _random(rng, 60)
    planted = target[10:50].copy()
    planted[20] = BASES[(np.searchsorted(BASES, planted[20]) + 1) % 4]
    if strand == "-":
        planted = reverse_complement(planted)
    k = 3
    m = target.shape[0]
    chunk = 64
    for shift in range(-(m + k) - 2, 45, 3):
        at = chunk + shift + 70  # the planted copy starts this far from a chunk edge
        background = np.concatenate([_random(rng, at), planted, _random(rng, 150)])
        job = ([Record("t", target)], [Record("b", background)], k)
        options = {"variant": variant, "backend": backend, "flags": flags}
        want = kdiff.solve(*job, **options)
        streamed(chunk)
        got = kdiff.solve(*job, **options)
        streamed(None)
        _same(want, got)
        assert max(want.profiles["t"]) >= 30  # the planted copy is found


@pytest.mark.parametrize("variant,backend", [("bitparallel", "serial"), ("conventional", "serial"),
                                             ("alternative", "multicore")])
def test_kdiff_many_records_shorter_than_a_chunk(streamed, lambda_record, variant, backend):
    lam = lambda_record
    background = [Record(f"s{i}", lam.codes[i * 700:i * 700 + n].copy())
                  for i, n in enumerate((1, 5, 90, 300, 2000, 650, 31))]
    background.append(lam.slice(20_000, 26_000))
    target = [lam.slice(1000, 1150), lam.slice(25_900, 26_100)]
    for strands in ("both", "forward"):
        want = kdiff.solve(target, background, 4, variant=variant, backend=backend,
                           strands=strands)
        streamed(512)
        got = kdiff.solve(target, background, 4, variant=variant, backend=backend,
                          strands=strands)
        streamed(None)
        _same(want, got)


def test_kdiff_streams_a_store_like_memory(streamed, tmp_path, lambda_record):
    path = tmp_path / "lam.fa"
    path.write_text(f">lam\n{lambda_record.text}\n>tail\nACGTTGCA\n")
    store.build(path, tmp_path / "lam.psg")
    target = [lambda_record.slice(30_000, 30_400)]
    want = kdiff.solve(target, load(path), 5, backend="multicore")
    streamed(4096, ratio=2)
    got = kdiff.solve(target, load(tmp_path / "lam.psg"), 5, backend="multicore")
    _same(want, got)


def test_kdiff_cancel_while_streaming(streamed, lambda_record):
    from engine.jobs import CancelToken

    streamed(2048)
    # A background that holds no long stretch of the target (lambda read backwards), so
    # the scan cannot stop early at a start whose whole suffix occurs.
    backwards = Record("backwards", lambda_record.codes[::-1].copy())
    job = kdiff.make_job([lambda_record.slice(0, 3000)], [backwards], 4, backend="serial")
    cancel = CancelToken()
    gen = kdiff.iter_solve(job, cancel)
    progress = [next(gen)]
    cancel.cancel()
    try:
        while True:
            progress.append(next(gen))
    except StopIteration as stop:
        result = stop.value
    assert not result.info.complete
    assert result.settled[job.inputs["target"][0].id] < 3000


# ---------------------------------------------------------------------------- searches

def _planted_texts(rng, pattern, chunk, strand, shifts):
    """Backgrounds holding ``pattern`` (or its reverse complement) with one substitution,
    at ``shift`` columns from a chunk edge, plus short records, for each shift."""
    planted = pattern.copy()
    planted[len(planted) // 2] = BASES[(np.searchsorted(BASES, planted[len(planted) // 2]) + 1) % 4]
    if strand == "-":
        planted = reverse_complement(planted)
    for shift in shifts:
        at = chunk + shift + 40
        yield [Record("b", np.concatenate([_random(rng, at), planted, _random(rng, 90)])),
               Record("s1", pattern[:3].copy()), Record("s2", planted.copy())]


@pytest.mark.parametrize("variant,backend", [("pmasm", "serial"), ("shift-add", "multicore"),
                                             ("naive", "serial")])
@pytest.mark.parametrize("strand", ["+", "-"])
def test_kmismatch_chunk_edge_on_every_offset_around_a_planted_window(streamed, variant, backend,
                                                                      strand):
    from engine import kmismatch

    rng = np.random.default_rng(7)
    pattern = _random(rng, 21)
    patterns = [Record("p", pattern), Record("q", pattern[5:13].copy())]
    for text in _planted_texts(rng, pattern, 48, strand, range(-25, 25)):
        want = kmismatch.solve(patterns, text, 2, variant=variant, backend=backend)
        streamed(48)
        got = kmismatch.solve(patterns, text, 2, variant=variant, backend=backend)
        streamed(None)
        assert list(got.hits.tuples()) == list(want.hits.tuples())
        assert got.pattern_hits.tolist() == want.pattern_hits.tolist()
        assert [d.counts.tolist() for d in got.density] == [d.counts.tolist() for d in want.density]
        assert got.scanned == want.scanned
        assert any(h.pattern_id == "p" and h.strand == strand and h.record_id == "b"
                   for h in want.hits)


def test_searches_stream_a_store(streamed, tmp_path, lambda_record):
    from engine import kmismatch

    path = tmp_path / "lam.fa"
    path.write_text(f">lam\n{lambda_record.text}\n>tail\nACGTTGCA\n")
    store.build(path, tmp_path / "lam.psg")
    patterns = [lambda_record.slice(s, s + 20) for s in (100, 20_000, 48_000)]
    want_k = kmismatch.solve(patterns, load(path), 3, backend="serial")
    streamed(8192, ratio=2)
    got_k = kmismatch.solve(patterns, load(tmp_path / "lam.psg"), 3, backend="serial")
    assert list(got_k.hits.tuples()) == list(want_k.hits.tuples())


_MEMORY_CHILD = """
import json, resource, sys
limit = 1500 << 20
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
from engine import kdiff
from engine.sequences import load
background = load(sys.argv[1])
target = load(sys.argv[2])
result = kdiff.solve(target, background, 5, backend="multicore", threads=2)
status = dict(line.split(":", 1) for line in open("/proc/self/status") if ":" in line)
print(json.dumps({"bases": sum(len(r) for r in background), "candidates": len(result.candidates),
                  "settled": list(result.settled.values()), "complete": result.info.complete,
                  "vm_peak_kb": int(status["VmPeak"].split()[0]),
                  "rss_peak_kb": int(status["VmHWM"].split()[0])}))
"""


@pytest.mark.slow
def test_kdiff_against_200_mb_store_under_a_1_5_gb_address_space_limit(tmp_path):
    """A 200 Mb store, both strands (400 Mb of text), in a process limited to 1.5 GB of
    address space. The target is short (48 bases) so that the run takes seconds: memory
    does not depend on the target's length beyond its own c(r) arrays."""
    rng = np.random.default_rng(5)
    letters = np.frombuffer(b"ACGT", dtype=np.uint8)
    fasta = tmp_path / "big.fa"
    with open(fasta, "wb") as fh:
        for i in range(4):
            fh.write(f">chr{i}\n".encode())
            for _ in range(10):
                row = letters[rng.integers(0, 4, 5_000_000, dtype=np.uint8)]
                fh.write(row.tobytes() + b"\n")
    store.build(fasta, tmp_path / "big.psg")
    fasta.unlink()
    target = tmp_path / "t.fa"
    target.write_text(">t\nACGTTGCATGCAAGGCTTACGATCGATCGGGATCCATGCATTGACCAG\n")
    out = subprocess.run([sys.executable, "-c", _MEMORY_CHILD, str(tmp_path / "big.psg"),
                          str(target)], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    report = json.loads(out.stdout.strip().splitlines()[-1])
    assert report["bases"] == 200_000_000 and report["complete"]
    # the scan ran over the whole store (it stops where a suffix occurs within 4 edits)
    assert report["settled"][0] >= 10 and report["candidates"] == report["settled"][0] - 1
    assert report["vm_peak_kb"] < 1500 << 10


# ---------------------------------------------------------------------------- edit search

EDIT_CASES = [("myers", "serial", None), ("myers", "multicore", frozenset()),
              ("banded", "serial", None), ("dp", "multicore", None)]


@pytest.mark.parametrize("variant,backend,flags", EDIT_CASES)
@pytest.mark.parametrize("strand", ["+", "-"])
def test_edit_search_chunk_edge_on_every_offset_around_a_planted_match(streamed, monkeypatch,
                                                                       variant, backend, flags,
                                                                       strand):
    """A 16-base pattern planted with one substitution and one inserted base (an occurrence
    m + 1 long), a chunk edge at every offset around it: every hit (start, CIGAR, matched),
    the best per record and the score profiles equal the in-memory ones. Profile bins
    (patched to 9 a record) and multicore's chunks of a piece fall across the edges too."""
    from engine import edit
    from engine.edit import plan

    monkeypatch.setattr(plan, "PROFILE_BINS", 9)  # where Plan reads it
    monkeypatch.setattr(config, "EDIT_MIN_CHUNK_COLUMNS", 16)
    rng = np.random.default_rng(13)
    pattern = _random(rng, 16)
    inserted = np.concatenate([pattern[:11], _random(rng, 1), pattern[11:]])
    patterns = [Record("p", pattern), Record("q", pattern[2:9].copy())]
    for text in _planted_texts(rng, inserted, 48, strand, range(-22, 22)):
        for report, k in (("hits", 2), ("best", None)):
            options = {"mode": "search", "k": k, "report": report, "strands": "both",
                       "variant": variant, "backend": backend, "flags": flags}
            want = edit.solve(patterns, text, **options)
            streamed(48)
            got = edit.solve(patterns, text, **options)
            streamed(None)
            assert hit_rows(got) == hit_rows(want)
            assert profile_rows(got) == profile_rows(want)
        assert any(h.pattern_id == "p" and h.strand == strand and h.record_id == "b"
                   and h.distance == 2 for h in want.hits)


def test_edit_search_streams_a_store_and_regions(streamed, tmp_path, lambda_record):
    """A store's records (two long, one shorter than a chunk) and a region of a record (its
    own numbering), streamed: the same hits (matched strings read back from the store), and
    the off-target report built on the search is the same."""
    from engine import edit
    from engine.primers import offtarget

    path = tmp_path / "lam.fa"
    path.write_text(f">lam\n{lambda_record.text}\n>tail\nACGTTGCA\n>rev\n"
                    f"{decode(reverse_complement(lambda_record.codes[9_000:15_000]))}\n")
    store.build(path, tmp_path / "lam.psg")
    patterns = [lambda_record.slice(s, s + 22) for s in (100, 12_000, 48_000)]
    options = {"mode": "search", "k": 3, "strands": "both", "backend": "multicore"}
    want = edit.solve(patterns, load(path), **options)
    region = [lambda_record.region(11_001, 13_000)]
    want_region = edit.solve(patterns, region, **options)
    primer = lambda_record.slice(12_000, 12_020)
    want_report = offtarget.find_offtargets(primer, load(path), 3, backend="serial")
    streamed(4096, ratio=2)
    assert hit_rows(edit.solve(patterns, load(tmp_path / "lam.psg"), **options)) == \
        hit_rows(want)
    assert hit_rows(edit.solve(patterns, region, **options)) == hit_rows(want_region)
    got_report = offtarget.find_offtargets(primer, load(tmp_path / "lam.psg"), 3, backend="serial")
    assert got_report == want_report
    assert {s.strand for s in want_report if s.edits == 0} == {"+", "-"}


def test_edit_cancel_while_streaming(streamed, lambda_record):
    from engine import edit
    from engine.jobs import CancelToken

    streamed(2048)
    job = edit.make_job([lambda_record.slice(500, 520)], [lambda_record], mode="search", k=2,
                        strands="both", backend="serial")
    cancel = CancelToken()
    gen = edit.iter_solve(job, cancel)
    next(gen)
    cancel.cancel()
    try:
        while True:
            next(gen)
    except StopIteration as stop:
        result = stop.value
    assert not result.info.complete
    assert all(p.values.shape[0] for p in result.profiles)


# ---------------------------------------------------------------------------- pcr

@pytest.mark.parametrize("indels", [True, False])
def test_pcr_chunk_edges_around_primer_sites_and_products(streamed, indels):
    """Products of planted primer sites (one site with an edit), the chunk edges moved
    across both sites and the product between: the same sites and products (sequences
    included) as the in-memory run. Products span many chunks; sites are refined in the
    piece that owns their end."""
    from engine.primers import pcr

    rng = np.random.default_rng(17)
    fwd, rev = _random(rng, 20), _random(rng, 18)
    site = fwd.copy()
    site[14] = BASES[(np.searchsorted(BASES, site[14]) + 1) % 4]
    primers = [Record("F", fwd), Record("R", rev)]
    settings = pcr.PcrSettings(max_edits=2, max_3prime_edits=1, max_product=400,
                               indels=indels, with_sequence=True)
    for shift in range(-24, 24, 2):
        left = _random(rng, 48 + shift + 30)
        background = [
            Record("b", np.concatenate([left, site, _random(rng, 150), reverse_complement(rev),
                                        _random(rng, 40), rev, _random(rng, 90),
                                        reverse_complement(fwd), _random(rng, 30)])),
            Record("s", np.concatenate([fwd, reverse_complement(rev)]), offset=100)]
        want = pcr.solve(primers, background, settings, backend="serial")
        streamed(48)
        got = pcr.solve(primers, background, settings, backend="serial")
        streamed(None)
        assert got.sites == want.sites
        assert got.products == want.products
        assert len(want.products) >= 3


def test_pcr_streams_a_store(streamed, tmp_path, lambda_record):
    from engine.primers import pcr

    path = tmp_path / "lam.fa"
    path.write_text(f">lam\n{lambda_record.text}\n>tail\nACGTTGCA\n")
    store.build(path, tmp_path / "lam.psg")
    lam = lambda_record.text
    primers = [Record("F", lambda_record.codes[20_000:20_021].copy()),
               Record("R", reverse_complement(lambda_record.codes[21_500:21_520]))]
    settings = pcr.PcrSettings(max_edits=3, max_product=3000, with_sequence=True)
    want = pcr.solve(primers, load(path), settings, backend="multicore")
    streamed(4096, ratio=2)
    got = pcr.solve(primers, load(tmp_path / "lam.psg"), settings, backend="multicore")
    assert got.sites == want.sites and got.products == want.products
    assert any(p.sequence == lam[20_000:21_520] for p in want.products)


# ---------------------------------------------------------------------------- GPU budget

def test_gpu_budget_sets_what_fits_and_the_chunk_size(monkeypatch):
    """On cuda the budget is config.GPU_STREAM_BYTES of text (both strands counted), and a
    chunk's text, its pieces' leads included, stays within it."""
    records = [Record("a", np.ones(900, dtype=np.uint8)), Record("b", np.ones(40, dtype=np.uint8))]
    monkeypatch.setattr(config, "STREAM_OVERLAP_RATIO", 1)
    monkeypatch.setattr(config, "GPU_STREAM_BYTES", 1880)
    assert Background(records, "both", gpu=True).fits()
    assert not Background(records, "both").fits(0)
    monkeypatch.setattr(config, "GPU_STREAM_BYTES", 1879)
    assert not Background(records, "both", gpu=True).fits()
    assert Background(records, "forward", gpu=True).fits()
    for strands, ns in (("both", 2), ("forward", 1)):
        monkeypatch.setattr(config, "GPU_STREAM_BYTES", 300 * ns)
        bg = Background(records, strands, gpu=True)
        assert not bg.fits() and Background(records, strands).fits()
        chunks = bg.chunks(overlap=20)
        assert len(chunks) > 3
        assert all(c.bases * ns <= config.GPU_STREAM_BYTES for c in chunks)


def test_cuda_backends_stream_in_the_simulator():
    """kdiff, kmismatch and edit search on cuda, streamed under a small GPU budget
    (streaming_cuda_cases.py, in numba's CUDA simulator)."""
    from pathlib import Path

    from tests.cuda_support import run_simulator_cases

    run_simulator_cases(Path(__file__).resolve().parent / "streaming_cuda_cases.py", "")
