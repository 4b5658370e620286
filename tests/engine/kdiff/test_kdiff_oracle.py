"""Every kdiff variant, backend, parallel form and flag against the slow oracle."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import config, kdiff, registry
from engine.kdiff.reference import kdiff_reference
from engine.kdiff.spec import SPEC
from engine.sequences import Record, load, reverse_complement
from tests.engine.kdiff.combos import all_combos, label
from tests.strategies import codes, examples, mutate, random_codes

COMBOS = all_combos()


def _check_all(target, background, k, strands="both", combos=COMBOS):
    betas = [b.codes for b in background]
    if strands == "both":
        betas = betas + [reverse_complement(b) for b in betas]
    expected = []
    for t in target:
        expected += [(t.id, r + 1, r + length) for r, length in kdiff_reference(t.codes, betas, k)]
    for combo in combos:
        v, b, p, f = combo
        res = kdiff.solve(target, background, k, variant=v, backend=b, parallel=p, flags=f,
                          strands=strands, count_comparisons=True)
        got = [(c.target_id, c.start, c.end) for c in res.candidates]
        assert got == expected, f"{label(combo)} differs from the oracle (k={k})"
        assert res.info.complete


def test_combos_cover_the_spec():
    names = {label(c) for c in COMBOS}
    assert "bitparallel/multicore/coarse" in names
    assert "alternative/multicore/coarse+fine+opt2+opt3" in names
    assert "conventional/multicore/fine+opt1" in names
    assert "conventional/serial" in names and "conventional/serial+opt1" in names
    assert "bitparallel/serial+simd" in names and "bitparallel/multicore/coarse+simd" in names
    # One combination per flag subset of every (variant, backend, form), none twice.
    expected = sum(2 ** len(registry.valid_flags(SPEC, v.name, b.name, p))
                   for v in SPEC.variants for b in v.backends if b.name in ("serial", "multicore")
                   for p in b.parallel or (None,))
    assert len(set(COMBOS)) == len(COMBOS) == expected


@pytest.mark.parametrize("combo", COMBOS, ids=label)
def test_seed_example(combo):
    v, b, p, f = combo
    res = kdiff.solve(load("ACTG"), load("AGCAAG"), 2, variant=v, backend=b, parallel=p, flags=f,
                      strands="forward")
    assert [(c.start, c.end, c.sequence) for c in res.candidates] == [(1, 3, "ACT"), (2, 4, "CTG")]


@settings(max_examples=examples(40))
@given(alpha=codes(1, 70), beta=codes(1, 80), k=st.integers(1, 9), strands=st.sampled_from(["forward", "both"]),
       plant=st.booleans(), seed=st.integers(0, 2**32 - 1))
def test_random_inputs_match_oracle(alpha, beta, k, strands, plant, seed):
    if plant:  # put a near-copy of part of alpha into beta so that candidates get long
        rng = np.random.default_rng(seed)
        start = int(rng.integers(0, len(alpha)))
        beta = np.concatenate([beta, mutate(rng, alpha[start:start + 40], int(rng.integers(0, 4)))])
        if len(beta) == 0:
            beta = alpha.copy()
    _check_all([Record("t", alpha)], [Record("b", beta)], k, strands)


@settings(max_examples=examples(10))
@given(t1=codes(1, 40), t2=codes(1, 40), b1=codes(1, 40), b2=codes(1, 40), k=st.integers(1, 5))
def test_multi_record_targets_and_backgrounds(t1, t2, b1, b2, k):
    _check_all([Record("t1", t1), Record("t2", t2)], [Record("b1", b1), Record("b2", b2)], k)


def test_no_match_spans_two_background_records():
    # ACGTACGT only occurs across the boundary of the two records.
    target = [Record("t", np.array([1, 2, 4, 8, 1, 2, 4, 8], np.uint8))]
    background = [Record("b1", np.array([8, 8, 1, 2, 4, 8], np.uint8)),
                  Record("b2", np.array([1, 2, 4, 8, 8, 8], np.uint8))]
    _check_all(target, background, 1, "forward")
    res = kdiff.solve(target, background, 1, strands="forward", backend="serial")
    assert res.candidates[0].length == 5  # ACGTA is absent from both records


@pytest.mark.parametrize("m", [63, 64, 65, 128, 129])
@pytest.mark.parametrize("k", [1, 6, 66])
def test_word_boundary_lengths(m, k):
    rng = np.random.default_rng(m * 100 + k)
    alpha = random_codes(rng, m, iupac_rate=0.03)
    # Background: a mutated copy of most of alpha, so that c(r) runs across 64-row blocks.
    beta = np.concatenate([random_codes(rng, 30), mutate(rng, alpha[5:], max(1, k // 3)),
                           random_codes(rng, 20)])
    fast = [c for c in COMBOS if not (c[2] in ("fine", "coarse+fine") and m > 64 and k == 66)]
    _check_all([Record("t", alpha)], [Record("b", beta)], k, "both", combos=fast)


@pytest.mark.parametrize("k", [1, 2, 5])
def test_k_at_least_the_target_length_gives_no_candidates(k):
    alpha = np.array([1, 2, 4, 8, 15][:k], np.uint8)
    for combo in COMBOS:
        v, b, p, f = combo
        res = kdiff.solve([Record("t", alpha)], [Record("b", np.array([8, 8, 8], np.uint8))], k,
                          variant=v, backend=b, parallel=p, flags=f)
        assert res.candidates == ()


def test_iupac_never_invents_a_difference():
    # N in the target matches anything; R (A/G) matches A and G but not C or T.
    target = load("ANGR")
    for background in ("ACGA", "ACGG"):  # N on C, R on A or G: the whole target occurs
        res = kdiff.solve(target, load(background), 1, strands="forward", backend="serial")
        assert res.candidates == (), background
    # R on C does not match: each start's candidate runs to the R; the lone R occurs (on A).
    res = kdiff.solve(target, load("ACGC"), 1, strands="forward", backend="serial")
    assert [(c.start, c.end, c.sequence) for c in res.candidates] == [
        (1, 4, "ANGR"), (2, 4, "NGR"), (3, 4, "GR")]
    _check_all(target, load("ACGA"), 1, "forward")
    _check_all(target, load("ACGC"), 1, "forward")
    _check_all(load("ACGTRYKMSWBDHVN"), load("NNNNACGTTTT"), 2, "both")


def test_small_kernel_tiles(monkeypatch):
    """Patch tiles small so that tiny inputs span several stripes and lane groups."""
    monkeypatch.setattr(config, "KDIFF_FINE_STRIPE_ROWS", 3)
    monkeypatch.setattr(config, "KDIFF_COARSE_FINE_BATCH", 3)
    monkeypatch.setattr(config, "KDIFF_BITPARALLEL_LANES", 3)
    rng = np.random.default_rng(7)
    alpha = random_codes(rng, 30, 0.05)
    beta = np.concatenate([random_codes(rng, 40), mutate(rng, alpha[3:25], 2)])
    _check_all([Record("t", alpha)], [Record("b", beta)], 4, "both")
