"""Command-line options for primer annotations, filters and reaction conditions.

Shared by ``primerscope kdiff``, ``offtarget`` and ``pairs``; every number is checked
against its physical range before any work starts.
"""

from __future__ import annotations

import argparse
import math
from dataclasses import replace

from engine.primers.annotate import Conditions
from engine.primers.filters import Filters

#: Filter option -> (type, lowest, highest): the physically meaningful range (°C for Tm,
#: % for GC, kcal/mol for the 3' end's ΔG magnitude); NaN and infinities are refused too.
_FILTER_OPTIONS = {
    "len_min": (int, 1, 10_000), "len_max": (int, 1, 10_000),
    "tm_min": (float, -50.0, 150.0), "tm_max": (float, -50.0, 150.0),
    "gc_min": (float, 0.0, 100.0), "gc_max": (float, 0.0, 100.0),
    "max_poly_x": (int, 1, 10_000), "min_gc_clamp": (int, 0, 5),
    "max_hairpin_tm": (float, -50.0, 150.0), "max_homodimer_tm": (float, -50.0, 150.0),
    "max_end_stability": (float, 0.0, 100.0),
}

#: Reaction condition -> (help, default, unit, lowest, highest); the oligo concentration
#: must be above its lowest. Beyond these no salt or oligo dissolves, and Primer3's
#: formulas give nonsense (a Tm of 219 °C).
_CONDITIONS = {
    "mv_conc": ("monovalent salt", 50.0, "mM", 0.0, 5000.0),
    "dv_conc": ("Mg2+", 1.5, "mM", 0.0, 1000.0),
    "dntp_conc": ("dNTPs", 0.6, "mM", 0.0, 1000.0),
    "dna_conc": ("oligo", 50.0, "nM", 0.0, 1e7),
}


def _number(kind, lowest: float, highest: float, *, off: bool = False, above: bool = False):
    """An argparse type: a finite number in [lowest, highest] (above ``lowest`` when
    ``above``), or 'off' when ``off``."""
    def parse(text: str):
        if off and text.lower() == "off":
            return "off"
        try:
            value = kind(text)
        except ValueError:
            what = ("an integer" if kind is int else "a number") + (" or 'off'" if off else "")
            raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None
        inside = lowest < value <= highest if above else lowest <= value <= highest
        if not (math.isfinite(value) and inside):
            low, high = (f"{lowest:g}", f"{highest:g}") if kind is float else (lowest, highest)
            raise argparse.ArgumentTypeError(
                f"must be {'>' if above else '>='} {low} and <= {high}, got {text}")
        return value
    parse.__name__ = kind.__name__
    return parse


def integer(lowest: int, highest: int):
    """An argparse type: an integer in [lowest, highest]. Every numeric option has a bound,
    as the families' parameters do (ParamSpec): past it a number means nothing, and a huge
    one overflowed deep inside a run (an empty result, or a raw OverflowError)."""
    return _number(int, lowest, highest)


def real(lowest: float, highest: float):
    """An argparse type: a finite number in [lowest, highest]."""
    return _number(float, lowest, highest)


def add_condition_options(parser) -> None:
    g = parser.add_argument_group("reaction conditions (Primer3 defaults)")
    for name, (text, default, unit, lowest, highest) in _CONDITIONS.items():
        kind = _number(float, lowest, highest, above=name == "dna_conc")
        g.add_argument("--" + name.replace("_", "-"), type=kind, default=default,
                       metavar=unit.upper(),
                       help=f"{text}, {unit} ({default:g}; up to {highest:.10g})")


def add_filter_options(parser) -> None:
    g = parser.add_argument_group(
        "primer annotations and filters",
        "--annotate adds columns after the standard ones; --filter keeps only candidates that pass "
        "Primer3's defaults (length 18-27, Tm 57-63, GC 20-80, poly-X <= 5). Any bound below also "
        "turns filtering on; give 'off' to switch one bound off.")
    g.add_argument("--annotate", action="store_true", help="add GC %%, Tm, hairpin, dimer, 3' stability")
    g.add_argument("--filter", action="store_true", help="apply Primer3's default filters")
    defaults = Filters()
    for name, (kind, lowest, highest) in _FILTER_OPTIONS.items():
        default = getattr(defaults, name)
        g.add_argument("--" + name.replace("_", "-"), type=_number(kind, lowest, highest, off=True),
                       default=None, metavar="X",
                       help=f"default {'off' if default is None else default}; "
                            f"{lowest:g} to {highest:g}")
    add_condition_options(parser)


