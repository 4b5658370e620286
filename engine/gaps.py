"""Assembly gaps: long runs of N that match nothing (issue #28).

A run of at least ``gap_min`` N (code 15) in a background, a text or a template is an
assembly gap, not a wildcard. Its bases become :data:`GAP_CODE`, the empty base set: it
intersects nothing, so every kernel's "sets intersect" test (``a & b``) already counts it as
one edit against any base, with no kernel change. Without this, a 100-N scaffold gap matches
every primer of up to 100 nt with 0 edits. Shorter N runs and the other IUPAC codes keep the
set rule, and positions never move: a gap keeps its place and length.
"""

from __future__ import annotations

import dataclasses
import weakref
from dataclasses import dataclass

import numpy as np

from engine.registry import ParamSpec
from engine.sequences import Record

#: Default length from which a run of N is an assembly gap (``--gap-min``).
GAP_MIN = 10

#: ``--gap-min`` and the GUI's setting, one parameter of every family with a background or text.
#: Unset (None) it is the genome store's own (``index --gap-min``), else GAP_MIN: a store's
#: recorded value is a property of that genome, which a fixed default used to override.
GAP_MIN_PARAM = ParamSpec(
    "gap_min", "Gap (N run) from", "int", None,
    "a run of at least this many N in a background or text is an assembly gap that matches "
    f"nothing (shorter N runs match any base; default: a genome store's own, else {GAP_MIN})",
    minimum=1, maximum=1_000_000_000, metavar="N", optional=True,
    auto=f"store's, else {GAP_MIN}")

#: A gap base: the empty base set, which matches nothing.
GAP_CODE = 0

#: The IUPAC code of N.
N_CODE = 15

#: A short N run this long or longer can hide candidates (a primer fits in it); the summary
#: warns about such runs (the shortest primer that design proposes by default).
PRIMER_LEN = 18

#: Bases read at a time when a record's codes are read in pieces (a genome store).
_BLOCK = 1 << 24


