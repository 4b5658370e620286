"""banded's cut-off and band (blocks switched on and off) and the score profile, against brute
force.

The brute force is the oracle's recurrence row by row in numpy
(``reference.end_distances_numpy``), checked here against the pure-Python
matrix first, so patterns of hundreds of symbols and texts of thousands can be
tried: long patterns with near-occurrences planted in random text make banded
switch its blocks on (to reach row m at a hit) and off again after it.
"""

from __future__ import annotations

import contextlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import edit
from engine.edit import plan as edit_plan
from engine.edit import reference as ref
from engine.jobs import CancelToken
from engine.sequences import Record, reverse_complement
from tests.engine.edit._support import combos, tiny_tunables
from tests.strategies import codes, examples, mutate, random_codes

LONG_LENGTHS = (63, 64, 65, 127, 128, 129, 191, 257, 300)


@contextlib.contextmanager
def profile_bins(n):
    saved = edit_plan.PROFILE_BINS  # where Plan reads it (engine/edit/plan.py)
    edit_plan.PROFILE_BINS = n
    try:
        yield
    finally:
        edit_plan.PROFILE_BINS = saved


def planted(seed, m, n, copies, max_edits, iupac=0.0):
    """(pattern, text): random text with ``copies`` mutated copies of the pattern."""
    rng = np.random.default_rng(seed)
    pattern = random_codes(rng, m, iupac)
    text = random_codes(rng, n)
    for _ in range(copies):
        piece = mutate(rng, pattern, int(rng.integers(0, max_edits + 1)))
        at = int(rng.integers(0, max(1, n - len(piece))))
        text[at:at + len(piece)] = piece[:n - at]
    return pattern, text


@settings(max_examples=examples(15), deadline=None)
@given(codes(min_size=1, max_size=40), codes(min_size=1, max_size=60))
def test_numpy_brute_force_is_the_oracle(pattern, text):
    assert ref.end_distances_numpy(pattern, text).tolist() == ref.end_distances(list(pattern),
                                                                                list(text))


@settings(max_examples=examples(30), deadline=None)
@given(st.integers(0, 10_000), st.sampled_from(LONG_LENGTHS), st.sampled_from((0, 1, 2, 3, 5, 9)),
       st.sampled_from((0.0, 0.05)))
def test_banded_cutoff_finds_every_end(seed, m, k, iupac):
    """Every end within k and the best, with blocks switched on only near the planted copies."""
    pattern, text = planted(seed, m, 1500, copies=3, max_edits=k + 2, iupac=iupac)
    dist = ref.end_distances_numpy(pattern, text)
    want = [(j + 1, int(d)) for j, d in enumerate(dist) if d <= k]
    for backend in ("serial", "multicore"):
        res = edit.solve([Record("p", pattern)], [Record("t", text)], mode="search", k=k,
                         variant="banded", backend=backend, align=False)
        assert [(h.end, h.distance) for h in res.hits] == want, backend
        best = edit.solve([Record("p", pattern)], [Record("t", text)], mode="search", k=k,
                          report="best", variant="banded", backend=backend, align=False,
                          profile=False)
        first = [(j + 1, int(dist[j])) for j in [int(np.argmin(dist))] if dist[j] <= k]
        assert [(h.end, h.distance) for h in best.hits] == first, backend


@pytest.mark.parametrize("m", [129, 300])
def test_banded_computes_only_the_blocks_near_k(m):
    """On random text with k small, banded keeps about one block on; myers-blocked all of them."""
    pattern, text = planted(m, m, 20_000, copies=2, max_edits=2)
    runs = {v: edit.solve([Record("p", pattern)], [Record("t", text)], mode="search", k=2,
                          variant=v, backend="serial", align=False, strands="forward")
            for v in ("banded", "myers-blocked")}
    assert [(h.end, h.distance) for h in runs["banded"].hits] == \
        [(h.end, h.distance) for h in runs["myers-blocked"].hits]
    assert runs["banded"].hits  # the planted copies switch the last block on
    assert runs["myers-blocked"].info.cells == m * len(text)
    assert runs["banded"].info.cells < 0.75 * 64 * len(text) * 2  # about one block, m > 128


@settings(max_examples=examples(20), deadline=None)
@given(st.integers(0, 10_000), st.sampled_from(LONG_LENGTHS + (700,)), st.integers(0, 40),
       st.integers(-70, 70))
def test_banded_global_band_of_blocks(seed, m, edits, shift):
    """Global distance of long pairs: the band's blocks move down the pattern as the text goes."""
    rng = np.random.default_rng(seed)
    a = random_codes(rng, m, 0.02)
    b = mutate(rng, a, edits)
    if shift > 0:
        b = np.concatenate([random_codes(rng, shift), b])
    elif shift < 0:
        b = b[-shift:] if len(b) > -shift else b
    d = int(ref.end_distances_numpy(a, b, anchored=True)[-1])
    for k in sorted({None, 0, max(0, d - 1), d, d + 5, abs(len(b) - m)}, key=lambda x: (x is None, x)):
        for backend in ("serial", "multicore"):
            res = edit.solve([Record("a", a)], [Record("b", b)], k=k, variant="banded",
                             backend=backend)
            want = d if k is None or d <= k else None
            assert res.distances[0].distance == want, (k, backend)


def test_banded_global_computes_only_the_band():
    rng = np.random.default_rng(3)
    a = random_codes(rng, 5000)
    b = mutate(rng, a, 40)
    res = edit.solve([Record("a", a)], [Record("b", b)], k=100, variant="banded", backend="serial")
    assert res.distances[0].distance == int(ref.end_distances_numpy(a, b, anchored=True)[-1])
    assert res.info.cells < 5 * 64 * len(b)  # a band of k = 100 spans at most 5 blocks


