"""Primer filters with Primer3's defaults; every bound can be switched off (None)."""

from __future__ import annotations

from dataclasses import dataclass, fields

from engine.primers.annotate import Annotation, Conditions, annotate_many


@dataclass(frozen=True)
class Filters:
    """Inclusive bounds. None switches a bound off. Defaults are Primer3's."""

    len_min: int | None = 18
    len_max: int | None = 27
    tm_min: float | None = 57.0
    tm_max: float | None = 63.0
    gc_min: float | None = 20.0
    gc_max: float | None = 80.0
    max_poly_x: int | None = 5             # PRIMER_MAX_POLY_X
    min_gc_clamp: int | None = None        # PRIMER_GC_CLAMP (0 in Primer3: off)
    max_hairpin_tm: float | None = None    # off by default
    max_homodimer_tm: float | None = None  # off by default
    max_end_stability: float | None = None  # kcal/mol, as ΔG magnitude (PRIMER_MAX_END_STABILITY)

    def __post_init__(self):
        for lo, hi in (("len_min", "len_max"), ("tm_min", "tm_max"), ("gc_min", "gc_max")):
            a, b = getattr(self, lo), getattr(self, hi)
            if a is not None and b is not None and a > b:
                raise ValueError(f"{lo} ({a:g}) is greater than {hi} ({b:g})")
        for f in fields(self):
            v = getattr(self, f.name)
            if v is not None and not f.name.startswith(("tm_", "max_hairpin", "max_homodimer")) and v < 0:
                raise ValueError(f"{f.name} must not be negative, got {v:g}")

    @classmethod
    def off(cls) -> "Filters":
        return cls(**{f.name: None for f in fields(cls)})


def passes(a: Annotation, flt: Filters) -> bool:
    """True when the annotation meets every active bound.

    A thermodynamic bound cannot be checked for a sequence with ambiguity codes
    (Primer3 gives no value); such a sequence fails that bound.
    """
    def within(value, lo, hi):
        if lo is None and hi is None:
            return True
        if value is None:
            return False
        return (lo is None or value >= lo) and (hi is None or value <= hi)

    return (within(a.length, flt.len_min, flt.len_max)
            and within(a.tm, flt.tm_min, flt.tm_max)
            and within(a.gc_percent, flt.gc_min, flt.gc_max)
            and within(a.max_run, None, flt.max_poly_x)
            and within(a.gc_clamp, flt.min_gc_clamp, None)
            and within(a.hairpin_tm, None, flt.max_hairpin_tm)
            and within(a.homodimer_tm, None, flt.max_homodimer_tm)
            and within(None if a.end_stability_dg is None else -a.end_stability_dg,
                       None, flt.max_end_stability))


def to_annotate(candidates, annotate: bool, filters: Filters | None):
    """The candidates whose annotations :func:`select_candidates` reads: all of them with
    ``annotate``; with ``filters`` alone those within its length bounds (free: Primer3 is not)."""
    if annotate or not filters:
        return candidates
    return [c for c in candidates if (filters.len_min is None or c.length >= filters.len_min)
            and (filters.len_max is None or c.length <= filters.len_max)]


def select_candidates(candidates, *, annotate: bool = False, conditions: Conditions | None = None,
                      filters: Filters | None = None, known=None) -> tuple[list, list[Annotation] | None]:
    """The candidates ``filters`` keep and their annotations (in the same order).

    The annotations are None when neither annotations nor filters were asked for (the
    candidates then come back as given: kdiff's columns stay columns). Without ``annotate``,
    the length bounds are checked first: they are free, Primer3 is not. ``known``
    (``{sequence: Annotation}`` under these conditions, the window's) is read before
    Primer3 is asked.
    """
    if not (annotate or filters):
        return candidates, None
    cands = list(to_annotate(candidates, annotate, filters))
    sequences = [c.sequence for c in cands]
    if known is None:
        notes = annotate_many(sequences, conditions)
    else:
        notes = [known.get(s) or annotate_many([s], conditions)[0] for s in sequences]
    if filters:
        kept = [(c, a) for c, a in zip(cands, notes) if passes(a, filters)]
        cands, notes = [c for c, _ in kept], [a for _, a in kept]
    return cands, notes
