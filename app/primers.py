"""From kdiff candidates to primers in the GUI, without Qt: the work behind the primer tools.

Everything here calls the engine's own code (:mod:`engine.primers`), so the GUI and
``primerscope kdiff --annotate/--filter/--merge`` give the same answers:

- annotations come from :func:`engine.primers.annotate_many` (primer3-py), computed in child
  processes (:mod:`engine.primers.annotate_children`, driven from a worker thread, one a core
  but one), so a million candidates never hold up the window: primer3-py holds Python's lock
  for a whole call;
- the filter is :func:`engine.primers.passes`;
- regions are :func:`engine.primers.merge_candidates`; every file (regions CSV, BED, the
  annotated CSV) is written by :mod:`engine.primers.export_kdiff`, the command line's own writers
  (the annotated CSV from the table's annotations; in a child process, which annotates again,
  where some are missing);
- the off-target report is :func:`engine.primers.offtarget.make_job` run through
  :func:`engine.iter_solve` (the edit family's search) and ``sites_from_result``.

Primer3's thermodynamics run on one shared object in primer3-py (its arguments are set before
each call), so the primer3 work of this process (pairs, panels, the library) runs through
:func:`app.primer3_guard.steps` (one step of one job at a time, whichever view started it).
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, fields
from typing import Generator, Mapping, Sequence

import numpy as np

import engine
from engine.jobs import CancelToken, Job
from engine.primers import Annotation, Conditions, Filters, passes
from engine.primers import offtarget
from engine.sequences import Record, encode

from app.families import Column

#: Table columns after kdiff's own, in the order of :attr:`Annotation.COLUMNS` (and the CSV's).
ANNOTATION_COLUMNS = (
    Column("GC %", "float", "", "GC content (%)"),
    Column("Tm (°C)", "float", "", "Melting temperature (°C), Primer3's nearest-neighbour model at the "
                              "reaction conditions set above"),
    Column("hairpin ΔG (kcal/mol)", "float", "", "Most stable hairpin, ΔG in kcal/mol at 37 °C "
                                                "(none: no hairpin forms above 0 °C)"),
    Column("hairpin Tm (°C)", "float", "", "Melting temperature of that hairpin (°C; none: no "
                                          "hairpin)"),
    Column("dimer ΔG (kcal/mol)", "float", "", "Most stable self-dimer (homodimer), ΔG in kcal/mol at 37 °C"),
    Column("dimer Tm (°C)", "float", "", "Melting temperature of that self-dimer (°C)"),
    Column("3′ ΔG (kcal/mol)", "float", "", "3′ end stability: ΔG (kcal/mol) of the last 5 bases on their "
                                 "complement; more negative binds more stably"),
    Column("GC clamp", "int", "", "G or C among the last 5 bases at the 3′ end"),
    Column("max run (bp)", "int", "", "Longest mononucleotide run (poly-X)"),
)
assert len(ANNOTATION_COLUMNS) == len(Annotation.COLUMNS)

#: Merged regions in the table, in the order of ``engine.primers.export_kdiff.REGION_COLUMNS``.
REGION_COLUMNS = (
    Column("target", "str", "", "Target record", user_text=True),
    Column("start", "int", "start", "First base of the region (1-based)"),
    Column("end", "int", "end", "Last base of the region (1-based, inclusive)"),
    Column("length (bp)", "int", "length", "Region length (bp)"),
    Column("count", "int", "", "Overlapping candidates merged into the region"),
    Column("best start", "int", "", "Start of the region's best (shortest, then leftmost) candidate"),
    Column("best end", "int", "", "End of the best candidate"),
    Column("best sequence", "str", "", "The best candidate; the annotation columns describe it"),
)


@dataclass(frozen=True)
class Field:
    """One number of the primer tools: a Conditions or Filters field and how to show it."""

    name: str
    label: str
    unit: str
    kind: str        # "int" | "float"
    tip: str
    step: float = 1.0


CONDITION_FIELDS = (
    Field("mv_conc", "Na⁺/K⁺", "mM", "float", "Monovalent cations, mM (Primer3: 50)", 5.0),
    Field("dv_conc", "Mg²⁺", "mM", "float", "Divalent cations, mM (Primer3: 1.5)", 0.1),
    Field("dntp_conc", "dNTP", "mM", "float", "dNTPs, mM (Primer3: 0.6)", 0.1),
    Field("dna_conc", "oligo", "nM", "float", "Primer (oligo) concentration, nM (Primer3: 50)", 10.0),
)

#: Filter bounds in :class:`engine.primers.Filters` order; ``label`` reads before the number.
FILTER_FIELDS = (
    Field("len_min", "Length ≥", "", "int", "Shortest primer, bp (Primer3: 18)"),
    Field("len_max", "≤", "bp", "int", "Longest primer, bp (Primer3: 27)"),
    Field("tm_min", "Tm ≥", "", "float", "Lowest melting temperature, °C (Primer3: 57)", 0.5),
    Field("tm_max", "≤", "°C", "float", "Highest melting temperature, °C (Primer3: 63)", 0.5),
    Field("gc_min", "GC ≥", "", "float", "Lowest GC content, % (Primer3: 20)"),
    Field("gc_max", "≤", "%", "float", "Highest GC content, % (Primer3: 80)"),
    Field("max_poly_x", "Poly-X ≤", "", "int", "Longest mononucleotide run (Primer3: 5)"),
    Field("min_gc_clamp", "GC clamp ≥", "", "int",
          "At least this many G/C among the last 5 bases at the 3′ end (Primer3: off)"),
    Field("max_hairpin_tm", "Hairpin Tm ≤", "°C", "float",
          "Highest melting temperature of a hairpin (off by default)", 1.0),
    Field("max_homodimer_tm", "Dimer Tm ≤", "°C", "float",
          "Highest melting temperature of a self-dimer (off by default)", 1.0),
    Field("max_end_stability", "3′ stability ≤", "kcal/mol", "float",
          "Most stable 3′ end allowed: |ΔG| of the last 5 bases (Primer3's PRIMER_MAX_END_STABILITY: 9)",
          0.5),
)
assert [f.name for f in FILTER_FIELDS] == [f.name for f in fields(Filters)]

#: Values a switched-off filter bound starts from when it is switched on.
FILTER_SUGGESTIONS = {"min_gc_clamp": 1, "max_hairpin_tm": 47.0, "max_homodimer_tm": 47.0,
                      "max_end_stability": 9.0}

_NAMES = {
    "mv_conc": "Na⁺/K⁺", "dv_conc": "Mg²⁺", "dntp_conc": "dNTP", "dna_conc": "oligo",
    "len_min": "length min", "len_max": "length max", "tm_min": "Tm min", "tm_max": "Tm max",
    "gc_min": "GC min", "gc_max": "GC max", "max_poly_x": "poly-X", "min_gc_clamp": "GC clamp",
    "max_hairpin_tm": "hairpin Tm", "max_homodimer_tm": "dimer Tm",
    "max_end_stability": "3′ stability", "dna_conc (oligo concentration)": "oligo",
}
_NAME_RE = re.compile(r"\b(" + "|".join(re.escape(n) for n in sorted(_NAMES, key=len, reverse=True))
                      + r")(?!\w)")


def friendly(message: str) -> str:
    """An engine message with the widgets' names for its fields (``tm_min`` -> ``Tm min``)."""
    return _NAME_RE.sub(lambda m: _NAMES[m.group(1)], message)


