"""``primerscope kdiff TARGET BACKGROUND -k K`` (CSV: target_id,start,end,length,sequence)."""

from __future__ import annotations

import csv

from engine import kdiff
from engine.cli import selected_flags
from engine.sequences import load

CSV_COLUMNS = ("target_id", "start", "end", "length", "sequence")


def add_arguments(parser) -> None:
    parser.add_argument("target", help="FASTA/GenBank/EMBL file (.gz ok) or a literal sequence")
    parser.add_argument("background", help="FASTA/GenBank/EMBL file (.gz ok) or a literal sequence")
    parser.add_argument("-k", type=int, required=True, help="minimum number of edits (k >= 1)")
    parser.add_argument("--strands", choices=("both", "forward"), default="both",
                        help="'both' also searches the background's reverse complement (default)")


def make_job(args):
    if args.k < 1:
        raise ValueError(f"-k must be >= 1, got {args.k}")
    target = load(args.target)
    background = load(args.background)
    return kdiff.make_job(target, background, args.k, variant=args.variant, backend=args.backend,
                          parallel=args.parallel, flags=selected_flags(args), strands=args.strands,
                          threads=args.threads, count_comparisons=True)


def candidate_rows(result):
    """Rows in SPEC column order (shared by the CLI and the GUI's CSV export)."""
    for c in result.candidates:
        yield (c.target_id, c.start, c.end, c.length, c.sequence)


def write_csv(result, fh) -> None:
    writer = csv.writer(fh, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    writer.writerows(candidate_rows(result))


def to_json(result) -> dict:
    return {"k": result.k, "strands": result.strands,
            "candidates": [[c.target_id, c.start, c.end] for c in result.candidates]}
