"""Layout of the lane and task tables, and the one place where a column's score is recorded.

A *task* is a column range of one (pattern instance, text record) pair: the
whole record, or in search a chunk of it. A *lane* is a worker with its own
state row; it runs its queue of tasks, and a scan may stop inside a task
(budget spent, hit buffer full, cancel) and resume there in the next slice,
because the state stays in the lane. Score profiles are written here too:
a scan lowers a bin at each bin edge and at the end of a run.
"""

from __future__ import annotations

from numba import njit

#: Modes (what a scan records).
MODE_GLOBAL, MODE_HITS, MODE_BEST = 0, 1, 2

#: "No value yet" / "no threshold"; far above any distance, far below int64 overflow.
INF = 1 << 50

#: Columns between two looks at the cancel flag inside a scan.
ABORT_CHECK_COLUMNS = 1 << 12

# Lane info fields (int64 row per lane).
POS = 0        # next text column (absolute index in the flat text)
BEST = 1       # search: smallest distance recorded; INF when none
BEST_END = 2   # search: first end (absolute, exclusive) with BEST
NHITS = 3      # hits waiting in the lane's buffer
CELLS = 4      # DP cells updated (bit-parallel: m per column, as in the CUPS of the seed study;
               # banded: the rows of the blocks it computed)
CMPS = 5       # symbol comparisons actually made (0 for bit-parallel scans)
T = 6          # threshold: record a column when C[m,j] <= T; banded cut-off
TASK = 7       # task in progress, -1 when none
NEXT = 8       # next task of this lane's queue (then NEXT + number of lanes, ...)
END = 9        # end of the queue
COLS = 10      # columns scanned (progress)
SCORE = 11     # C[m, POS] (global result once the task ends)
CUT = 12       # banded search cut-off floor: the task's T_CUT when it keeps a profile, else -1
NINFO = 13

# Task table fields (int64 row per task).
T_PAT = 0      # pattern instance (a pattern on one strand)
T_SCAN_LO = 1  # first column scanned (absolute); state starts fresh there
T_OWN_LO = 2   # first column whose hits belong to this task (chunks overlap their predecessor)
T_HI = 3       # end of the column range (absolute, exclusive)
T_BEST = 4     # result: search best distance (INF if none) / global C[m,n]
T_END = 5      # result: first end with the best distance (absolute, exclusive), -1 if none
T_DONE = 6     # 1 once finished
T_THRESH = 7   # initial threshold in; the final one out (banded global doubles it)
T_REC_LO = 8   # first column of the task's text record (absolute), for profile bins
T_BINW = 9     # profile bin width in columns; 0: no profile
T_PROF = 10    # offset of the record's bin 0 in the flat profile array
T_CUT = 11     # profile cap - 1: k, or m without k (C[m,j] <= m, so no cap)
T_LEAD = 12    # first task of the task's group; its T_SHARED is the group's
T_SHARED = 13  # best mode, on a group's first task: best so far as SHARE_CODE(d, end), -1: none
NTASK = 14

#: Bits of the end in a shared best (d << SHARE_BITS | end): one 64-bit word, so lanes on
#: other threads read a pair that some lane really found.
SHARE_BITS = 40


@njit(nogil=True, cache=True)
def lane(tasks, p_offs, info):
    """(task, position, pattern offset, m, owned) of the lane whose info row is given.

    ``owned``: the run's columns belong to the task (hits and profile count).
    """
    task = info[TASK]
    pos = info[POS]
    p = tasks[task, T_PAT]
    return task, pos, p_offs[p], p_offs[p + 1] - p_offs[p], pos >= tasks[task, T_OWN_LO]


@njit(nogil=True, cache=True, inline="always")
def segment_end(j, b, own_lo):
    """End of the run of columns from j that a scan does without looking up.

    A run stops at ``b``, after ABORT_CHECK_COLUMNS (cancel poll) and at
    ``own_lo`` (columns before it belong to the previous chunk: no hits, no
    profile).
    """
    e = min(b, j + ABORT_CHECK_COLUMNS)
    return min(e, own_lo) if j < own_lo else e


#: A bin edge never reached (no profile, or columns not owned).
NEVER = 1 << 62


@njit(nogil=True, cache=True)
def bin_edge(tasks, task, pos, owned):
    """First profile bin edge after column ``pos`` (absolute), or NEVER."""
    binw = tasks[task, T_BINW]
    if binw == 0 or not owned:
        return NEVER
    rec_lo = tasks[task, T_REC_LO]
    return rec_lo + ((pos - rec_lo) // binw + 1) * binw


@njit(nogil=True, cache=True)
def flush_profile(prof, tasks, task, col, low):
    """Lower the profile bin of column ``col`` to ``low`` (capped at T_CUT + 1); returns the
    edge after the next bin (the bin edge a scan at the end of this bin looks for next).

    A scan calls it at each bin edge and at the end of a run. Chunks of a
    record start on bin edges, so no two threads share a bin.
    """
    binw = tasks[task, T_BINW]
    rec_lo = tasks[task, T_REC_LO]
    b = (col - rec_lo) // binw
    i = tasks[task, T_PROF] + b
    v = min(low, tasks[task, T_CUT] + 1)
    if v < prof[i]:
        prof[i] = v
    return rec_lo + (b + 2) * binw  # the edge after the next bin


@njit(nogil=True, cache=True, inline="always")
def profile_column(prof, tasks, task, col, low, edge):
    """Column ``col`` done, ``low`` its bin's minimum so far: at the bin's edge the bin is
    flushed (:func:`flush_profile`). Returns (edge, low) to go on with; every scan's
    column loop calls it."""
    if col + 1 == edge:
        return flush_profile(prof, tasks, task, col, low), INF
    return edge, low


@njit(nogil=True, cache=True, inline="always")
def record(v, j, mode, task, info, hits):
    """Record C[m,j+1] = v <= T. Returns (new threshold, stop scanning).

    MODE_HITS keeps every end; MODE_BEST keeps the first end of a new minimum and lowers
    the threshold below it, so later columns count only when strictly better
    (and a banded scan may cut harder). A full hit buffer, or a best of 0
    when no profile is kept (``info[CUT] < 0``), stops the scan.
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
    return v - 1, v == 0 and info[CUT] < 0
