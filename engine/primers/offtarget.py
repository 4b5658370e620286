"""Where would a primer still bind? Every background site within a number of edits.

Computed with the edit family's search (``engine.edit``) on both strands and the
selected backend. Overlapping end positions of one (record, strand) form one
site, reported by its best hit. For each site the alignment is given in primer
orientation (5'->3'), and the edits that touch the last five bases at the 3' end
are counted: mismatches there stop polymerase extension, which is the rule
Primer-BLAST users know.
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass

import numpy as np

from engine import api, edit
from engine.columns import Tabular
from engine.jobs import Job
from engine.primers.pcr import MAX_EDITS
from engine.sequences import Record
from engine.spreadsheet import spreadsheet_row

THREE_PRIME_WINDOW = 5
#: The report's CSV columns (1-based, inclusive, forward-strand coordinates; primer and site
#: in primer orientation).
CSV_COLUMNS = ("record_id", "start", "end", "strand", "edits", "edits_3prime", "cigar", "primer",
               "site")
_NUMBERS = ("start", "end", "edits", "edits_3prime")
_CIGAR_RE = re.compile(r"(\d+)([=XID])")


@dataclass(frozen=True)
class OffTargetSite:
    record_id: str
    start: int          # 1-based, inclusive, forward-strand coordinates
    end: int
    strand: str         # '+': the primer's sequence occurs on the forward strand; '-': on the reverse
    edits: int
    edits_3prime: int   # edits touching the last THREE_PRIME_WINDOW bases of the primer's 3' end
    cigar: str          # primer orientation: '=' match, 'X' mismatch, 'I' primer base with no
                        # site base, 'D' site base with no primer base
    primer_line: str
    bars: str
    site_line: str

    @property
    def alignment(self) -> str:
        return "\n".join((self.primer_line, self.bars, self.site_line))


def csv_row(s: OffTargetSite) -> tuple:
    """A site's cells in :data:`CSV_COLUMNS` order (the CSV's and the frame's)."""
    return (s.record_id, s.start, s.end, s.strand, s.edits, s.edits_3prime, s.cigar,
            s.primer_line, s.site_line)


class OffTargetSites(Tabular, list):
    """An off-target report: a list of :class:`OffTargetSite` (as it always was), with
    ``to_pandas``/``to_records`` in the CSV's columns, as every result has."""

    def table(self):
        rows = [csv_row(s) for s in self]
        data = {name: np.array([r[i] for r in rows],  # (dtypes kept when empty too)
                               dtype=np.int64 if name in _NUMBERS else object)
                for i, name in enumerate(CSV_COLUMNS)}
        return data, ("record_id", "start", "end"), ()


def make_job(primer: Record, background, max_edits: int, *, variant=None, backend=None,
             threads=None, scheduler=None, gap_min: int | None = None) -> Job:
    """The edit-family search job behind an off-target report (both strands, with alignments;
    ``scheduler``: the dask backend's, engine.cluster; runs of at least ``gap_min`` N in the
    background are assembly gaps, engine.gaps). ``primer`` (one sequence), then
    ``background``: any form of :func:`engine.api.records`; ``max_edits`` is a maximum."""
    primer = api.one_record(primer, "primer")
    max_edits = MAX_EDITS.check(max_edits)  # (pcr's parameter: one rule, one message)
    if max_edits >= len(primer):
        raise ValueError(f"max_edits ({max_edits}) must be smaller than the primer length "
                         f"({len(primer)}): every position would be a site")
    return edit.make_job([primer], api.records(background, "background"), mode="search",
                         k=max_edits, strands="both",
                         variant=variant, backend=backend, threads=threads, align=True,
                         scheduler=scheduler, gap_min=gap_min)


