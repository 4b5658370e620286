"""Helpers shared by the edit tests (CUDA simulator cases and GPU tests, streaming and dask;
no hypothesis here)."""

from __future__ import annotations

#: Every GPU variant and its parameter: task, and cooperative with 1, 2 and 3 words per thread
#: (3 leaves lanes of a warp idle and pads patterns unevenly).
COMBOS = (("task", None), ("cooperative", 1), ("cooperative", 2), ("cooperative", 3))


def options(combo) -> dict:
    variant, words = combo
    out = {"variant": variant, "backend": "cuda"}
    if words is not None:
        out["words_per_thread"] = words
    return out


def label(combo) -> str:
    variant, words = combo
    return variant if words is None else f"{variant}-w{words}"


def hit_rows(result):
    return [(h.pattern_id, h.record_id, h.strand, h.start, h.end, h.distance, h.cigar, h.matched)
            for h in result.hits]


def pair_rows(result):
    return [(d.pattern_id, d.record_id, d.distance, d.cigar) for d in result.distances]


def profile_rows(result):
    return [(p.pattern_id, p.record_id, p.strand, p.bin_width, p.length, p.cap, p.values.tolist())
            for p in result.profiles]
