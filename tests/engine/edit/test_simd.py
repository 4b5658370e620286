"""``myers`` with the ``simd`` flag (cpu_simd): many patterns advanced together over one text.

Against the oracle (engine/edit/reference.py) and the two-lane kernel (flags=()), on
pattern sets whose lengths straddle the 32- and 64-bit lane words (31/32/33, 63/64; 65
is refused by myers and goes to myers-blocked, as pcr does), IUPAC codes, k = 0, 1 and
k > m, both strands, several records; with tiny tunables (groups of 3 lanes, chunks of 5
columns, a hit buffer of 2) and with the real ones on real DNA.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import config, edit
from engine.edit import cpu_common as cc
from engine.edit import cpu_simd, driver
from engine.edit import reference as ref
from engine.jobs import CancelToken
from engine.sequences import Record, decode, reverse_complement
from tests.engine.edit._support import tiny_tunables
from tests.strategies import codes, examples

EDGE = (31, 32, 33, 63, 64, 65)


@st.composite
def pattern_sets(draw):
    """2-4 patterns (lengths at the word edges or short), 1-2 records with planted copies."""
    lengths = draw(st.lists(st.sampled_from(EDGE + (1, 5, 20)), min_size=2, max_size=4))
    patterns = [draw(codes(min_size=m, max_size=m)) for m in lengths]
    texts = []
    for _ in range(draw(st.integers(1, 2))):
        text = draw(codes(min_size=1, max_size=150)).copy()
        for p in patterns:
            if draw(st.booleans()):
                piece = p.copy()
                for _ in range(draw(st.integers(0, 2))):
                    at = draw(st.integers(0, len(piece) - 1))
                    piece[at] = draw(st.sampled_from((1, 2, 4, 8)))
                if draw(st.booleans()):
                    piece = reverse_complement(piece)
                at = draw(st.integers(0, len(text) - 1))
                text[at:at + len(piece)] = piece[:len(text) - at]
        texts.append(text)
    return ([Record(f"p{i}", c) for i, c in enumerate(patterns)],
            [Record(f"t{i}", c) for i, c in enumerate(texts)])


def _oracle(patterns, texts, k, strands):
    out = []
    for p, pat in enumerate(patterns):
        for r, txt in enumerate(texts):
            for strand in strands:
                c = pat.codes if strand == "+" else reverse_complement(pat.codes)
                for start, end, d, cigar in ref.search_hits(list(c), list(txt.codes), k):
                    window = txt.codes[start - 1:end]
                    matched = decode(window if strand == "+" else reverse_complement(window))
                    cigar = cigar if strand == "+" else ref.reverse_cigar(cigar)
                    out.append(((p, r, end, strand != "+"),
                                (pat.id, txt.id, strand, start, end, d, cigar, matched)))
    return [row for _, row in sorted(out)]


def _got(res):
    return [(h.pattern_id, h.record_id, h.strand, h.start, h.end, h.distance, h.cigar, h.matched)
            for h in res.hits]


@settings(max_examples=examples(40), deadline=None)
@given(pattern_sets(), st.sampled_from(("k0", "k1", "k>m")), st.sampled_from(("forward", "both")))
def test_hits_equal_the_oracle_and_the_two_lane_kernel(sets, which, strands):
    patterns, texts = sets
    longest = max(len(p) for p in patterns)
    k = {"k0": 0, "k1": 1, "k>m": longest + 2}[which]
    want = _oracle(patterns, texts, k, ("+", "-") if strands == "both" else ("+",))
    with tiny_tunables():
        if longest > 64:  # one word per pattern: myers refuses, pcr takes myers-blocked
            with pytest.raises(ValueError, match="myers-blocked"):
                edit.make_job(patterns, texts, mode="search", k=k, variant="myers")
            res = edit.solve(patterns, texts, mode="search", k=k, strands=strands,
                             variant="myers-blocked", backend="serial")
            assert _got(res) == want
            return
        for backend in ("serial", "multicore"):
            job = edit.make_job(patterns, texts, mode="search", k=k, strands=strands,
                                variant="myers", backend=backend)
            assert driver.simd_applies(job) and job.flags == {"simd"}
            res = edit.solve(patterns, texts, mode="search", k=k, strands=strands,
                             variant="myers", backend=backend)
            assert res.info.flags == ("simd",)
            assert _got(res) == want, backend
            two_lane = edit.solve(patterns, texts, mode="search", k=k, strands=strands,
                                  variant="myers", backend=backend, flags=())
            assert res.hits == two_lane.hits, backend
            assert [q.values.tolist() for q in res.profiles] == \
                [q.values.tolist() for q in two_lane.profiles], backend


@settings(max_examples=examples(25), deadline=None)
@given(pattern_sets(), st.sampled_from((None, 0, 1, 3)))
def test_best_and_global_equal_the_oracle(sets, k):
    patterns, texts = sets
    if max(len(p) for p in patterns) > 64:
        return
    want_best, want_global = [], []
    for pat in patterns:
        for txt in texts:
            for strand in ("+", "-"):
                c = pat.codes if strand == "+" else reverse_complement(pat.codes)
                found = ref.best_hit(list(c), list(txt.codes), k)
                if found:
                    want_best.append((pat.id, txt.id, strand, found[1], found[2]))
            d = ref.global_distance(list(pat.codes), list(txt.codes))
            want_global.append((pat.id, txt.id, d if k is None or d <= k else None))
    key = {(p.id, t.id): (i, j) for i, p in enumerate(patterns) for j, t in enumerate(texts)}
    want_best.sort(key=lambda h: (key[h[:2]], h[3], h[2]))
    with tiny_tunables():
        for backend in ("serial", "multicore"):
            res = edit.solve(patterns, texts, mode="search", k=k, report="best", strands="both",
                             variant="myers", backend=backend, align=False)
            assert res.info.flags == ("simd",)
            got = [(h.pattern_id, h.record_id, h.strand, h.end, h.distance) for h in res.hits]
            assert got == want_best, backend
            res = edit.solve(patterns, texts, k=k, variant="myers", backend=backend)
            assert [(d.pattern_id, d.record_id, d.distance) for d in res.distances] == \
                want_global, backend


def test_lane_words_and_groups(monkeypatch):
    """uint32 lanes up to m = 32, uint64 above; the fewest groups, of equal width but the last."""
    rng = np.random.default_rng(3)
    text = [Record("t", rng.choice(np.array([1, 2, 4, 8], np.uint8), 500))]
    for m, dtype in ((20, np.uint32), (32, np.uint32), (33, np.uint64), (64, np.uint64)):
        pats = [Record(f"p{i}", rng.choice(np.array([1, 2, 4, 8], np.uint8), m))
                for i in range(3)]
        job = edit.make_job(pats, text, mode="search", k=2, strands="both", variant="myers",
                            backend="serial")
        runner = driver.make_runner(job, CancelToken().flag, None)
        assert isinstance(runner.lanes, driver.SimdLanes)
        assert runner.lanes.word.dtype == dtype
    with monkeypatch.context() as patched:
        patched.setattr(config, "EDIT_SIMD_MAX_LANES", 4)
        pats = [Record(f"p{i}", rng.choice(np.array([1, 2, 4, 8], np.uint8), 9))
                for i in range(5)]
        job = edit.make_job(pats, text, mode="search", k=2, strands="both", variant="myers",
                            backend="serial")
        lanes = driver.make_runner(job, CancelToken().flag, None).lanes
        assert lanes.widths.tolist() == [4, 4, 2]  # 10 instances: 3 groups of ceil(10 / 3)
    # Below EDIT_SIMD_MIN_LANES instances, or zipped batches, the two-lane kernel runs.
    one = edit.make_job(pats[:1], text, mode="search", k=2, variant="myers", backend="serial",
                        strands="forward")
    assert not driver.simd_applies(one)
    zipped = edit.make_job(pats[:4], text * 4, mode="search", k=2, pairing="zip",
                           variant="myers", backend="serial")
    assert not driver.simd_applies(zipped)


def test_primers_on_a_genome_equal_the_two_lane_kernel(ecoli_record):
    """80 lanes (40 primers, both strands) on 300 kb with the real tunables: chunks,
    blocks of 256 columns, profile bins, and hits that are not every column's."""
    text = [ecoli_record.slice(1_000_000, 1_300_000)]
    rng = np.random.default_rng(18)
    starts = rng.integers(0, 290_000, 40)
    primers = [Record(f"p{i}", text[0].codes[s:s + 18 + i % 8].copy())
               for i, s in enumerate(starts)]
    for backend in ("serial", "multicore"):
        for k, report in ((3, "hits"), (2, "best")):
            a = edit.solve(primers, text, mode="search", k=k, strands="both", report=report,
                           variant="myers", backend=backend)
            b = edit.solve(primers, text, mode="search", k=k, strands="both", report=report,
                           variant="myers", backend=backend, flags=())
            assert a.info.flags == ("simd",) and b.info.flags == ()
            assert a.hits == b.hits
            assert len(a.hits) >= (80 if report == "hits" else 40)  # each primer's own site
            assert all(np.array_equal(p.values, q.values) for p, q in zip(a.profiles, b.profiles))


