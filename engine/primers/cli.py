"""``primerscope offtarget PRIMER BACKGROUND --max-edits D``: where would a primer still bind?

CSV columns: record_id,start,end,strand,edits,edits_3prime,cigar,primer,site
(1-based, inclusive, forward-strand coordinates; primer and site in primer orientation).
"""

from __future__ import annotations

import csv

from engine.cli import selected_flags
from engine.primers import offtarget
from engine.sequences import load

FAMILY = "edit"  # the family whose variants, backends and search do the work
CSV_COLUMNS = ("record_id", "start", "end", "strand", "edits", "edits_3prime", "cigar", "primer", "site")


def add_arguments(parser) -> None:
    parser.add_argument("primer", help="the candidate primer: a literal or a file (first record)")
    parser.add_argument("background", help="FASTA/GenBank/EMBL file (.gz ok) or a literal")
    parser.add_argument("--max-edits", type=int, default=3, metavar="D",
                        help="report every site within D edits, both strands (default 3)")


def make_job(args):
    if args.max_edits < 0:
        raise ValueError(f"--max-edits must be >= 0, got {args.max_edits}")
    primer = load(args.primer)[0]
    args.primer_text = primer.text
    if selected_flags(args):
        raise ValueError("offtarget takes no --opt flags")
    return offtarget.make_job(primer, load(args.background), args.max_edits, variant=args.variant,
                              backend=args.backend, threads=args.threads)


def write_csv(result, fh, args) -> None:
    w = csv.writer(fh, lineterminator="\n")
    w.writerow(CSV_COLUMNS)
    for s in offtarget.sites_from_result(args.primer_text, result):
        w.writerow((s.record_id, s.start, s.end, s.strand, s.edits, s.edits_3prime, s.cigar,
                    s.primer_line, s.site_line))


def to_json(result, args) -> dict:
    sites = offtarget.sites_from_result(args.primer_text, result)
    return {"primer": args.primer_text, "max_edits": args.max_edits,
            "sites": [[s.record_id, s.start, s.end, s.strand, s.edits, s.edits_3prime, s.cigar]
                      for s in sites]}
