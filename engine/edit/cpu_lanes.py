"""Runs the lanes of a job for one slice: serial (one thread) or multicore (prange over threads).

A *lane* is a worker with its own queue of tasks and its own state row; a
scan may stop inside a task (budget spent, hit buffer full, cancel) and
resume there in the next slice, because the state stays in the lane. Lane l
of L takes tasks l, l + L, l + 2L, ...: all lanes sweep the text front to
back together, so a best found early lowers the threshold of the chunks
that follow (see :func:`_share`).

For ``myers`` a thread drives two lanes in lockstep: its column step is a
chain of about ten dependent word operations, so one task alone leaves most
of the core idle, and the chains of two independent tasks overlap (the kdiff
``bitparallel`` kernel does the same with its lanes). The block loops of the
other variants already keep the core busy, so their threads drive one lane.

Lanes advance in *runs*: column ranges in which no lane reaches the end of
its task, its budget or the first column it owns, so a run's kernel has
nothing to look up but the columns (and the profile's bin edges).

Lanes share nothing writable except distinct rows of the task table,
distinct profile bins and the shared best of best mode (one word, see
:func:`_share`), so the multicore form needs no locks.

numba's on-disk cache keys a function on its own file only: after editing a
scan module (cpu_dp, cpu_myers, cpu_banded, cpu_bits, cpu_common; cpu_common
or engine/bitops.py for cpu_simd too), delete
engine/edit/__pycache__/*.nbi and *.nbc, or this driver keeps the old scans.
"""

from __future__ import annotations

from numba import njit, prange

from engine.edit import cpu_banded, cpu_dp, cpu_myers
from engine.edit.cpu_bits import init_blocked
from engine.edit.cpu_common import (BEST, BEST_END, COLS, CUT, END, INF, MODE_BEST, MODE_GLOBAL,
                                    MODE_HITS, NEXT, NHITS, POS, SCORE, SHARE_BITS, T, TASK,
                                    T_BEST, T_BINW, T_CUT, T_DONE, T_END, T_HI, T_LEAD, T_OWN_LO,
                                    T_PAT, T_SCAN_LO, T_SHARED, T_THRESH, segment_end)

VARIANTS = ("dp", "myers", "myers-blocked", "banded")
DP, MYERS, BLOCKED, BANDED = range(4)


def lanes_per_thread(variant: str) -> int:
    """Lanes one thread drives in lockstep: two for ``myers`` (see the module doc), else one."""
    return 2 if variant == "myers" else 1


def state_sizes(variant: str, max_m: int) -> tuple[int, int]:
    """(int64 words, uint64 words) of one lane's state for patterns up to ``max_m``."""
    if variant == "dp":
        return max_m + 2, 1
    if variant == "banded":  # [y, bottom] (search) or [first, last, bottoms] (global)
        return (max_m + 63) // 64 + 2, cpu_myers.words_needed(max_m, True)
    return 1, cpu_myers.words_needed(max_m, variant == "myers-blocked")


@njit(nogil=True, cache=True)
def _init_state(variant, anchored, pats, p_offs, tasks, info, ist, ust):
    """Column 0 of the lane's task under its threshold info[T]."""
    task = info[TASK]
    p = tasks[task, T_PAT]
    pat = pats[p_offs[p]:p_offs[p + 1]]
    m = pat.shape[0]
    info[POS] = tasks[task, T_SCAN_LO]
    info[SCORE] = m
    if variant == DP:
        cpu_dp.init(m, ist)
    elif variant == MYERS:
        cpu_myers.init_word(pat, m, ust)
    elif variant == BLOCKED:
        init_blocked(pat, m, ust, False)
    elif not anchored:
        cpu_banded.init_search(pat, m, info, ist, ust)
    elif not cpu_banded.init_global(pat, m, tasks[task, T_HI] - tasks[task, T_SCAN_LO], info[T],
                                    ist, ust):
        # Even the length difference costs more than T: C[m,n] > T without a cell.
        info[SCORE] = info[T] + 1
        info[POS] = tasks[task, T_HI]


