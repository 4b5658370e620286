"""``primerscope lcs A B`` (CSV: a_pos,b_pos,symbol, one row per LCS symbol).

A and B are files (FASTA/GenBank/EMBL, .gz ok) or literal sequences. A file
with several records contributes its first record only. Positions are 1-based.
With ``--task length`` only the score pass runs and the CSV is a ``length``
column with one row.
"""

from __future__ import annotations

import csv

from engine import config, lcs
from engine.sequences import load

CSV_COLUMNS = ("a_pos", "b_pos", "symbol")


def add_arguments(parser) -> None:
    parser.add_argument("a", help="FASTA/GenBank/EMBL file (.gz ok; its first record is used) "
                                  "or a literal sequence")
    parser.add_argument("b", help="FASTA/GenBank/EMBL file (.gz ok; its first record is used) "
                                  "or a literal sequence")
    parser.add_argument("--task", choices=lcs.TASKS, default="lcs",
                        help="'lcs' (default): one LCS and its index pairs; 'length': the length "
                             "only, from one score pass")
    parser.add_argument("--threads-per-block", type=int, metavar="N",
                        help=f"cuda only: threads per block (default "
                             f"{config.LCS_CUDA_THREADS_PER_BLOCK}; bitparallel and the tiled "
                             "wavefront take whole warps above 32)")


def make_job(args):
    a = load(args.a)[0]
    b = load(args.b)[0]
    return lcs.make_job(a, b, variant=args.variant, backend=args.backend,
                        parallel=getattr(args, "parallel", None), task=args.task,
                        threads=args.threads, threads_per_block=args.threads_per_block)


def pair_rows(result):
    """Rows in CSV column order (shared by the CLI and the GUI's CSV export)."""
    for (i, j), symbol in zip(result.pairs.tolist(), result.lcs):
        yield (i, j, symbol)


def write_csv(result, fh) -> None:
    writer = csv.writer(fh, lineterminator="\n")
    if result.task == "length":
        writer.writerow(("length",))
        writer.writerow((result.length,))
        return
    writer.writerow(CSV_COLUMNS)
    writer.writerows(pair_rows(result))


def to_json(result) -> dict:
    return {"a_id": result.a_id, "b_id": result.b_id, "a_length": result.a_length,
            "b_length": result.b_length, "length": result.length, "lcs": result.lcs}