def short_id(record_id: str) -> str:
    """``gi|9626243|ref|NC_001416.1|[0:200]`` -> ``NC_001416.1[0:200]`` (NCBI's old FASTA ids)."""
    m = re.match(r"^gi\|\d+\|\w+\|([^|]+)\|(.*)$", record_id)
    return m.group(1) + m.group(2) if m else record_id


def default_filter_values() -> dict:
    """Every bound with a number: Primer3's default, or the suggestion for the bounds it leaves off."""
    base = Filters()
    return {f.name: getattr(base, f.name) if getattr(base, f.name) is not None
            else FILTER_SUGGESTIONS[f.name] for f in FILTER_FIELDS}


def default_filter_enabled() -> dict:
    base = Filters()
    return {f.name: getattr(base, f.name) is not None for f in FILTER_FIELDS}


def make_filters(values: Mapping[str, float], enabled: Mapping[str, bool]) -> Filters:
    """Filters from the widgets (a switched-off bound is None); ValueError in the widgets' words."""
    try:
        return Filters(**{f.name: (_number(f, values[f.name]) if enabled[f.name] else None)
                          for f in FILTER_FIELDS})
    except ValueError as err:
        raise ValueError(friendly(str(err))) from None


def make_conditions(values: Mapping[str, float]) -> Conditions:
    try:
        return Conditions(**{f.name: float(values[f.name]) for f in CONDITION_FIELDS})
    except ValueError as err:
        raise ValueError(friendly(str(err))) from None


