"""Every variant x backend against the oracle on hypothesis inputs (IUPAC, word edges)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import config, lcs
from engine.lcs import reference
from engine.lcs.cpu_common import make_sampling, sample_axis
from engine.sequences import Record
from tests.engine.lcs.helpers import COMBOS, assert_valid_lcs
from tests.strategies import WORD_EDGE_LENGTHS, codes, examples

LENGTHS = st.one_of(st.sampled_from(WORD_EDGE_LENGTHS), st.integers(1, 140))
SEQS = LENGTHS.flatmap(lambda n: codes(n, n))
ACGT_SEQS = LENGTHS.flatmap(lambda n: codes(n, n, iupac=False))


@pytest.fixture(scope="module", autouse=True)
def small_tiles():
    """Tiny tiles so that small inputs span many strips and chunks (stumpy's habit)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(config, "LCS_STRIP_ROWS", {"rows": 17, "wavefront": 13})
        mp.setattr(config, "LCS_TILE_COLUMNS", 37)
        yield


def _rec(codes_, name):
    return Record(name, np.asarray(codes_, dtype=np.uint8))


@pytest.mark.parametrize("variant,backend", COMBOS)
@settings(max_examples=examples(40))
@given(a=SEQS, b=SEQS)
def test_length_and_lcs_equal_the_oracle(variant, backend, a, b):
    expected, _ = reference.lcs(a, b)
    assert lcs.length(_rec(a, "a"), _rec(b, "b"), variant=variant, backend=backend) == expected
    res = lcs.solve(_rec(a, "a"), _rec(b, "b"), variant=variant, backend=backend)
    assert res.info.complete
    assert_valid_lcs(a, b, res, expected)


@pytest.mark.parametrize("variant,backend", COMBOS)
@settings(max_examples=examples(15))
@given(a=SEQS, b=SEQS, cap=st.integers(1, 12))
def test_hirschberg_recursion_equals_the_oracle(variant, backend, a, b, cap):
    """A tiny traceback cap forces the linear-space split at every level."""
    expected, _ = reference.lcs(a, b)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(config, "LCS_TRACEBACK_WORDS", cap)
        res = lcs.solve(_rec(a, "a"), _rec(b, "b"), variant=variant, backend=backend)
    assert_valid_lcs(a, b, res, expected)


@pytest.mark.parametrize("variant,backend", COMBOS)
@settings(max_examples=examples(10))
@given(a=SEQS, b=SEQS)
def test_snapshot_is_the_whole_matrix_when_small(variant, backend, a, b):
    matrix = np.array(reference.lcs_matrix(a, b))
    res = lcs.solve(_rec(a, "a"), _rec(b, "b"), variant=variant, backend=backend, snapshots=True)
    assert res.snapshot_shape == (len(a), len(b))
    assert res.snapshot.dtype == np.uint16
    np.testing.assert_array_equal(res.snapshot, matrix[1:, 1:])
    assert_valid_lcs(a, b, res, int(matrix[-1, -1]))


@pytest.mark.parametrize("variant,backend", COMBOS)
def test_downsampled_snapshot_holds_the_sampled_cells(variant, backend, monkeypatch):
    rng = np.random.default_rng(7)
    a = rng.integers(1, 16, 150).astype(np.uint8)
    b = rng.integers(1, 16, 97).astype(np.uint8)
    monkeypatch.setattr(config, "SNAPSHOT_MAX_SIDE", 40)
    matrix = np.array(reference.lcs_matrix(a, b))
    res = lcs.solve(_rec(a, "a"), _rec(b, "b"), variant=variant, backend=backend, snapshots=True)
    rows, cols = sample_axis(150, 40), sample_axis(97, 40)
    assert res.snapshot.shape == (40, 40) and res.snapshot_shape == (150, 97)
    np.testing.assert_array_equal(res.snapshot, matrix[np.ix_(rows, cols)])


def test_snapshot_values_shift_into_uint16():
    smp = make_sampling(200_000, 150_000, 1024)
    assert smp.shift == 2 and 150_000 >> smp.shift <= 65535
    assert sample_axis(200_000, 1024)[-1] == 200_000


@pytest.mark.parametrize("variant,backend", COMBOS)
@settings(max_examples=examples(25))
@given(a=ACGT_SEQS, b=ACGT_SEQS)
def test_length_equals_rapidfuzz_on_plain_acgt(variant, backend, a, b):
    from rapidfuzz.distance import LCSseq

    text_a, text_b = _rec(a, "a").text, _rec(b, "b").text
    assert lcs.length(text_a, text_b, variant=variant, backend=backend) == \
        LCSseq.similarity(text_a, text_b)


@pytest.mark.parametrize("variant,backend", COMBOS)
def test_edge_inputs(variant, backend):
    def one(a, b):
        return lcs.solve(a, b, variant=variant, backend=backend)

    assert one("A", "A").lcs == "A"
    assert one("A", "C").length == 0 and one("A", "C").pairs.shape == (0, 2)
    assert one("N", "ACGT").length == 1
    assert one("R", "Y").length == 0                  # {A,G} and {C,T} do not intersect
    res = one("ACGT" * 40, "T")
    assert res.length == 1 and res.lcs == "T"
    res = one("RRRR", "AGAG")                         # the symbol is the shared base
    assert res.lcs == "AGAG" and res.pairs.tolist() == [[1, 1], [2, 2], [3, 3], [4, 4]]