def test_cancel_keeps_a_subset_of_the_hits(ecoli_record, monkeypatch):
    text = [ecoli_record.slice(0, 400_000)]
    primers = [ecoli_record.slice(s, s + 12) for s in range(10_000, 400_000, 40_000)]
    full = edit.solve(primers, text, mode="search", k=2, strands="both", variant="myers",
                      backend="serial")
    monkeypatch.setattr(config, "EDIT_FIRST_SLICE_COLUMNS", 256)
    cancel = CancelToken()
    gen = edit.iter_solve(edit.make_job(primers, text, mode="search", k=2, strands="both",
                                        variant="myers", backend="serial"), cancel)
    while True:
        progress = next(gen)
        if progress.phase == "running" and progress.done > 0:
            cancel.cancel()
            break
    try:
        while True:
            next(gen)
    except StopIteration as stop:
        res = stop.value
    assert not res.info.complete
    assert set(res.hits) < set(full.hits)


def test_kernel_polls_the_abort_flag():
    text = np.tile(np.array([1, 2, 4, 8], np.uint8), 5000)
    word = cpu_simd.word_constants(np.uint32)
    peq = np.zeros((1, 16), np.uint32)
    peq[0].reshape(16, 1)[:, 0] = cpu_simd.build_peq([np.array([1, 2, 4, 8], np.uint8)],
                                                     np.uint32)[:, 0]
    units = np.zeros((1, cpu_simd.NUNIT), np.int64)
    units[0, cpu_simd.U_HI] = len(text)
    tasks = np.zeros((1, cc.NTASK), np.int64)  # T_THRESH 0: exact occurrences only
    info = np.zeros((1, cpu_simd.NWINFO), np.int64)
    info[0, cpu_simd.W_UNIT] = -1
    info[0, cpu_simd.W_STRIDE] = 1
    ws = np.zeros((1, cpu_simd.NWORD, 1), np.uint32)
    ls = np.zeros((1, cpu_simd.NLANE, 1), np.int64)
    hits = np.zeros((1, 8, 3), np.int64)
    abort = np.ones(1, np.uint8)
    args = (cc.MODE_HITS, text, peq, np.full((1, 1), 3, np.uint32), np.full((1, 1), 4, np.int64),
            np.ones(1, np.int64), np.full(1, 4, np.int64), units, np.zeros((1, 1), np.int64),
            tasks, np.zeros(1, np.int64), word, info, ws, ls, hits, 10_000, abort)
    cpu_simd.run_serial(*args)
    assert info[0, cpu_simd.W_COLS] == 0 and tasks[0, cc.T_DONE] == 0
    abort[0] = 0
    cpu_simd.run_serial(*args)
    assert info[0, cpu_simd.W_COLS] > 0
    # Stopped by its full buffer (8 hits), every one of them an exact ACGT.
    assert info[0, cpu_simd.W_NHITS] == 8
    assert hits[0, :, 0].tolist() == list(range(4, 33, 4)) and hits[0, :, 1].tolist() == [0] * 8