def add_mask_option(parser) -> None:
    """``--avoid-masked`` (kdiff, pairs): soft-masked repeats at a primer's 3' end."""
    parser.add_argument("--avoid-masked", action="store_true",
                        help="drop candidates and primers whose 3'-most 5 bases touch a "
                             "soft-masked (lower-case) base of the target; matching stays "
                             "case-blind")


def conditions_from(args) -> Conditions:
    return Conditions(mv_conc=args.mv_conc, dv_conc=args.dv_conc, dntp_conc=args.dntp_conc,
                      dna_conc=args.dna_conc)


def filters_from(args) -> Filters | None:
    """None when no filtering was asked for."""
    given = {n: getattr(args, n) for n in _FILTER_OPTIONS if getattr(args, n) is not None}
    if not args.filter and not given:
        return None
    return replace(Filters(), **{n: (None if v == "off" else v) for n, v in given.items()})


#: Pair design's bounds (``primerscope pairs``): option name -> (type, Primer3's default,
#: the value that switches the bound off).
_DESIGN_OPTIONS = {
    "len_min": (int, 18, 1), "len_opt": (int, 20, None), "len_max": (int, 27, 35),
    "tm_min": (float, 57.0, 0.0), "tm_opt": (float, 60.0, None), "tm_max": (float, 63.0, 120.0),
    "max_tm_diff": (float, 5.0, 1000.0), "gc_min": (float, 20.0, 0.0), "gc_max": (float, 80.0, 100.0),
    "max_poly_x": (int, 5, 100), "min_gc_clamp": (int, 0, 0), "max_hairpin_tm": (float, 47.0, 1000.0),
    "max_homodimer_tm": (float, 47.0, 1000.0), "max_end_stability": (float, 100.0, 1000.0),
    "min_three_prime_distance": (int, 3, -1),
}


def add_design_options(parser) -> None:
    """The primer bounds of --filter, with Primer3's defaults, and the pair options."""
    g = parser.add_argument_group(
        "primer and pair constraints (Primer3's, with its defaults)",
        "The same names as kdiff's --filter bounds; 'off' switches a bound off. "
        "--max-homodimer-tm bounds Primer3's self-complementarity (any and 3' end).")
    ranges = {**_FILTER_OPTIONS, "len_opt": (int, 1, 10_000), "tm_opt": (float, -50.0, 150.0),
              "max_tm_diff": (float, 0.0, 200.0), "min_three_prime_distance": (int, 0, 10_000)}
    for name, (kind, default, off) in _DESIGN_OPTIONS.items():
        _, lowest, highest = ranges[name]
        flag, extra = "--" + name.replace("_", "-"), ""
        if name == "min_three_prime_distance":  # (the one option named unlike its setting)
            flag = "--min-3prime-distance"
            extra = ("; two returned pairs share no primer and their primers' 3' ends are at "
                     "least X bases apart (Primer3's PRIMER_MIN_THREE_PRIME_DISTANCE); 'off': "
                     "pairs may share primers")
        g.add_argument(flag, dest=name, default=default, metavar="X",
                       type=_number(kind, lowest, highest, off=off is not None),
                       help=f"default {default}; {lowest:g} to {highest:g}{extra}")
    add_condition_options(parser)


def design_values(args) -> dict:
    """DesignSettings keyword arguments from the options above ('off' -> the widest value)."""
    return design_keywords(vars(args), conditions_from(args))


def design_keywords(values, conditions: Conditions) -> dict:
    """DesignSettings keyword arguments from bounds by option name (the command line's, and
    the window's primer filters): 'off' or None switches a bound off (its widest value),
    a name not given keeps Primer3's default."""
    out = {}
    for name, (_, default, off) in _DESIGN_OPTIONS.items():
        value = values.get(name, default)
        if value is None or value == "off":
            value = default if off is None else off
        out[name] = value
    homodimer = out.pop("max_homodimer_tm")
    out["gc_clamp"] = out.pop("min_gc_clamp")
    out["max_self_any_tm"] = out["max_self_end_tm"] = homodimer
    out["conditions"] = conditions
    return out
