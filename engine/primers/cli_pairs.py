"""Pair design: specific primer pairs, chosen and ranked by Primer3, each with its in-silico PCR.

``primerscope pairs TARGET BACKGROUND -k K [--product-size 100-300 ...] [--num-return N]
[--amplify START-END ...] [--exclude-region START-END ...] [--include-region START-END]
[--explain]``. Only primers at least k edits from every background substring (both
strands) are offered to Primer3. Writers: engine.primers.export_pairs.
"""

from __future__ import annotations

import os
import warnings

from engine.cli import (add_gap_option, add_region_options, gap_min_of, load_input,
                        selected_flags)
from engine.output import check_outputs
from engine.primers import export_pairs as export  # the writers (engine.cli's plug-in contract)
from engine.primers import pairs
from engine.primers.cli_options import add_design_options, add_mask_option, design_values, integer
from engine.primers.cli_pcr import add_pcr_options, settings_from
from engine.primers.pairs import iter_solve  # noqa: F401  (the plug-in's job generator)
from engine.primers.primer3_design import (MAX_NUM_RETURN, DesignSettings, Regions,
                                           parse_product_ranges)
from engine.sequences import SequenceWarning, parse_region

FAMILY = "kdiff"  # the family whose variants and backends scan for specificity


def add_arguments(parser) -> None:
    from engine import registry

    k_max = int(registry.family(FAMILY).param("k").maximum)  # kdiff's own bound
    add_region_options(parser, ('target', 'background'))
    parser.add_argument("target", help="FASTA/GenBank/EMBL file (.gz ok) or a literal sequence")
    parser.add_argument("background", help="FASTA/GenBank/EMBL file (.gz ok) or a literal sequence")
    parser.add_argument("-k", dest="k", type=integer(1, k_max), required=True, metavar="K",
                        help="primers at least K edits from every background substring (both strands)")
    parser.add_argument("--product-size", nargs="+", default=["100-300"], metavar="RANGE",
                        help="product size ranges in Primer3's syntax, tried in order "
                             "(default 100-300), e.g. --product-size 100-300 301-600")
    parser.add_argument("--num-return", type=integer(1, MAX_NUM_RETURN), default=5, metavar="N",
                        help=f"pairs per target record (default 5; at most {MAX_NUM_RETURN})")
    parser.add_argument("--explain", action="store_true",
                        help="also list the primer positions no pair could use, with the reason "
                             "(JSON: 'rejected'; CSV: --rejected FILE, default OUT.rejected.csv)")
    parser.add_argument("--rejected", metavar="FILE", help="where --explain writes its CSV")
    parser.add_argument("--bed", metavar="FILE", help="also write the pairs as BED12")
    g = parser.add_argument_group(
        "Primer3's regions", "In the target record's own numbering (1-based, inclusive; a "
        "--target-region keeps it); each applies to the target records that hold it.")
    g.add_argument("--amplify", action="append", default=[], metavar="START-END",
                   help="every product contains this stretch (Primer3's SEQUENCE_TARGET); "
                        "repeatable: the products contain every one")
    g.add_argument("--exclude-region", action="append", default=[], metavar="START-END",
                   help="no primer overlaps it (SEQUENCE_EXCLUDED_REGION); repeatable")
    g.add_argument("--include-region", metavar="START-END",
                   help="primers and products lie inside it (SEQUENCE_INCLUDED_REGION)")
    add_gap_option(parser)
    add_mask_option(parser)
    add_design_options(parser)
    add_pcr_options(parser)


def _rejected_path(args):
    if not args.explain or args.json:
        return None
    if args.rejected:
        return args.rejected
    if args.output:
        root, _ = os.path.splitext(args.output)
        return root + ".rejected.csv"
    raise ValueError("--explain with CSV output needs --rejected FILE (or -o OUT, or --json)")


def make_job(args):
    if args.rejected and not args.explain:
        raise ValueError("--rejected needs --explain")
    check_outputs((args.output, args.bed, _rejected_path(args)), (args.target, args.background))
    design = DesignSettings(product_ranges=parse_product_ranges(args.product_size),
                            num_return=args.num_return, **design_values(args))
    settings = pairs.PairSettings(design, settings_from(args), args.explain, regions_from(args),
                                  args.avoid_masked)
    return pairs.make_job(load_input(args, "target"), load_input(args, "background"), args.k, settings,
                          variant=args.variant, backend=args.backend, parallel=args.parallel,
                          flags=selected_flags(args), threads=args.threads,
                          scheduler=args.scheduler, gap_min=gap_min_of(args))


def _region(text: str, option: str) -> tuple[int, int]:
    try:
        region = parse_region(text)
    except ValueError as err:
        raise ValueError(f"{option}: {err}") from None
    if region.record is not None:
        raise ValueError(f"{option} takes START-END in the target record's own numbering, got "
                         f"{text!r}")
    return region.start, region.end


def regions_from(args) -> Regions:
    """Primer3's regions from --amplify, --exclude-region and --include-region."""
    return Regions(tuple(_region(t, "--amplify") for t in args.amplify),
                   tuple(_region(t, "--exclude-region") for t in args.exclude_region),
                   _region(args.include_region, "--include-region") if args.include_region
                   else None)


def extra_outputs(result, args) -> dict:
    if result.info.complete and not result.pairs:  # the CSV is a header alone: say why
        warnings.warn(SequenceWarning(export.why_none(result)), stacklevel=2)
    out = {}
    if args.bed:
        out[args.bed] = export.bed_text(result)
    path = _rejected_path(args)
    if path:
        out[path] = export.rejected_csv_text(result)
    return out
