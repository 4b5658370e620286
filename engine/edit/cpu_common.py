"""Layout of the slot and task tables, and the one place where a column's score is recorded.

A *task* is a column range of one (pattern instance, text record) pair: the
whole record, or in multicore search a chunk of it. A *slot* is a worker with
its own state row; it runs its queue of tasks, and a scan may stop inside a
task (budget spent, hit buffer full, cancel) and resume there in the next
slice, because the state stays in the slot.
"""

from __future__ import annotations

from numba import njit

#: Modes (what a scan records).
MODE_GLOBAL, MODE_HITS, MODE_BEST = 0, 1, 2

#: "No value yet" / "no threshold"; far above any distance, far below int64 overflow.
INF = 1 << 50

#: Columns between two looks at the cancel flag inside a scan.
ABORT_CHECK_COLUMNS = 1 << 12

# Slot info fields (int64 row per slot).
POS = 0        # next text column (absolute index in the flat text)
BEST = 1       # search: smallest distance recorded; INF when none
BEST_END = 2   # search: first end (absolute, exclusive) with BEST
NHITS = 3      # hits waiting in the slot's buffer
CELLS = 4      # DP cells updated (bit-parallel: m per column, as in the CUPS of the seed study)
CMPS = 5       # symbol comparisons actually made (0 for bit-parallel scans)
T = 6          # threshold: record a column when C[m,j] <= T; banded cut-off
TASK = 7       # task in progress, -1 when none
NEXT = 8       # next task of this slot's queue
END = 9        # end of the queue
COLS = 10      # columns scanned (progress)
SCORE = 11     # C[m, POS] (global result once the task ends)
NINFO = 12

# Task table fields (int64 row per task).
T_PAT = 0      # pattern instance (a pattern on one strand)
T_SCAN_LO = 1  # first column scanned (absolute); state starts fresh there
T_OWN_LO = 2   # first column whose hits belong to this task (chunks overlap their predecessor)
T_HI = 3       # end of the column range (absolute, exclusive)
T_BEST = 4     # result: search best distance (INF if none) / global C[m,n]
T_END = 5      # result: first end with the best distance (absolute, exclusive), -1 if none
T_DONE = 6     # 1 once finished
T_THRESH = 7   # initial threshold in; the final one out (banded global doubles it)
NTASK = 8


@njit(nogil=True, cache=True, inline="always")
def record(v, j, mode, task, info, hits):
    """Record C[m,j+1] = v <= T. Returns (new threshold, stop scanning).

    MODE_HITS keeps every end; MODE_BEST keeps the first end of a new minimum and lowers
    the threshold below it, so later columns count only when strictly better
    (and a banded scan may cut harder). A full hit buffer, or a best of 0,
    stops the scan.
    """
    if mode == MODE_HITS:
        n = info[NHITS]
        hits[n, 0] = j + 1
        hits[n, 1] = v
        hits[n, 2] = task
        info[NHITS] = n + 1
        if v < info[BEST]:
            info[BEST] = v
            info[BEST_END] = j + 1
        return info[T], n + 1 >= hits.shape[0]
    info[BEST] = v
    info[BEST_END] = j + 1
    info[T] = v - 1
    return v - 1, v == 0
