"""Seeded edit search for the group search, exact: which primers lie within e edits of an
exclusion background (:func:`iter_hits`), and where in the inclusion genomes a primer's sites
can be (:func:`iter_windows`: pcr then reads those windows only), without running the edit
search over every base for every primer.

**Pigeonhole filter.** Cut a primer P into e + 1 non-overlapping pieces. If some substring S
of the background has ed(P, S) <= e, the alignment cuts S into e + 1 consecutive parts, one
per piece, whose edits sum to at most e; so at least one piece aligns with 0 edits: it occurs
*exactly* in S. Hence every hit holds, for some piece, an exact occurrence of that piece's
first q bases (q = the shortest piece, capped at :data:`SEED_MAX`), and its start lies within
e bases of where the piece puts it. Both strands: the pieces of P's reverse complement too.

One pass over each background: a rolling 2-bit q-mer, looked up in a direct table of the
batch's piece q-mers; each seed hit is verified by Myers' bit-vector scan (engine.edit's
column step) over the window ``[seed - offset - e, seed - offset + m + e)``, and a primer once
found in a record is not verified there again. Nothing is indexed but the primers' q-mers, so
memory is the table (4**q int32) plus one chunk of a record.

**What the filter must not miss.** The 2-bit seeds see A/C/G/T only. A background base of an
ambiguity code (R, Y, ..., short N runs) matches every base of its set, so a hit may hold no
exact seed: every window that an ambiguous base could be part of (``m + e`` either side of it)
is verified against every primer. Assembly gaps (engine.gaps, code 0) match nothing: a seed
never holds one, and Myers' scan counts one an edit, as the edit search does. Primers with an
ambiguity code of their own, longer than 64 nt, or pieces shorter than :data:`SEED_MIN` (the
filter would pass most of the background) are not for this filter: :func:`usable` says so, and
the caller runs the edit search for them.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
from numba import njit

from engine.edit.cpu_bits import ZERO, advance_column, build_peq, reset_column
from engine.jobs import drive
from engine.sequences import merge_intervals, reverse_complement

#: Longest seed: the lookup table has 4**SEED_MAX entries (int32: 16 MB at 11).
SEED_MAX = 11

#: Shortest seed worth filtering with: a random q-mer occurs every 4**q / 2 bases of a
#: background (both strands), and at q = 5 most windows would be verified: the edit search
#: is then the faster way.
SEED_MIN = 6

#: Longest primer (one 64-bit Myers word).
PRIMER_MAX = 64

#: Windows a chunk's scan has room for at first (doubled and read again when full).
WINDOWS_START = 1024

#: Bases of a record read at a time (a genome store unpacks just that range).
CHUNK = 1 << 22

# 4-bit base set -> 2-bit code; 4: an ambiguity code (verified whole), 5: a gap (never a seed).
_TWO_BIT = np.full(16, 4, dtype=np.uint8)
for _code, _two in ((1, 0), (2, 1), (4, 2), (8, 3)):
    _TWO_BIT[_code] = _two
_TWO_BIT[0] = 5


def pieces(m: int, e: int) -> list[tuple[int, int]]:
    """(start, length) of the e + 1 non-overlapping pieces that cover a primer of length m
    (lengths differ by at most one). Fewer than e + 1 pieces would let e edits, one in each,
    hide the hit: tests/engine/test_group_exclusion.py places them so."""
    count = e + 1
    bounds = [m * i // count for i in range(count + 1)]
    return [(a, b - a) for a, b in zip(bounds[:-1], bounds[1:])]


def usable(codes: np.ndarray, e: int) -> bool:
    """Whether the filter can judge this primer: A/C/G/T only, at most PRIMER_MAX long, with
    pieces of at least SEED_MIN bases."""
    codes = np.asarray(codes, dtype=np.uint8)
    return (len(codes) <= PRIMER_MAX and len(codes) // (e + 1) >= SEED_MIN
            and bool(np.all(_TWO_BIT[codes] < 4)))


class SeedIndex:
    """The pieces' q-mers of a batch of primers, both strands: a direct table (``heads``,
    CSR over the 4**q q-mers) into entries (oriented pattern, piece offset)."""

    def __init__(self, primers, e: int):
        self.e = e
        self.count = len(primers)
        # q: the shortest piece of any primer, at most SEED_MAX
        self.q = q = min(SEED_MAX, min(len(p) for p in primers) // (e + 1))
        oriented = []
        for p in primers:
            p = np.asarray(p, dtype=np.uint8)
            oriented += [p, reverse_complement(p)]
        self.lengths = np.array([len(o) for o in oriented], dtype=np.int64)
        self.peqs = np.zeros((len(oriented), 16), dtype=np.uint64)
        for i, o in enumerate(oriented):
            build_peq(o, len(o), self.peqs[i], False)
        keys, pats, offs = [], [], []
        weights = 4 ** np.arange(q - 1, -1, -1, dtype=np.int64)
        for i, o in enumerate(oriented):
            for start, _length in pieces(len(o), e):
                keys.append(int(_TWO_BIT[o[start:start + q]].astype(np.int64) @ weights))
                pats.append(i)
                offs.append(start)
        keys = np.asarray(keys, dtype=np.int64)
        order = np.argsort(keys, kind="stable")
        self.entry_pattern = np.asarray(pats, dtype=np.int64)[order]
        self.entry_offset = np.asarray(offs, dtype=np.int64)[order]
        self.heads = np.searchsorted(keys[order], np.arange(4 ** q + 1)).astype(np.int32)
        self.reach = int(self.lengths.max()) + e   # a hit's span at most, and then some


@njit(nogil=True, cache=True)
def _within(peq, m, codes, start, end, e, pv, mv):
    """Whether some substring of codes[start:end] is within e edits of the pattern whose
    match words are ``peq`` (Myers' search: row 0 is 0 in every column)."""
    reset_column(pv, mv, 1)
    score = m
    last_bit = np.uint64(m - 1)
    for j in range(start, end):
        score += advance_column(pv, mv, peq, codes[j], 1, ZERO, last_bit)
        if score <= e:
            return True
    return False


@njit(nogil=True, cache=True)
def _keep_window(windows, count, lo, hi, reach, n):
    """Append the window around a verified hit in [lo, hi), widened by ``reach`` and clipped
    to the record's n bases; False when the buffer is full (the caller grows it and rescans)."""
    if count[0] == windows.shape[0]:
        return False
    windows[count[0], 0] = max(0, lo - reach)
    windows[count[0], 1] = min(n, hi + reach)
    count[0] += 1
    return True


@njit(nogil=True, cache=True)
def _scan(codes, two_bit, q, heads, entry_pattern, entry_offset, lengths, peqs, e, reach,
          found, windows, count):
    """One chunk of a record: set ``found[primer]`` for every primer (either strand) within e
    edits of a substring of ``codes``. Seeds verified by Myers; windows around ambiguity codes
    verified against every pattern; primers already found skipped.

    With ``windows`` (rows of [start, end), ``count[0]`` of them used) every hit is kept
    instead, as the verified window widened by ``reach`` on each side (not merged); returns
    -1 when ``windows`` is full (the caller grows it and reads the chunk again), else 0."""
    collect = windows.shape[0] > 0
    n = len(codes)
    pv = np.zeros(1, dtype=np.uint64)
    mv = np.zeros(1, dtype=np.uint64)
    mask = (1 << (2 * q)) - 1
    val = 0
    run = 0
    covered = 0   # ambiguity windows verified up to here
    n_pat = len(lengths)
    for p in range(n):
        t = two_bit[codes[p]]
        if t >= 4:
            run = 0
            val = 0
            if t == 4:   # an ambiguity code: every pattern over every window it may be in
                lo = max(p - reach, 0)
                hi = min(n, p + reach + 1)
                # extend to the next ambiguity codes close by: one scan for a cluster
                x = p + 1
                while x < hi:
                    if two_bit[codes[x]] == 4:
                        hi = min(n, x + reach + 1)
                    x += 1
                if hi > covered:
                    for i in range(n_pat):
                        if not found[i >> 1]:
                            if _within(peqs[i], lengths[i], codes, lo, hi, e, pv, mv):
                                if not collect:
                                    found[i >> 1] = True
                                    continue
                                if not _keep_window(windows, count, lo, hi, reach, n):
                                    return -1
                                break
                    covered = hi
            continue
        val = ((val << 2) | t) & mask
        run += 1
        if run < q:
            continue
        s = p - q + 1
        for x in range(heads[val], heads[val + 1]):
            i = entry_pattern[x]
            if found[i >> 1]:
                continue
            m = lengths[i]
            a = s - entry_offset[x] - e
            b = s - entry_offset[x] + m + e
            if a < 0:
                a = 0
            if b > n:
                b = n
            last = count[0] - 1   # (collect: a seed inside the last window kept needs no verifying)
            if collect and last >= 0 and windows[last, 0] <= a and b <= windows[last, 1]:
                continue
            if _within(peqs[i], m, codes, a, b, e, pv, mv):
                if not collect:
                    found[i >> 1] = True
                    continue
                if not _keep_window(windows, count, a, b, reach, n):
                    return -1
    return 0


def _chunks(records, overlap):
    """(record, start, end) pieces of every record, each overlapping the next by ``overlap``
    (so a hit no longer than that lies whole in one)."""
    return [(ri, a, min(len(r), a + CHUNK + overlap)) for ri, r in enumerate(records)
            for a in range(0, max(len(r) - overlap, 1), CHUNK)]


def _run(jobs, work, threads, cancel):
    """``work(job)`` for each job on a thread pool (the kernels release the GIL); yield
    (bases done, bases in all) as jobs finish in order; return True, or False after a
    cancel (the jobs not started are dropped)."""
    total = sum(b - a for _, a, b in jobs)
    done = 0
    if cancel is not None and cancel.cancelled:
        return False
    with ThreadPoolExecutor(max_workers=max(1, threads or 1)) as pool:
        futures = [pool.submit(work, job) for job in jobs]
        try:
            for f, (_, a, b) in zip(futures, jobs):
                f.result()
                done += b - a
                yield done, total
                if cancel is not None and cancel.cancelled:
                    return False
        finally:
            for f in futures:
                f.cancel()
    return True


_NO_WINDOWS = np.zeros((0, 2), dtype=np.int64)


def iter_hits(primers, records, e: int, threads: int | None = None, cancel=None):
    """Yield (bases read, bases in all) as records are read; return a bool array
    [record, primer]: whether the primer (either strand) is within e edits of a substring of
    that record, or None after a cancel. Every primer must be :func:`usable`. ``records``:
    gap-masked (engine.gaps.as_background). Threads read records (or chunks) in parallel."""
    index = SeedIndex(primers, e)
    found = np.zeros((len(records), index.count), dtype=np.bool_)

    def work(job):
        ri, a, b = job
        codes = np.ascontiguousarray(records[ri].chunk(a, b), dtype=np.uint8)
        _scan(codes, _TWO_BIT, index.q, index.heads, index.entry_pattern, index.entry_offset,
              index.lengths, index.peqs, e, index.reach, found[ri], _NO_WINDOWS,
              np.zeros(1, dtype=np.int64))

    ok = yield from _run(_chunks(records, index.reach), work, threads, cancel)
    return found if ok else None


def iter_windows(primers, records, e: int, threads: int | None = None, cancel=None):
    """As :func:`iter_hits`, but return per record the (starts, ends) of disjoint windows
    (0-based, half-open, sorted) that hold every substring within e edits of a primer
    (either strand), each with ``m + e`` bases or more of context on either side; None after
    a cancel. A search confined to these windows finds every site it would in the record."""
    index = SeedIndex(primers, e)
    none = np.zeros(index.count, dtype=np.bool_)   # (no primer is ever "found": keep all)
    parts: dict = {}

    def work(job):
        ri, a, b = job
        codes = np.ascontiguousarray(records[ri].chunk(a, b), dtype=np.uint8)
        windows = np.zeros((WINDOWS_START, 2), dtype=np.int64)
        count = np.zeros(1, dtype=np.int64)
        while _scan(codes, _TWO_BIT, index.q, index.heads, index.entry_pattern,
                    index.entry_offset, index.lengths, index.peqs, e, index.reach, none,
                    windows, count) < 0:
            windows = np.zeros((2 * len(windows), 2), dtype=np.int64)
            count[0] = 0
        parts[job] = windows[:count[0]] + a

    jobs = _chunks(records, index.reach)
    ok = yield from _run(jobs, work, threads, cancel)
    if not ok:
        return None
    out = []
    for ri in range(len(records)):
        w = np.concatenate([parts[job] for job in jobs if job[0] == ri])   # (every record has a chunk)
        out.append(merge_intervals(w[:, 0], w[:, 1]))
    return out


def regions(records, windows) -> tuple[list, np.ndarray]:
    """The windows of :func:`iter_windows` as records of their own (same ids, ``offset`` so
    that positions stay the full record's) and, per region, the index of its record."""
    from engine.sequences import Record

    out, owner = [], []
    for ri, (starts, ends) in enumerate(windows):
        rec = records[ri]
        for a, b in zip(starts.tolist(), ends.tolist()):
            out.append(Record(rec.id, np.array(rec.chunk(a, b), dtype=np.uint8),
                              rec.description, rec.source, rec.offset + a))
            owner.append(ri)
    return out, np.asarray(owner, dtype=np.int64)


def hits(primers, records, e: int, threads: int | None = None) -> np.ndarray:
    """:func:`iter_hits` run to the end."""
    return drive(iter_hits(primers, records, e, threads))


__all__ = ["CHUNK", "PRIMER_MAX", "SEED_MAX", "SEED_MIN", "SeedIndex", "hits", "iter_hits",
           "iter_windows", "pieces", "regions", "usable"]
