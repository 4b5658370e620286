"""Helpers the adapters share: demo patterns cut from demo records, hit columns and tables."""

from __future__ import annotations

import numpy as np

from engine.sequences import Record


def windows(record: Record, starts, length: int, label: str | None = None) -> tuple[Record, ...]:
    """Records cut from ``record`` at 1-based ``starts`` (named ``label:start-end``)."""
    label = label or record.id
    out = []
    for start in starts:
        end = min(len(record), start + length - 1)
        out.append(Record(f"{label}:{start}-{end}", record.codes[start - 1:end].copy(),
                          f"{label} positions {start}-{end}", "demo"))
    return tuple(out)


def spaced(length: int, count: int, width: int, first: int = 1) -> list[int]:
    """``count`` 1-based starts spread evenly over a sequence of ``length``."""
    last = max(first, length - width + 1)
    return sorted({int(x) for x in np.linspace(first, last, count)})


def best_table(pattern: np.ndarray, record: np.ndarray, score: np.ndarray, n_patterns: int,
               n_records: int) -> np.ndarray:
    """Smallest score of each (pattern, record); -1 where there is no hit."""
    big = np.iinfo(np.int64).max
    table = np.full((n_patterns, n_records), big, dtype=np.int64)
    if score.size:
        np.minimum.at(table, (pattern.astype(np.int64), record.astype(np.int64)), score.astype(np.int64))
    table[table == big] = -1
    return table


def candidate_entry(c, k: int | None, background: str):
    """A kdiff candidate as a forward primer on its target."""
    from engine.primers.library import LibraryEntry

    return LibraryEntry(f"{_short(c.target_id)}:{c.start}-{c.end}", c.sequence, "forward",
                        c.target_id, c.start, c.end, k, background)


def pattern_entries(items, patterns) -> list:
    """The patterns (primers) of search hits, each once, in the order of the rows."""
    from engine.primers.library import LibraryEntry

    codes = {p.id: p for p in patterns}
    out, seen = [], set()
    for h in items:
        if h.pattern_id in seen or h.pattern_id not in codes:
            continue
        seen.add(h.pattern_id)
        out.append(LibraryEntry(_short(h.pattern_id), codes[h.pattern_id].text))
    return out


def span_entry(record, positions) -> list:
    """The stretch of ``record`` that rows at these positions (its own numbering) span."""
    from engine.primers.library import LibraryEntry

    positions = [p for p in positions if isinstance(p, int)]
    if not positions:
        return []
    start, end = min(positions), max(positions)
    text = record.codes[start - 1 - record.offset:end - record.offset]
    from engine.sequences import decode

    return [LibraryEntry(f"{_short(record.id)}:{start}-{end}", decode(text), "forward", record.id,
                         start, end)]


def _short(record_id: str) -> str:
    from app.primers import short_id

    return short_id(record_id)
