"""A plain model of kdiff --all-k's bit-sliced counters of e = D - M (engine/kdiff/cpu_lanes.py
on the CPU, cuda_lanes.count_deltas on the GPU): 64 rows, four words, bit b of row i's
counter in word b at bit i. Both tests replay random columns of horizontal deltas through
the kernels' step and this model."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from engine.kdiff.cpu_lanes import COUNTER_MAX, counter_bits

#: each row's e before the first column (set as a settle sets it: min(e, 15))
COUNTER_STARTS = st.lists(st.integers(0, 40), min_size=1, max_size=64)
#: columns of one horizontal delta a row
COUNTER_COLUMNS = st.lists(st.lists(st.sampled_from((-1, 0, 1)), min_size=64, max_size=64),
                           min_size=1, max_size=60)


def _words(values) -> list:
    return [np.uint64(w) for w in values]  # (numba hands uint64 back as Python ints)


def replay_counters(step, start, deltas) -> None:
    """Run ``step(ph, mh, a0, a1, a2, a3) -> (b0, b1, b2, b3, flagged)`` over ``deltas``:
    a row is flagged exactly when its counter is 0 and its delta -1 (the lane is then
    settled: the counter set afresh, as here), and otherwise its counter is min(e, 15),
    held at 15 past it."""
    words = [np.uint64(0)] * 4
    for i, e in enumerate(start):
        words = _words(counter_bits(e, np.uint64(1) << np.uint64(i), *words))
    model = [min(e, COUNTER_MAX) for e in start]
    for column in deltas:
        ph = mh = np.uint64(0)
        for i in range(len(start)):
            if column[i] > 0:
                ph |= np.uint64(1) << np.uint64(i)
            elif column[i] < 0:
                mh |= np.uint64(1) << np.uint64(i)
        *words, flagged = _words(step(ph, mh, *words))
        for i in range(len(start)):
            bit = np.uint64(1) << np.uint64(i)
            fell = bool(flagged & bit)
            assert fell == (model[i] == 0 and column[i] < 0), (i, model[i], column[i])
            if fell:
                model[i] = min(start[i], COUNTER_MAX)
                words = _words(counter_bits(model[i], bit, *[w & ~bit for w in words]))
                continue
            model[i] = min(model[i] + column[i], COUNTER_MAX)
            got = sum(1 << b for b in range(4) if words[b] & bit)
            assert got == model[i], (i, got, model[i])