def _site(primer_text: str, hit) -> OffTargetSite:
    # the CIGAR's operations one by one, 5'->3' along the primer on either strand
    # (engine.edit.cpu_align)
    ops = [op for n, op in _CIGAR_RE.findall(hit.cigar) for _ in range(int(n))]
    site = hit.matched  # the site as read on the hit's strand, i.e. in primer orientation
    top, mid, bottom = [], [], []
    p = s = 0
    window = len(primer_text) - THREE_PRIME_WINDOW   # the 3' window's first primer base
    edits_3p = 0
    for op in ops:
        top.append("-" if op == "D" else primer_text[p])
        bottom.append("-" if op == "I" else site[s])
        mid.append("|" if op == "=" else " ")
        # X and I at a primer base of the window; D (a site base between primer bases p-1
        # and p) with both of them in it
        if op != "=" and (p > window if op == "D" else p >= window):
            edits_3p += 1
        p += op != "D"
        s += op != "I"
    return OffTargetSite(hit.record_id, hit.start, hit.end, hit.strand, hit.distance, edits_3p,
                         hit.cigar, "".join(top), "".join(mid), "".join(bottom))


def sites_from_result(primer_text: str, result) -> OffTargetSites:
    """One site per run of overlapping hits of a (record, strand): its best hit (leftmost on ties)."""
    groups: dict[tuple[str, str], list] = {}
    for h in result.hits:
        if h.start is None:  # a cancelled run may leave hits without alignments
            continue
        groups.setdefault((h.record_id, h.strand), []).append(h)
    clusters = []
    for hits in groups.values():
        hits.sort(key=lambda h: (h.start, h.end))
        clusters.append([hits[0]])
        reach = hits[0].end
        for h in hits[1:]:
            if h.start > reach:
                clusters.append([])
            clusters[-1].append(h)
            reach = max(reach, h.end)
    sites = [_site(primer_text, min(c, key=lambda x: (x.distance, x.start, x.end)))
             for c in clusters]
    record_order = {rid: i for i, rid in enumerate(dict.fromkeys(h.record_id for h in result.hits))}
    sites.sort(key=lambda st: (record_order[st.record_id], st.start, st.strand))
    return OffTargetSites(sites)


def find_offtargets(primer, background, max_edits: int = 3, *, progress: bool = False,
                    backend=None, **options) -> OffTargetSites:
    """Every site in ``background`` (both strands) within **at most** ``max_edits`` of
    ``primer`` (any input forms; ``backend`` may be a ``distributed.Client``,
    ``progress=True`` shows a tqdm bar): a list of sites with ``to_pandas``/``to_records``.

    >>> sites = find_offtargets("ACGTACGGTA", "TTTTACGTACGGTTTTTT", 1, backend="serial")
    >>> [(s.start, s.end, s.strand, s.edits) for s in sites]
    [(5, 13, '+', 1)]
    >>> sites.to_records(coords="bed")[0]["start"], list(sites.to_pandas().columns)[:4]
    (4, ['record_id', 'start', 'end', 'strand'])
    """
    primer = api.one_record(primer, "primer")
    result = api.solve(make_job, edit.iter_solve, primer, background, max_edits,
                       progress=progress, backend=backend, **options)
    return sites_from_result(primer.text, result)


solve = find_offtargets  # (the name every family and tool has)


def write_csv(result, fh, *, primer: str) -> None:
    """The report of an off-target job's result as CSV; ``primer``: its text (5'->3'). A
    record id a spreadsheet would run as a formula gets a leading ``'`` (engine.spreadsheet)."""
    w = csv.writer(fh, lineterminator="\n")
    w.writerow(CSV_COLUMNS)
    w.writerows(spreadsheet_row(csv_row(s)) for s in sites_from_result(primer, result))


def to_json(result, *, primer: str) -> dict:
    """The report as JSON fields (``max_edits`` is the job's k)."""
    return {"primer": primer, "max_edits": result.k,
            "sites": [[s.record_id, s.start, s.end, s.strand, s.edits, s.edits_3prime, s.cigar]
                      for s in sites_from_result(primer, result)]}
