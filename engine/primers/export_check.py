"""Writers of the primer check (``primerscope check``), shared by the command line and the GUI.

CSV: one row per finding, its ``kind`` first:

- ``site``: a place ``primer`` can prime from (within --max-edits, at most
  --max-3prime-edits in its 3' window), ``record``, ``strand``, ``start``-``end``
  (1-based, inclusive, forward strand), ``edits``, ``edits_3prime``;
- ``product``: an in-silico PCR product of ``primer`` (at its start) and ``partner`` (at
  its end), ``edits``/``edits_3prime`` summed over its two sites;
- ``dimer``: a pair of primers (a primer with itself included), ``dimer_dg`` (kcal/mol),
  ``dimer_tm`` (°C; empty where Primer3 finds no structure or cannot score) and
  ``end_dimer`` (a 3'-end dimer at or below --end-dimer-dg).

JSON: ``primers``, ``summary`` (per primer: sites, products, 3'-end dimers, the strongest
dimer), ``sites``, ``products``, ``dimers``.
"""

from __future__ import annotations

import csv
import math
from collections import Counter

from engine.primers.export_panel import pair_rows
from engine.primers.export_pcr import SITE_FIELDS, product_dict
from engine.primers.primer_sets import csv_number
from engine.spreadsheet import spreadsheet_cell

COLUMNS = ("kind", "primer", "partner", "record", "strand", "start", "end", "length", "edits",
           "edits_3prime", "dimer_dg", "dimer_tm", "end_dimer")
#: The cells that hold user-given text (primer names, record ids): only these get the
#: spreadsheet escape; ``kind`` and ``strand`` are fixed words (a ``-`` strand is no formula).
TEXT_COLUMNS = frozenset(("primer", "partner", "record"))
SUMMARY_FIELDS = ("primer", "sequence", "sites", "products", "end_dimers", "strongest_dimer_with",
                  "strongest_dimer_dg")


def site_dicts(result) -> list[dict]:
    if result.sites is None:
        return []
    return [dict(zip(SITE_FIELDS, row)) for row in result.sites.tuples()]


def summary(result) -> list[dict]:
    """Per primer: its sites, the products it takes part in, its 3'-end dimers and its
    most stable dimer (lowest ΔG, itself included)."""
    names = [n for n, _ in result.primers]
    sites = Counter(s["primer"] for s in site_dicts(result))
    products = Counter(n for p in result.products for n in {p.forward, p.reverse})
    out = []
    for i, (name, seq) in enumerate(result.primers):
        row = result.dimer_dg[i]
        scored = [j for j in range(len(names)) if not math.isnan(row[j])]
        worst = min(scored, key=lambda j: row[j], default=None)
        out.append({"primer": name, "sequence": seq, "sites": sites[name], "products": products[name],
                    "end_dimers": int(result.end_dimer[i].sum()),
                    "strongest_dimer_with": None if worst is None else names[worst],
                    "strongest_dimer_dg": None if worst is None else csv_number(row[worst])})
    return out


def rows(result):
    """The CSV's rows (tuples in COLUMNS order, None for an empty cell)."""
    for s in site_dicts(result):
        yield ("site", s["primer"], None, s["record"], s["strand"], s["start"], s["end"],
               s["end"] - s["start"] + 1, s["edits"], s["edits_3prime"], None, None, None)
    for p in result.products:
        yield ("product", p.forward, p.reverse, p.record_id, None, p.start, p.end, p.length,
               p.forward_edits + p.reverse_edits, p.forward_3prime_edits + p.reverse_3prime_edits,
               None, None, None)
    for d in pair_rows(result):
        yield ("dimer", d["primer_a"], d["primer_b"], None, None, None, None, None, None, None,
               d["dimer_dg"], d["dimer_tm"], d["end_dimer"])


def write_csv(result, fh) -> None:
    w = csv.writer(fh, lineterminator="\n")
    w.writerow(COLUMNS)
    text = [name in TEXT_COLUMNS for name in COLUMNS]
    for row in rows(result):
        w.writerow(["" if v is None else spreadsheet_cell(v) if t else v
                    for v, t in zip(row, text)])


def to_json(result) -> dict:
    return {"primers": [{"name": n, "sequence": s} for n, s in result.primers],
            "end_dimer_dg": result.settings.end_dimer_dg,
            "summary": summary(result), "sites": site_dicts(result),
            "products": [product_dict(p, result.settings.pcr.with_sequence) for p in result.products],
            "dimers": list(pair_rows(result))}
