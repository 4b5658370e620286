"""Real DNA: msx2 homologs (IUPAC N included) and lambda against E. coli slices."""

from __future__ import annotations

import pytest

from engine import nw
from engine.nw.reference import nw_reference
from engine.sequences import decode
from tests.engine.nw.helpers import COMBOS, check_alignment, small_pieces, solve_all

parasail = pytest.importorskip("parasail")
Align = pytest.importorskip("Bio.Align")


def _peer_score(a, b, match, mismatch, gap):
    matrix = parasail.matrix_create("ACGT", match, mismatch)
    score = parasail.nw_scan_32(decode(a), decode(b), -gap, -gap, matrix).score
    aligner = Align.PairwiseAligner(mode="global", match_score=match, mismatch_score=mismatch,
                                    gap_score=gap)
    assert aligner.score(decode(a), decode(b)) == score
    return score


def test_lambda_against_ecoli_slice_equals_the_oracle(lambda_record, ecoli_record):
    a = lambda_record.codes[20_000:20_300]
    b = ecoli_record.codes[100_000:100_260]
    expected, _ = nw_reference(a, b, 2, -1, -2)
    with small_pieces(full_matrix_cells=5_000):
        for combo, res in solve_all(a, b, 2, -1, -2).items():
            assert res.score == expected, combo
            check_alignment(res, a, b, 2, -1, -2)


@pytest.mark.slow
def test_msx2_homologs_with_n_equal_the_oracle(msx2_records):
    a, b = msx2_records[1].codes, msx2_records[5].codes   # record 1 holds three N
    assert (a == 15).sum() == 3
    expected, _ = nw_reference(a, b, 1, 0, -1)
    for combo, res in solve_all(a, b).items():
        assert res.score == expected, combo
        check_alignment(res, a, b, 1, 0, -1)


@pytest.mark.slow
def test_msx2_homologs_equal_the_peers(msx2_records):
    first = msx2_records[0].codes
    for other in (msx2_records[k].codes for k in (2, 3, 6)):
        expected = _peer_score(first, other, 1, -1, -2)
        for combo, res in solve_all(first, other, 1, -1, -2).items():
            assert res.score == expected, combo
            check_alignment(res, first, other, 1, -1, -2)


@pytest.mark.slow
def test_lambda_against_ecoli_3k_uses_hirschberg_and_equals_the_peers(lambda_record, ecoli_record,
                                                                      monkeypatch):
    """9 M cells > the 4 M-cell threshold: the traceback must split (linear space)."""
    from engine.nw import cpu_traceback

    a, b = lambda_record.codes[:3000], ecoli_record.codes[:3000]
    expected = _peer_score(a, b, 1, 0, -1)
    largest = []
    real = cpu_traceback.full_traceback

    def spy(x, y, *rest):
        largest.append((len(x) + 1) * (len(y) + 1))
        return real(x, y, *rest)

    monkeypatch.setattr(cpu_traceback, "full_traceback", spy)
    for variant, backend in COMBOS:
        if variant == "rows" and backend == "serial":
            continue   # the slowest kernel; rows/multicore runs the same tiles
        res = nw.solve(lambda_record.slice(0, 3000), ecoli_record.slice(0, 3000), variant=variant,
                       backend=backend, threads=2)
        assert res.score == expected, (variant, backend)
        check_alignment(res, a, b, 1, 0, -1)
    from engine import config

    assert len(largest) > 1 and max(largest) <= config.NW_FULL_MATRIX_CELLS
