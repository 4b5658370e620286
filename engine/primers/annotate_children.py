"""Primer3 annotations of many candidates in child processes (issue #33).

primer3-py (2.4.0) holds Python's lock for the whole of each call, so annotating a million
candidates on a worker thread of a window's process made the window's thread wait for it at
every turn: a k slider move of the uniqueness landscape took 40-114 ms instead of 45 while
the annotation ran (minutes). Here every Primer3 call runs in child processes kept for all
the batches (:class:`engine.primers.children.ChildPool`: spawned, polled every
``CHILD_POLL_S``, ended on a cancel), one a core but the caller's (:func:`children`):
Primer3 takes about 0.6 ms a sequence, ten minutes for a million on one core.

The caller's process only reads the candidates' sequences (:data:`ROWS` rows a step),
keeps the distinct ones and hands them over :data:`BATCH` at a time to each child; each
batch comes back as columns (numbers, a None mask, the few notes), which unpickle in well
under a millisecond, and become :class:`~engine.primers.Annotation` objects in Python
(:func:`annotations_from`).
"""

from __future__ import annotations

import io
import os
from dataclasses import fields
from typing import Generator

import numpy as np

from engine.jobs import CancelToken, drive
from engine.primers import export_kdiff
from engine.primers.annotate import Annotation, Conditions, annotate_many
from engine.primers.children import ChildPool
from engine.primers.filters import select_candidates

#: Distinct sequences a batch holds: about 6 s of Primer3 (0.6 ms a sequence on one core);
#: the caller hears of progress (and its cancel is read) between batches too.
BATCH = 10_000

#: Candidates whose sequences the window's process reads in one go (a few ms of Python).
ROWS = 2_000

#: The fewest sequences worth a child of their own (about a second of Primer3; starting a
#: child costs a fraction of one): fewer go to fewer children.
CHILD_MIN = 2_000

#: Added to the child's nice value (Unix): a background job's. (A worker thread could not be
#: lowered so: preempted while it holds Python's lock, it would hold the window up too.)
NICE = 19

#: The Annotation fields kept as numbers (the note apart), and those that are ints.
NUMBERS = tuple(f.name for f in fields(Annotation) if f.name != "note")
INTS = frozenset({"length", "gc_clamp", "max_run"})


def _background() -> None:
    """(In a child) the lowest priority, :data:`NICE`: where the cores are busy, the
    window's thread goes first. (``os.nice`` adds: raised once, to NICE.)"""
    if hasattr(os, "nice") and os.nice(0) < NICE:
        os.nice(NICE - os.nice(0))


def children() -> int:
    """Child processes annotating at once: every core this process may use but one (the
    caller's process makes the answers' Annotations and, in the window, draws), at least
    one. Tests set it by monkeypatching."""
    from engine.cluster import local_cores

    return max(1, local_cores() - 1)


def _answer(gen: Generator):
    """Drive a child's generator (:mod:`engine.primers.children`) to its value without
    passing on its polls (None every ``CHILD_POLL_S``)."""
    return drive(gen)
    yield  # (never reached: a generator, for ``yield from``)


def annotation_columns(sequences: list[str], conditions: Conditions):
    """(In the child) :func:`engine.primers.annotate_many` of ``sequences`` as columns:
    ``values`` (n x len(NUMBERS) float64), ``none`` (where a field is None) and
    ``{row: note}`` for the rows with a note, at the lowest priority (:func:`_background`)."""
    _background()
    notes = annotate_many(sequences, conditions)
    cells = np.array([[getattr(n, name) for name in NUMBERS] for n in notes],
                     dtype=object).reshape(len(notes), len(NUMBERS))
    none = np.equal(cells, None)
    return (np.where(none, 0, cells).astype(np.float64), none,
            {i: n.note for i, n in enumerate(notes) if n.note})


def annotations_from(columns) -> list[Annotation]:
    """The Annotations of :func:`annotation_columns`' answer, equal to
    :func:`engine.primers.annotate`'s. Made here in Python, which lets the window's thread
    have Python's lock every few ms; unpickling the objects themselves would be one C call
    that holds it throughout (10,000: 55 ms of CPU at load 7; these take about 40)."""
    values, none, notes = columns
    cells = [values[:, j].astype(np.int64).tolist() if name in INTS else values[:, j].tolist()
             for j, name in enumerate(NUMBERS)]
    rows = list(zip(*cells))
    for i in np.flatnonzero(none.any(axis=1)).tolist():
        rows[i] = tuple(None if gone else v for v, gone in zip(rows[i], none[i].tolist()))
    return [Annotation(*row, notes.get(i, "")) for i, row in enumerate(rows)]


def _sequences(candidates, lo: int, hi: int) -> list[str]:
    if hasattr(candidates, "sequences"):  # a CandidateTable: read from the columns
        return candidates.sequences(lo, hi)
    return [c.sequence for c in candidates[lo:hi]]


