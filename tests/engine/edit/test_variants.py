"""Every variant x backend against the oracle on hypothesis inputs.

Patterns take the lengths where bit-parallel code breaks (63/64/65, 127/128/129)
and IUPAC codes; k takes 0, 1, small values and values above the pattern's
length. Every run uses tiny tunables, so multicore search cuts the text into
overlapping chunks, scans stop and resume mid-task, the hit buffer overflows
and tracebacks recompute checkpointed segments.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import edit
from engine.edit import reference as ref
from tests.engine.edit._support import combos, hit_tuples, oracle_best, oracle_hits, rec, tiny_tunables
from tests.strategies import WORD_EDGE_LENGTHS, codes, examples

PATTERN_LENGTHS = WORD_EDGE_LENGTHS + (5, 17, 30)


@st.composite
def pattern_and_text(draw, max_text=120, lengths=PATTERN_LENGTHS):
    m = draw(st.sampled_from(lengths))
    pattern = draw(codes(min_size=m, max_size=m))
    text = draw(codes(min_size=1, max_size=max_text)).copy()
    if draw(st.booleans()):
        # Plant a copy of (a piece of) the pattern with a few edits, so that exact and
        # near hits exist, some of them longer than m (deletions from the text's view).
        piece = list(pattern[draw(st.integers(0, m - 1)):])
        for _ in range(draw(st.integers(0, 3))):
            at = draw(st.integers(0, len(piece)))
            op = draw(st.sampled_from(("sub", "ins", "del")))
            if op == "ins" or not piece:
                piece.insert(at, draw(st.sampled_from((1, 2, 4, 8))))
            elif op == "sub":
                piece[min(at, len(piece) - 1)] = draw(st.sampled_from((1, 2, 4, 8)))
            elif len(piece) > 1:
                del piece[min(at, len(piece) - 1)]
        at = draw(st.integers(0, len(text) - 1))
        piece = np.array(piece[:len(text) - at], dtype=np.uint8)
        text[at:at + len(piece)] = piece
    return pattern, text


@settings(max_examples=examples(40))
@given(pattern_and_text(), st.data())
def test_global_distance_and_cutoff(pt, data):
    pattern, text = pt
    d = ref.global_distance(list(pattern), list(text))
    k = data.draw(st.sampled_from(sorted({0, 1, max(0, d - 1), d, d + 3})))
    with tiny_tunables():
        for variant, backend, flags in combos(len(pattern)):
            res = edit.solve([rec(pattern)], [rec(text)], variant=variant, backend=backend,
                             flags=flags)
            assert res.distances[0].distance == d, (variant, backend, flags)
            assert res.best == d
            res = edit.solve([rec(pattern)], [rec(text)], k=k, variant=variant, backend=backend,
                             flags=flags)
            want = d if d <= k else None
            assert res.distances[0].distance == want, (variant, backend, flags, k)


@settings(max_examples=examples(15))
@given(pattern_and_text(max_text=80))
def test_global_alignment_matches_oracle(pt):
    pattern, text = pt
    want = ref.cigar(list(pattern), list(text))
    d = ref.global_distance(list(pattern), list(text))
    with tiny_tunables():
        for variant, backend, flags in combos(len(pattern)):
            res = edit.solve([rec(pattern)], [rec(text)], align=True, variant=variant,
                             backend=backend, flags=flags)
            got = res.distances[0].cigar
            assert got == want, (variant, backend, flags)
    assert ref.cigar_cost(want, list(pattern), list(text)) == d


@settings(max_examples=examples(40))
@given(pattern_and_text(), st.sampled_from((0, 1, 2, 3, 5)))
def test_search_hits_small_k(pt, k):
    pattern, text = pt
    want = oracle_hits(pattern, text, k)
    with tiny_tunables():
        for variant, backend, flags in combos(len(pattern)):
            res = edit.solve([rec(pattern)], [rec(text)], mode="search", k=k, variant=variant,
                             backend=backend, flags=flags, strands="forward")
            assert hit_tuples(res) == want, (variant, backend, flags)
            assert res.best == min((h[2] for h in want), default=None)


@settings(max_examples=examples(20))
@given(pattern_and_text(max_text=20), st.integers(0, 3))
def test_search_hits_k_above_pattern_length(pt, extra):
    pattern, text = pt
    k = len(pattern) + extra  # every end is a hit
    want = oracle_hits(pattern, text, k)
    assert len(want) == len(text)
    with tiny_tunables():
        for variant, backend, flags in combos(len(pattern)):
            res = edit.solve([rec(pattern)], [rec(text)], mode="search", k=k, variant=variant,
                             backend=backend, flags=flags, strands="forward")
            assert hit_tuples(res) == want, (variant, backend, flags)


@settings(max_examples=examples(40))
@given(pattern_and_text(), st.sampled_from((None, 0, 1, 4)))
def test_search_best(pt, k):
    pattern, text = pt
    want = oracle_best(pattern, text, k)
    with tiny_tunables():
        for variant, backend, flags in combos(len(pattern)):
            res = edit.solve([rec(pattern)], [rec(text)], mode="search", report="best", k=k,
                             variant=variant, backend=backend, flags=flags, strands="forward")
            assert hit_tuples(res) == want, (variant, backend, flags)


@settings(max_examples=examples(25))
@given(pattern_and_text(max_text=60), st.sampled_from((0, 1, 2)))
def test_hits_carry_valid_alignments(pt, k):
    """Whatever the tie-breaks, a CIGAR must spend exactly the hit's distance on its window."""
    pattern, text = pt
    res = edit.solve([rec(pattern)], [rec(text)], mode="search", k=k, backend="serial",
                     strands="forward")
    for h in res.hits:
        window = list(text[h.start - 1:h.end])
        assert ref.cigar_cost(h.cigar, list(pattern), window) == h.distance
        assert ref.global_distance(list(pattern), window) == h.distance
        assert h.matched == "".join("?ACMGRSVTWYHKDBN"[c] for c in window)


