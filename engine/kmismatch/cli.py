"""``primerscope kmismatch TEXT PATTERNS -k K``.

CSV columns: ``pattern_id,record_id,start,end,strand,mismatches,matched`` (1-based,
inclusive ends; '-' hits in forward coordinates, ``matched`` read on that strand).
PATTERNS is a FASTA/GenBank/EMBL file with one pattern per record, a literal
sequence, or several literals separated by commas.
"""

from __future__ import annotations

import csv
import os

from engine import kmismatch
from engine.sequences import Record, encode, load

CSV_COLUMNS = ("pattern_id", "record_id", "start", "end", "strand", "mismatches", "matched")


def add_arguments(parser) -> None:
    parser.add_argument("text", help="FASTA/GenBank/EMBL file (.gz ok) or a literal sequence")
    parser.add_argument("patterns", help="file with one pattern per record, a literal, or "
                                         "literals separated by commas")
    parser.add_argument("-k", type=int, required=True, help="most mismatches reported (k >= 0)")
    parser.add_argument("--strands", choices=("both", "forward"), default="both",
                        help="'both' also searches each pattern's reverse complement (default)")
    parser.add_argument("--threads-per-block", type=int, metavar="N",
                        help="cuda thread, shared-mem and pair-tile only: threads per block "
                             "(default 256)")


def load_patterns(source: str):
    """Pattern records from a file, a literal, or comma-separated literals."""
    if not source.strip():
        raise ValueError("empty pattern set: PATTERNS is empty")
    if "," in source and not os.path.exists(source):
        parts = [p.strip() for p in source.split(",")]
        if any(not p for p in parts):
            raise ValueError(f"empty pattern in the list {source!r}")
        return [Record(f"literal{n}", encode(part, record_id=f"literal{n}"), "", "<literal>")
                for n, part in enumerate(parts, start=1)]
    return load(source)


def make_job(args):
    if args.k < 0:
        raise ValueError(f"-k must be >= 0, got {args.k}")
    patterns = load_patterns(args.patterns)
    text = load(args.text)
    return kmismatch.make_job(text, patterns, args.k, variant=args.variant, backend=args.backend,
                              strands=args.strands, threads=args.threads,
                              threads_per_block=args.threads_per_block)


def write_csv(result, fh) -> None:
    writer = csv.writer(fh, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    writer.writerows(result.hits.rows())


def to_json(result) -> dict:
    hits = result.hits
    pids = [hits.pattern_ids[p] for p in hits.pattern.tolist()]
    rids = [hits.record_ids[r] for r in hits.record.tolist()]
    strands = ["+-"[s] for s in hits.strand.tolist()]
    return {"k": result.k, "strands": result.strands,
            "hits": [list(row) for row in zip(pids, rids, hits.start.tolist(), hits.end.tolist(),
                                              strands, hits.mismatches.tolist())]}
