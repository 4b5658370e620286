"""Panel writers, shared by the command line and the GUI.

CSV (default): one row per pair of primers (a primer with itself included):
``primer_a,primer_b,dimer_dg,dimer_tm,end_dg_ab,end_dg_ba,end_dimer,products``
(ΔG in kcal/mol, Tm in °C, empty where Primer3 cannot score; ``products``: in-silico
PCR products between the two, empty without a background). With ``matrix`` ("dg",
"tm" or "end"): one matrix, the primers' names as the header row and first column.
JSON: ``primers``, the matrices ``dimer_dg``, ``dimer_tm``, ``end_dg``, ``end_dimer``
(null where not scored), ``pairs`` (the rows above as objects), ``products`` and
``too_long_for_thermodynamics`` (primers over 60 nt: no heterodimer values between them).
"""

from __future__ import annotations

import csv
import math

from engine.columns import blank
from engine.primers.export_pcr import product_dict
from engine.primers.primer_sets import csv_number
from engine.spreadsheet import spreadsheet_cell

COLUMNS = ("primer_a", "primer_b", "dimer_dg", "dimer_tm", "end_dg_ab", "end_dg_ba", "end_dimer",
           "products")


def _num(v):
    return None if v is None or (isinstance(v, float) and math.isnan(v)) else csv_number(v)


def pair_rows(result):
    names = [n for n, _ in result.primers]
    for i, a in enumerate(names):
        for j in range(i, len(names)):
            b = names[j]
            count = len(result.products_between(a, b)) if result.has_background else None
            yield {"primer_a": a, "primer_b": b, "dimer_dg": _num(result.dimer_dg[i, j]),
                   "dimer_tm": _num(result.dimer_tm[i, j]), "end_dg_ab": _num(result.end_dg[i, j]),
                   "end_dg_ba": _num(result.end_dg[j, i]), "end_dimer": bool(result.end_dimer[i, j]),
                   "products": count}


def write_csv(result, fh, *, matrix: str | None = None) -> None:
    w = csv.writer(fh, lineterminator="\n")
    names = [n for n, _ in result.primers]
    if matrix:
        values = {"dg": result.dimer_dg, "tm": result.dimer_tm, "end": result.end_dg}[matrix]
        w.writerow([""] + [spreadsheet_cell(n) for n in names])
        for name, row in zip(names, values):
            w.writerow([spreadsheet_cell(name)] + [blank(_num(v)) for v in row])
        return
    w.writerow(COLUMNS)
    for r in pair_rows(result):  # (names a spreadsheet would run get a leading quote: OWASP)
        w.writerow([spreadsheet_cell(blank(r[c])) for c in COLUMNS])


def to_json(result, *, matrix: str | None = None) -> dict:
    def grid(a):
        return [[_num(v) for v in row] for row in a]

    return {"primers": [{"name": n, "sequence": s} for n, s in result.primers],
            "end_dimer_dg": result.settings.end_dimer_dg,
            "dimer_dg": grid(result.dimer_dg), "dimer_tm": grid(result.dimer_tm),
            "end_dg": grid(result.end_dg), "end_dimer": result.end_dimer.tolist(),
            "pairs": list(pair_rows(result)),
            "products": [product_dict(p, result.settings.pcr.with_sequence)
                         for p in result.products] if result.has_background else None,
            "too_long_for_thermodynamics": list(result.too_long)}
