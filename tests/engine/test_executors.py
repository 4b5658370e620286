"""Every chunked problem (engine.executors) against its oracle, under each executor.

kdiff, kmismatch, edit search and pcr run in this process (the whole text, and streamed
at tiny chunk sizes), on a 2-worker Dask LocalCluster (``--scheduler``) and on the
caller's own ``distributed.Client`` (engine/executors/client.py). Each case has several
records, matches on both strands and planted matches that chunk edges cut (asserted),
so a merge that loses or doubles an answer at an edge fails here. Also: pcr over a
streamed background stops within 1 s of a cancel, keeps its partial products and reports
progress at least once a second.
"""

from __future__ import annotations

import time
from functools import lru_cache

import numpy as np
import pytest

from engine import config, edit, kdiff, kmismatch
from engine.edit import reference as edit_ref
from engine.executors import client as on_client
from engine.jobs import CancelToken, drive
from engine.kdiff.reference import kdiff_reference
from engine.primers import pcr
from engine.sequences import Record, decode, encode, reverse_complement
from engine.streaming import plan_chunks
from tests.engine.kmismatch.oracles import engine_rows, numpy_hits
from tests.engine.primers import brute

distributed = pytest.importorskip("distributed")

BASES = np.array([1, 2, 4, 8], dtype=np.uint8)
CHUNK = 60  # bases a chunk owns (overlap ratio 1): many edges in a small background
KINDS = ("whole", "streamed", "dask", "client")


def _random(rng, n):
    return BASES[rng.integers(0, 4, n)]


def _mutate(rng, piece, edits: int, indels: bool = True):
    piece = list(piece)
    for _ in range(edits):
        op, at = int(rng.integers(3 if indels else 1)), int(rng.integers(len(piece)))
        if op == 0:
            piece[at] = int(BASES[(np.searchsorted(BASES, piece[at]) + 1) % 4])
        elif op == 1:
            piece.insert(at, int(BASES[rng.integers(4)]))
        else:
            del piece[at]
    return np.array(piece, dtype=np.uint8)


def _plant(rng, texts, pieces, per_record: int, edits: int, indels: bool = True) -> list:
    """Copies of ``pieces`` (mutated, half of them reverse-complemented) at random places;
    returns the (record, start, end) of each copy."""
    planted = []
    for r, text in enumerate(texts):
        for _ in range(per_record):
            copy = _mutate(rng, pieces[int(rng.integers(len(pieces)))], edits, indels)
            if rng.random() < 0.5:
                copy = reverse_complement(copy)
            if len(copy) >= len(text):
                continue
            at = int(rng.integers(0, len(text) - len(copy)))
            text[at:at + len(copy)] = copy
            planted.append((r, at, at + len(copy)))
    return planted


def _assert_edges_cut(planted, lengths, overlap: int) -> None:
    """Some planted copy straddles an owned range's edge of the tiny chunk plan."""
    edges = {(p.record, p.own) for c in plan_chunks(lengths, overlap, CHUNK) for p in c.pieces}
    assert any((r, e) in edges for r, a, b in planted for e in range(a + 1, b)), \
        "no planted match crosses a chunk edge"


@pytest.fixture(params=KINDS)
def run(request, monkeypatch):
    """run(make_job, iter_solve) -> result, on the executor of the parameter."""
    kind = request.param
    # (whole: the plan that _assert_edges_cut checks; Dask: the client plans the chunks)
    monkeypatch.setattr(config, "STREAM_CHUNK_BASES", CHUNK)
    monkeypatch.setattr(config, "STREAM_OVERLAP_RATIO", 1)
    if kind == "streamed":
        monkeypatch.setattr(config, "STREAM_MEMORY_BASES", 1)  # nothing fits: chunks
    cluster = request.getfixturevalue("dask_cluster") if kind in ("dask", "client") else None

    def go(make_job, iter_solve):
        if kind in ("whole", "streamed"):
            result = drive(iter_solve(make_job(backend="serial")))
        elif kind == "dask":
            result = drive(iter_solve(make_job(backend="dask", scheduler=cluster[0])))
        else:  # the caller's own client
            result = on_client.solve(cluster[1], make_job(backend="dask"), solver=iter_solve)
        assert result.info.complete
        assert result.info.backend == ("serial" if kind in ("whole", "streamed") else "dask")
        return result

    go.kind = kind
    return go


# ---------------------------------------------------------------------------------- kdiff

