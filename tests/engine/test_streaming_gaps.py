"""Streaming skips the inside of long assembly gaps (issue #28): the plan never reads it, and
every family's streamed answer over a gapped background (a store's gapped view, or masked
records in memory) equals the in-memory answer, wherever the gaps and the chunk edges fall."""

from __future__ import annotations

import os
import tempfile

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import config, gaps, kdiff, store
from engine.sequences import Record, decode, load
from engine.streaming import Background, gap_skips, plan_chunks
from tests.engine.edit.cuda_support import hit_rows, profile_rows
from tests.engine.gap_cases import kdiff_expected, kdiff_rows
from tests.strategies import examples

BASES = np.array([1, 2, 4, 8], dtype=np.uint8)


@st.composite
def skip_plans(draw):
    lengths = draw(st.lists(st.integers(1, 300), min_size=1, max_size=4))
    skips = []
    for n in lengths:
        cuts = sorted(set(draw(st.lists(st.integers(0, n), max_size=6))))
        pairs = [(a, b) for a, b in zip(cuts[0::2], cuts[1::2]) if b > a]
        skips.append((np.array([a for a, _ in pairs], dtype=np.int64),
                      np.array([b for _, b in pairs], dtype=np.int64)))
    return lengths, skips, draw(st.integers(0, 40)), draw(st.integers(1, 120))


@settings(max_examples=examples(200))
@given(skip_plans())
def test_plan_with_skips(plan):
    """Owned ranges partition each record; no piece reads a skipped column or reaches back
    across a skip; every substring of at most overlap + 1 columns between skips lies whole in
    the piece that owns its last column; chunks stay bounded."""
    lengths, skips, overlap, size = plan
    chunks = plan_chunks(lengths, overlap, size, skips)
    pieces = [p for c in chunks for p in c.pieces]
    for rec, n in enumerate(lengths):
        mine = sorted((p for p in pieces if p.record == rec), key=lambda p: p.own)
        assert mine[0].own == 0 and mine[-1].end == n
        assert all(a.end == b.own for a, b in zip(mine, mine[1:]))
        skipped = np.zeros(n + 1, dtype=bool)
        for a, b in zip(*skips[rec]):
            skipped[a:min(b, n - 1) if b >= n else b] = True
        segment = np.cumsum(skipped)  # columns between skips share a number
        for p in mine:
            assert not skipped[p.start:p.end].any()
            assert p.own < p.start or p.own - p.start <= overlap
            assert segment[p.start] == segment[p.end - 1]
        for end in range(1, n + 1):
            if skipped[end - 1]:
                continue
            first = end - 1  # the substring's first column, not across a skip
            while first > max(0, end - overlap - 1) and not skipped[first - 1]:
                first -= 1
            owner = next(p for p in mine if p.own <= end - 1 < p.end)
            assert owner.start <= first
    bound = max(size, config.STREAM_OVERLAP_RATIO * overlap)
    assert all(c.bases <= bound + overlap + 1 for c in chunks)


def test_gap_skips_keep_reach_bases_each_side():
    starts, ends = gap_skips(np.array([0, 50, 200]), np.array([30, 58, 400]), 4)
    assert starts.tolist() == [4, 204] and ends.tolist() == [26, 396]


def _genome(rng, n_parts, gap_lengths):
    """Random ACGT (a few IUPAC codes and short N runs) with N runs between the parts."""
    parts = []
    for i in range(n_parts):
        part = BASES[rng.integers(0, 4, int(rng.integers(20, 160)))]
        part[rng.random(part.shape[0]) < 0.02] = 15
        parts.append(part)
        if i < len(gap_lengths):
            parts.append(np.full(gap_lengths[i], 15, dtype=np.uint8))
    return np.concatenate(parts)


@pytest.fixture(scope="module")
def fasta_and_store():
    """``make(records)``: the records written as FASTA and as a store, both loaded (each call
    writes over the last: module-scoped, so hypothesis's examples can share it)."""
    tmp = tempfile.TemporaryDirectory()

    def make(records):
        path = os.path.join(tmp.name, "g.fa")
        with open(path, "w") as fh:
            fh.write("".join(f">{rid}\n{decode(c)}\n" for rid, c in records))
        out = os.path.join(tmp.name, "g.psg")
        store.build(path, out)
        return load(path), load(out)

    yield make
    tmp.cleanup()


