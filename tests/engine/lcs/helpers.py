"""Checks shared by the lcs tests."""

from __future__ import annotations

import numpy as np

from engine.sequences import DECODE_TABLE

VARIANTS = ("rows", "wavefront", "bitparallel")
BACKENDS = ("serial", "multicore")
COMBOS = [(v, b) for v in VARIANTS for b in BACKENDS]


def assert_valid_lcs(a: np.ndarray, b: np.ndarray, result, expected_length: int | None) -> None:
    """The result's pairs are increasing, match, spell ``result.lcs`` and have the right count."""
    pairs = np.asarray(result.pairs)
    assert pairs.ndim == 2 and pairs.shape[1] == 2
    if expected_length is not None:
        assert result.length == expected_length
        assert pairs.shape[0] == expected_length
    assert len(result.lcs) == pairs.shape[0]
    if pairs.shape[0] == 0:
        return
    i, j = pairs[:, 0] - 1, pairs[:, 1] - 1  # 1-based in the result
    assert i.min() >= 0 and j.min() >= 0 and i.max() < len(a) and j.max() < len(b)
    assert np.all(np.diff(i) > 0) and np.all(np.diff(j) > 0)
    common = a[i] & b[j]
    assert np.all(common != 0), "a pair of symbols that do not match"
    assert result.lcs == DECODE_TABLE[common].tobytes().decode()
