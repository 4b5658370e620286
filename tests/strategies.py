"""Hypothesis strategies for encoded DNA shared by every family's tests."""

from __future__ import annotations

import numpy as np
from hypothesis import settings
from hypothesis import strategies as st

#: max_examples of the "ci" profile (tests/conftest.py); examples() scales from it.
CI_EXAMPLES = 100


def examples(n: int) -> int:
    """``n`` examples under the "ci" profile, scaled with the loaded profile (ten times as many
    with ``--hypothesis-profile=thorough``). A bare ``@settings(max_examples=n)`` would pin the
    count and ignore the profile."""
    return max(1, n * settings.default.max_examples // CI_EXAMPLES)

ACGT = (1, 2, 4, 8)
IUPAC = tuple(range(1, 16))
#: Lengths around the 64-bit word boundaries that bit-parallel kernels must get right.
WORD_EDGE_LENGTHS = (1, 2, 63, 64, 65, 127, 128, 129)


def codes(min_size=1, max_size=80, iupac=True, alphabet=None):
    """Encoded sequences; mostly ACGT with some IUPAC codes when ``iupac``."""
    if alphabet is None:
        alphabet = st.sampled_from(ACGT) if not iupac else st.one_of(
            st.sampled_from(ACGT), st.sampled_from(ACGT), st.sampled_from(ACGT), st.sampled_from(IUPAC))
    return st.lists(alphabet, min_size=min_size, max_size=max_size).map(
        lambda xs: np.array(xs, dtype=np.uint8))


def random_codes(rng: np.random.Generator, n: int, iupac_rate: float = 0.0) -> np.ndarray:
    out = rng.choice(np.array(ACGT, dtype=np.uint8), n)
    if iupac_rate:
        mask = rng.random(n) < iupac_rate
        out[mask] = rng.integers(1, 16, mask.sum()).astype(np.uint8)
    return out


def mutate(rng: np.random.Generator, seq: np.ndarray, edits: int) -> np.ndarray:
    """Apply ``edits`` random substitutions/insertions/deletions (for near-matches)."""
    s = list(seq)
    for _ in range(edits):
        op = rng.integers(3)
        pos = int(rng.integers(0, max(1, len(s))))
        if op == 0 and s:
            s[pos] = int(rng.choice(ACGT))
        elif op == 1:
            s.insert(pos, int(rng.choice(ACGT)))
        elif s and len(s) > 1:
            del s[pos]
    return np.array(s, dtype=np.uint8)
