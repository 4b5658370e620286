"""Check primers you have: where each can prime in a background, what the set amplifies, and its dimers.

``primerscope check PRIMERS BACKGROUND [--max-edits 3] [--max-3prime-edits 0] ...``.
PRIMERS as ``pcr`` and ``panel`` take them (FASTA, a name,sequence CSV, literals, a
``pairs`` CSV/JSON, a library export). The work is the panel check with a background
(:mod:`engine.primers.panel`): one site search for the whole set gives the sites and the
in-silico PCR products, Primer3 the dimer matrix. Writers: engine.primers.export_check.
"""

from __future__ import annotations

from engine.cli import add_gap_option, add_region_options, gap_min_of, load_input
from engine.primers import export_check as export  # noqa: F401  (the writers: engine.cli's plug-in contract)
from engine.primers import panel
from engine.primers.cli_options import add_condition_options, conditions_from
from engine.primers.cli_panel import add_end_dimer_option
from engine.primers.cli_pcr import add_pcr_options, settings_from
from engine.primers.panel import iter_solve  # noqa: F401  (the plug-in's job generator)
from engine.primers.primer_sets import load_primers

FAMILY = "edit"  # the family whose variants and backends search the sites
#: What the site search picks without --variant (engine.primers.pcr.search_job), for --help.
DEFAULT_VARIANT = "myers for primers of up to 64 nt, else myers-blocked"


def add_arguments(parser) -> None:
    add_region_options(parser, ('background',))
    parser.add_argument("primers", help="FASTA/GenBank file, CSV/TSV of name,sequence, a pairs "
                                        "CSV/JSON, or literals (comma-separated; NAME=SEQ names one)")
    parser.add_argument("background", help="FASTA/GenBank/EMBL file (.gz ok) or a literal")
    add_end_dimer_option(parser)
    add_gap_option(parser)
    add_pcr_options(parser)
    add_condition_options(parser)


def make_job(args):
    settings = panel.PanelSettings(conditions_from(args), args.end_dimer_dg, settings_from(args))
    return panel.make_job(load_primers(args.primers), load_input(args, "background"), settings,
                          variant=args.variant, backend=args.backend, parallel=args.parallel,
                          threads=args.threads, scheduler=args.scheduler, gap_min=gap_min_of(args))
