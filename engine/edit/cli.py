"""``primerscope edit PATTERN TEXT [--mode global|search] [-k K]``.

CSV, search: ``pattern_id,record_id,start,end,strand,distance,cigar,matched``
(start, cigar and matched are empty with ``--no-align``).
CSV, global: ``pattern_id,record_id,distance,cigar`` (distance empty when above
k; cigar only with ``--align``).
"""

from __future__ import annotations

import argparse
import csv

from engine import config, edit
from engine.cli import selected_flags
from engine.sequences import load

SEARCH_COLUMNS = ("pattern_id", "record_id", "start", "end", "strand", "distance", "cigar", "matched")
GLOBAL_COLUMNS = ("pattern_id", "record_id", "distance", "cigar")


def add_arguments(parser) -> None:
    parser.add_argument("pattern", help="FASTA/GenBank/EMBL file (.gz ok) or a literal sequence")
    parser.add_argument("text", help="FASTA/GenBank/EMBL file (.gz ok) or a literal sequence")
    parser.add_argument("--mode", choices=edit.MODES, default="global",
                        help="global: edit distance; search: every end within k edits (default: global)")
    parser.add_argument("-k", type=int, default=None,
                        help="most edits (required for search hits; in global mode larger "
                             "distances are left empty)")
    parser.add_argument("--strands", choices=edit.STRANDS, default="forward",
                        help="search mode: 'both' also searches with the patterns' reverse complements")
    parser.add_argument("--pairs", choices=edit.PAIRINGS, default="all",
                        help="all: every pattern against every text record; zip: pattern i against "
                             "record i (a batch of query/region pairs)")
    parser.add_argument("--report", choices=edit.REPORTS, default=None,
                        help="search mode: every hit within k (hits, default) or one best hit per "
                             "pattern, strand and record (best)")
    parser.add_argument("--align", action=argparse.BooleanOptionalAction, default=None,
                        help="starts and CIGARs (default: on in search mode, off in global)")
    parser.add_argument("--threads-per-block", type=int, metavar="N",
                        help="cuda only: threads per block "
                             f"(default {config.EDIT_CUDA_THREADS_PER_BLOCK})")
    parser.add_argument("--words-per-thread", type=int, metavar="W",
                        help="cuda cooperative only: 64-bit words of a query per thread "
                             f"(default {config.EDIT_CUDA_WORDS_PER_THREAD})")


def make_job(args):
    if args.k is not None and args.k < 0:
        raise ValueError(f"-k must be >= 0, got {args.k}")
    if args.mode == "search" and args.k is None and args.report != "best":
        raise ValueError("--mode search needs -k K (or --report best)")
    patterns = load(args.pattern)
    texts = load(args.text)
    return edit.make_job(patterns, texts, mode=args.mode, k=args.k, variant=args.variant,
                         backend=args.backend, parallel=args.parallel, flags=selected_flags(args),
                         strands=args.strands, pairing=args.pairs, report=args.report,
                         align=args.align, threads=args.threads,
                         threads_per_block=args.threads_per_block,
                         words_per_thread=args.words_per_thread,
                         profile=False)  # the CSV and JSON carry no score profile


def _blank(value):
    return "" if value is None else value


def rows(result):
    """Rows in the CSV's column order (shared by the CLI and the GUI's export)."""
    if result.mode == "search":
        for h in result.hits:
            yield (h.pattern_id, h.record_id, _blank(h.start), h.end, h.strand, h.distance,
                   _blank(h.cigar), _blank(h.matched))
    else:
        for d in result.distances:
            yield d.pattern_id, d.record_id, _blank(d.distance), _blank(d.cigar)


def write_csv(result, fh) -> None:
    writer = csv.writer(fh, lineterminator="\n")
    writer.writerow(SEARCH_COLUMNS if result.mode == "search" else GLOBAL_COLUMNS)
    writer.writerows(rows(result))


def to_json(result) -> dict:
    out = {"mode": result.mode, "k": result.k}
    if result.mode == "global":
        out["distance"] = result.best
        out["pairs"] = [[d.pattern_id, d.record_id, d.distance, d.cigar] for d in result.distances]
    else:
        out["strands"] = result.strands
        out["best"] = result.best
        out["hits"] = [[h.start, h.end, h.distance] for h in result.hits]
        out["details"] = [[h.pattern_id, h.record_id, h.strand, h.cigar] for h in result.hits]
    return out
