"""Scores equal parasail (nw_scan_32) and Biopython's PairwiseAligner on plain ACGT."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.sequences import decode
from tests.engine.nw.helpers import check_alignment, small_pieces, solve_all
from tests.strategies import codes, examples

parasail = pytest.importorskip("parasail")
Align = pytest.importorskip("Bio.Align")

#: DNA-like scores: a match earns, a mismatch and a gap cost. parasail takes gap penalties
#: (open = extend > 0 for linear gaps) and reports 0 for A/A with match -2 and gap -1, where
#: the optimum is -2, so the peers are only asked about positive match scores.
peer_scores = st.tuples(st.integers(1, 6), st.integers(-6, 0), st.integers(-6, -1))


def parasail_score(a: str, b: str, match: int, mismatch: int, gap: int) -> int:
    # parasail charges open + (L-1) * extend for a gap of length L: linear when open == extend.
    matrix = parasail.matrix_create("ACGT", match, mismatch)
    return parasail.nw_scan_32(a, b, -gap, -gap, matrix).score


def biopython_score(a: str, b: str, match: int, mismatch: int, gap: int) -> float:
    aligner = Align.PairwiseAligner(mode="global", match_score=match, mismatch_score=mismatch,
                                    gap_score=gap)
    return aligner.score(a, b)


@settings(max_examples=examples(25))
@given(a=codes(1, 70, iupac=False), b=codes(1, 70, iupac=False), scores=peer_scores)
def test_scores_equal_the_peers(a, b, scores):
    sa, sb = decode(a), decode(b)
    p = parasail_score(sa, sb, *scores)
    assert biopython_score(sa, sb, *scores) == p
    with small_pieces(full_matrix_cells=200):
        for combo, res in solve_all(a, b, *scores).items():
            assert res.score == p, combo
            check_alignment(res, a, b, *scores)


def test_parasail_gap_convention_is_linear_with_open_equal_extend():
    # One gap of length 3 costs 3 * 2 = 6 with open = extend = 2.
    assert parasail_score("ACGTACGT", "ACGTT", 1, -1, -2) == biopython_score("ACGTACGT", "ACGTT", 1, -1, -2)
    assert parasail_score("AAAAAAAA", "AAAAA", 1, 0, -2) == 5 - 6
