"""edit's writers, shared by the command line and the GUI's export.

CSV, search: ``pattern_id,record_id,start,end,strand,distance,cigar,matched``
(start, cigar and matched are empty without alignments).
CSV, global: ``pattern_id,record_id,distance,cigar`` (distance empty when above
k; cigar only with alignments).
JSON, global: ``distance`` is SPEC's one number, the smallest over all pairs (null
when none is within k); ``pairs`` holds the CSV's rows, one
``[pattern_id, record_id, distance, cigar]`` per pattern and text record, so
several patterns keep their own distances.
An id a spreadsheet would run as a formula gets a leading ``'`` in the CSV (engine.spreadsheet).
"""

from __future__ import annotations

import csv

from engine.columns import BLOCK, blank, labels
from engine.spreadsheet import spreadsheet_cell

SEARCH_COLUMNS = ("pattern_id", "record_id", "start", "end", "strand", "distance", "cigar", "matched")
GLOBAL_COLUMNS = ("pattern_id", "record_id", "distance", "cigar")


def rows(result):
    """Rows as the CSV writes them, ids escaped (search hits: from the columns, a block at a
    time, their id tables escaped once)."""
    if result.mode == "search":
        yield from result.hits.for_spreadsheet().tuples()
    else:
        for d in result.distances:
            yield (spreadsheet_cell(d.pattern_id), spreadsheet_cell(d.record_id),
                   blank(d.distance), blank(d.cigar))


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
        hits = result.hits  # (from the columns: no Hit per row)
        n, starts = len(hits), hits.start.tolist()
        cigars = [c for a in range(0, n, BLOCK) for c in hits.cigars(a, a + BLOCK)]
        out["hits"] = [[None if s < 0 else s, e, d] for s, e, d in
                       zip(starts, hits.end.tolist(), hits.distance.tolist())]
        out["details"] = [list(row) for row in zip(
            labels(hits.pattern_ids, hits.pattern), labels(hits.record_ids, hits.record),
            ["+-"[s] for s in hits.strand.tolist()], cigars)]
    return out
