"""Helpers shared by the nw CUDA tests (simulator cases and GPU tests; no hypothesis here)."""

from __future__ import annotations

from engine import registry
from engine.nw.cuda_options import form_of
from engine.nw.spec import SPEC


def cuda_forms():
    """Every (variant, parallel, flags) the cuda backend offers: each parallel form of each
    variant, with every subset of the flags valid for it."""
    out = []
    for v in SPEC.variants:
        b = v.backend("cuda")
        if b is None:
            continue
        for form in b.parallel:
            valid = registry.valid_flags(SPEC, v.name, "cuda", form)
            subsets = [()] + [(f,) for f in valid]
            out += [(v.name, form, frozenset(s)) for s in subsets]
    return out


def label(combo) -> str:
    return form_of(*combo)


def options(combo) -> dict:
    v, p, f = combo
    return {"variant": v, "backend": "cuda", "parallel": p, "flags": f}
