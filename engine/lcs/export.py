"""lcs writers, shared by the CLI and the GUI: the CSV of LCS pairs and the JSON answer.

The CSV has one row per LCS symbol, ``a_pos,b_pos,symbol`` (1-based); a
``task="length"`` result is a ``length`` column with one row.
"""

from __future__ import annotations

import csv

CSV_COLUMNS = ("a_pos", "b_pos", "symbol")


def write_csv(result, fh) -> None:
    writer = csv.writer(fh, lineterminator="\n")
    if result.task == "length":
        writer.writerow(("length",))
        writer.writerow((result.length,))
        return
    writer.writerow(CSV_COLUMNS)
    writer.writerows(zip(result.pairs[:, 0].tolist(), result.pairs[:, 1].tolist(), result.lcs))


def to_json(result) -> dict:
    return {"a_id": result.a_id, "b_id": result.b_id, "a_length": result.a_length,
            "b_length": result.b_length, "length": result.length, "lcs": result.lcs}
