"""Primer3 (primer3-py) as pair design uses it: settings, primer lists, pair checks, reasons.

Primer3 decides which single primers are acceptable (its own Tm, GC, hairpin,
self-dimer and end-stability checks and penalties), whether a pair is acceptable
(Tm difference, pair complementarity, product) and the pair's penalty. Pair design
(:mod:`engine.primers.pairs`) only restricts what Primer3 may choose from.
"""

from __future__ import annotations

import contextlib
import io
import math
import re
from dataclasses import dataclass, fields

from engine.primers.annotate import Conditions

#: Primer3 refuses primers longer than this (its Tm formulas stop there).
PRIMER3_MAX_LENGTH = 35
#: Primer3's C code asserts a template of at least 3 nt (it aborts the process otherwise).
PRIMER3_MIN_TEMPLATE = 3
#: The most pairs per record: the GUI's limit too. Each pair is one Primer3 check, and a
#: 10,000 took minutes per record without giving a biologist anything to read.
MAX_NUM_RETURN = 1000
#: Product sizes up to this (Primer3 reads them as C ints).
MAX_PRODUCT_SIZE = 1_000_000_000

_RANGE_RE = re.compile(r"^\s*(\d+)\s*-\s*(\d+)\s*$")


def parse_product_ranges(text) -> tuple[tuple[int, int], ...]:
    """``"100-300 301-600"`` (Primer3's syntax; commas also separate) -> ((100, 300), (301, 600)).

    ValueError for an empty, malformed, inverted or zero-length range.
    """
    items = text if isinstance(text, (list, tuple)) else [text]
    parts = [p for item in items for p in re.split(r"[\s,]+", str(item).strip()) if p]
    if not parts:
        raise ValueError("empty product size range")
    out = []
    for part in parts:
        m = _RANGE_RE.match(part)
        if not m:
            raise ValueError(f"product size range {part!r} is not FROM-TO (e.g. 100-300)")
        lo, hi = int(m.group(1)), int(m.group(2))
        if lo < 1:
            raise ValueError(f"product size range {part!r} is empty (sizes start at 1)")
        if lo > hi:
            raise ValueError(f"product size range {part!r} is inverted ({lo} > {hi})")
        if hi > MAX_PRODUCT_SIZE:
            raise ValueError(f"product size range {part!r}: sizes may be at most "
                             f"{MAX_PRODUCT_SIZE:,}")
        out.append((lo, hi))
    return tuple(out)


