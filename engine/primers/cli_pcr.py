"""In-silico PCR: every product a primer set would amplify from a background (both strands).

``primerscope pcr PRIMERS BACKGROUND [--max-edits 3] [--max-3prime-edits 0]
[--3prime-window 5] [--max-product 3000] [--with-sequence] [--no-indels]``.
PRIMERS: a FASTA/GenBank file, a CSV/TSV of name,sequence, or literals (comma-separated).
Writers: engine.primers.export_pcr.
"""

from __future__ import annotations

from types import SimpleNamespace

from engine.cli import (add_gap_option, add_param_options, add_region_options, gap_min_of,
                        load_input, selected_flags)
from engine.primers import export_pcr as export  # noqa: F401  (the writers: engine.cli's plug-in contract)
from engine.primers import pcr
from engine.primers.pcr import iter_solve  # noqa: F401  (the plug-in's job generator)
from engine.primers.primer_sets import load_primers

FAMILY = "edit"  # the family whose variants and backends search the sites
#: What the site search picks without --variant (engine.primers.pcr.search_job), for --help.
DEFAULT_VARIANT = "myers for primers of up to 64 nt, else myers-blocked"


def add_pcr_options(parser) -> None:
    """The site and product options (shared with ``pairs`` and ``panel``): PcrSettings'
    registry parameters (pcr.SETTINGS_PARAMS), checked when the settings are made, so a bad
    value reads as it does from the Python API."""
    g = parser.add_argument_group("in-silico PCR")
    add_param_options(g, SimpleNamespace(params=pcr.SETTINGS_PARAMS))
    g.add_argument("--no-indels", dest="indels", action="store_false",
                   help="mismatches only (as ipcress and primersearch count), no gaps")


def settings_from(args, with_sequence: bool = False) -> pcr.PcrSettings:
    # (PcrSettings checks each number and the range: the API's words for the same value)
    return pcr.PcrSettings(args.max_edits, args.max_3prime_edits, args.three_prime_window,
                           args.max_product, args.min_product, args.indels, with_sequence)


def add_arguments(parser) -> None:
    add_region_options(parser, ('background',))
    parser.add_argument("primers", help="FASTA/GenBank file, CSV/TSV of name,sequence, or "
                                        "literals (comma-separated; NAME=SEQ names one)")
    parser.add_argument("background", help="FASTA/GenBank/EMBL file (.gz ok) or a literal")
    add_pcr_options(parser)
    add_gap_option(parser)
    parser.add_argument("--with-sequence", action="store_true",
                        help="add each product's sequence (forward strand)")


def make_job(args):
    settings = settings_from(args, args.with_sequence)
    return pcr.make_job(load_primers(args.primers), load_input(args, "background"), settings,
                        variant=args.variant, backend=args.backend, parallel=args.parallel,
                        flags=selected_flags(args), threads=args.threads,
                        scheduler=args.scheduler, gap_min=gap_min_of(args))
