"""``primerscope nw A B [--match 1] [--mismatch 0] [--gap -1]``.

Standard output gets the pairwise text; ``-o OUT.txt`` writes the pairwise
text and any other ``-o OUT`` the CSV of columns (``column,a_pos,b_pos,a,b,op``).
"""

from __future__ import annotations

from engine import nw
from engine.cli import add_param_options, add_region_options, load_input, param_values, selected_flags
from engine.nw import export as export  # the writers (engine.cli's plug-in contract)


def add_arguments(parser) -> None:
    add_region_options(parser, ('a', 'b'))
    for role in ("a", "b"):
        parser.add_argument(role, help=f"sequence {role.upper()}: FASTA/GenBank/EMBL file (.gz "
                                       "ok; first record) or a literal sequence")
    add_param_options(parser, nw.SPEC)
    parser.epilog = CIGAR_HELP


#: The convention of --json's cigar and the column CSV's op, for ``--help`` (README: "CIGAR (nw)";
#: edit's is the other way).
CIGAR_HELP = ("cigar (--json) and op (the CSV of columns): A is the reference and B the query, as "
              "in SAM: = match, X mismatch, D a base of A with no base of B (a gap in B), I a base "
              "of B with no base of A (a gap in A). edit takes its text, the second sequence, as "
              "the reference, so its I and D are the other way round.")


def make_job(args):
    params = param_values(args, nw.SPEC)
    a = load_input(args, "a")[0]
    b = load_input(args, "b")[0]
    return nw.make_job(a, b, variant=args.variant, backend=args.backend, parallel=args.parallel,
                       flags=selected_flags(args), threads=args.threads, **params)


def export_options(args) -> dict:
    """The pairwise text on stdout and for ``-o *.txt``, the CSV of columns for other files
    (--json has no layout)."""
    if args.json:
        return {}
    text = not args.output or args.output.lower().endswith(".txt")
    return {"layout": "pairwise" if text else "columns"}