@dataclass(frozen=True)
class DesignSettings:
    """Primer3's settings for pair design. Defaults are Primer3's.

    Bounds that the command line switches off ('off') become Primer3's widest values.
    """

    product_ranges: tuple[tuple[int, int], ...] = ((100, 300),)
    len_min: int = 18
    len_opt: int = 20
    len_max: int = 27
    tm_min: float = 57.0
    tm_opt: float = 60.0
    tm_max: float = 63.0
    max_tm_diff: float = 5.0
    gc_min: float = 20.0
    gc_max: float = 80.0
    max_poly_x: int = 5
    gc_clamp: int = 0
    max_hairpin_tm: float = 47.0      # PRIMER_MAX_HAIRPIN_TH
    max_self_any_tm: float = 47.0     # PRIMER_MAX_SELF_ANY_TH
    max_self_end_tm: float = 47.0     # PRIMER_MAX_SELF_END_TH
    max_end_stability: float = 100.0  # kcal/mol, PRIMER_MAX_END_STABILITY
    num_return: int = 5
    #: Primer3's PRIMER_MIN_THREE_PRIME_DISTANCE: two returned pairs never share a left (or a
    #: right) primer, nor two whose 3' ends lie fewer than this many bases apart; -1: pairs
    #: may share primers. 3 keeps the returned pairs distinct.
    min_three_prime_distance: int = 3
    conditions: Conditions = Conditions()

    def __post_init__(self):
        if not self.product_ranges:
            raise ValueError("empty product size range")
        for lo, hi in self.product_ranges:
            if not (isinstance(lo, int) and isinstance(hi, int)) or lo < 1 or lo > hi:
                raise ValueError(f"product size range {lo}-{hi} is inverted or empty")
        for f in fields(self):
            v = getattr(self, f.name)
            if isinstance(v, float) and not math.isfinite(v):
                raise ValueError(f"{f.name} must be a finite number")
        if not 1 <= self.len_min <= self.len_opt <= self.len_max:
            raise ValueError(f"primer lengths need 1 <= min ({self.len_min}) <= optimum "
                             f"({self.len_opt}) <= max ({self.len_max})")
        if self.len_max > PRIMER3_MAX_LENGTH:
            raise ValueError(f"primer length max {self.len_max} is above Primer3's limit "
                             f"({PRIMER3_MAX_LENGTH})")
        if not self.tm_min <= self.tm_opt <= self.tm_max:
            raise ValueError(f"Tm needs min ({self.tm_min:g}) <= optimum ({self.tm_opt:g}) <= "
                             f"max ({self.tm_max:g})")
        if not 0 <= self.gc_min <= self.gc_max <= 100:
            raise ValueError(f"GC needs 0 <= min ({self.gc_min:g}) <= max ({self.gc_max:g}) <= 100")
        if self.max_tm_diff < 0:
            raise ValueError(f"max Tm difference must be >= 0, got {self.max_tm_diff:g}")
        if not 1 <= self.num_return <= MAX_NUM_RETURN:
            raise ValueError(f"num_return must be 1 to {MAX_NUM_RETURN}, got {self.num_return}")
        if self.min_three_prime_distance < -1:
            raise ValueError(f"min_three_prime_distance must be >= -1, got "
                             f"{self.min_three_prime_distance}")
        if self.max_poly_x < 1 or self.gc_clamp < 0:
            raise ValueError("max_poly_x must be >= 1 and gc_clamp >= 0")

    def global_args(self, **extra) -> dict:
        c = self.conditions
        args = {
            "PRIMER_PICK_LEFT_PRIMER": 1, "PRIMER_PICK_RIGHT_PRIMER": 1,
            "PRIMER_PICK_INTERNAL_OLIGO": 0,
            "PRIMER_MIN_SIZE": self.len_min, "PRIMER_OPT_SIZE": self.len_opt,
            "PRIMER_MAX_SIZE": self.len_max,
            "PRIMER_MIN_TM": self.tm_min, "PRIMER_OPT_TM": self.tm_opt, "PRIMER_MAX_TM": self.tm_max,
            "PRIMER_PAIR_MAX_DIFF_TM": self.max_tm_diff,
            "PRIMER_MIN_GC": self.gc_min, "PRIMER_MAX_GC": self.gc_max,
            "PRIMER_MAX_POLY_X": self.max_poly_x, "PRIMER_GC_CLAMP": self.gc_clamp,
            "PRIMER_MAX_HAIRPIN_TH": self.max_hairpin_tm,
            "PRIMER_MAX_SELF_ANY_TH": self.max_self_any_tm,
            "PRIMER_MAX_SELF_END_TH": self.max_self_end_tm,
            "PRIMER_MAX_END_STABILITY": self.max_end_stability,
            "PRIMER_SALT_MONOVALENT": c.mv_conc, "PRIMER_SALT_DIVALENT": c.dv_conc,
            "PRIMER_DNTP_CONC": c.dntp_conc, "PRIMER_DNA_CONC": c.dna_conc,
            "PRIMER_PRODUCT_SIZE_RANGE": [list(r) for r in self.product_ranges],
            "PRIMER_NUM_RETURN": self.num_return,
            "PRIMER_MIN_THREE_PRIME_DISTANCE": self.min_three_prime_distance,
        }
        args.update(extra)
        return args


def _span(region, what: str) -> tuple[int, int]:
    """A (start, end) pair of ints, 1-based inclusive, start <= end."""
    try:
        start, end = region
    except (TypeError, ValueError):
        raise ValueError(f"{what} must be START-END, got {region!r}") from None
    if isinstance(start, bool) or isinstance(end, bool) or not (isinstance(start, int)
                                                                and isinstance(end, int)):
        raise ValueError(f"{what} must be START-END in whole numbers, got {region!r}")
    if start < 1 or start > end:
        raise ValueError(f"{what} {start}-{end} is empty or inverted (positions start at 1)")
    return start, end