def test_best_keeps_the_first_end_across_chunks_and_lanes():
    """Equal best distances in several chunks: sharing the best between lanes must keep the
    first end (a later chunk may find its copy first)."""
    rng = np.random.default_rng(7)
    pattern = random_codes(rng, 70)
    text = random_codes(rng, 3000)
    for at in (2500, 400, 1700):  # the same copy (one substitution) three times
        copy = pattern.copy()
        copy[10] = 1 if copy[10] != 1 else 2
        text[at:at + 70] = copy
    dist = ref.end_distances_numpy(pattern, text)
    assert dist.min() == 1
    want = [(int(np.argmin(dist)) + 1, 1)]
    with tiny_tunables():
        for variant, backend, flags in combos(70):
            for profile in (False, True):
                res = edit.solve([Record("p", pattern)], [Record("t", text)], mode="search", k=4,
                                 report="best", variant=variant, backend=backend, flags=flags,
                                 align=False, profile=profile)
                got = [(h.end, h.distance) for h in res.hits]
                assert got == want, (variant, backend, flags, profile)


def _want_profiles(patterns, texts, k, strands, bins):
    out = []
    for p in patterns:
        for t in texts:
            for strand in strands:
                codes_ = p.codes if strand == "+" else reverse_complement(p.codes)
                width = -(-len(t) // bins)
                cap = (k if k is not None else len(p)) + 1
                values = ref.score_profile(ref.end_distances_numpy(codes_, t.codes), cap, width)
                out.append((p.id, t.id, strand, width, len(t), cap, values.tolist()))
    return out


def _got_profiles(res):
    return [(q.pattern_id, q.record_id, q.strand, q.bin_width, q.length, q.cap, q.values.tolist())
            for q in res.profiles]


@settings(max_examples=examples(20), deadline=None)
@given(st.integers(0, 10_000), st.sampled_from((5, 30, 64, 65, 129)), st.integers(1, 400),
       st.sampled_from((0, 2, 6)), st.sampled_from((1, 3, 7, 4096)),
       st.sampled_from(("hits", "best")), st.sampled_from(("forward", "both")))
def test_profile_is_the_binned_brute_force(seed, m, n, k, bins, report, strands):
    """Every variant x backend, chunked (tiny tunables), bins of width 1 and more."""
    pattern, text = planted(seed, m, n, copies=1, max_edits=k, iupac=0.05)
    patterns = [Record("p", pattern), Record("q", pattern[::-1].copy())]
    texts = [Record("t", text), Record("u", text[: max(1, n // 3)].copy())]
    both = ("+", "-") if strands == "both" else ("+",)
    want = _want_profiles(patterns, texts, k, both, bins)
    with tiny_tunables(), profile_bins(bins):
        for variant, backend, flags in combos(m):
            res = edit.solve(patterns, texts, mode="search", k=k, report=report, strands=strands,
                             variant=variant, backend=backend, flags=flags, align=False)
            assert _got_profiles(res) == want, (variant, backend, flags)
            assert all(len(q.values) <= bins for q in res.profiles)


def test_profile_without_k_is_uncapped_and_off_for_batches(lambda_record):
    pattern = lambda_record.slice(30_000, 30_040)
    text = lambda_record.slice(20_000, 45_000)
    want = _want_profiles([pattern], [text], None, ("+",), edit_plan.PROFILE_BINS)
    for variant in ("myers", "banded"):
        res = edit.solve([pattern], [text], mode="search", report="best", variant=variant,
                         backend="multicore", strands="forward")
        assert _got_profiles(res) == want
        assert res.profile(pattern.id, text.id).values.min() == 0
        assert res.profile(pattern.id, text.id, "-") is None
    assert edit.solve([pattern], [text], mode="search", k=2, pairing="zip").profiles == ()
    assert edit.solve([pattern], [text]).profiles == ()
    with pytest.raises(ValueError, match="profile applies to search mode only"):
        edit.make_job([pattern], [text], profile=True)
    with pytest.raises(ValueError, match="profile must be True or False"):
        edit.make_job([pattern], [text], mode="search", k=1, profile="yes")


def test_profile_after_a_cancel_marks_unscanned_bins(ecoli_record):
    text = [ecoli_record.slice(0, 400_000)]
    primer = [ecoli_record.slice(10_000, 10_020)]
    cancel = CancelToken()
    gen = edit.iter_solve(edit.make_job(primer, text, mode="search", k=2, variant="myers",
                                        backend="serial"), cancel)
    for progress in gen:
        if progress.phase == "running":
            cancel.cancel()
            break
    while True:
        try:
            next(gen)
        except StopIteration as stop:
            res = stop.value
            break
    values = res.profiles[0].values
    assert not res.info.complete
    assert (values == -1).any() and (values >= 0).any()
    # The bins scanned so far hold the uncancelled run's values: inside each scanned run of bins
    # exactly, at its two edges (bins maybe partly scanned) a minimum so far that is no better.
    full = edit.solve(primer, text, mode="search", k=2, variant="myers", backend="serial")
    prof = res.profiles[0]
    want = full.profile(prof.pattern_id, prof.record_id, prof.strand).values
    assert values.shape == want.shape and (want >= 0).all()
    scanned = values >= 0
    assert (values[scanned] >= want[scanned]).all()
    padded = np.concatenate(([False], scanned, [False]))
    interior = scanned & padded[:-2] & padded[2:]
    assert interior.sum() > 10 and np.array_equal(values[interior], want[interior])