def _streaming(monkeypatch, chunk):
    monkeypatch.setattr(config, "STREAM_MEMORY_BASES", 0)
    monkeypatch.setattr(config, "STREAM_CHUNK_BASES", chunk)
    monkeypatch.setattr(config, "STREAM_OVERLAP_RATIO", 1)


def _background(seed, gap_lengths, leading=0):
    rng = np.random.default_rng(seed)
    codes = _genome(rng, len(gap_lengths) + 1, gap_lengths)
    codes = np.concatenate([np.full(leading, 15, dtype=np.uint8), codes,
                            np.full(leading, 15, dtype=np.uint8)])
    return rng, [("chrA", codes), ("chrB", _genome(rng, 2, [int(rng.integers(10, 90))]))]


@settings(max_examples=examples(12))
@given(st.integers(0, 10**6), st.lists(st.integers(1, 120), min_size=1, max_size=4),
       st.sampled_from([0, 12, 70]), st.sampled_from([40, 97, 256]))
def test_kdiff_streams_past_gaps_like_memory(fasta_and_store, seed, gap_lengths, leading, chunk):
    rng, records = _background(seed, gap_lengths, leading)
    from_fasta, from_store = fasta_and_store(records)
    target = [Record("t", np.concatenate([records[0][1][30:60], BASES[rng.integers(0, 4, 20)]]))]
    want = kdiff.solve(target, gaps.as_background(from_fasta), 3, backend="serial")
    with pytest.MonkeyPatch.context() as mp:
        _streaming(mp, chunk)
        for background in (gaps.as_background(from_store), gaps.as_background(from_fasta)):
            got = kdiff.solve(target, background, 3, backend="serial")
            assert got.candidates == want.candidates
            assert got.profiles["t"].tolist() == want.profiles["t"].tolist()


@settings(max_examples=examples(12))
@given(st.integers(0, 10**6), st.lists(st.integers(1, 120), min_size=1, max_size=4),
       st.sampled_from([0, 12, 70]), st.sampled_from([30, 64, 200]), st.integers(0, 3))
def test_kmismatch_streams_past_gaps_like_memory(fasta_and_store, seed, gap_lengths, leading,
                                                 chunk, k):
    """Windows that hold up to k gap bases at a gap's edge are found on both sides (k below
    every pattern's length: see engine.streaming.gap_skips)."""
    from engine import kmismatch

    rng, records = _background(seed, gap_lengths, leading)
    from_fasta, from_store = fasta_and_store(records)
    codes = records[0][1]
    gap_starts, gap_ends = gaps.n_runs(codes, gaps.GAP_MIN)
    patterns = [Record("p", codes[40:52].copy()), Record("q", BASES[rng.integers(0, 4, 8)])]
    if gap_starts.size:  # a window over a gap's edge: its bases before the gap, then N
        at = int(gap_starts[0])
        patterns.append(Record("e", np.concatenate([codes[max(0, at - 9):at],
                                                    BASES[rng.integers(0, 4, 5)]])))
    want = kmismatch.solve(patterns, gaps.as_background(from_fasta), k, backend="serial")
    with pytest.MonkeyPatch.context() as mp:
        _streaming(mp, chunk)
        for background in (gaps.as_background(from_store), gaps.as_background(from_fasta)):
            got = kmismatch.solve(patterns, background, k, backend="serial")
            assert list(got.hits.tuples()) == list(want.hits.tuples())
            assert got.scanned == want.scanned


@settings(max_examples=examples(10))
@given(st.integers(0, 10**6), st.lists(st.integers(1, 120), min_size=1, max_size=4),
       st.sampled_from([0, 12]), st.sampled_from([50, 128]), st.integers(0, 3))