@dataclass(frozen=True)
class Regions:
    """Primer3's sequence regions, in the target records' own numbering (1-based, inclusive:
    a record cut to a region keeps its numbering, see ``Record.offset``).

    - ``amplify`` (SEQUENCE_TARGET): every product contains every one of them. Primer3's
      own rule is weaker (a pair flanks *one* of its targets), so Primer3 is given their
      hull, the one stretch from the first start to the last end.
    - ``exclude`` (SEQUENCE_EXCLUDED_REGION): no primer overlaps any of them.
    - ``include`` (SEQUENCE_INCLUDED_REGION): primers and products lie inside it.

    A region applies to the target records that hold it (an excluded region: that
    overlap it); one that lies in no target record is refused (:meth:`check`).
    """

    amplify: tuple[tuple[int, int], ...] = ()
    exclude: tuple[tuple[int, int], ...] = ()
    include: tuple[int, int] | None = None

    def __post_init__(self):
        object.__setattr__(self, "amplify", tuple(_span(r, "amplify region") for r in self.amplify))
        object.__setattr__(self, "exclude", tuple(_span(r, "excluded region") for r in self.exclude))
        if self.include is not None:
            object.__setattr__(self, "include", _span(self.include, "included region"))

    def __bool__(self) -> bool:
        return bool(self.amplify or self.exclude or self.include)

    def check(self, records) -> None:
        """ValueError for a region that lies in no record, or amplify regions outside the
        included region of their record."""
        spans = [(r.offset + 1, r.offset + len(r), r.id) for r in records]

        def holder(start, end):
            return next((s for s in spans if s[0] <= start and end <= s[1]), None)

        for what, regions in (("amplify", self.amplify),
                              ("included", (self.include,) if self.include else ())):
            for start, end in regions:
                if holder(start, end) is None:
                    where = ", ".join(f"{rid} {lo}-{hi}" for lo, hi, rid in spans[:3])
                    raise ValueError(f"{what} region {start}-{end} lies in no target record "
                                     f"({where}): regions are in the records' own numbering")
        for start, end in self.exclude:
            if not any(lo <= end and start <= hi for lo, hi, _ in spans):
                raise ValueError(f"excluded region {start}-{end} overlaps no target record")
        if self.include and self.amplify:
            lo, hi = self.include
            for start, end in self.amplify:
                if holder(start, end) == holder(lo, hi) and not (lo <= start and end <= hi):
                    raise ValueError(f"amplify region {start}-{end} is not inside the included "
                                     f"region {lo}-{hi}: no product could contain it")

    def amplify_hull(self, offset: int, length: int) -> tuple[int, int] | None:
        """The 0-based half-open template span every product must contain on a record of
        this offset and length (None: no amplify region there)."""
        lo, hi = offset + 1, offset + length
        inside = [(a, b) for a, b in self.amplify if lo <= a and b <= hi]
        if not inside:
            return None
        return min(a for a, _ in inside) - lo, max(b for _, b in inside) - lo + 1

    def sequence_args(self, offset: int, length: int) -> dict:
        """Primer3's SEQUENCE_* arguments (0-based start, length) for a record whose first
        base is position ``offset + 1``."""
        lo, hi = offset + 1, offset + length
        args = {}
        hull = self.amplify_hull(offset, length)
        if hull:
            args["SEQUENCE_TARGET"] = [[hull[0], hull[1] - hull[0]]]
        excluded = [(max(a, lo), min(b, hi)) for a, b in self.exclude if a <= hi and lo <= b]
        if excluded:
            args["SEQUENCE_EXCLUDED_REGION"] = [[a - lo, b - a + 1] for a, b in excluded]
        if self.include and lo <= self.include[0] and self.include[1] <= hi:
            a, b = self.include
            args["SEQUENCE_INCLUDED_REGION"] = [a - lo, b - a + 1]
        return args


@dataclass(frozen=True)
class Oligo:
    """A primer Primer3 accepted. ``pos`` is Primer3's: the 0-based 5' end on the template
    (for a right primer its rightmost template base)."""

    sequence: str
    pos: int
    length: int
    penalty: float
    tm: float
    gc_percent: float
    left: bool = True

    @property
    def three_prime(self) -> int:
        """The template position of the 3' end."""
        return self.pos + self.length - 1 if self.left else self.pos - self.length + 1

    @property
    def span(self) -> tuple[int, int]:
        """0-based half-open template span."""
        if self.left:
            return self.pos, self.pos + self.length
        return self.pos - self.length + 1, self.pos + 1


def _design(seq_args: dict, global_args: dict) -> dict:
    import primer3

    if len(seq_args.get("SEQUENCE_TEMPLATE", "")) < PRIMER3_MIN_TEMPLATE:
        raise ValueError(f"{seq_args.get('SEQUENCE_ID', 'target')}: Primer3 needs a template of "
                         f"at least {PRIMER3_MIN_TEMPLATE} nt")
    # primer3-py prints its whole input (the template included) to standard output when
    # Primer3 rejects a setting; the exception says what was wrong.
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            return primer3.bindings.design_primers(seq_args, global_args)
    except OSError as exc:  # Primer3 reports bad settings this way
        raise ValueError(f"Primer3: {exc}") from None


