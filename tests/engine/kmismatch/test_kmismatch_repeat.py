"""Solving the same in-memory text again does no pass over it on the host (issue #29).

The GUI's background, a notebook's text and the T3x20 benchmark's "resident" row solve one
Record again and again; on cuda the packed text then stays on the GPU, and the host's work
must not grow with the text: T3x20 (98.8 MB) read 24 ms end to end for a 3 ms solve while
every solve scanned the whole text for assembly-gap bases (engine.gaps.record_runs, through
``Record.chunk``) to drop the hits over them. What a solve reads of a record's codes through
``Record.chunk`` (the accessor a record is read through a piece at a time) and what it
allocates on the host (tracemalloc: a numpy pass over the text makes an array of its size)
are what these tests count.
"""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

from engine import config, kmismatch
from engine.sequences import Record

#: Bases of the text: large beside every other allocation of a solve of few hits.
N = 1 << 21


def _workload():
    """Two 12-mers planted in random DNA of N bases, twice each, one copy across a 40-N
    assembly gap (its hits are dropped as found), the other clear of it."""
    rng = np.random.default_rng(29)
    codes = rng.choice(np.array([1, 2, 4, 8], dtype=np.uint8), N)
    pats = [rng.choice(np.array([1, 2, 4, 8], dtype=np.uint8), 12) for _ in range(2)]
    for i, p in enumerate(pats):
        codes[1000 + 5000 * i:1012 + 5000 * i] = p
        codes[N // 2 + 5000 * i:N // 2 + 12 + 5000 * i] = p
    codes[N // 2 + 6:N // 2 + 46] = 15  # a gap over the first pattern's second copy
    return [Record(f"p{i}", p) for i, p in enumerate(pats)], [Record("chr", codes)]


@pytest.fixture()
def chunk_reads(monkeypatch):
    """Bases read through Record.chunk (every in-memory record's)."""
    read = [0]
    real = Record.chunk

    def chunk(self, start, end):
        out = real(self, start, end)
        read[0] += int(out.shape[0])
        return out

    monkeypatch.setattr(Record, "chunk", chunk)
    return read


def _same(a, b):
    assert list(a.hits.tuples()) == list(b.hits.tuples())
    assert a.pattern_hits.tolist() == b.pattern_hits.tolist()
    assert [d.counts.tolist() for d in a.density] == [d.counts.tolist() for d in b.density]


@pytest.mark.parametrize("backend", ["serial", "multicore"])
def test_a_repeated_cpu_solve_makes_no_pass_over_the_text(backend, chunk_reads, monkeypatch):
    """The second solve of the same text reads none of it through Record.chunk and allocates
    less than half a byte a base on the host (a numpy pass over the text, a comparison, a mask
    or a copy, makes an array of a byte a base at least; the hit room of small slices takes
    about a quarter), with the same hits, those over the gap dropped."""
    monkeypatch.setattr(config, "KMISMATCH_FIRST_SLICE_CELLS", {"pmasm": 1 << 16})
    monkeypatch.setattr(config, "SLICE_SECONDS", 1e-3)
    pats, text = _workload()
    options = dict(variant="pmasm", backend=backend, strands="both")
    first = kmismatch.solve(pats, text, 1, **options)
    starts = first.hits.start0.tolist()
    assert 1000 in starts and N // 2 + 5000 in starts and N // 2 not in starts
    chunk_reads[0] = 0
    tracemalloc.start()
    try:
        again = kmismatch.solve(pats, text, 1, **options)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    _same(again, first)
    assert peak < N // 2, f"a repeated solve allocated {peak:,} bytes for a {N:,}-base text"
    assert chunk_reads[0] == 0

