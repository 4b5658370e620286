"""A streamed kdiff stops early across chunks as the whole-text scan does: once a chunk finds
a start's whole suffix (the scan stops there), the later chunks of that range scan only the
starts before it (issue #29: the chunked problem had lost it, 7.7 % more cells on lambda vs
E. coli x 8 streamed)."""

import numpy as np

from engine import config, kdiff
from engine.sequences import Record


def _solve(records, monkeypatch):
    monkeypatch.setattr(config, "STREAM_MEMORY_BASES", 0)
    monkeypatch.setattr(config, "STREAM_CHUNK_BASES", 3000)  # (a chunk a record here)
    rng = np.random.default_rng(5)
    target = Record("t", rng.choice(np.array([1, 2, 4, 8], np.uint8), 300))
    holder = Record("holder", np.concatenate([rng.choice(np.array([1, 2, 4, 8], np.uint8), 1000),
                                              target.codes,
                                              rng.choice(np.array([1, 2, 4, 8], np.uint8), 1000)]))
    other = Record("other", rng.choice(np.array([1, 2, 4, 8], np.uint8), 2300))
    order = [holder, other] if records == "holder first" else [other, holder]
    return kdiff.solve([target], order, 4, variant="bitparallel", backend="serial",
                       strands="forward")


def test_a_chunk_after_a_stop_scans_only_the_starts_before_it(monkeypatch):
    first = _solve("holder first", monkeypatch)
    last = _solve("holder last", monkeypatch)
    # The target occurs whole in `holder`: the scan stops at its first start, no candidate.
    assert list(first.candidates) == list(last.candidates) == []
    # Found in the first chunk, the stop spares the second chunk's scan of the range's other
    # starts (a lane group still runs: the saving is the rest of the range).
    assert first.info.cells < last.info.cells, (first.info.cells, last.info.cells)
