"""``primerscope nw A B [--match 1] [--mismatch 0] [--gap -1]``.

Standard output gets the pairwise text; ``-o OUT.txt`` writes the pairwise
text and any other ``-o OUT`` the CSV of columns (``column,a_pos,b_pos,a,b,op``).
"""

from __future__ import annotations

from engine import nw
from engine.cli import selected_flags
from engine.nw.export import result_text as text   # the GUI's export calls cli.text too
from engine.nw.export import write_columns_csv
from engine.sequences import load


def add_arguments(parser) -> None:
    parser.add_argument("a", help="sequence A: FASTA/GenBank/EMBL file (.gz ok; first record) "
                                  "or a literal sequence")
    parser.add_argument("b", help="sequence B: FASTA/GenBank/EMBL file (.gz ok; first record) "
                                  "or a literal sequence")
    parser.add_argument("--match", type=int, default=1, help="score of a match (default 1)")
    parser.add_argument("--mismatch", type=int, default=0, help="score of a mismatch (default 0)")
    parser.add_argument("--gap", type=int, default=-1,
                        help="score of each gap column, linear (default -1)")
    parser.add_argument("--threads-per-block", type=int, metavar="N",
                        help="cuda only: threads per block (default: the form's own)")
    parser.add_argument("--blocks", type=int, metavar="N",
                        help="cuda multi-block forms only: blocks per launch (default: chosen "
                             "for the input and the GPU)")


def make_job(args):
    a = load(args.a)[0]
    b = load(args.b)[0]
    return nw.make_job(a, b, match=args.match, mismatch=args.mismatch, gap=args.gap,
                       variant=args.variant, backend=args.backend, parallel=args.parallel,
                       flags=selected_flags(args), threads=args.threads,
                       threads_per_block=args.threads_per_block, blocks=args.blocks)


def write_csv(result, fh, args=None) -> None:
    """Pairwise text on stdout and for ``-o *.txt``; the CSV of columns for other ``-o`` files."""
    output = getattr(args, "output", None) if args is not None else None
    if output and not output.lower().endswith(".txt"):
        write_columns_csv(result.alignment, fh)
    else:
        fh.write(text(result))


def to_json(result) -> dict:
    al = result.alignment
    return {"a_id": result.a_id, "b_id": result.b_id, "match": result.scores.match,
            "mismatch": result.scores.mismatch, "gap": result.scores.gap, "score": result.score,
            "aligned_a": al.aligned_a, "aligned_b": al.aligned_b, "cigar": al.cigar,
            "identity": al.identity}
