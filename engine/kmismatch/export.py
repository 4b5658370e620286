"""kmismatch's writers: the hits as CSV and as the answer part of ``--json`` (CLI and GUI).

CSV columns: ``pattern_id,record_id,start,end,strand,mismatches,matched`` (1-based,
inclusive ends; '-' hits in forward coordinates, ``matched`` read on that strand).
JSON: ``{"k", "strands", "hits": [[pattern_id, record_id, start, end, strand,
mismatches], ...]}`` (no ``matched``: it is the text at those coordinates).
"""

from __future__ import annotations

import csv

CSV_COLUMNS = ("pattern_id", "record_id", "start", "end", "strand", "mismatches", "matched")


def write_csv(result, fh) -> None:
    """The hits of a :class:`~engine.kmismatch.KmismatchResult` as CSV, in table order."""
    writer = csv.writer(fh, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    writer.writerows(result.hits.rows())


def to_json(result) -> dict:
    """k, strands and the hits (without ``matched``), for ``json.dumps``."""
    hits = result.hits
    pids = [hits.pattern_ids[p] for p in hits.pattern.tolist()]
    rids = [hits.record_ids[r] for r in hits.record.tolist()]
    strands = ["+-"[s] for s in hits.strand.tolist()]
    return {"k": result.k, "strands": result.strands,
            "hits": [list(row) for row in zip(pids, rids, hits.start.tolist(), hits.end.tolist(),
                                              strands, hits.mismatches.tolist())]}
