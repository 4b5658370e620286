"""Shared helpers for the edit tests: every variant x backend, tiny tunables, oracle answers."""

from __future__ import annotations

import contextlib

from engine import config
from engine.edit import reference as ref
from engine.sequences import Record

VARIANTS = ("dp", "myers", "myers-blocked", "banded")
BACKENDS = ("serial", "multicore")


def combos(max_m: int):
    """(variant, backend, flags) that accept patterns up to ``max_m`` (myers: m <= 64).

    ``myers`` comes twice: with its default flags (``simd``, where it applies) and with
    none (the two-lane kernel); None means the defaults.
    """
    for variant in VARIANTS:
        if variant == "myers" and max_m > 64:
            continue
        for backend in BACKENDS:
            yield variant, backend, None
            if variant == "myers":
                yield variant, backend, ()


@contextlib.contextmanager
def tiny_tunables():
    """Force every resumption path on small inputs.

    Search cuts texts into overlapping chunks of 5 columns (multicore, and
    serial ``myers`` with its two lanes), a lane's budget starts at 3 columns
    (scans stop and resume mid-task), the hit buffer holds 2 hits,
    alignments keep sqrt checkpoints instead of whole matrices, and banded
    global starts its doubling at |n - m|. ``myers`` with ``simd`` takes a single
    pattern too, in groups of at most 3 lanes (the last one narrower).
    """
    names = {"EDIT_MIN_CHUNK_COLUMNS": 5, "EDIT_CHUNKS_PER_THREAD": 1 << 20, "EDIT_FIRST_SLICE_COLUMNS": 3, "EDIT_HIT_BUFFER": 2,
             "EDIT_ALIGN_STORE_WORDS": 1, "EDIT_BAND_FIRST_SLACK": 0, "EDIT_SIMD_MIN_LANES": 1,
             "EDIT_SIMD_MAX_LANES": 3}
    saved = {n: getattr(config, n) for n in names}
    try:
        for n, v in names.items():
            setattr(config, n, v)
        yield
    finally:
        for n, v in saved.items():
            setattr(config, n, v)


def rec(codes, name="s") -> Record:
    return Record(name, codes)


def hit_tuples(result):
    return [(h.start, h.end, h.distance, h.cigar) for h in result.hits]


def oracle_hits(pattern, text, k):
    return ref.search_hits(list(pattern), list(text), k)


def oracle_best(pattern, text, k):
    found = ref.best_hit(list(pattern), list(text), k)
    return [found] if found else []