def _runs(hit: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(starts, ends) of the runs of True in a bool array, with a byte a base of scratch (not a
    ``np.diff`` with a prepended 0 computed in int64: 16 bytes a base, 1.6 GB for a 98.8 MB
    text with an N run)."""
    if not hit.any():
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty.copy()
    edges = np.flatnonzero(hit[1:] != hit[:-1]) + 1  # where a run starts or ends, inside
    edges = np.concatenate((np.zeros(int(hit[0]), dtype=np.int64), edges,
                            np.full(int(hit[-1]), hit.shape[0], dtype=np.int64)))
    return edges[0::2].astype(np.int64), edges[1::2].astype(np.int64)


def n_runs(codes: np.ndarray, min_len: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """(starts, ends) of the runs of N in ``codes`` at least ``min_len`` long: 0-based,
    half-open int64 arrays in order.

    >>> from engine.sequences import encode
    >>> [a.tolist() for a in n_runs(encode("ANNNCGNNA"), 2)]
    [[1, 6], [4, 8]]
    """
    starts, ends = _runs(np.asarray(codes) == N_CODE)
    keep = ends - starts >= min_len
    return starts[keep], ends[keep]


def mask_gaps(codes: np.ndarray, gap_min: int = GAP_MIN) -> np.ndarray:
    """``codes`` with every N run of at least ``gap_min`` set to :data:`GAP_CODE` (a copy if
    there is one, else ``codes`` itself)."""
    starts, ends = n_runs(codes, gap_min)
    if starts.size == 0:
        return codes
    out = np.array(codes, dtype=np.uint8, copy=True)
    for start, end in zip(starts.tolist(), ends.tolist()):  # (few runs: no genome-sized index)
        out[start:end] = GAP_CODE
    return out


def resolve_gap_min(records, gap_min: int | None = None) -> int:
    """``gap_min`` checked when given (by GAP_MIN_PARAM, the rule of the command line, the
    GUI and the families' make_job: the primer layer's callers get the same message);
    unset (None), the ``gap_min`` a genome store recorded when built (``index --gap-min``)
    if ``records`` come from one, else :data:`GAP_MIN`."""
    if gap_min is not None:
        return GAP_MIN_PARAM.check(gap_min)
    for record in records:
        recorded = getattr(getattr(record, "store", None), "gap_min", None)
        if recorded is not None:
            return int(recorded)
    return GAP_MIN


def as_background(records, gap_min: int | None = None) -> list[Record]:
    """The records with their assembly gaps masked (:func:`mask_gaps`): same ids, offsets,
    descriptions and sources; a record without a gap is returned as it is.

    A record with a ``with_gap_min(gap_min)`` method (a genome store's record) gives its own
    masked view, which the store reads from its gap table instead of scanning the codes.
    """
    records = list(records)
    gap_min = resolve_gap_min(records, gap_min)
    out = []
    for record in records:
        view = getattr(record, "with_gap_min", None)
        out.append(_masked_record(record, gap_min) if view is None else view(gap_min))
    return out


#: (id(record), gap_min) -> (weakref to the record, its masked copy or None: no gap). Solving
#: the same in-memory background again (the GUI's, a notebook's, a benchmark's repeated runs)
#: then skips the scan for N runs, a pass over the whole text, and gets the same masked record
#: back, so that the GPU's caches of packed and uploaded texts (kept by record identity,
#: engine.gpu.TextCache) find it again instead of packing and uploading it each run.
_MASKED: dict = {}

#: (id(record), code) -> (weakref to the record, (starts, ends) of its runs of code): what
#: :func:`record_runs` found by a pass over a record without a table of its own, kept while the
#: record lives, so that solving it again does not scan it again (issue #29: kmismatch looked
#: for the gap bases of its 98.8 MB T3x20 text at every solve, 20 ms of a 24 ms resident run).
_RUNS: dict = {}


def _per_record(cache: dict, record, key, make):
    """``make()``, kept in ``cache`` for (``record``, ``key``) while the record lives (records
    are values: their codes never change); a record that is not weakly referenceable is not
    kept."""
    full = (id(record), key)
    entry = cache.get(full)
    if entry is not None and entry[0]() is record:
        return entry[1]
    value = make()

    def forget(ref, full=full):  # (only its own entry: the id may belong to another by now)
        if cache.get(full, (None,))[0] is ref:
            cache.pop(full, None)

    try:
        ref = weakref.ref(record, forget)
    except TypeError:
        return value
    cache[full] = (ref, value)
    return value


def _masked_record(record: Record, gap_min: int) -> Record:
    """``record`` with its gaps masked (:func:`mask_gaps`), once per record and gap_min while
    the record lives (its codes are not changed in place: records are values)."""
    def make():
        masked = mask_gaps(record.codes, gap_min)
        # (replace: the record's other fields, its soft mask included, stay)
        return None if masked is record.codes else dataclasses.replace(record, codes=masked)

    out = _per_record(_MASKED, record, gap_min, make)
    return record if out is None else out


def record_runs(record, code: int = N_CODE) -> tuple[np.ndarray, np.ndarray]:
    """(starts, ends) of the runs of ``code`` in a record (read-only arrays), read in blocks
    of a few Mb (a run carried across block edges), so that a genome store is never unpacked
    whole. A genome store's record answers from its tables instead (``n_runs()``,
    ``gap_runs()``: no scan); any other record is scanned once while it lives (the same
    record solved again, the GUI's background or a benchmark's text, is not read again)."""
    own = getattr(record, {N_CODE: "n_runs", GAP_CODE: "gap_runs"}.get(code, ""), None)
    if callable(own):
        return own()
    return _per_record(_RUNS, record, code, lambda: _scan_runs(record, code))


def _scan_runs(record, code: int) -> tuple[np.ndarray, np.ndarray]:
    """:func:`record_runs` by a pass over the record's codes, a block at a time: a run that
    crosses a block's edge is found as two, which touch, and joined."""
    size = len(record)
    starts, ends = [np.zeros(0, dtype=np.int64)], [np.zeros(0, dtype=np.int64)]
    for lo in range(0, size, _BLOCK):
        s, e = _runs(record.chunk(lo, min(lo + _BLOCK, size)) == code)
        starts.append(s + lo), ends.append(e + lo)
    starts, ends = np.concatenate(starts), np.concatenate(ends)
    cut = np.flatnonzero(starts[1:] == ends[:-1])  # (runs inside a block never touch)
    out = (np.delete(starts, cut + 1), np.delete(ends, cut))
    for array in out:  # (kept and shared: nobody may change them)
        array.flags.writeable = False
    return out


def _ambiguous(record) -> int:
    """How many bases of a record are IUPAC ambiguity codes (not A, C, G, T nor a gap). A
    genome store's record counts its packed codes itself (``ambiguous_bases()``)."""
    own = getattr(record, "ambiguous_bases", None)
    if callable(own):
        return own()
    plain = np.zeros(256, dtype=bool)
    plain[[GAP_CODE, 1, 2, 4, 8]] = True
    size, count = len(record), 0
    for lo in range(0, size, _BLOCK):
        count += int((~plain[record.chunk(lo, min(lo + _BLOCK, size))]).sum())
    return count



def counted(n: int, noun: str) -> str:
    """'1 gap', '3 gaps', '1,629 gaps': a count and its noun, for the summary lines."""
    return f"{n:,} {noun}{'s' * (n != 1)}"

@dataclass(frozen=True)
class GapSummary:
    """What a background holds besides A, C, G and T (the summary line's figures)."""

    gap_min: int
    gaps: int            # N runs of at least gap_min
    gap_bases: int       # the bases in them
    short_runs: int      # N runs shorter than gap_min but at least primer_len long
    primer_len: int
    ambiguous: int       # other IUPAC ambiguity codes (shorter N runs included): set rule

    def line(self) -> str:
        """'G gaps (B bases, runs of >= M N), A ambiguity codes'."""
        return (f"{counted(self.gaps, 'gap')} "
                f"({self.gap_bases:,} bases, runs of >= {self.gap_min:,} N), "
                f"{counted(self.ambiguous, 'ambiguity code')}")

    def warning(self) -> str | None:
        """One line when N runs shorter than gap_min can hold a whole primer, else None: such a
        run matches any primer that fits in it and so can hide candidates."""
        if not self.short_runs:
            return None
        return (f"{counted(self.short_runs, 'N run')} of "
                f"{self.primer_len}-{self.gap_min - 1} bases (shorter than --gap-min "
                f"{self.gap_min}) match{'es' * (self.short_runs == 1)} any primer that fits and can hide "
                "candidates")


def summarize(masked, gap_min: int = GAP_MIN, primer_len: int = PRIMER_LEN) -> GapSummary:
    """The :class:`GapSummary` of records masked by :func:`as_background` with ``gap_min``
    (what a family holds)."""
    gaps = gap_bases = short = ambiguous = 0
    for record in masked:
        starts, ends = record_runs(record, GAP_CODE)
        gaps += int(starts.size)
        gap_bases += int((ends - starts).sum())
        starts, ends = record_runs(record, N_CODE)
        short += int((ends - starts >= primer_len).sum())
        ambiguous += _ambiguous(record)
    return GapSummary(gap_min, gaps, gap_bases, short, primer_len, ambiguous)


def split_at_gaps(records, gap_min: int = GAP_MIN) -> list[Record]:
    """Each record cut into the pieces between its assembly gaps (the gaps dropped), every
    piece keeping its id and its place (``offset``). With a gap matching nothing, a search of
    the gapped records and one of these pieces as separate records give the same answer for
    matches shorter than a gap plus the edits allowed: what the tests check each family with."""
    out = []
    for record in records:
        starts, ends = n_runs(record.codes, gap_min)
        bounds = np.concatenate(([0], ends)), np.concatenate((starts, [len(record)]))
        for lo, hi in zip(*(b.tolist() for b in bounds)):
            if hi > lo:
                out.append(Record(record.id, record.codes[lo:hi].copy(), record.description,
                                  record.source, record.offset + lo))
    return out


def gap_runs(codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(starts, ends) of the gap stretches (:data:`GAP_CODE` runs) of masked codes."""
    return _runs(np.asarray(codes) == GAP_CODE)


def touches_gap(gaps: tuple[np.ndarray, np.ndarray], starts, ends) -> np.ndarray:
    """Per window [starts[i], ends[i]) (0-based, half-open): whether it holds a base of one
    of the sorted ``gaps`` (:func:`gap_runs`, :func:`text_gaps`). A hit or candidate that does
    would not exist with the gap as a record break, so families drop it."""
    gap_lo, gap_hi = gaps
    starts, ends = np.asarray(starts, dtype=np.int64), np.asarray(ends, dtype=np.int64)
    if gap_lo.size == 0:
        return np.zeros(starts.shape[0], dtype=bool)
    first = np.searchsorted(gap_hi, starts, side="right")  # the first gap ending after a start
    found = first < gap_lo.size
    return found & (gap_lo[np.minimum(first, gap_lo.size - 1)] < ends)


def text_gaps(records) -> tuple[np.ndarray, np.ndarray]:
    """The gap stretches of masked records laid end to end (concat_with_offsets' numbering)."""
    starts, ends, at = [np.zeros(0, dtype=np.int64)], [np.zeros(0, dtype=np.int64)], 0
    for record in records:
        lo, hi = record_runs(record, GAP_CODE)
        starts.append(lo + at), ends.append(hi + at)
        at += len(record)
    return np.concatenate(starts), np.concatenate(ends)
