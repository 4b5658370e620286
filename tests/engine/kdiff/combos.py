"""Every kdiff variant x backend x parallel form x flag subset the registry offers."""

from __future__ import annotations

import itertools

from engine import registry
from engine.kdiff.spec import SPEC


def all_combos(backends=("serial", "multicore")):
    out = []
    for v in SPEC.variants:
        for b in v.backends:
            if b.name not in backends:
                continue
            for p in b.parallel or (None,):
                flags = registry.valid_flags(SPEC, v.name, b.name, p)
                for n in range(len(flags) + 1):
                    for subset in itertools.combinations(flags, n):
                        out.append((v.name, b.name, p, frozenset(subset)))
    return out


def label(combo) -> str:
    v, b, p, f = combo
    return "/".join(x for x in (v, b, p) if x) + "".join("+" + x for x in sorted(f))
