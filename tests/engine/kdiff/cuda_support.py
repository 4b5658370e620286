"""Helpers shared by the kdiff CUDA tests (simulator cases and GPU tests)."""

from __future__ import annotations

import itertools

from engine import config
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


#: Two register tiers: chunks overlap, words overflow and starts are re-run on tiny inputs.
TINY_TIERS = ((1, 6), (2, 12))


def tiny_kdiff_gpu(monkeypatch) -> None:
    """kdiff's CUDA settings shrunk so that the simulator runs many blocks, tiers and lanes
    on small inputs (also used by tests/engine/streaming_cuda_cases.py)."""
    monkeypatch.setattr(config, "KDIFF_CUDA_THREADS_PER_BLOCK", 4)
    monkeypatch.setattr(config, "KDIFF_CUDA_BITPARALLEL_THREADS_PER_BLOCK", 8)
    monkeypatch.setattr(config, "KDIFF_CUDA_BITPARALLEL_THREADS", 64)
    monkeypatch.setattr(config, "KDIFF_CUDA_MIN_CHUNK", 4)
    monkeypatch.setattr(config, "KDIFF_CUDA_CHUNK_OVERLAP_RATIO", 1)
    monkeypatch.setattr(config, "KDIFF_CUDA_BITPARALLEL_TIERS", TINY_TIERS)
    monkeypatch.setattr(config, "KDIFF_CUDA_LANES_THREADS_PER_BLOCK", 4)
    monkeypatch.setattr(config, "KDIFF_CUDA_LANES_PER_THREAD", {32: 2, 64: 2})
    monkeypatch.setattr(config, "KDIFF_CUDA_LANES_MIN_CHUNK", 8)