def template_text(text: str) -> str:
    """The template as Primer3 reads it: ambiguity codes become N (primers with N are refused)."""
    return re.sub(r"[^ACGT]", "N", text)


def primer_lists(template: str, settings: DesignSettings, name: str = "target",
                 regions: dict | None = None):
    """Every left and every right primer Primer3 accepts on ``template``, best penalty first,
    and Primer3's explain strings. ``regions``: :meth:`Regions.sequence_args`."""
    limit = len(template) * (settings.len_max - settings.len_min + 1) + 1
    out = _design({"SEQUENCE_ID": name, "SEQUENCE_TEMPLATE": template, **(regions or {})},
                  settings.global_args(PRIMER_TASK="pick_primer_list", PRIMER_NUM_RETURN=limit))
    lists = []
    for side, left in (("LEFT", True), ("RIGHT", False)):
        n = out.get(f"PRIMER_{side}_NUM_RETURNED", 0)
        lists.append([Oligo(out[f"PRIMER_{side}_{i}_SEQUENCE"], out[f"PRIMER_{side}_{i}"][0],
                            out[f"PRIMER_{side}_{i}"][1], out[f"PRIMER_{side}_{i}_PENALTY"],
                            out[f"PRIMER_{side}_{i}_TM"], out[f"PRIMER_{side}_{i}_GC_PERCENT"], left)
                      for i in range(n)])
    explain = {"left": out.get("PRIMER_LEFT_EXPLAIN", ""), "right": out.get("PRIMER_RIGHT_EXPLAIN", "")}
    return lists[0], lists[1], explain


@dataclass(frozen=True)
class PairCheck:
    """Primer3's verdict on one pair (check_primers)."""

    ok: bool
    penalty: float | None = None
    compl_any_tm: float | None = None
    compl_end_tm: float | None = None
    product_tm: float | None = None
    explain: str = ""


def check_pair(template: str, left: Oligo, right: Oligo, product_range: tuple[int, int],
               settings: DesignSettings, regions: dict | None = None) -> PairCheck:
    out = _design({"SEQUENCE_ID": "pair", "SEQUENCE_TEMPLATE": template, **(regions or {}),
                   "SEQUENCE_PRIMER": left.sequence, "SEQUENCE_PRIMER_REVCOMP": right.sequence,
                   "SEQUENCE_FORCE_LEFT_START": left.pos, "SEQUENCE_FORCE_RIGHT_START": right.pos},
                  settings.global_args(PRIMER_TASK="check_primers", PRIMER_NUM_RETURN=1,
                                       PRIMER_PRODUCT_SIZE_RANGE=[list(product_range)]))
    if out.get("PRIMER_PAIR_NUM_RETURNED", 0) < 1:
        return PairCheck(False, explain=out.get("PRIMER_PAIR_EXPLAIN", ""))
    return PairCheck(True, out["PRIMER_PAIR_0_PENALTY"], out.get("PRIMER_PAIR_0_COMPL_ANY_TH"),
                     out.get("PRIMER_PAIR_0_COMPL_END_TH"), out.get("PRIMER_PAIR_0_PRODUCT_TM"),
                     out.get("PRIMER_PAIR_EXPLAIN", ""))


_EXPLAIN_ITEM = re.compile(r"\s*([^,]+?)\s+(\d+)\s*$")


def rejection_reason(template: str, sequence: str, left: bool, pos: int,
                     settings: DesignSettings, regions: dict | None = None) -> str:
    """Primer3's reason for refusing one primer (its explain categories), e.g. ``low tm``."""
    key = "SEQUENCE_PRIMER" if left else "SEQUENCE_PRIMER_REVCOMP"
    force = "SEQUENCE_FORCE_LEFT_START" if left else "SEQUENCE_FORCE_RIGHT_START"
    out = _design({"SEQUENCE_ID": "one", "SEQUENCE_TEMPLATE": template, key: sequence, force: pos,
                   **(regions or {})},
                  settings.global_args(PRIMER_TASK="check_primers", PRIMER_NUM_RETURN=1,
                                       PRIMER_PICK_LEFT_PRIMER=int(left),
                                       PRIMER_PICK_RIGHT_PRIMER=int(not left)))
    text = out.get(f"PRIMER_{'LEFT' if left else 'RIGHT'}_EXPLAIN", "")
    reasons = []
    for item in text.split(","):
        m = _EXPLAIN_ITEM.match(item)
        if m and m.group(1) not in ("considered", "ok") and int(m.group(2)) > 0:
            reasons.append(m.group(1))
    return ", ".join(reasons) or "rejected by Primer3"
