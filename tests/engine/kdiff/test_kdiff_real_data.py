"""kdiff on real DNA: the oracle on small slices, edlib and cross-variant checks on larger ones."""

from __future__ import annotations

import numpy as np
import pytest

from engine import kdiff
from benchmarks.kdiff import edlib_longest_prefix
from engine.kdiff.reference import kdiff_reference
from engine.sequences import decode, reverse_complement
from tests.engine.kdiff.combos import all_combos, label

COMBOS = all_combos()
ROW_AND_COARSE = [c for c in COMBOS if c[2] in (None, "coarse")]


def _expected(target, background, k, both=True):
    betas = [b.codes for b in background]
    if both:
        betas += [reverse_complement(b) for b in betas]
    out = []
    for t in target:
        out += [(t.id, r + 1, r + n) for r, n in kdiff_reference(t.codes, betas, k)]
    return out


def _solve(target, background, k, combo, strands="both"):
    v, b, p, f = combo
    res = kdiff.solve(target, background, k, variant=v, backend=b, parallel=p, flags=f,
                      strands=strands)
    return [(c.target_id, c.start, c.end) for c in res.candidates]


@pytest.mark.parametrize("k", [1, 4])
def test_msx2_homologs_against_oracle(msx2_records, k):
    target = [msx2_records[0].slice(100, 160)]
    background = [msx2_records[3].slice(80, 300), msx2_records[6].slice(0, 120)]
    expected = _expected(target, background, k)
    assert expected, "the slice should have candidates"
    for combo in COMBOS:
        assert _solve(target, background, k, combo) == expected, label(combo)


@pytest.mark.parametrize("k", [1, 5])
def test_lambda_against_ecoli_pieces_both_strands(lambda_record, ecoli_record, k):
    target = [lambda_record.slice(1000, 1050)]
    background = [ecoli_record.slice(0, 250), ecoli_record.slice(1_000_000, 1_000_200)]
    expected = _expected(target, background, k)
    for combo in COMBOS:
        assert _solve(target, background, k, combo) == expected, label(combo)


def test_lambda_against_ecoli_larger_all_row_and_coarse_forms(lambda_record, ecoli_record):
    """Larger real input: every row/coarse form agrees (the fine forms are checked above)."""
    target = [lambda_record.slice(20_000, 20_150)]
    background = [ecoli_record.slice(500_000, 530_000)]
    results = {label(c): _solve(target, background, 12, c) for c in ROW_AND_COARSE}
    reference = results.pop("bitparallel/serial")
    assert len(reference) > 100  # the scan stops near the end, where suffixes get short
    for name, got in results.items():
        assert got == reference, name


@pytest.mark.parametrize("k", [1, 8, 30])
def test_c_of_r_matches_edlib_binary_search(lambda_record, ecoli_record, k):
    """Independent cross-check on plain ACGT: c(r) equals a binary search with edlib (HW, k-1)."""
    alpha = lambda_record.slice(30_000, 30_400)
    beta = ecoli_record.slice(2_000_000, 2_060_000)
    assert set(np.unique(alpha.codes)) <= {1, 2, 4, 8} and set(np.unique(beta.codes)) <= {1, 2, 4, 8}
    res = kdiff.solve([alpha], [beta], k, variant="bitparallel", backend="serial", strands="forward")
    profile = res.profiles[alpha.id]
    alpha_text, beta_text = decode(alpha.codes), decode(beta.codes)
    rng = np.random.default_rng(k)
    for r in sorted(rng.choice(len(profile), 12, replace=False)):
        assert profile[r] == edlib_longest_prefix(alpha_text[r:], beta_text, k), f"r={r}"
