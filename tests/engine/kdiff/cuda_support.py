"""Helpers shared by the kdiff CUDA tests (simulator cases and GPU tests)."""

from __future__ import annotations

import itertools

from engine.kdiff.spec import SPEC
from engine.registry import missing_requirements


def cuda_combos():
    """Every (variant, flags) the cuda backend offers, without flags whose opt4 is missing."""
    out = []
    for v in SPEC.variants:
        b = v.backend("cuda")
        for n in range(len(b.flags) + 1):
            for subset in itertools.combinations(b.flags, n):
                if missing_requirements(SPEC, v.name, "cuda", subset):
                    continue
                out.append((v.name, frozenset(subset)))
    return out


def label(combo) -> str:
    v, f = combo
    return v + "".join("+" + x for x in sorted(f))
