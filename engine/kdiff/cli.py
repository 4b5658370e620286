"""``primerscope kdiff TARGET BACKGROUND -k K`` (CSV: target_id,start,end,length,sequence).

Options from engine.primers add annotation columns after the standard ones, filter
candidates, or merge overlapping candidates into regions (CSV and BED).
"""

from __future__ import annotations

import csv
import io

from engine import kdiff
from engine.cli import add_param_options, param_values, selected_flags
from engine.output import write_text
from engine.primers import annotate_many, merge_candidates, passes, write_bed, write_regions_csv
from engine.primers.annotate import Annotation
from engine.primers.cli_options import add_filter_options, conditions_from, filters_from
from engine.sequences import load

CSV_COLUMNS = ("target_id", "start", "end", "length", "sequence")


def add_arguments(parser) -> None:
    parser.add_argument("target", help="FASTA/GenBank/EMBL file (.gz ok) or a literal sequence")
    parser.add_argument("background", help="FASTA/GenBank/EMBL file (.gz ok) or a literal sequence")
    add_param_options(parser, kdiff.SPEC)
    parser.add_argument("--merge", action="store_true",
                        help="output regions of overlapping candidates instead of candidates")
    parser.add_argument("--bed", metavar="FILE", help="also write the merged regions as BED")
    add_filter_options(parser)


def make_job(args):
    params = param_values(args, kdiff.SPEC)
    # Check the primer options before the (possibly long) run.
    args.primer_conditions = conditions_from(args)
    args.primer_filters = filters_from(args)
    target = load(args.target)
    background = load(args.background)
    return kdiff.make_job(target, background, variant=args.variant, backend=args.backend,
                          parallel=args.parallel, flags=selected_flags(args), threads=args.threads,
                          count_comparisons=True, **params)


def candidate_rows(result):
    """Rows in SPEC column order (shared by the CLI and the GUI's CSV export)."""
    for c in result.candidates:
        yield (c.target_id, c.start, c.end, c.length, c.sequence)


def _selected(result, args):
    """(candidates, annotations or None) after the optional annotation and filters."""
    cands = list(result.candidates)
    flt = getattr(args, "primer_filters", None)
    if not (getattr(args, "annotate", False) or flt):
        return cands, None
    if flt and not args.annotate:
        # Length is free to check; Primer3's thermodynamics are not.
        cands = [c for c in cands if (flt.len_min is None or c.length >= flt.len_min)
                 and (flt.len_max is None or c.length <= flt.len_max)]
    notes = annotate_many([c.sequence for c in cands], args.primer_conditions)
    if flt:
        kept = [(c, a) for c, a in zip(cands, notes) if passes(a, flt)]
        cands, notes = [c for c, _ in kept], [a for _, a in kept]
    return cands, notes


def _selected_and_bed(result, args):
    """The selected candidates; writes the BED of their regions when --bed was given."""
    cands, notes = _selected(result, args)
    if args is not None and args.bed:
        buf = io.StringIO()
        write_bed(merge_candidates(cands), buf)
        write_text(args.bed, buf.getvalue())
    return cands, notes


def write_csv(result, fh, args=None) -> None:
    cands, notes = _selected_and_bed(result, args)
    if args is not None and args.merge:
        write_regions_csv(merge_candidates(cands), fh)
        return
    writer = csv.writer(fh, lineterminator="\n")
    writer.writerow(CSV_COLUMNS + (Annotation.COLUMNS if notes is not None else ()))
    for i, c in enumerate(cands):
        row = (c.target_id, c.start, c.end, c.length, c.sequence)
        writer.writerow(row + (notes[i].row() if notes is not None else ()))


def to_json(result, args=None) -> dict:
    cands, notes = _selected_and_bed(result, args)
    out = {"k": result.k, "strands": result.strands,
           "candidates": [[c.target_id, c.start, c.end] for c in cands]}
    if notes is not None:
        out["annotations"] = [dict(zip(Annotation.COLUMNS, (getattr(a, n) for n in Annotation.COLUMNS)))
                              for a in notes]
    if args is not None and args.merge:
        out["regions"] = [[r.target_id, r.start, r.end, r.count, r.best.start, r.best.end]
                          for r in merge_candidates(cands)]
    return out
