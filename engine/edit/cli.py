"""``primerscope edit PATTERN TEXT [--mode global|search] [-k K]`` (CSV or JSON: engine.edit.export).

The family's parameters (mode, k, strands, pairs, report, the CUDA options) come
from engine/edit/spec.py; ``--align`` is the command line's own.
"""

from __future__ import annotations

import argparse

from engine import edit
from engine.cli import (add_param_options, add_region_options, load_input, load_source,
                        param_values, selected_flags)
from engine.edit import export as export  # the writers (engine.cli's plug-in contract)


def add_arguments(parser) -> None:
    add_region_options(parser, ('text',))
    parser.add_argument("pattern", help="FASTA/GenBank/EMBL file (.gz ok) or a literal sequence")
    parser.add_argument("text", help="FASTA/GenBank/EMBL file (.gz ok) or a literal sequence")
    add_param_options(parser, edit.SPEC)
    parser.add_argument("--align", action=argparse.BooleanOptionalAction, default=None,
                        help="starts and CIGARs (default: on in search mode, off in global)")
    parser.epilog = CIGAR_HELP


#: The cigar column's convention, for ``--help`` (README: "CIGAR (edit)"; nw's is the other way).
CIGAR_HELP = ("cigar column: the text is the reference and the pattern the query, as in SAM: "
              "= match, X mismatch, I a pattern base with no text base, D a text base with no "
              "pattern base; read along the pattern 5'->3' against the matched column (on a - hit, "
              "the text's reverse complement). nw takes its first sequence as the reference, so "
              "its I and D are the other way round.")


def make_job(args):
    params = param_values(args, edit.SPEC)
    if params["mode"] == "search" and params["k"] is None and params["report"] != "best":
        raise ValueError("--mode search needs -k K (or --report best)")
    return edit.make_job(load_source(args.pattern), load_input(args, "text"), variant=args.variant,
                         backend=args.backend, parallel=args.parallel, flags=selected_flags(args),
                         align=args.align, threads=args.threads,
                         profile=False,  # the CSV and JSON carry no score profile
                         **params)
