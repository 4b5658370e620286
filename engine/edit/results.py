"""Result types of the edit family (frozen; shared by the API, the CLI and the app)."""

from __future__ import annotations

from dataclasses import dataclass

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
class EditResult:
    """What an edit job found.

    ``hits`` (search) or ``distances`` (global, one per pair in pattern then
    record order). ``best`` is the smallest distance among them, None when
    nothing is within k. ``info.complete`` is False after a cancel.
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
