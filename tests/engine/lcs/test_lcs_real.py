"""Real DNA: msx2 homologs and lambda vs E. coli slices, against the oracle and RapidFuzz."""

from __future__ import annotations

import numpy as np
import pytest

from engine import config, lcs
from engine.lcs import reference
from tests.engine.lcs.helpers import COMBOS, assert_valid_lcs


@pytest.fixture(scope="module")
def short_homologs(msx2_records):
    """The two 804 bp homologs (one holds an N): small enough for the oracle and a whole-matrix
    snapshot."""
    a, b = msx2_records[1], msx2_records[5]
    assert len(a) == len(b) == 804 and 15 in a.codes
    return a, b, np.array(reference.lcs_matrix(a.codes, b.codes))


@pytest.fixture(scope="module")
def phage_host(lambda_record, ecoli_record):
    a, b = lambda_record.slice(1000, 1700), ecoli_record.slice(5000, 5650)
    return a, b, reference.lcs(a.codes, b.codes)[0]


@pytest.mark.parametrize("variant,backend", COMBOS)
def test_msx2_homologs_equal_the_oracle(variant, backend, short_homologs):
    a, b, matrix = short_homologs
    res = lcs.solve(a, b, variant=variant, backend=backend, snapshots=True)
    assert_valid_lcs(a.codes, b.codes, res, int(matrix[-1, -1]))
    assert res.snapshot_shape == (804, 804)
    np.testing.assert_array_equal(res.snapshot, matrix[1:, 1:])


@pytest.mark.parametrize("variant,backend", COMBOS)
def test_lambda_vs_ecoli_slices_equal_the_oracle(variant, backend, phage_host, monkeypatch):
    a, b, expected = phage_host
    assert lcs.length(a, b, variant=variant, backend=backend) == expected
    monkeypatch.setattr(config, "LCS_TRACEBACK_WORDS", 500)  # several Hirschberg levels
    res = lcs.solve(a, b, variant=variant, backend=backend)
    assert_valid_lcs(a.codes, b.codes, res, expected)


@pytest.mark.parametrize("variant,backend", COMBOS)
def test_long_homologs_equal_rapidfuzz(variant, backend, msx2_records, monkeypatch):
    """2224 x 2162: several bitparallel strips, bands of several strips, several chunks."""
    from rapidfuzz.distance import LCSseq

    a, b = msx2_records[0], msx2_records[3]
    expected = LCSseq.similarity(a.text, b.text)
    monkeypatch.setattr(config, "LCS_TILE_COLUMNS", 300)
    monkeypatch.setattr(config, "LCS_TILE_BANDS", 2)
    monkeypatch.setattr(config, "LCS_TRACEBACK_WORDS", 4000)
    res = lcs.solve(a, b, variant=variant, backend=backend)
    assert_valid_lcs(a.codes, b.codes, res, expected)


@pytest.mark.parametrize("backend", ["serial", "multicore"])
def test_bitparallel_lambda_vs_ecoli_equals_rapidfuzz(backend, lambda_record, ecoli_record):
    from rapidfuzz.distance import LCSseq

    a, b = lambda_record.slice(0, 20_000), ecoli_record.slice(0, 17_000)
    expected = LCSseq.similarity(a.text, b.text)
    res = lcs.solve(a, b, variant="bitparallel", backend=backend)
    assert_valid_lcs(a.codes, b.codes, res, expected)
