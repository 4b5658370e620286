"""A numpy brute-force oracle for kmismatch, independent of the engine's code."""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

# Complement of a 4-bit base set: A<->T (bits 0,3), C<->G (bits 1,2).
_COMP = np.array([((c & 1) << 3) | ((c & 8) >> 3) | ((c & 2) << 1) | ((c & 4) >> 1)
                  for c in range(16)], dtype=np.uint8)


def numpy_hits(texts, patterns, k, strands="both"):
    """(record, 0-based start, pattern, strand, mismatches) tuples, sorted."""
    rows = []
    for ri, text in enumerate(texts):
        text = np.asarray(text, dtype=np.uint8)
        for pi, pattern in enumerate(patterns):
            pattern = np.asarray(pattern, dtype=np.uint8)
            m = len(pattern)
            if m > len(text):
                continue
            windows = sliding_window_view(text, m)
            queries = [pattern] if strands == "forward" else [pattern, _COMP[pattern[::-1]]]
            for si, query in enumerate(queries):
                d = ((windows & query[None, :]) == 0).sum(axis=1)
                for j in np.flatnonzero(d <= k).tolist():
                    rows.append((ri, j, pi, si, int(d[j])))
    rows.sort()
    return rows


def engine_rows(result):
    """The same tuples from a KmismatchResult."""
    h = result.hits
    return list(zip(h.record.tolist(), h.start0.tolist(), h.pattern.tolist(), h.strand.tolist(),
                    h.mismatches.tolist()))
