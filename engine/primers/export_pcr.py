"""In-silico PCR writers, shared by the command line and the GUI.

CSV: one row per product, ``forward,reverse,record,start,end,length,forward_edits,
reverse_edits,forward_3prime_edits,reverse_3prime_edits,spans_gap`` (and ``sequence``
when the run kept sequences); 1-based inclusive coordinates on the record's forward
strand. ``spans_gap``: the product holds an assembly gap, so its length is unknown.
JSON: ``products`` (objects with the same fields), ``sites``, ``primers`` and the
settings.
"""

from __future__ import annotations

import csv
from dataclasses import asdict

from engine.columns import BLOCK
from engine.primers.pcr_columns import CSV_COLUMNS
from engine.spreadsheet import spreadsheet_cell

COLUMNS = CSV_COLUMNS  # (the products' frame has them too: engine.primers.pcr_columns)
SITE_FIELDS = ("primer", "record", "strand", "start", "end", "edits", "edits_3prime")


def product_dict(p, with_sequence: bool) -> dict:
    out = {"forward": p.forward, "reverse": p.reverse, "record": p.record_id, "start": p.start,
           "end": p.end, "length": p.length, "forward_edits": p.forward_edits,
           "reverse_edits": p.reverse_edits, "forward_3prime_edits": p.forward_3prime_edits,
           "reverse_3prime_edits": p.reverse_3prime_edits, "spans_gap": p.spans_gap}
    if with_sequence:
        out["sequence"] = p.sequence
    return out


def _product_rows(products):
    """Tuples in COLUMNS order (and the sequence, when kept), read from the table's columns a
    block at a time: a genome-scale run has too many products for an object each."""
    for a in range(0, len(products), BLOCK):
        cells = products.record_block(a, min(len(products), a + BLOCK))
        yield from zip(*(c.tolist() if hasattr(c, "tolist") else c for c in cells))


def write_csv(result, fh) -> None:
    w = csv.writer(fh, lineterminator="\n")
    w.writerow(result.products.table_columns())
    # (names and ids a spreadsheet would run as formulas get a leading quote: OWASP)
    w.writerows((spreadsheet_cell(fwd), spreadsheet_cell(rev), spreadsheet_cell(record), *rest)
                for fwd, rev, record, *rest in _product_rows(result.products))


def to_json(result) -> dict:
    fields = result.products.table_columns()
    return {"settings": asdict(result.settings),
            "primers": [{"name": n, "sequence": s} for n, s in result.primers],
            "sites": [dict(zip(SITE_FIELDS, row)) for row in result.sites.tuples()],
            "products": [dict(zip(fields, row))
                         for row in _product_rows(result.products)]}