@lru_cache(maxsize=None)
def _kdiff_case():
    rng = np.random.default_rng(101)
    targets = [_random(rng, 50), _random(rng, 26)]
    texts = [_random(rng, n) for n in (420, 9, 380)]
    pieces = [targets[0][5:35], targets[0][20:48], targets[1][:24], targets[1][8:]]
    planted = _plant(rng, [texts[0], texts[2]], pieces, 4, 1)
    planted = [(0 if r == 0 else 2, a, b) for r, a, b in planted]
    k = 3
    betas = texts + [reverse_complement(t) for t in texts]
    want = [(f"t{i}", r + 1, r + length) for i, t in enumerate(targets)
            for r, length in kdiff_reference(t, betas, k)]
    return ([Record(f"t{i}", t) for i, t in enumerate(targets)],
            [Record(f"b{i}", t) for i, t in enumerate(texts)], k, planted, want)


def test_kdiff_equals_its_oracle(run):
    targets, background, k, planted, want = _kdiff_case()
    _assert_edges_cut(planted, [len(r) for r in background], 50 + k - 1)
    got = run(lambda **o: kdiff.make_job(targets, background, k, strands="both", **o),
              kdiff.iter_solve)
    assert [(c.target_id, c.start, c.end) for c in got.candidates] == want
    assert len(want) > 10


# ------------------------------------------------------------------------------- kmismatch

@lru_cache(maxsize=None)
def _kmismatch_case():
    rng = np.random.default_rng(202)
    patterns = [_random(rng, 12), _random(rng, 20), _random(rng, 7)]
    texts = [_random(rng, n) for n in (500, 5, 430)]
    planted = _plant(rng, [texts[0], texts[2]], patterns, 5, 1, indels=False)
    planted = [(0 if r == 0 else 2, a, b) for r, a, b in planted]
    # (offsets, as a --region gives: the reported starts count from the genome's start)
    return ([Record(f"r{i}", t, offset=1000 * i) for i, t in enumerate(texts)],
            [Record(f"p{i}", p) for i, p in enumerate(patterns)], planted)


def test_kmismatch_equals_its_oracle(run):
    records, patterns, planted = _kmismatch_case()
    _assert_edges_cut(planted, [len(r) for r in records], 19)
    want = numpy_hits([r.codes for r in records], [p.codes for p in patterns], 2)
    got = run(lambda **o: kmismatch.make_job(patterns, records, 2, strands="both", **o),
              kmismatch.iter_solve)
    assert sorted(engine_rows(got)) == want
    assert {row[3] for row in want} == {0, 1} and len(want) > 10
    h = got.hits
    shift = np.array([r.offset for r in records])[h.record]
    assert (np.asarray(h.start) == h.start0 + 1 + shift).all() and shift.any()


# ------------------------------------------------------------------------------ edit search

@lru_cache(maxsize=None)
def _edit_case():
    rng = np.random.default_rng(303)
    patterns = [_random(rng, 18), _random(rng, 11)]
    texts = [_random(rng, n) for n in (450, 7, 400)]
    planted = _plant(rng, [texts[0], texts[2]], patterns, 5, 1)
    planted = [(0 if r == 0 else 2, a, b) for r, a, b in planted]
    return ([Record(f"p{i}", p) for i, p in enumerate(patterns)],
            [Record(f"r{i}", t) for i, t in enumerate(texts)], planted)


def _edit_oracle(patterns, texts, k):
    out = []
    for p, pat in enumerate(patterns):
        for r, txt in enumerate(texts):
            for strand in "+-":
                c = pat.codes if strand == "+" else reverse_complement(pat.codes)
                for start, end, d, cigar in edit_ref.search_hits(list(c), list(txt.codes), k):
                    window = txt.codes[start - 1:end]
                    matched = decode(window if strand == "+" else reverse_complement(window))
                    cigar = cigar if strand == "+" else edit_ref.reverse_cigar(cigar)
                    out.append(((p, r, end, strand != "+"),
                                (pat.id, txt.id, strand, start, end, d, cigar, matched)))
    return [row for _, row in sorted(out)]


def test_edit_search_equals_its_oracle(run):
    patterns, records, planted = _edit_case()
    _assert_edges_cut(planted, [len(r) for r in records], 18 + 2)
    got = run(lambda **o: edit.make_job(patterns, records, mode="search", k=2, strands="both",
                                        report="hits", **o), edit.iter_solve)
    rows = [(h.pattern_id, h.record_id, h.strand, h.start, h.end, h.distance, h.cigar,
             h.matched) for h in got.hits]
    want = _edit_oracle(patterns, records, 2)
    assert rows == want
    assert {row[2] for row in want} == {"+", "-"} and len(want) > 10


# -------------------------------------------------------------------------------------- pcr