@njit(nogil=True, cache=True)
def _ready(variant, anchored, mode, pats, p_offs, tasks, info, ist, ust, hits, stride):
    """True when the lane has a task to scan (its next one started if needed) and room for hits.

    The lane's tasks are info[NEXT], info[NEXT] + stride, ... below info[END].
    """
    if mode == MODE_HITS and info[NHITS] >= hits.shape[0]:
        return False
    if info[TASK] >= 0:
        return True
    if info[NEXT] >= info[END]:
        return False
    task = info[NEXT]
    info[NEXT] = task + stride
    info[TASK] = task
    info[BEST] = INF
    info[BEST_END] = -1
    info[T] = tasks[task, T_THRESH]
    info[CUT] = tasks[task, T_CUT] if tasks[task, T_BINW] > 0 else -1
    _init_state(variant, anchored, pats, p_offs, tasks, info, ist, ust)
    return True


@njit(nogil=True, cache=True)
def _share(mode, tasks, info):
    """Best mode: trade the lane's best with its group's (chunks of one record).

    A best d at end e found anywhere in the group settles what a chunk still
    has to look for: d or less at ends before e, less than d after e. So a
    lane's threshold can drop to that before its next run (fewer blocks for
    banded, and an early end at 0), and the answer stays the first end with
    the smallest distance. The shared word may lose a race between threads;
    every value in it is a pair some lane found, so it only ever loosens.
    """
    if mode != MODE_BEST:
        return
    task = info[TASK]
    lead = tasks[task, T_LEAD]
    mask = (1 << SHARE_BITS) - 1
    if info[BEST] < INF:
        mine = (info[BEST] << SHARE_BITS) | info[BEST_END]
        theirs = tasks[lead, T_SHARED]
        if theirs < 0 or mine < theirs:
            tasks[lead, T_SHARED] = mine
    code = tasks[lead, T_SHARED]
    if code >= 0:
        d = code >> SHARE_BITS
        first_end = max(info[POS], tasks[task, T_OWN_LO]) + 1
        limit = d - 1 if first_end > (code & mask) else d
        if limit < info[T]:
            info[T] = limit


@njit(nogil=True, cache=True)
def _run_end(tasks, info, left):
    task = info[TASK]
    pos = info[POS]
    return segment_end(pos, min(tasks[task, T_HI], pos + left), tasks[task, T_OWN_LO])


@njit(nogil=True, cache=True)
def _one(variant, anchored, mode, n, pats, p_offs, text, tasks, prof, info, ist, ust, hits):
    """A run of one lane for the kernels that take one lane at a time."""
    if variant == DP:
        return cpu_dp.run(n, anchored, mode, pats, p_offs, text, tasks, prof, info, ist, hits)
    if variant == BLOCKED:
        return cpu_myers.run_blocked(n, anchored, mode, p_offs, text, tasks, prof, info, ust, hits)
    if anchored:
        return cpu_banded.run_global(n, p_offs, text, tasks, info, ist, ust)
    return cpu_banded.run_search(n, mode, p_offs, text, tasks, prof, info, ist, ust, hits)


@njit(nogil=True, cache=True)
def _scan(variant, anchored, mode, n, two, pats, p_offs, text, tasks, prof, ix, sx, ux, hx, iy, sy,
          uy, hy):
    """Advance lane x (and lane y when ``two``) by up to n columns; returns the columns of each.

    ``myers`` interleaves the two lanes; the other kernels run them one after
    the other (their block loops already keep the core busy).
    """
    if variant == MYERS:
        done = cpu_myers.run_word(n, two, anchored, mode, p_offs, text, tasks, prof, ix, ux, hx, iy,
                                  uy, hy)
        return done, done
    done_x = _one(variant, anchored, mode, n, pats, p_offs, text, tasks, prof, ix, sx, ux, hx)
    done_y = _one(variant, anchored, mode, n, pats, p_offs, text, tasks, prof, iy, sy, uy, hy) \
        if two else 0
    return done_x, done_y


