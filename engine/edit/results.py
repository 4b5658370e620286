"""Result types of the edit family (frozen; shared by the API, the CLI and the app)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from engine.jobs import RunInfo


@dataclass(frozen=True)
class Hit:
    """An occurrence of a pattern in a text record.

    Attributes
    ----------
    start, end : int
        1-based, inclusive, on the forward text. ``start`` is the smallest one
        that realises ``distance``.
    strand : {"+", "-"}
        ``-``: the pattern's reverse complement occurs here.
    distance : int
        Edits between the pattern (on ``strand``) and text[start..end].
    cigar : str
        ``=`` match, ``X`` mismatch, ``I`` pattern symbol with no text symbol,
        ``D`` text symbol with no pattern symbol, along the forward text.
    matched : str
        The text as read on the hit's strand.

    ``start``, ``cigar`` and ``matched`` are None when alignments were not
    asked for, or when a cancel came first.
    """

    pattern_id: str
    record_id: str
    strand: str
    start: int | None
    end: int
    distance: int
    cigar: str | None = None
    matched: str | None = None


@dataclass(frozen=True)
class PairDistance:
    """Global edit distance of a pattern to a text record.

    ``distance`` is None when it is above k; ``cigar`` is set when alignments
    were asked for (``align=True``).
    """

    pattern_id: str
    record_id: str
    distance: int | None
    cigar: str | None = None


@dataclass(frozen=True)
class ScoreProfile:
    """The best distance along a text record for one pattern on one strand (search mode).

    Attributes
    ----------
    pattern_id, record_id, strand
        Which search this is (``strand`` ``-``: the reverse complement, at its
        ends on the forward text).
    bin_width : int
        Ends per bin: bin i covers the 1-based ends ``1 + i * bin_width`` to
        ``(i + 1) * bin_width`` (the last bin may be shorter).
    length : int
        Length of the record.
    cap : int
        k + 1, or m + 1 when no k was given (no distance reaches it then).
    values : numpy.ndarray of int32
        Per bin, the smallest C[m,j] over its ends j, capped at ``cap`` (so
        ``cap`` means "more than k edits everywhere in this bin"); -1 for a bin
        not scanned before a cancel. At most about 4096 bins.
    """

    pattern_id: str
    record_id: str
    strand: str
    bin_width: int
    length: int
    cap: int
    values: np.ndarray = field(compare=False, repr=False)


@dataclass(frozen=True)
class EditResult:
    """What an edit job found.

    ``hits`` (search) or ``distances`` (global, one per pair in pattern then
    record order). ``best`` is the smallest distance among them, None when
    nothing is within k. ``info.complete`` is False after a cancel.
    ``profiles`` (search with ``profile=True``): one :class:`ScoreProfile` per
    pattern, record and strand, in that order; :meth:`profile` finds one.
    """

    info: RunInfo
    mode: str
    k: int | None
    strands: str
    pairing: str
    report: str | None
    hits: tuple[Hit, ...] = ()
    distances: tuple[PairDistance, ...] = ()
    best: int | None = None
    profiles: tuple[ScoreProfile, ...] = ()

    def profile(self, pattern_id: str, record_id: str, strand: str = "+") -> ScoreProfile | None:
        """The score profile of one pattern on one strand along one record, or None."""
        for prof in self.profiles:
            if (prof.pattern_id, prof.record_id, prof.strand) == (pattern_id, record_id, strand):
                return prof
        return None