@lru_cache(maxsize=None)
def _pcr_case():
    rng = np.random.default_rng(404)
    primers = {"F": decode(_random(rng, 16)), "R": decode(_random(rng, 15))}
    texts = [_random(rng, n) for n in (520, 8, 480)]
    planted = []
    for r in (0, 2):  # products: F on +, R's reverse complement downstream, mutated copies
        for at in (40, 230):
            f = _mutate(rng, encode(primers["F"]), int(rng.integers(0, 2)))
            rr = reverse_complement(_mutate(rng, encode(primers["R"]), int(rng.integers(0, 2))))
            texts[r][at:at + len(f)] = f
            end = at + 120 + int(rng.integers(0, 40))
            texts[r][end:end + len(rr)] = rr
            planted += [(r, at, at + len(f)), (r, end, end + len(rr))]
    settings = pcr.PcrSettings(max_edits=2, max_3prime_edits=1, three_prime_window=5,
                               max_product=400)
    records = {f"r{i}": decode(t) for i, t in enumerate(texts)}
    want = brute.products(primers, records, 2, 1, 5, 1, 400)
    return ([Record(n, encode(s)) for n, s in primers.items()],
            [Record(n, encode(s)) for n, s in records.items()], settings, planted, want)


def test_pcr_equals_its_oracle(run):
    primers, background, settings, planted, want = _pcr_case()
    _assert_edges_cut(planted, [len(r) for r in background], 16 + 2)
    got = run(lambda **o: pcr.make_job(primers, background, settings, **o),
              pcr.iter_solve)
    rows = {(p.forward, p.reverse, p.record_id, p.start, p.end, p.forward_edits,
             p.reverse_edits, p.forward_3prime_edits, p.reverse_3prime_edits)
            for p in got.products}
    assert rows == want and len(want) >= 4
    assert len(got.products) == len(rows)


# --------------------------------------------------------------------------- pcr, cancelled

def _timed_run(job, cancel_at: float | None):
    """(result, seconds between solving Progress reports and from the last one to the end,
    units done at each, seconds from the cancel to the end): ``cancel_at`` is the share of
    the units after which to cancel (None: never)."""
    cancel = CancelToken()
    gen = pcr.iter_solve(job, cancel)
    times, done = [], []
    cancelled_at = None
    try:
        while True:
            progress = next(gen)
            if progress.phase == "compiling":
                continue
            times.append(time.perf_counter())
            done.append(progress.done)
            if cancel_at is not None and cancelled_at is None \
                    and progress.done >= cancel_at * progress.total:
                cancel.cancel()
                cancelled_at = time.perf_counter()
    except StopIteration as stop:
        result = stop.value
    end = time.perf_counter()
    gaps = np.diff(times + [end])
    return result, gaps, done, (end - cancelled_at) if cancelled_at is not None else None


def test_streamed_pcr_reports_progress_each_second_and_stops_within_1_s_of_cancel(
        monkeypatch):
    """pcr over a background of many chunks: the refinement runs inside the slices (it ran
    after the search, with no Progress and deaf to Cancel), so progress comes at least once
    a second until the very end, and a cancel stops the run within 1 s keeping the
    products of the chunks refined so far."""
    monkeypatch.setattr(config, "STREAM_MEMORY_BASES", 1)
    monkeypatch.setattr(config, "STREAM_CHUNK_BASES", 200_000)
    rng = np.random.default_rng(505)
    f, r = _random(rng, 20), _random(rng, 20)
    text = _random(rng, 4_000_000)
    for at in range(100, len(text) - 200, 100):  # a product every 100 bases, all along
        text[at:at + 20] = f
        text[at + 60:at + 80] = reverse_complement(r)
    job = pcr.make_job([Record("F", f), Record("R", r)], [Record("bg", text)],
                       pcr.PcrSettings(max_edits=3, max_product=100), backend="serial")
    everything = len(range(100, len(text) - 200, 100))  # (a random match may add one)

    result, gaps, done, _ = _timed_run(job, None)
    assert result.info.complete and len(result.products) >= everything
    assert len(gaps) >= 10 and gaps.max() < 1.0, f"no Progress for {gaps.max():.2f} s"
    assert done == sorted(done)

    result, gaps, done, stopping = _timed_run(job, 0.5)
    assert stopping < 1.0 and gaps.max() < 1.0
    assert not result.info.complete
    assert everything // 3 < len(result.products) < everything
    planted = sum(p.end - p.start + 1 == 80 for p in result.products)
    assert planted >= len(result.products) - 1  # (a random match may add one)
