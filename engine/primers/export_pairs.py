"""Pair design writers, shared by the command line and the GUI.

CSV: one row per pair (the JSON's fields flattened: ``left_*``, ``right_*``, ``closest_*``).
JSON: ``pairs`` (objects: rank, penalty, product_size, left, right, offtarget_products,
closest_offtarget, products...), Primer3's explain strings, the time per phase and,
with ``explain``, ``rejected``. BED: one BED12 line per pair (the amplicon, the two
primers as blocks). Rejected primers: their own CSV (:func:`rejected_csv_text`).
"""

from __future__ import annotations

import csv
import io
from dataclasses import asdict, astuple

from engine.columns import blank
from engine.primers.export_pcr import product_dict
from engine.primers.primer_sets import csv_number
from engine.spreadsheet import spreadsheet_cell

SIDE_FIELDS = ("sequence", "start", "end", "tm", "gc_percent")
CLOSEST_FIELDS = ("record", "start", "end", "length", "forward", "reverse", "forward_edits",
                  "reverse_edits", "spans_gap")
COLUMNS = (("target", "rank", "penalty", "product_size")
           + tuple(f"left_{f}" for f in SIDE_FIELDS) + tuple(f"right_{f}" for f in SIDE_FIELDS)
           + ("compl_any_tm", "compl_end_tm", "product_tm", "offtarget_products")
           + tuple(f"closest_{f}" for f in CLOSEST_FIELDS))
REJECTED_COLUMNS = ("target", "orientation", "start", "end", "sequence", "reason")


def side_dict(site) -> dict:
    """A primer of a pair (a pairs.PrimerSite) as JSON (pairs and group): its fields."""
    return asdict(site)


def pair_dict(p) -> dict:
    closest = p.closest_offtarget
    return {"target": p.target_id, "rank": p.rank, "penalty": p.penalty,
            "product_size": p.product_size, "left": side_dict(p.left),
            "right": side_dict(p.right),
            "compl_any_tm": p.compl_any_tm, "compl_end_tm": p.compl_end_tm,
            "product_tm": p.product_tm, "offtarget_products": p.offtarget_products,
            "closest_offtarget": None if closest is None else product_dict(closest, False),
            "products": [product_dict(q, False) for q in p.products]}


def rows(result):
    for p in result.pairs:
        d = pair_dict(p)
        closest = d["closest_offtarget"] or {}
        yield ((d["target"], d["rank"], d["penalty"], d["product_size"])
               + tuple(d["left"][f] for f in SIDE_FIELDS) + tuple(d["right"][f] for f in SIDE_FIELDS)
               + (blank(d["compl_any_tm"]), blank(d["compl_end_tm"]), blank(d["product_tm"]),
                  d["offtarget_products"])
               + tuple(blank(closest.get(f)) for f in CLOSEST_FIELDS))


def csv_cell(value):
    """A cell of the pairs CSV: a float as every primer CSV rounds it, a text
    spreadsheet-safe."""
    return csv_number(value) if isinstance(value, float) else spreadsheet_cell(value)


def write_csv(result, fh) -> None:
    w = csv.writer(fh, lineterminator="\n")
    w.writerow(COLUMNS)
    w.writerows([csv_cell(v) for v in row] for row in rows(result))


def rejected_csv_text(result) -> str:
    buf = io.StringIO(newline="")
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(REJECTED_COLUMNS)
    w.writerows((spreadsheet_cell(r.target_id), r.orientation, r.start, r.end, r.sequence,
                 r.reason) for r in result.rejected)
    return buf.getvalue()


def to_json(result) -> dict:
    settings = asdict(result.settings)
    settings["design"]["product_ranges"] = [list(r) for r in result.settings.design.product_ranges]
    out = {"k": result.k, "settings": settings, "phase_seconds": result.phase_seconds,
           "primer3_explain": result.primer3_explain,
           "pairs": [pair_dict(p) for p in result.pairs]}
    if result.settings.explain:
        out["rejected"] = [dict(zip(REJECTED_COLUMNS, astuple(r))) for r in result.rejected]
    return out


def why_none(result) -> str:
    """Why a finished design holds no pair, in one line (``pairs`` says it on standard error,
    the Pairs view under its buttons): how many 5' ends have a specific primer short enough,
    and Primer3's own counts of what it refused."""
    design = result.settings.design
    ends = []
    for spec in result.specificity:
        fwd = int(((spec.left > 0) & (spec.left <= design.len_max)).sum())
        rev = int(((spec.right > 0) & (spec.right <= design.len_max)).sum())
        ends.append(f"{spec.target_id} has {fwd:,} forward and {rev:,} reverse 5' ends with a "
                    f"primer of at most {design.len_max} nt at least {result.k} edits from the "
                    f"background")
    said = [f"{side} {text}" for explain in result.primer3_explain.values()
            for side, text in explain.items() if text]
    return ("no pair found: " + "; ".join(ends)
            + (f"; Primer3's primer counts: {'; '.join(said)}" if said else "")
            + ". Widen the product sizes, the length, Tm or GC bounds or the regions, or lower "
              "k (--explain lists each position's reason)")


def amplicon_bed12(chrom: str, left, right, name: str, score: int) -> str:
    """One BED12 line (newline included) of an amplicon: from the left primer's start to the
    right one's end (1-based inclusive sites in, 0-based half-open out), thick throughout,
    its two primers as the blocks (a browser draws them as boxes joined by a line). Pairs'
    and group's BED files both write these."""
    start, end = left.start - 1, right.end
    return (f"{chrom}\t{start}\t{end}\t{name}\t{score}\t+\t{start}\t{end}\t0\t2\t"
            f"{left.length},{right.length}\t0,{right.start - 1 - start}\n")


def bed_text(result) -> str:
    """BED12: per pair, the amplicon with the primers as blocks (:func:`amplicon_bed12`);
    name ``<target>_pair<rank>``, score 0-1000 from the penalty (lower is better)."""
    return "".join(amplicon_bed12(p.target_id, p.left, p.right, f"{p.target_id}_pair{p.rank}",
                                  max(0, min(1000, int(round(1000 - 100 * p.penalty)))))
                   for p in result.pairs)
