"""kmismatch's writers: the hits as CSV and as the answer part of ``--json`` (CLI and GUI).

CSV columns: ``pattern_id,record_id,start,end,strand,mismatches,matched`` (1-based,
inclusive ends; '-' hits in forward coordinates, ``matched`` read on that strand); an id a
spreadsheet would run as a formula gets a leading ``'`` (engine.spreadsheet).
JSON: ``{"k", "strands", "hits": [[pattern_id, record_id, start, end, strand,
mismatches], ...]}`` (no ``matched``: it is the text at those coordinates).
"""

from __future__ import annotations

import csv

from engine.columns import labels

CSV_COLUMNS = ("pattern_id", "record_id", "start", "end", "strand", "mismatches", "matched")


def write_csv(result, fh) -> None:
    """The hits of a :class:`~engine.kmismatch.KmismatchResult` as CSV, in table order,
    streamed from the columns a block at a time (ids escaped once: ``for_spreadsheet``)."""
    writer = csv.writer(fh, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    writer.writerows(result.hits.for_spreadsheet().tuples())


def to_json(result) -> dict:
    """k, strands and the hits (without ``matched``), for ``json.dumps``; from the columns."""
    hits = result.hits
    pids = labels(hits.pattern_ids, hits.pattern)
    rids = labels(hits.record_ids, hits.record)
    strands = ["+-"[s] for s in hits.strand.tolist()]
    return {"k": result.k, "strands": result.strands,
            "hits": [list(row) for row in zip(pids, rids, hits.start.tolist(), hits.end.tolist(),
                                              strands, hits.mismatches.tolist())]}
