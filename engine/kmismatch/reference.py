"""Slow, obvious oracle for kmismatch. Used by tests only.

Every window of every record is compared with every pattern (and, with both
strands, its reverse complement) symbol by symbol; no early exits, no tables.
"""

from __future__ import annotations

import numpy as np

from engine.sequences import reverse_complement


def hamming(pattern, window) -> int:
    """Mismatches between two equal-length encoded strings (a match: the base sets intersect)."""
    return sum(1 for a, b in zip(pattern, window) if (int(a) & int(b)) == 0)


def kmismatch_reference(texts: list[np.ndarray], patterns: list[np.ndarray], k: int,
                        strands: str = "both") -> list[tuple[int, int, int, int, int]]:
    """All hits as (record index, 0-based start, pattern index, strand 0 '+' / 1 '-', mismatches).

    Sorted by record, start, pattern, strand, as the CSV is.
    """
    hits = []
    for p_index, pattern in enumerate(patterns):
        m = len(pattern)
        oriented = [pattern] if strands == "forward" else [pattern, reverse_complement(pattern)]
        for r_index, text in enumerate(texts):
            for start in range(len(text) - m + 1):
                window = text[start:start + m]
                for strand, query in enumerate(oriented):
                    d = hamming(query, window)
                    if d <= k:
                        hits.append((r_index, start, p_index, strand, d))
    hits.sort()
    return hits
