"""``primerscope lcs A B`` (CSV: a_pos,b_pos,symbol, one row per LCS symbol).

A and B are files (FASTA/GenBank/EMBL, .gz ok) or literal sequences. A file
with several records contributes its first record only. Positions are 1-based.
With ``--task length`` only the score pass runs and the CSV is a ``length``
column with one row.
"""

from __future__ import annotations

from engine import lcs
from engine.cli import add_param_options, add_region_options, load_input, param_values
from engine.lcs import export as export  # the writers (engine.cli's plug-in contract)


def add_arguments(parser) -> None:
    add_region_options(parser, ('a', 'b'))
    for role in ("a", "b"):
        parser.add_argument(role, help="FASTA/GenBank/EMBL file (.gz ok; its first record is "
                                       "used) or a literal sequence")
    add_param_options(parser, lcs.SPEC)


def make_job(args):
    params = param_values(args, lcs.SPEC)
    a = load_input(args, "a")[0]
    b = load_input(args, "b")[0]
    return lcs.make_job(a, b, variant=args.variant, backend=args.backend,
                        parallel=getattr(args, "parallel", None), threads=args.threads, **params)