def test_edit_search_streams_past_gaps_like_memory(fasta_and_store, seed, gap_lengths, leading,
                                                   chunk, k):
    from engine import edit

    rng, records = _background(seed, gap_lengths, leading)
    from_fasta, from_store = fasta_and_store(records)
    codes = records[0][1]
    pattern = [Record("p", codes[35:50].copy())]
    options = {"mode": "search", "k": k, "strands": "both", "backend": "serial"}
    want = edit.solve(pattern, gaps.as_background(from_fasta), **options)
    with pytest.MonkeyPatch.context() as mp:
        _streaming(mp, chunk)
        got = edit.solve(pattern, gaps.as_background(from_store), **options)
    assert hit_rows(got) == hit_rows(want)
    # (bins wholly inside a gap's skipped inside too: the in-memory scan's min(m, cap))
    assert profile_rows(got) == profile_rows(want)


def test_a_long_gap_is_not_read(fasta_and_store):
    """A record that starts and ends with 10,000 N and has a 5,000 N gap inside: the plan
    reads only `reach` gap bases at each end of each gap."""
    rng = np.random.default_rng(5)
    left, right = BASES[rng.integers(0, 4, 3000)], BASES[rng.integers(0, 4, 2000)]
    n = np.full
    codes = np.concatenate([n(10_000, 15, np.uint8), left, n(5_000, 15, np.uint8), right,
                            n(10_000, 15, np.uint8)])
    _, (rec,) = fasta_and_store([("chr1", codes)])
    overlap = 60
    plain = Background([rec]).chunks(overlap, chunk_bases=1000)
    gapped = Background([rec.with_gap_min(10)]).chunks(overlap, chunk_bases=1000)
    read = sum(c.bases for c in gapped)
    n_pieces = sum(len(c.pieces) for c in gapped)
    assert sum(c.bases for c in plain) >= len(codes)
    # the non-gap bases, `overlap` gap bases at each of 6 gap ends, and each piece's lead
    assert 5000 <= read <= 5000 + 6 * overlap + n_pieces * overlap < 6000
    with_edits = Background([rec.with_gap_min(10)]).chunks(overlap, chunk_bases=1000, max_edits=3)
    assert sum(c.bases for c in with_edits) <= read


def test_kdiff_reads_k_gap_bases_at_a_gap_end(fasta_and_store, monkeypatch):
    """kdiff's candidates hold at most K = k-1 gap bases, so its text holds K gap bases at
    each end of a long gap: in memory (not the whole gap), and streamed (not its overlap,
    target length + K: 10 kb a gap for S1's 5 kb target), with the same answer as the
    whole gapped text. Counted in the texts read (gap code 0)."""
    from engine.kdiff.driver import background_text

    rng = np.random.default_rng(11)
    n = np.full
    # (gaps longer than the overlap, target length + K; sizes small for the oracle)
    codes = np.concatenate([n(500, 15, np.uint8), BASES[rng.integers(0, 4, 600)],
                            n(300, 15, np.uint8), BASES[rng.integers(0, 4, 400)],
                            n(500, 15, np.uint8)])
    from_fasta, (rec,) = fasta_and_store([("chr1", codes)])
    target = [Record("t", np.concatenate([codes[600:660], BASES[rng.integers(0, 4, 40)]]))]
    k = 3
    want = kdiff_expected(target, [Record("chr1", codes)], k, 10)  # gaps as record breaks
    # 6 gap ends (a skip stops short of the record's ends too), both strands, K bases each
    most = 2 * 6 * (k - 1)
    for background in (from_fasta, [rec]):
        beta, _ = background_text(kdiff.make_job(target, background, k, backend="serial"))
        assert int((beta == gaps.GAP_CODE).sum()) <= most
        in_memory = kdiff.solve(target, background, k, backend="serial")
        assert kdiff_rows(in_memory) == want
    gap_bases = []
    text = Background.text

    def counted(self, chunk):
        out = text(self, chunk)
        gap_bases.append(int((out.codes == gaps.GAP_CODE).sum()))
        return out

    monkeypatch.setattr(Background, "text", counted)
    _streaming(monkeypatch, 300)
    got = kdiff.solve(target, [rec.with_gap_min(10)], k, backend="serial")
    assert kdiff_rows(got) == want
    assert got.profiles["t"].tolist() == in_memory.profiles["t"].tolist()
    assert len(gap_bases) > 2 and max(gap_bases) <= most  # (streamed: several chunks)