def _number(f: Field, value):
    return int(value) if f.kind == "int" else float(value)


# -- annotations and filters ------------------------------------------------------------------------
#: Primer3 reports a structure it did not find as 0 (ΔG and Tm), and one that melts at or below
#: 0 °C does not form in a PCR: either reads "none" in a table (CSV exports keep the number).
#: Each structure's ΔG column -> its Tm column, in :data:`ANNOTATION_COLUMNS`.
STRUCTURE_TM = {"hairpin ΔG (kcal/mol)": "hairpin Tm (°C)", "hairpin Tm (°C)": "hairpin Tm (°C)",
                "dimer ΔG (kcal/mol)": "dimer Tm (°C)", "dimer Tm (°C)": "dimer Tm (°C)"}


def no_structure(tm) -> bool:
    """Whether a structure's Tm means Primer3 found none that forms (see STRUCTURE_TM)."""
    return isinstance(tm, (int, float)) and not isinstance(tm, bool) and tm <= 0


def annotation_text(column: int, values: tuple) -> str | None:
    """The shown text of annotation column ``column`` of a row's ``values``: "none" for a
    structure Primer3 did not find, else None (the number, as usual)."""
    title = ANNOTATION_COLUMNS[column].title
    if title not in STRUCTURE_TM:
        return None
    tm = values[[c.title for c in ANNOTATION_COLUMNS].index(STRUCTURE_TM[title])]
    return "none" if no_structure(tm) else None


def annotation_values(note: Annotation | None) -> tuple:
    """The annotation columns of one row (raw numbers; None where Primer3 gives no value)."""
    if note is None:
        return (None,) * len(Annotation.COLUMNS)
    return tuple(getattr(note, name) for name in Annotation.COLUMNS)


def passing_sequences(notes: Mapping[str, Annotation], filters: Filters) -> frozenset:
    """The sequences whose annotation passes ``filters`` (engine.primers.passes)."""
    return frozenset(seq for seq, note in notes.items() if passes(note, filters))


def kept_candidates(candidates: Sequence, passing: frozenset | None,
                    masked: frozenset = frozenset()) -> list:
    """The candidates the primer filter keeps (all of them when no filter is in effect), less
    those whose (target id, start) is in ``masked`` (:func:`masked_keys`)."""
    return [c for c in candidates if (passing is None or c.sequence in passing)
            and (c.target_id, c.start) not in masked]


def masked_keys(candidates, targets) -> frozenset:
    """(target id, start) of the candidates whose 3'-most 5 bases touch a soft-masked base
    (engine.softmask, as primerscope kdiff --avoid-masked): what the primer tools' *Avoid
    soft-masked 3′ ends* hides. ``targets``: the job's target records, in its order."""
    from engine.softmask import masked_candidates

    if not len(candidates) or not hasattr(candidates, "start0"):
        return frozenset()
    bad = np.flatnonzero(masked_candidates(candidates, targets))
    ids = candidates.target_ids
    return frozenset(zip((ids[t] for t in candidates.target[bad].tolist()),
                         candidates.start[bad].tolist()))