@njit(nogil=True, cache=True)
def _advance(variant, anchored, mode, redo, pats, p_offs, tasks, info, ist, ust, done):
    """Book a run of ``done`` columns on a lane: its position, and the end of its task.

    ``redo``: banded global doubles its band and restarts a task whose
    distance exceeded it (no k given).
    """
    _share(mode, tasks, info)
    task = info[TASK]
    pos = info[POS] + done
    info[POS] = pos
    info[COLS] += done
    # A best of 0 ends a search task, unless it keeps a profile (info[CUT] >= 0).
    if pos < tasks[task, T_HI] and (anchored or info[T] >= 0 or info[CUT] >= 0):
        return
    if variant == BANDED and anchored and redo and info[SCORE] > info[T]:
        info[T] = 2 * info[T] + 1
        _init_state(variant, anchored, pats, p_offs, tasks, info, ist, ust)
        return
    tasks[task, T_BEST] = info[SCORE] if anchored else info[BEST]
    tasks[task, T_END] = info[BEST_END]
    tasks[task, T_THRESH] = info[T]
    tasks[task, T_DONE] = 1
    info[TASK] = -1


@njit(nogil=True, cache=True)
def run_lanes(variant, mode, redo, pats, p_offs, text, tasks, info, ist, ust, hits, prof, a, pair,
              budget, abort):
    """Advance lane a (and lane a+1 in lockstep when ``pair``) by up to ``budget`` columns each.

    Stops early when a lane's hit buffer is full (the slice hands the hits
    over) or the cancel flag is set.
    """
    anchored = mode == MODE_GLOBAL
    stride = info.shape[0]
    b = a + 1 if pair else a
    # Row views made once: each view costs a reference count update.
    ia, sa, ua, ha = info[a], ist[a], ust[a], hits[a]
    ib, sb, ub, hb = info[b], ist[b], ust[b], hits[b]
    left_a = budget
    left_b = budget if pair else 0
    full = hits.shape[1]
    while abort[0] == 0:
        if mode == MODE_HITS and (ia[NHITS] >= full or ib[NHITS] >= full):
            break
        live_a = left_a > 0 and _ready(variant, anchored, mode, pats, p_offs, tasks, ia, sa, ua, ha,
                                       stride)
        live_b = left_b > 0 and _ready(variant, anchored, mode, pats, p_offs, tasks, ib, sb, ub, hb,
                                       stride)
        if not live_a and not live_b:
            break
        two = live_a and live_b
        if live_a:
            ix, sx, ux, hx, left_x = ia, sa, ua, ha, left_a
        else:
            ix, sx, ux, hx, left_x = ib, sb, ub, hb, left_b
        _share(mode, tasks, ix)
        n = _run_end(tasks, ix, left_x) - ix[POS]
        if two:
            _share(mode, tasks, ib)
            n = min(n, _run_end(tasks, ib, left_b) - ib[POS])
        done_x, done_y = 0, 0  # n = 0: a task at its end (banded global with nothing in its band)
        if n > 0:
            done_x, done_y = _scan(variant, anchored, mode, n, two, pats, p_offs, text, tasks,
                                   prof, ix, sx, ux, hx, ib, sb, ub, hb)
        _advance(variant, anchored, mode, redo, pats, p_offs, tasks, ix, sx, ux, done_x)
        if live_a:
            left_a -= done_x
        else:
            left_b -= done_x
        if two:
            _advance(variant, anchored, mode, redo, pats, p_offs, tasks, ib, sb, ub, done_y)
            left_b -= done_y


@njit(nogil=True, cache=True)
def run_serial(variant, mode, redo, pats, p_offs, text, tasks, info, ist, ust, hits, prof, per,
               budget, abort):
    """Every lane group (``per`` lanes: 1 or 2) of the job in turn, on this thread."""
    for s in range(info.shape[0] // per):
        run_lanes(variant, mode, redo, pats, p_offs, text, tasks, info, ist, ust, hits, prof,
                  per * s, per == 2, budget, abort)


@njit(nogil=True, cache=True, parallel=True)
def run_parallel(variant, mode, redo, pats, p_offs, text, tasks, info, ist, ust, hits, prof, per,
                 budget, abort):
    """One lane group per thread."""
    for s in prange(info.shape[0] // per):
        run_lanes(variant, mode, redo, pats, p_offs, text, tasks, info, ist, ust, hits, prof,
                  per * s, per == 2, budget, abort)
