"""The scan drivers of the conventional and alternative CPU kernels: c(r) for a range of
starts, one after the other (``serial``) or many at once (``coarse``), with the scan's stop.

Both variants have a per-start core ``longest_prefix(alpha, r, m_end, beta, offsets, K,
early, scratch, counters, abort, counting) -> c``; ``which`` picks it (CONVENTIONAL or
ALTERNATIVE). The cores are called as module globals, not passed in or closed over, so
that numba caches these drivers (a dispatcher captured by a kernel changes numba's cache
key from run to run). They are called right here, not through a shared dispatch function:
that extra layer cost 12-15% of conventional's serial time (W1), through LLVM's inlining.
``lv`` (starts x L) takes the lower levels of ``kdiff --all-k`` (L = 0: the plain scan).
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from engine.kdiff import cpu_alternative, cpu_conventional
from engine.kdiff.cpu_bitparallel import full_at
from engine.kdiff.cpu_common import max_record

CONVENTIONAL = 0
ALTERNATIVE = 1


@njit(nogil=True, cache=True)
def serial(alpha, m_end, r_lo, r_hi, beta, offsets, K, early, out_c, lv, counters, abort, counting,
           which):
    """c(r) for r in [r_lo, r_hi); stops after the first r whose whole suffix occurs.

    Returns the number of positions settled (fewer when stopped or aborted).
    """
    scratch = np.empty((2, max_record(offsets) + K + 3), dtype=np.int64)
    for r in range(r_lo, r_hi):
        if which == CONVENTIONAL:
            c = cpu_conventional.longest_prefix(alpha, r, m_end, beta, offsets, K, early, scratch,
                                                lv[r - r_lo], counters, abort, counting)
        else:
            c = cpu_alternative.longest_prefix(alpha, r, m_end, beta, offsets, K, early, scratch,
                                               lv[r - r_lo], counters, abort, counting)
        if c < 0:
            return r - r_lo
        out_c[r - r_lo] = c
        if full_at(out_c, lv, r - r_lo, m_end - r):
            return r - r_lo + 1
    return r_hi - r_lo


@njit(nogil=True, cache=True, parallel=True)
def coarse(alpha, m_end, r_lo, r_hi, beta, offsets, K, early, out_c, lv, counters, abort, counting,
           which):
    """Many r at once (prange). Each r writes its own slots, so no locks.

    Starts past one whose suffix fully occurred are skipped (``out_c = -2``);
    the shared stop hint may be stale, which only wastes work.
    """
    count = r_hi - r_lo
    stop = np.full(1, r_hi, dtype=np.int64)
    per_r = np.zeros((count, 2), dtype=np.int64)
    width = max_record(offsets) + K + 3
    for idx in prange(count):
        r = r_lo + idx
        if r > stop[0]:
            out_c[idx] = -2
            continue
        scratch = np.empty((2, width), dtype=np.int64)
        if which == CONVENTIONAL:
            c = cpu_conventional.longest_prefix(alpha, r, m_end, beta, offsets, K, early, scratch,
                                                lv[idx], per_r[idx], abort, counting)
        else:
            c = cpu_alternative.longest_prefix(alpha, r, m_end, beta, offsets, K, early, scratch,
                                               lv[idx], per_r[idx], abort, counting)
        out_c[idx] = c
        if full_at(out_c, lv, idx, m_end - r) and r < stop[0]:
            stop[0] = r
    for idx in range(count):
        counters[0] += per_r[idx, 0]
        counters[1] += per_r[idx, 1]
    for idx in range(count):  # settled: every start up to the first aborted one (-1)
        if out_c[idx] == -1:
            return idx
    return count
