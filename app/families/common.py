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
