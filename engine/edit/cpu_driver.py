"""Runs the slots of a job for one slice: serial (one slot) or multicore (a slot per thread).

Each slot walks its queue of tasks, starting each with a fresh state and
scanning it with the job's variant until its column budget is spent, its hit
buffer is full or the cancel flag is set. State stays in the slot, so the next
slice resumes mid-task. Slots share nothing writable except distinct rows of
the task table, so the multicore form needs no locks.

numba's on-disk cache keys a function on its own file only: after editing a
scan module (cpu_dp, cpu_myers, cpu_banded, cpu_bits, cpu_common), delete
engine/edit/__pycache__/*.nbi and *.nbc, or this driver keeps the old scans.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from engine.edit import cpu_banded, cpu_dp, cpu_myers
from engine.edit.cpu_common import (BEST, BEST_END, COLS, END, INF, MODE_GLOBAL, MODE_HITS, NEXT,
                                    NHITS, POS, SCORE, T, T_BEST, T_DONE, T_END, T_HI, T_OWN_LO, T_PAT,
                                    T_SCAN_LO, T_THRESH, TASK)

VARIANTS = ("dp", "myers", "myers-blocked", "banded")
DP, MYERS, BLOCKED, BANDED = range(4)


def state_sizes(variant: str, max_m: int) -> tuple[int, int]:
    """(int64 words, uint64 words) of one slot's state for patterns up to ``max_m``."""
    if variant in ("dp", "banded"):
        return max_m + 2, 1
    return 1, cpu_myers.words_needed(max_m, variant == "myers-blocked")


@njit(nogil=True, cache=True)
def _start(variant, pat, m, task, tasks, info, ist, ust):
    info[TASK] = task
    info[POS] = tasks[task, T_SCAN_LO]
    info[BEST] = INF
    info[BEST_END] = -1
    info[T] = tasks[task, T_THRESH]
    info[SCORE] = m
    if variant == DP:
        cpu_dp.init(m, ist)
    elif variant == MYERS:
        cpu_myers.init_word(pat, m, ust)
    elif variant == BLOCKED:
        cpu_myers.init_blocked(pat, m, ust)
    else:
        cpu_banded.init(m, info[T], ist)


@njit(nogil=True, cache=True)
def run_slot(variant, mode, redo, pats, p_offs, text, tasks, info, ist, ust, hits, budget, abort):
    """Advance one slot by up to ``budget`` columns.

    ``redo``: banded global doubles its band and restarts a task whose
    distance exceeded it (no k given).
    """
    anchored = mode == MODE_GLOBAL
    left = budget
    while left > 0 and abort[0] == 0:
        if mode == MODE_HITS and info[NHITS] >= hits.shape[0]:
            break
        task = info[TASK]
        p = tasks[task, T_PAT] if task >= 0 else 0
        if task < 0:
            if info[NEXT] >= info[END]:
                break
            task = info[NEXT]
            info[NEXT] = task + 1
            p = tasks[task, T_PAT]
            _start(variant, pats[p_offs[p]:p_offs[p + 1]], p_offs[p + 1] - p_offs[p], task, tasks,
                   info, ist, ust)
        pat = pats[p_offs[p]:p_offs[p + 1]]
        m = pat.shape[0]
        base = tasks[task, T_SCAN_LO]
        hi = tasks[task, T_HI]
        own_lo = tasks[task, T_OWN_LO]
        pos = info[POS]
        b = min(hi, pos + left)
        if variant == DP:
            new = cpu_dp.scan(pat, m, text, pos, b, base, anchored, own_lo, mode, task, info, ist,
                              hits, abort)
        elif variant == MYERS:
            new = cpu_myers.scan_word(m, text, pos, b, anchored, own_lo, mode, task, info, ust,
                                      hits, abort)
        elif variant == BLOCKED:
            new = cpu_myers.scan_blocked(m, text, pos, b, anchored, own_lo, mode, task, info, ust,
                                         hits, abort)
        elif anchored:
            new = cpu_banded.scan_global(pat, m, text, pos, b, base, hi - base, info, ist, abort)
        else:
            new = cpu_banded.scan_search(pat, m, text, pos, b, own_lo, mode, task, info, ist, hits,
                                         abort)
        left -= new - pos
        info[COLS] += new - pos
        info[POS] = new
        finished = new >= hi or (not anchored and info[T] < 0)
        if not finished:
            if new < b:
                break  # hit buffer full or cancelled
            continue
        if variant == BANDED and anchored and redo and info[SCORE] > info[T]:
            info[T] = 2 * info[T] + 1
            info[POS] = base
            cpu_banded.init(m, info[T], ist)
            continue
        tasks[task, T_BEST] = info[SCORE] if anchored else info[BEST]
        tasks[task, T_END] = info[BEST_END]
        tasks[task, T_THRESH] = info[T]
        tasks[task, T_DONE] = 1
        info[TASK] = -1


@njit(nogil=True, cache=True)
def run_serial(variant, mode, redo, pats, p_offs, text, tasks, info, ist, ust, hits, budget, abort):
    for s in range(info.shape[0]):
        run_slot(variant, mode, redo, pats, p_offs, text, tasks, info[s], ist[s], ust[s], hits[s],
                 budget, abort)


@njit(nogil=True, cache=True, parallel=True)
def run_parallel(variant, mode, redo, pats, p_offs, text, tasks, info, ist, ust, hits, budget,
                 abort):
    for s in prange(info.shape[0]):
        run_slot(variant, mode, redo, pats, p_offs, text, tasks, info[s], ist[s], ust[s], hits[s],
                 budget, abort)


def plan_slots(lengths: np.ndarray, nslots: int) -> np.ndarray:
    """Split tasks 0..n-1 (in order) into ``nslots`` contiguous queues of about equal columns.

    Returns ``bounds`` with queue s = tasks[bounds[s]:bounds[s+1]].
    """
    total = int(lengths.sum())
    cum = np.concatenate([[0], np.cumsum(lengths)])
    bounds = np.zeros(nslots + 1, dtype=np.int64)
    for s in range(1, nslots):
        bounds[s] = int(np.searchsorted(cum, total * s / nslots, side="left"))
    bounds[nslots] = len(lengths)
    return np.maximum.accumulate(bounds)