def test_seed_example_table_1():
    """The seed study's Table 1: P = TAGAC against T = ATCGAG."""
    p, t = rec(np.array([8, 1, 4, 1, 2], np.uint8)), rec(np.array([1, 8, 2, 4, 1, 4], np.uint8))
    last_row = [4, 4, 3, 3, 2, 2]  # C[5][1..6], the last row of the paper's score matrix
    assert ref.end_distances(list(p.codes), list(t.codes)) == last_row
    for variant, backend, flags in combos(5):
        res = edit.solve([p], [t], mode="search", k=2, variant=variant, backend=backend, flags=flags,
                         align=False, strands="forward")
        got = [(h.end, h.distance) for h in res.hits]
        assert got == [(5, 2), (6, 2)], (variant, backend, flags)


@pytest.mark.parametrize("shift", [1, 4, 17])
def test_global_band_reaches_its_edge(shift):
    """a = R1 + S, b = S + R2: the only cheap alignment runs `shift` diagonals off the main one,
    exactly the edge of the band of k = d = 2 * shift."""
    rng = np.random.default_rng(shift)
    body = rng.choice(np.array([1, 2, 4, 8], np.uint8), 80)
    a = np.concatenate([rng.choice(np.array([1, 2, 4, 8], np.uint8), shift), body])
    b = np.concatenate([body, rng.choice(np.array([1, 2, 4, 8], np.uint8), shift)])
    d = ref.global_distance(list(a), list(b))
    assert d == 2 * shift
    for variant, backend, flags in combos(len(a)):
        for k, want in ((d, d), (d - 1, None), (None, d)):
            res = edit.solve([rec(a)], [rec(b)], k=k, variant=variant, backend=backend, flags=flags)
            assert res.distances[0].distance == want, (variant, backend, flags, k)
