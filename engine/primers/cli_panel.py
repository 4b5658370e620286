"""Multiplex panel check: heterodimers of every primer pair and, with a background, cross-products.

``primerscope panel PRIMERS [BACKGROUND]``. PRIMERS: a FASTA/GenBank file, a CSV/TSV
of name,sequence, or literals (comma-separated). Writers: engine.primers.export_panel.
"""

from __future__ import annotations

from engine.cli import UsageError, add_gap_option, add_region_options, gap_min_of, load_input
from engine.primers import export_panel as export  # noqa: F401  (the writers: engine.cli's plug-in contract)
from engine.primers import panel
from engine.primers.cli_options import add_condition_options, conditions_from, real
from engine.primers.cli_pcr import add_pcr_options, settings_from
from engine.primers.panel import iter_solve  # noqa: F401  (the plug-in's job generator)
from engine.primers.primer_sets import load_primers

FAMILY = "edit"  # the family whose variants and backends search the sites
#: What the site search picks without --variant (engine.primers.pcr.search_job), for --help.
DEFAULT_VARIANT = "myers for primers of up to 64 nt, else myers-blocked"


def add_end_dimer_option(parser) -> None:
    """--end-dimer-dg, bounded (panel and check): NaN or 1e400 flagged nothing, silently."""
    parser.add_argument("--end-dimer-dg", type=real(-1000.0, 1000.0), default=-5.0, metavar="KCAL",
                        help="flag a 3'-end dimer whose ΔG is at or below this (kcal/mol, "
                             "default -5)")


def add_arguments(parser) -> None:
    parser.add_argument("primers", help="FASTA/GenBank file, CSV/TSV of name,sequence, or "
                                        "literals (comma-separated; NAME=SEQ names one)")
    parser.add_argument("background", nargs="?", help="optional: FASTA/GenBank/EMBL file (.gz ok); "
                                                      "adds the in-silico PCR cross-products")
    add_end_dimer_option(parser)
    parser.add_argument("--matrix", choices=("dg", "tm", "end"),
                        help="CSV as one matrix (heterodimer ΔG, Tm, or 3'-end ΔG) instead of "
                             "one row per primer pair")
    add_pcr_options(parser)
    add_region_options(parser, ("background",))
    add_gap_option(parser)
    add_condition_options(parser)


def make_job(args):
    settings = panel.PanelSettings(conditions_from(args), args.end_dimer_dg, settings_from(args))
    if args.background_region and not args.background:
        raise UsageError("--background-region needs a BACKGROUND")
    background = load_input(args, "background") if args.background else ()
    return panel.make_job(load_primers(args.primers), background, settings, variant=args.variant,
                          backend=args.backend, parallel=args.parallel, threads=args.threads,
                          scheduler=args.scheduler, gap_min=gap_min_of(args))


def export_options(args) -> dict:
    return {"matrix": args.matrix}
