"""Assembly gaps: long runs of N that match nothing (issue #28).

A run of at least ``gap_min`` N (code 15) in a background, a text or a template is an
assembly gap, not a wildcard. Its bases become :data:`GAP_CODE`, the empty base set: it
intersects nothing, so every kernel's "sets intersect" test (``a & b``) already counts it as
one edit against any base, with no kernel change. Without this, a 100-N scaffold gap matches
every primer of up to 100 nt with 0 edits. Shorter N runs and the other IUPAC codes keep the
set rule, and positions never move: a gap keeps its place and length.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.sequences import Record

#: Default length from which a run of N is an assembly gap (``--gap-min``).
GAP_MIN = 10

#: A gap base: the empty base set, which matches nothing.
GAP_CODE = 0

#: The IUPAC code of N.
N_CODE = 15

#: A short N run this long or longer can hide candidates (a primer fits in it); the summary
#: warns about such runs (the shortest primer that design proposes by default).
PRIMER_LEN = 18

#: Bases read at a time when a record's codes are read in pieces (a genome store).
_BLOCK = 1 << 24


def check_gap_min(gap_min: int) -> int:
    """``gap_min`` as an int >= 1 (ValueError otherwise: 0 would make every base a gap)."""
    if isinstance(gap_min, bool) or int(gap_min) != gap_min or gap_min < 1:
        raise ValueError(f"gap_min must be an integer >= 1, got {gap_min!r}")
    return int(gap_min)


def n_runs(codes: np.ndarray, min_len: int = 1,
           code: int = N_CODE) -> tuple[np.ndarray, np.ndarray]:
    """(starts, ends) of the runs of N (or of ``code``: :data:`GAP_CODE` finds the gaps of a
    masked record) in ``codes`` at least ``min_len`` long: 0-based, half-open int64 arrays
    in order.

    >>> from engine.sequences import encode
    >>> [a.tolist() for a in n_runs(encode("ANNNCGNNA"), 2)]
    [[1, 6], [4, 8]]
    """
    is_n = np.asarray(codes) == code
    if not is_n.any():
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty.copy()
    edges = np.flatnonzero(np.diff(is_n.view(np.int8), prepend=0, append=0))
    starts, ends = edges[0::2].astype(np.int64), edges[1::2].astype(np.int64)
    keep = ends - starts >= min_len
    return starts[keep], ends[keep]


def mask_gaps(codes: np.ndarray, gap_min: int = GAP_MIN) -> np.ndarray:
    """``codes`` with every N run of at least ``gap_min`` set to :data:`GAP_CODE` (a copy if
    there is one, else ``codes`` itself)."""
    starts, ends = n_runs(codes, gap_min)
    if starts.size == 0:
        return codes
    out = np.array(codes, dtype=np.uint8, copy=True)
    cover = np.zeros(out.shape[0] + 1, dtype=np.int32)  # +1 at a start, -1 at an end
    np.add.at(cover, starts, 1)
    np.add.at(cover, ends, -1)
    out[np.cumsum(cover[:-1]) > 0] = GAP_CODE
    return out


def as_background(records, gap_min: int = GAP_MIN) -> list[Record]:
    """The records with their assembly gaps masked (:func:`mask_gaps`): same ids, offsets,
    descriptions and sources; a record without a gap is returned as it is.

    A record with a ``with_gap_min(gap_min)`` method (a genome store's record) gives its own
    masked view, which the store reads from its gap table instead of scanning the codes.
    """
    gap_min = check_gap_min(gap_min)
    out = []
    for record in records:
        view = getattr(record, "with_gap_min", None)
        if view is not None:
            out.append(view(gap_min))
            continue
        masked = mask_gaps(record.codes, gap_min)
        out.append(record if masked is record.codes else
                   Record(record.id, masked, record.description, record.source, record.offset))
    return out


def record_runs(record, min_len: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """:func:`n_runs` of a record. One that offers ``n_runs(min_len)`` (a store's N table)
    answers itself; other records are read in blocks of a few Mb, a run carried across block
    edges, so a genome store is never unpacked whole."""
    own = getattr(record, "n_runs", None)
    if callable(own):
        return own(min_len)
    size = len(record)
    if size <= _BLOCK:
        return n_runs(record.chunk(0, size), min_len)
    starts, ends = [], []
    open_start = -1  # the start of a run that reaches the end of the block before
    for lo in range(0, size, _BLOCK):
        hi = min(lo + _BLOCK, size)
        s, e = n_runs(record.chunk(lo, hi), 1)
        s, e = s + lo, e + lo
        if open_start >= 0:
            if s.size and s[0] == lo:
                s[0] = open_start
            else:
                starts.append(np.array([open_start])), ends.append(np.array([lo]))
            open_start = -1
        if e.size and e[-1] == hi and hi < size:
            open_start = int(s[-1])
            s, e = s[:-1], e[:-1]
        starts.append(s), ends.append(e)
    s, e = np.concatenate(starts).astype(np.int64), np.concatenate(ends).astype(np.int64)
    keep = e - s >= min_len
    return s[keep], e[keep]


def _ambiguous(record) -> int:
    """How many bases of a record are not A, C, G or T (any IUPAC ambiguity code, N included)."""
    plain = np.zeros(256, dtype=bool)
    plain[[1, 2, 4, 8]] = True
    size, count = len(record), 0
    for lo in range(0, size, _BLOCK):
        count += int((~plain[record.chunk(lo, min(lo + _BLOCK, size))]).sum())
    return count


@dataclass(frozen=True)
class GapSummary:
    """What a background holds besides A, C, G and T (the summary line's figures)."""

    gap_min: int
    gaps: int            # N runs of at least gap_min
    gap_bases: int       # the bases in them
    short_runs: int      # N runs shorter than gap_min but at least primer_len long
    primer_len: int
    ambiguous: int       # other IUPAC ambiguity codes (shorter N runs included), set rule

    def line(self) -> str:
        """'background: G gaps (B bases, >= M N), A ambiguity codes'."""
        return (f"background: {self.gaps:,} gap{'s' * (self.gaps != 1)} "
                f"({self.gap_bases:,} bases, runs of >= {self.gap_min:,} N), "
                f"{self.ambiguous:,} ambiguity code{'s' * (self.ambiguous != 1)}")

    def warning(self) -> str | None:
        """One line when N runs shorter than gap_min can hold a whole primer, else None: such a
        run matches any primer that fits in it and so can hide candidates."""
        if not self.short_runs:
            return None
        return (f"{self.short_runs:,} N run{'s' * (self.short_runs != 1)} of "
                f"{self.primer_len}-{self.gap_min - 1} bases in the background match any primer "
                f"that fits (shorter than --gap-min {self.gap_min}) and can hide candidates")


def summarize(records, gap_min: int = GAP_MIN, primer_len: int = PRIMER_LEN) -> GapSummary:
    """The :class:`GapSummary` of unmasked records (as loaded)."""
    gap_min = check_gap_min(gap_min)
    gaps = gap_bases = short = ambiguous = 0
    for record in records:
        starts, ends = record_runs(record, 1)
        lengths = ends - starts
        long_runs = lengths >= gap_min
        gaps += int(long_runs.sum())
        gap_bases += int(lengths[long_runs].sum())
        short += int(((lengths >= primer_len) & ~long_runs).sum())
        ambiguous += _ambiguous(record)
    return GapSummary(gap_min, gaps, gap_bases, short, primer_len, ambiguous - gap_bases)


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
