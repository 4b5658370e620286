"""Streaming on the cuda backends, in numba's CUDA simulator: kdiff, kmismatch and edit search
against a background larger than ``config.GPU_STREAM_BYTES`` (patched to a few hundred bytes)
give the answers of the in-memory CUDA path and of the CPU, wherever the chunk edges fall
around a planted match, on both strands, with records shorter than a chunk.

Run by test_streaming.py in a subprocess with NUMBA_ENABLE_CUDASIM=1 (the variable must be
set before numba is first imported). The simulator is slow: a few budgets per case, each
putting the chunk edges elsewhere around the planted copy (the CPU tests in
test_streaming.py walk every offset; the chunk plan is the same code).
"""

from __future__ import annotations

import os

import numpy as np
import pytest

if os.environ.get("NUMBA_ENABLE_CUDASIM") != "1":
    pytest.skip("run with NUMBA_ENABLE_CUDASIM=1 (test_streaming.py does)", allow_module_level=True)

from engine import config, edit, kdiff, kmismatch  # noqa: E402
from engine.sequences import Record, reverse_complement  # noqa: E402
from engine.streaming import Background  # noqa: E402
from tests.engine.kdiff.cuda_support import tiny_kdiff_gpu  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")

BASES = np.array([1, 2, 4, 8], dtype=np.uint8)


@pytest.fixture(autouse=True)
def small_gpu(monkeypatch):
    tiny_kdiff_gpu(monkeypatch)
    monkeypatch.setattr(config, "KMISMATCH_CUDA_THREADS_PER_BLOCK", 8)
    monkeypatch.setattr(config, "KMISMATCH_CUDA_ORDER_THREADS", 4)
    monkeypatch.setattr(config, "EDIT_CUDA_THREADS_PER_BLOCK", 32)
    monkeypatch.setattr(config, "EDIT_CUDA_MIN_CHUNK_COLUMNS", 24)
    monkeypatch.setattr(config, "EDIT_CUDA_CHUNK_OVERLAP_RATIO", 0)
    monkeypatch.setattr(config, "STREAM_OVERLAP_RATIO", 1)


def _random(rng, n):
    return BASES[rng.integers(0, 4, n)]


def _background(rng, piece, strand, at, tail=120):
    """``piece`` with one substitution (reverse-complemented on '-'), ``at`` bases into a
    random record, and two records shorter than any chunk."""
    planted = piece.copy()
    planted[len(planted) // 2] = BASES[(np.searchsorted(BASES, planted[len(planted) // 2]) + 1) % 4]
    if strand == "-":
        planted = reverse_complement(planted)
    return [Record("b", np.concatenate([_random(rng, at), planted, _random(rng, tail)])),
            Record("s1", piece[:5].copy()), Record("s2", planted[:11].copy())]


def _streams(records, strands, budget) -> bool:
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(config, "GPU_STREAM_BYTES", budget)
        return not Background(records, strands, gpu=True).fits()


def _budget_runs(solve, records, strands, budgets):
    """solve() with the whole text on the device, then streamed under each budget."""
    whole = solve()
    got = []
    for budget in budgets:
        assert _streams(records, strands, budget)
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(config, "GPU_STREAM_BYTES", budget)
            got.append(solve())
    return whole, got


@pytest.mark.parametrize("variant,flags,strand", [
    ("bitparallel", None, "+"), ("bitparallel", None, "-"), ("bitparallel", frozenset(), "-"),
    ("alternative", None, "+"), ("conventional", None, "-")])
def test_kdiff_cuda_streams_like_the_whole_background(variant, flags, strand):
    rng = np.random.default_rng(4)
    target = _random(rng, 16)
    background = _background(rng, target[2:15], strand, 40, tail=30)
    job = ([Record("t", target)], background, 3)

    def solve():
        return kdiff.solve(*job, variant=variant, backend="cuda", flags=flags)

    # overlap m + K = 18; per strand a chunk is budget // 2 - 19 bases (the edges fall
    # before, inside and after the planted copy at 40..53)
    budgets = {"+": (80, 98), "-": (88, 110)}[strand] if flags is None else (90,)
    whole, streamed = _budget_runs(solve, background, "both", budgets)
    cpu = kdiff.solve(*job, backend="serial")
    assert whole.candidates == cpu.candidates and whole.profiles["t"].tolist() == \
        cpu.profiles["t"].tolist()
    assert max(cpu.profiles["t"]) >= 8  # the planted copy is found
    for got in streamed:
        assert got.candidates == whole.candidates
        assert got.profiles["t"].tolist() == whole.profiles["t"].tolist()


@pytest.mark.parametrize("strand", ["+", "-"])
def test_kmismatch_cuda_streams_like_the_whole_text(strand):
    rng = np.random.default_rng(5)
    pattern = _random(rng, 14)
    text = _background(rng, pattern, strand, 60)
    patterns = [Record("p", pattern), Record("q", pattern[3:9].copy())]

    def solve():
        res = kmismatch.solve(patterns, text, 1, variant="thread", backend="cuda")
        return list(res.hits.tuples()), res.pattern_hits.tolist(), [d.counts.tolist()
                                                                  for d in res.density]

    whole, streamed = _budget_runs(solve, text, "forward", (40, 47, 55, 70))
    cpu = kmismatch.solve(patterns, text, 1, backend="serial")
    assert whole[0] == list(cpu.hits.tuples())
    assert any(h.pattern_id == "p" and h.strand == strand and h.record_id == "b" for h in cpu.hits)
    for got in streamed:
        assert got == whole


@pytest.mark.parametrize("report", ["hits", "best"])
def test_edit_search_cuda_streams_like_the_whole_text(report):
    rng = np.random.default_rng(6)
    pattern = _random(rng, 12)
    text = _background(rng, pattern, "+", 50)
    text[0] = Record("b", np.concatenate([text[0].codes, reverse_complement(pattern), _random(rng, 9)]))
    patterns = [Record("p", pattern)]

    def solve():
        res = edit.solve(patterns, text, mode="search", k=2, report=report, strands="both",
                         variant="task", backend="cuda")
        return ([(h.pattern_id, h.record_id, h.strand, h.start, h.end, h.distance, h.cigar,
                  h.matched) for h in res.hits], [p.values.tolist() for p in res.profiles])

    # overlap m + k = 14
    whole, streamed = _budget_runs(solve, text, "forward", (30, 41, 52))
    cpu = edit.solve(patterns, text, mode="search", k=2, report=report, strands="both",
                     backend="serial")
    assert whole[0] == [(h.pattern_id, h.record_id, h.strand, h.start, h.end, h.distance, h.cigar,
                         h.matched) for h in cpu.hits]
    assert {h.strand for h in cpu.hits if h.record_id == "b" and h.distance <= 1} == {"+", "-"}
    for got in streamed:
        assert got == whole
