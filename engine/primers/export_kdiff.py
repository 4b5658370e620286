"""kdiff's writers, shared by ``primerscope kdiff`` and the GUI: candidates CSV (with optional
annotation columns), JSON, merged regions CSV and BED.

Options are typed keywords: ``annotate`` (add the annotation columns), ``conditions`` (the
reaction conditions of the annotations), ``filters`` (keep only candidates that pass; implies
the annotation columns) and ``merge`` (regions instead of candidates). What they compute is
:mod:`engine.primers` (``select_candidates``, ``merge_candidates``); this module only writes. It
sits in the primer layer, above the kdiff family, which never imports engine.primers.
"""

from __future__ import annotations

import csv
import io

from engine.columns import ColumnTable, labels
from engine.primers import Annotation, Conditions, Filters, merge_candidates, select_candidates
from engine.spreadsheet import spreadsheet_row

CSV_COLUMNS = ("target_id", "start", "end", "length", "sequence")
REGION_COLUMNS = ("target_id", "start", "end", "length", "count", "best_start", "best_end",
                  "best_sequence")


def candidate_row(c) -> tuple:
    """A candidate in :data:`CSV_COLUMNS` order (the GUI's table rows too)."""
    return (c.target_id, c.start, c.end, c.length, c.sequence)


def region_row(r) -> tuple:
    """A merged region in :data:`REGION_COLUMNS` order."""
    return (r.target_id, r.start, r.end, r.length, r.count, r.best.start, r.best.end, r.best.sequence)


def annotation_cells(a: Annotation) -> tuple:
    """The annotation columns as the CSV writes them: two decimals, empty where Primer3 gives none."""
    def fmt(x):
        return "" if x is None else (f"{x:.2f}" if isinstance(x, float) else x)
    return tuple(fmt(getattr(a, name)) for name in Annotation.COLUMNS)


def write_candidates_csv(candidates, fh, notes=None, header: bool = True) -> None:
    """Candidates, with the annotation columns after the standard ones when ``notes`` are given.
    A :class:`~engine.kdiff.CandidateTable` without notes is written from its columns, a
    block at a time (no object per candidate). ``header=False``: the rows alone (a file
    written a block at a time)."""
    w = csv.writer(fh, lineterminator="\n")
    if header:
        w.writerow(CSV_COLUMNS + (Annotation.COLUMNS if notes is not None else ()))
    if notes is None and isinstance(candidates, ColumnTable):
        w.writerows(candidates.for_spreadsheet().tuples())
        return
    for i, c in enumerate(candidates):
        w.writerow(spreadsheet_row(candidate_row(c)) + (annotation_cells(notes[i]) if notes is not None
                                                else ()))


def write_regions_csv(regions, fh) -> None:
    w = csv.writer(fh, lineterminator="\n")
    w.writerow(REGION_COLUMNS)
    w.writerows(spreadsheet_row(region_row(r)) for r in regions)


def write_bed(regions, fh) -> None:
    """BED6 (0-based start, exclusive end); the name is the best candidate, the score the count."""
    fh.write('track name=primerscope_regions description="primerscope candidate regions"\n')
    for r in regions:
        fh.write(f"{r.target_id}\t{r.start - 1}\t{r.end}\t{r.best.sequence}\t{min(r.count, 1000)}\t+\n")


def write_landscape_csv(land, fh) -> None:
    """``kdiff --all-k K``: a row per start, ``target_id,start,len_k1..len_kK`` (1-based
    starts; an empty cell where that start has no candidate at that k)."""
    w = csv.writer(fh, lineterminator="\n")
    w.writerow(("target_id", "start") + tuple(f"len_k{k}" for k in land.k))
    w.writerows(spreadsheet_row(["" if x is None else x for x in row]) for row in land.rows())


def selected(result, **options) -> tuple:
    """:func:`~engine.primers.select_candidates` of the result's candidates, from the
    annotations it carries when it does (``annotations``, ``{sequence: Annotation}``: the
    command line's, made once for all its writers, engine.primers.cli_kdiff)."""
    return select_candidates(result.candidates, known=getattr(result, "annotations", None),
                             **options)


def write_csv(result, fh, *, annotate: bool = False, conditions: Conditions | None = None,
              filters: Filters | None = None, merge: bool = False) -> None:
    """What ``primerscope kdiff ... -o OUT.csv`` writes: the candidates (or with ``merge``
    their regions) that ``filters`` keep; an ``all_k`` result's landscape."""
    if getattr(result, "landscape", None) is not None:
        write_landscape_csv(result.landscape, fh)
        return
    cands, notes = selected(result, annotate=annotate, conditions=conditions, filters=filters)
    if merge:
        write_regions_csv(merge_candidates(cands), fh)
    else:
        write_candidates_csv(cands, fh, notes)


def to_json(result, *, annotate: bool = False, conditions: Conditions | None = None,
            filters: Filters | None = None, merge: bool = False) -> dict:
    """The answer of ``primerscope kdiff ... --json`` (the CLI adds the run metadata)."""
    land = getattr(result, "landscape", None)
    if land is not None:
        return {"k": result.k, "strands": result.strands,
                "landscape": {"k": land.k, "rows": land.rows()}}
    cands, notes = selected(result, annotate=annotate, conditions=conditions, filters=filters)
    if isinstance(cands, ColumnTable):  # from the columns: no object per candidate
        rows = zip(labels(cands.target_ids, cands.target), cands.start.tolist(), cands.end.tolist())
    else:
        rows = ((c.target_id, c.start, c.end) for c in cands)
    out = {"k": result.k, "strands": result.strands, "candidates": list(map(list, rows))}
    if notes is not None:
        out["annotations"] = [{name: getattr(a, name) for name in Annotation.COLUMNS} for a in notes]
    if merge:
        out["regions"] = [[r.target_id, r.start, r.end, r.count, r.best.start, r.best.end]
                          for r in merge_candidates(cands)]
    return out


def csv_text(result, **options) -> str:
    """:func:`write_csv` into a string (the GUI's exports)."""
    buf = io.StringIO(newline="")
    write_csv(result, buf, **options)
    return buf.getvalue()


def regions_csv_text(candidates) -> str:
    """The regions CSV of these candidates (already selected)."""
    buf = io.StringIO(newline="")
    write_regions_csv(merge_candidates(candidates), buf)
    return buf.getvalue()


def bed_text(candidates) -> str:
    """The BED of these candidates' regions (already selected)."""
    buf = io.StringIO(newline="")
    write_bed(merge_candidates(candidates), buf)
    return buf.getvalue()


def result_bed_text(result, *, annotate: bool = False, conditions: Conditions | None = None,
                    filters: Filters | None = None) -> str:
    """What ``primerscope kdiff ... --bed OUT.bed`` writes: the regions of the kept candidates."""
    return bed_text(selected(result, annotate=annotate, conditions=conditions, filters=filters)[0])
