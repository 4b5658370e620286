"""The neighbour bounds of engine/kdiff/neighbours.py against the oracle's c(r).

c(r) <= c(r+1) + 1 is what the CUDA driver's ``neighbours`` rounds rest on: a start is
settled without a scan where its bounds meet, and a scan is sized from its upper bound.
Here the rounds run on the oracle's c(r) (a "scan" reads the true value), so every bound,
every inferred value and the end of the rounds are checked on their own.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.kdiff.neighbours import SliceBounds
from engine.kdiff.reference import longest_prefix_within
from engine.sequences import reverse_complement
from tests.strategies import codes, examples, mutate, random_codes


def _true_c(alpha, texts, k):
    return np.array([longest_prefix_within(alpha[r:], texts, k) for r in range(len(alpha))])


def _inputs(alpha, background, plant, both):
    """Texts with a planted near-copy of the target, so that long runs of c(r) appear."""
    rng = np.random.default_rng(plant)
    a = plant % len(alpha)
    text = np.concatenate([background, mutate(rng, alpha[a:a + 10 + plant % 50], plant % 3)])
    return [text, reverse_complement(text)] if both else [text]


#: A target: drawn by hypothesis, or (half the time) random DNA with some IUPAC codes from a
#: drawn seed, whose c(r) fall into long runs less regular than a drawn list's.
targets = st.one_of(codes(2, 60), st.tuples(st.integers(2, 60), st.integers(0, 10**6)).map(
    lambda a: random_codes(np.random.default_rng(a[1]), a[0], iupac_rate=0.05)))


@settings(max_examples=examples(60))
@given(alpha=targets, background=codes(0, 40), k=st.integers(1, 5),
       plant=st.integers(0, 10**6), both=st.booleans())
def test_the_neighbour_bound_holds(alpha, background, k, plant, both):
    c = _true_c(alpha, _inputs(alpha, background, plant, both), k)
    assert np.all(c[:-1] <= c[1:] + 1)


@settings(max_examples=examples(60))
@given(alpha=targets, background=codes(0, 40), k=st.integers(1, 5),
       plant=st.integers(0, 10**6), both=st.booleans(), word=st.sampled_from((4, 8, 32)),
       split=st.integers(2, 5), cut=st.integers(0, 10**6))
def test_rounds_settle_every_start_exactly(alpha, background, k, plant, both, word, split, cut):
    """Starts below ``word`` known (as after a lanes stage), the rest with the lower bound word;
    the slice may begin after a settled start (the previous slice's last). Each round: the
    bounds contain the true c, inference settles only true values, the picks make progress."""
    c = _true_c(alpha, _inputs(alpha, background, plant, both), k)
    m = len(alpha)
    first = cut % m  # the slice is alpha[first:]; the start before it, if any, is settled
    rs = np.arange(first, m)
    mps = m - rs
    cs = c[first:]
    known = (cs < word) | (cs >= mps)
    before = (first - 1, int(c[first - 1])) if first else None
    bounds = SliceBounds(rs, np.where(known, cs, np.minimum(word, mps)), known, mps, before)
    for _ in range(4 * m + 4):
        lower, upper, right = bounds.bounds()
        pend = bounds.pending
        assert np.all(lower[pend] <= cs[pend]) and np.all(cs[pend] <= upper[pend])
        bounds.infer()
        assert np.all(bounds.c[bounds.known] == cs[bounds.known])
        pend = bounds.pending
        if not len(pend):
            break
        picks = bounds.picks(split)
        assert len(picks) and np.all(~bounds.known[picks])
        bounds.settle(picks, cs[picks])
    assert bounds.known.all() and np.all(bounds.c == cs)


def test_a_run_that_falls_by_one_needs_its_first_start_only():
    """c(r) = 40, 39, ..., 31 between settled short starts: one scan (the first) settles all."""
    cs = np.array([5] + list(range(40, 30, -1)) + [30, 4])
    rs = np.arange(len(cs))
    known = cs < 31
    bounds = SliceBounds(rs, np.where(known, cs, 31), known, np.full(len(cs), 1000))
    assert bounds.infer() == 1 and bounds.c[10] == 31  # its lower bound meets 30 + 1
    picks = bounds.picks(2)
    assert 1 in picks  # nothing on its left bounds it above 31
    bounds.settle(np.array([1]), np.array([40]))
    bounds.infer()
    assert bounds.known.all() and np.all(bounds.c == cs)


def test_upper_bounds_come_from_the_right_and_the_suffix():
    bounds = SliceBounds(np.arange(5), np.array([70, 70, 70, 70, 12]),
                         np.array([False, False, False, False, True]), np.array([90, 89, 88, 87, 86]))
    lower, upper, right = bounds.bounds()
    assert upper.tolist()[:4] == [16, 15, 14, 13] and right[:4].all()
    assert lower.tolist()[:4] == [70, 70, 70, 70]
    # Contradictory facts (a lower bound above an upper bound) are an internal error.
    try:
        bounds.infer()
    except RuntimeError as err:
        assert "internal error" in str(err)
    else:
        raise AssertionError("no error on contradictory bounds")
