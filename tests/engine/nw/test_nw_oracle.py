"""Every variant x backend against the slow oracle on hypothesis inputs (IUPAC included)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.nw.reference import nw_matrix, nw_reference
from engine.nw.scoring import Scores, snapshot_scale, value_type
from tests.strategies import WORD_EDGE_LENGTHS, codes, examples
from tests.engine.nw.helpers import check_alignment, small_pieces, solve_all

small_scores = st.tuples(st.integers(-3, 6), st.integers(-6, 3), st.integers(-6, 2))
#: Large enough that a 60 x 60 matrix needs int32 (and the prefix variant's shifted rows too).
large_scores = st.tuples(st.integers(400, 1000), st.integers(-1000, -400), st.integers(-1000, -400))


@settings(max_examples=examples(40))
@given(a=codes(1, 40), b=codes(1, 40), scores=st.one_of(small_scores, small_scores, large_scores))
def test_every_variant_equals_the_oracle(a, b, scores):
    expected, _ = nw_reference(a, b, *scores)
    with small_pieces():
        for combo, res in solve_all(a, b, *scores).items():
            assert res.score == expected, combo
            assert res.info.complete
            check_alignment(res, a, b, *scores)
        for combo, res in solve_all(a, b, *scores, traceback=False).items():
            assert res.score == expected and res.alignment is None, combo


@settings(max_examples=examples(12))
@given(m=st.sampled_from(WORD_EDGE_LENGTHS), n=st.sampled_from(WORD_EDGE_LENGTHS),
       seed=st.integers(0, 2 ** 32 - 1), scores=small_scores)
def test_word_boundary_lengths(m, n, seed, scores):
    rng = np.random.default_rng(seed)
    a = rng.choice(np.array([1, 2, 4, 8, 15, 5, 10], dtype=np.uint8), m)
    b = rng.choice(np.array([1, 2, 4, 8, 3, 12], dtype=np.uint8), n)
    expected, _ = nw_reference(a, b, *scores)
    with small_pieces(full_matrix_cells=300):
        for combo, res in solve_all(a, b, *scores).items():
            assert res.score == expected, combo
            check_alignment(res, a, b, *scores)


@settings(max_examples=examples(10))
@given(a=codes(1, 50), b=codes(1, 50), scores=small_scores, side=st.sampled_from([3, 8, 1024]))
def test_snapshots_sample_the_score_matrix(a, b, scores, side):
    H = np.array(nw_matrix(a, b, *scores), dtype=np.int64)
    offset, step = snapshot_scale(len(a), len(b), Scores(*scores))
    with small_pieces(snapshot_side=side):
        for combo, res in solve_all(a, b, *scores, traceback=False, snapshots=True).items():
            rows, cols = res.snapshot_rows, res.snapshot_cols
            assert res.snapshot.dtype == np.uint16 and res.snapshot_shape == (len(a) + 1, len(b) + 1)
            assert len(rows) == min(side, len(a) + 1) and len(cols) == min(side, len(b) + 1)
            assert rows[0] == 0 and rows[-1] == len(a) and cols[0] == 0 and cols[-1] == len(b)
            expected = 1 + (H[np.ix_(rows, cols)] - offset) // step
            assert np.array_equal(res.snapshot.astype(np.int64), expected), combo


def test_value_type_is_the_narrowest_that_fits():
    assert value_type(20_000, 20_000, Scores()) == (np.int16, 0)
    # H - j*gap spans [-20000, 40000]: int16 once centred on 10000.
    assert value_type(20_000, 20_000, Scores(), shifted=True) == (np.int16, 10_000)
    assert value_type(40_000, 40_000, Scores())[0] == np.int32
    assert value_type(100, 100, Scores(1000, -1000, -1000))[0] == np.int32
    assert value_type(100, 100, Scores(300, 300, 300)) == (np.int16, 30_000)   # H in [0, 60000]


@pytest.mark.parametrize("m,n", [(1, 1), (1, 9), (9, 1), (2, 30)])
def test_thin_matrices(m, n):
    rng = np.random.default_rng(m * 100 + n)
    a = rng.choice(np.array([1, 2, 4, 8], dtype=np.uint8), m)
    b = rng.choice(np.array([1, 2, 4, 8], dtype=np.uint8), n)
    expected, _ = nw_reference(a, b, 2, -1, -2)
    with small_pieces(full_matrix_cells=4):
        for combo, res in solve_all(a, b, 2, -1, -2).items():
            assert res.score == expected, combo
            check_alignment(res, a, b, 2, -1, -2)