def sequence_bands(record, gap_min: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The soft-masked stretches and the assembly gaps of a record, each as an (n, 2) array
    of 1-based first and last positions in its numbering (``offset`` included): the band the
    kdiff profile and the pairs track draw under their curves. Gaps: those a job masked, or
    the runs of at least ``gap_min`` N (unset: a store record's own, else engine.gaps'
    default) of a record as loaded. A record from a store that kept no mask table shows its
    gaps only."""
    from engine.gaps import as_background, gap_runs

    def spans(intervals):
        if intervals is None or not len(intervals[0]):
            return np.zeros((0, 2), dtype=np.int64)
        lo, hi = (np.asarray(a, dtype=np.int64) for a in intervals)
        return np.stack((lo + record.offset + 1, hi + record.offset), axis=1)

    masked = record.soft_mask if record.soft_mask_known else None
    gapped = as_background([record], gap_min)[0]  # (as it is when a job masked it)
    return spans(masked), spans(gap_runs(gapped.codes))


# -- off-target report ----------------------------------------------------------------------------
def primer_record(candidate) -> Record:
    """The candidate as a primer record, named ``target:start-end``."""
    name = f"{candidate.target_id}:{candidate.start}-{candidate.end}"
    return Record(name, encode(candidate.sequence), "kdiff candidate", "kdiff")


@dataclass(frozen=True)
class OffTargetReport:
    """An off-target search and its sites (``complete`` is False after a cancel)."""

    candidate: object
    job: Job
    sites: tuple
    seconds: float
    complete: bool


@dataclass(frozen=True)
class OffTargetStarted:
    """First item of an off-target run: the job as the engine validated it."""

    job: Job


def offtarget_run(candidate, background: Sequence[Record], max_edits: int, *, backend: str | None,
                  threads: int | None, cancel: CancelToken, scheduler: str | None = None) -> Generator:
    """Every site of ``candidate`` in ``background`` within ``max_edits`` (both strands);
    ``scheduler``: the Dask scheduler's address for the dask backend (None: a local cluster).

    Yields :class:`OffTargetStarted`, then the edit search's Progress; returns an
    :class:`OffTargetReport` (with the sites found so far when cancelled).
    """
    primer = primer_record(candidate)
    job = offtarget.make_job(primer, background, max_edits, backend=backend, threads=threads,
                             scheduler=scheduler)
    yield OffTargetStarted(job)
    started = time.perf_counter()
    result = yield from engine.iter_solve(job, cancel)
    sites = offtarget.sites_from_result(primer.text, result)
    return OffTargetReport(candidate, job, tuple(sites), time.perf_counter() - started,
                           result.info.complete)


def edit_backend(backend: str, threads: int | None) -> tuple[str | None, int | None, str]:
    """The edit family's backend for the selected one: (backend or None for its default, threads,
    a note when the selection has no edit counterpart)."""
    from engine import registry

    fam = registry.family("edit")
    offered = {b.name for v in fam.variants for b in v.backends if registry.backend_status(b.name)[0]}
    if backend in offered:
        return backend, (threads if backend == "multicore" else None), ""
    return None, None, f"the edit search has no {backend} backend; it ran on its default"


def three_prime_marks(site) -> str:
    """A line that marks the primer's last THREE_PRIME_WINDOW bases under the alignment."""
    m = sum(ch != "-" for ch in site.primer_line)
    first = m - offtarget.THREE_PRIME_WINDOW
    marks, seen = [], 0
    for ch in site.primer_line:
        marks.append("^" if ch != "-" and seen >= first else " ")
        seen += ch != "-"
    return "".join(marks).rstrip()


def site_alignment(site) -> str:
    """The site's alignment in primer orientation, with the 3′ window marked."""
    strand = "forward" if site.strand == "+" else "reverse"
    s3 = "" if site.edits_3prime == 1 else "s"
    return "\n".join([
        f"{short_id(site.record_id)} {site.start:,}–{site.end:,} ({strand} strand): {site.edits} "
        f"edit{'' if site.edits == 1 else 's'}, {site.edits_3prime} edit{s3} in the last "
        f"{offtarget.THREE_PRIME_WINDOW} bases at the 3′ end",
        f"primer 5′ {site.primer_line} 3′",
        f"          {site.bars}",
        f"site   5′ {site.site_line} 3′",
        f"          {three_prime_marks(site)} 3′ end",
    ])