def annotate_in_children(candidates, conditions: Conditions, cancel: CancelToken,
                         batch: int | None = None, known=(), into: dict | None = None
                         ) -> Generator[float, None, dict | None]:
    """Annotate the distinct sequences of ``candidates`` (Candidates or a CandidateTable),
    ``batch`` (:data:`BATCH`) at a time a child, in :func:`children` child processes kept for
    them all. Sequences in ``known`` (annotated already under these conditions: another k of
    a landscape) are left out.

    Yields the fraction done when it changes (each round of batches; the share of distinct
    sequences among the rows not read yet is estimated from those read); returns
    ``{sequence: Annotation}`` of the sequences it annotated, or None when cancelled (a
    partial set would make the filter drop candidates it never saw): the children then
    working are ended. ``into``, when given, receives each round as it is done, so that a
    cancelled run's finished rounds are not lost (the caller reads it once this generator
    ended).
    """
    batch = batch or BATCH
    table: dict[str, Annotation] = {} if into is None else into
    workers, queued = children(), {}
    n, read, shown = len(candidates), 0, None
    pool = ChildPool(name="primerscope-annotate")
    try:
        # Rounds of up to ``workers`` batches, one a child, the sequences of a round shared
        # out evenly (a child for every CHILD_MIN of them at least).
        while read < n or queued:
            if cancel.cancelled:
                return None
            if read < n and len(queued) < batch * workers:
                hi = min(n, read + ROWS)
                for seq in _sequences(candidates, read, hi):
                    if seq not in table and seq not in queued and seq not in known:
                        queued[seq] = None
                read = hi
                continue
            todo = list(queued)[:batch * workers]
            for seq in todo:
                del queued[seq]
            parts = max(1, min(workers, len(todo) // CHILD_MIN),
                        -(-len(todo) // batch))  # <= workers
            chunks = [todo[i::parts] for i in range(parts)]
            answer = yield from _answer(pool.run(
                [(w, annotation_columns, (chunk, conditions)) for w, chunk in enumerate(chunks)],
                cancel, lambda: None))
            if answer is None:  # cancelled: the pool has ended the children
                return None
            for chunk, columns in zip(chunks, answer):
                table.update(zip(chunk, annotations_from(columns)))
            distinct = len(table) + len(queued)
            ahead = (n - read) * distinct / read if read else 0
            fraction = round(len(table) / (distinct + ahead), 3)
            if fraction != shown:
                shown = fraction
                yield fraction
        return table
    finally:
        pool.close()


def annotated_csv(result, conditions: Conditions, filters, cancel: CancelToken,
                  known=None) -> Generator:
    """What ``primerscope kdiff ... --annotate [--filter]`` writes
    (:func:`engine.primers.export_kdiff.csv_text`). The annotations ``known`` (``{sequence:
    Annotation}`` under these conditions: the window's) lacks are made first, each distinct
    sequence once, in child processes (:func:`annotate_in_children`); the text is then
    written :data:`WRITE_ROWS` rows a step (seconds for a million candidates, which Primer3
    takes minutes to annotate). Yields the fraction done (the annotations up to
    :data:`ANNOTATING_SHARE` of it); returns the text, None after a cancel."""
    rows = list(result.candidates)  # (made once: the writer's)
    known = known or {}
    made = yield from _scaled(annotate_in_children(rows, conditions, cancel, known=known),
                              0.0, ANNOTATING_SHARE)
    if made is None:
        return None
    if made:
        known = {**known, **made}
    return (yield from _scaled(_csv_from(rows, conditions, filters, known, cancel),
                               ANNOTATING_SHARE, 1.0))


#: The share of :func:`annotated_csv`'s progress that its missing annotations take.
ANNOTATING_SHARE = 0.9


def _scaled(gen: Generator, lo: float, hi: float) -> Generator:
    """``gen``'s fractions mapped onto lo..hi (one phase of a progress bar); its value."""
    try:
        while True:
            yield lo + (hi - lo) * next(gen)
    except StopIteration as stop:
        return stop.value


#: Rows of an annotated CSV written from known annotations in one step (:func:`annotated_csv`).
WRITE_ROWS = 20_000


def _csv_from(candidates, conditions, filters, known, cancel) -> Generator:
    """:func:`annotated_csv` from annotations at hand: the kdiff writer's rows, a block a
    step (the fraction written between them, a cancel read)."""
    cands, notes = select_candidates(candidates, annotate=True, conditions=conditions,
                                     filters=filters, known=known)
    buf = io.StringIO(newline="")
    for lo in range(0, max(1, len(cands)), WRITE_ROWS):
        if cancel.cancelled:
            return None
        hi = lo + WRITE_ROWS
        export_kdiff.write_candidates_csv(cands[lo:hi], buf, notes[lo:hi], header=lo == 0)
        yield min(1.0, hi / max(1, len(cands)))
    return buf.getvalue()
