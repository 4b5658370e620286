"""kdiff's slices and dispatch: which kernel computes c(r) for a range of starts.

:class:`ScanRunner` walks the start positions of every target record (the units
of :func:`engine.slices.run_slices`); :class:`KernelCall` runs one slice of one
record on the job's variant and backend (CUDA jobs through ``engine.kdiff.cuda``,
imported only for them). A job whose background is too large to hold whole
(:mod:`engine.streaming`: in memory, or on the GPU for cuda jobs), or that runs on
Dask, is an ordered chunked problem (engine/kdiff/problem.py): tasks of one range of
starts against one background chunk; a cuda job uploads each chunk in turn into one
device buffer.
"""

from __future__ import annotations

import numba
import numpy as np

from engine import registry
from engine import config
from engine.columns import ColumnBuffer
from engine.gaps import gap_runs, touches_gap
from engine.jobs import Job
from engine.kdiff.candidates import CandidateTable
from engine.sequences import Record
from engine.slices import Step


def _kernels(job: Job):
    """The job's CPU kernels (engine/kdiff/spec.py): ``serial``, ``coarse`` and, but for
    bitparallel, ``fine_batch`` (conventional and alternative share their serial and coarse
    scans: cpu_scan.py, told which core to call by ``which``)."""
    from types import SimpleNamespace

    mod = registry.kernels(job)
    if job.variant == "bitparallel":
        return mod
    from engine.kdiff import cpu_scan

    which = cpu_scan.CONVENTIONAL if job.variant == "conventional" else cpu_scan.ALTERNATIVE
    return SimpleNamespace(serial=cpu_scan.serial, coarse=cpu_scan.coarse,
                           fine_batch=mod.fine_batch, which=which)


def background_text(job: Job) -> tuple[np.ndarray, np.ndarray]:
    """The background records (and their reverse complements with both strands) as one
    code array and its segment offsets: matches never span two segments.

    A segment is the stretch of a record between the insides of its long assembly gaps,
    which are left out as streaming leaves them out (engine.streaming.gap_skips: a
    candidate holds at most K gap bases, so K are kept at each gap end): the text is
    streaming's plan as one chunk, read once. c(r) does not change; the gaps' bases
    are not scanned."""
    from engine.streaming import Background

    background = Background(job.inputs["background"], job.params["strands"])
    plan = background.chunks(0, max(1, int(background.lengths.sum())), job.params["k"] - 1)
    if not plan:  # (no background base)
        return np.zeros(0, dtype=np.uint8), np.zeros(1, dtype=np.int64)
    text = background.text(plan[0])
    return text.codes, text.offsets


class KernelCall:
    """c(r) for a slice [r_lo, r_hi) of one target record on the job's variant/backend."""

    def __init__(self, job: Job, beta: np.ndarray, offsets: np.ndarray, abort: np.ndarray):
        self.job = job
        self.beta, self.offsets, self.abort = beta, offsets, abort
        self.K = job.params["k"] - 1
        self.flags = job.flags
        # engine.kdiff.cuda.CudaSliceRunner on the GPU
        self.device = registry.kernels(job)(job, beta, offsets, abort) \
            if registry.on_gpu(job.backend) else None
        self.kernels = None if self.device else _kernels(job)
        self.counting = job.count_comparisons
        #: the lower levels a call fills besides c (``kdiff --all-k``: c at 0..K-1 edits)
        self.levels = self.K if job.params.get("all_k") else 0

    def use_background(self, beta: np.ndarray, offsets: np.ndarray) -> None:
        """Run the next calls against another background text (a streamed chunk's); a cuda
        job uploads it (into the device buffer of the one before)."""
        self.beta, self.offsets = beta, offsets
        if self.device is not None:
            self.device.use_background(beta, offsets)

    def min_slice(self) -> int:
        """Enough start positions per slice to keep every thread busy."""
        if self.device is not None:
            return self.device.min_slice()
        if self._simd_pass() is not None and self.K < 64:
            # A group of lanes per thread (a group passes over the whole background).
            threads = numba.get_num_threads() if registry.threaded(self.job.backend) else 1
            return threads * config.KDIFF_SIMD_LANES[32 if self.K < 32 else 64]
        if not registry.threaded(self.job.backend):
            return 1
        per_task = config.KDIFF_BITPARALLEL_LANES if self.job.variant == "bitparallel" else 1
        return 2 * numba.get_num_threads() * per_task if self.job.parallel == "coarse" else 1

    def _simd_pass(self):
        """The lanes kernel of the ``simd`` flag (serial or threaded), or None."""
        if self.job.variant != "bitparallel" or "simd" not in self.flags:
            return None
        from engine.kdiff import cpu_lanes

        return cpu_lanes.lanes_parallel if registry.threaded(self.job.backend) else cpu_lanes.lanes_serial

    def __call__(self, alpha, r_lo, r_hi, out_c, counters, out_lv) -> int:
        """Fill ``out_c[:r_hi-r_lo]`` and ``out_lv`` (starts x levels, 0 levels but for
        ``kdiff --all-k``); return the starts settled (the scan stops after the first start
        whose whole suffix occurs, at the smallest k with levels; fewer when cancelled)."""
        if self.device is not None:
            return self.device(alpha, r_lo, r_hi, out_c, counters, out_lv)
        job, m_end = self.job, alpha.shape[0]
        args_tail = (self.beta, self.offsets, self.K)
        if job.variant == "bitparallel" and "simd" in self.flags and self.K < 64:
            # (k > 64: every candidate outgrows the words; the blocked kernel does it all)
            return self._simd(alpha, r_lo, r_hi, out_c, counters, out_lv)
        if job.variant == "bitparallel":
            lanes = config.KDIFF_BITPARALLEL_LANES
            if registry.serial(job.backend):
                return self.kernels.serial(alpha, m_end, r_lo, r_hi, *args_tail, out_c, out_lv,
                                           counters, self.abort, lanes, self.counting)
            return self.kernels.coarse(alpha, m_end, r_lo, r_hi, *args_tail, out_c, out_lv,
                                       counters, self.abort, lanes, numba.get_num_threads(),
                                       self.counting)
        early = "opt1" in self.flags if job.variant == "conventional" else "opt2" in self.flags
        if registry.serial(job.backend) or job.parallel == "coarse":
            scan = self.kernels.serial if registry.serial(job.backend) else self.kernels.coarse
            return scan(alpha, m_end, r_lo, r_hi, *args_tail, early, out_c, out_lv, counters,
                        self.abort, self.counting, self.kernels.which)
        return self._fine(alpha, r_lo, r_hi, out_c, counters, early)

    def _simd(self, alpha, r_lo, r_hi, out_c, counters, out_lv) -> int:
        """bitparallel with ``simd``: 32-bit lanes, then 64-bit lanes for the starts whose
        candidate outgrew 32 rows, then the blocked kernel for those past 64 (a candidate is
        at least k long, so the narrow words are skipped when k rules them out)."""
        from engine.kdiff import cpu_lanes

        m_end = alpha.shape[0]
        rs = np.arange(r_lo, r_hi, dtype=np.int64)
        out = out_c[:r_hi - r_lo]
        lv = out_lv[:r_hi - r_lo]
        todo = np.arange(rs.shape[0])
        cells0 = counters[0]
        lanes_pass = self._simd_pass()
        for bits in (32, 64):
            if todo.shape[0] == 0 or self.K >= bits:
                continue
            sub_rs = np.ascontiguousarray(rs[todo])
            sub_out = np.empty(todo.shape[0], dtype=np.int64)
            sub_lv = np.empty((todo.shape[0], lv.shape[1]), dtype=np.int64)
            grown = np.zeros(todo.shape[0], dtype=np.bool_)
            if not lanes_pass(alpha, m_end, sub_rs, self.beta, self.offsets, self.K,
                              cpu_lanes.word_constants(bits), config.KDIFF_SIMD_LANES[bits],
                              sub_out, sub_lv, grown, counters, self.abort):
                return 0
            out[todo] = sub_out
            lv[todo] = sub_lv
            todo = todo[grown]
        if self.job.count_comparisons:
            counters[1] += counters[0] - cells0  # one symbol comparison per cell, as blocked
        if todo.shape[0] and not self._blocked_each(alpha, r_lo + todo, out, lv, todo, counters):
            return 0
        full = np.flatnonzero((lv[:, 0] if lv.shape[1] else out) == m_end - rs)
        return int(full[0]) + 1 if full.shape[0] else rs.shape[0]

    def _blocked_each(self, alpha, starts, out, lv, where, counters) -> bool:
        """The blocked kernel on scattered starts (simd's long candidates), one start a
        call; on multicore the calls share the threads (the kernel releases the GIL)."""
        blocked, m_end = self.kernels.longest_prefixes, alpha.shape[0]
        rows = np.zeros((starts.shape[0], 2), dtype=np.int64)

        def one(q: int) -> bool:
            i = where[q]
            return blocked(alpha, m_end, int(starts[q]), 1, self.beta, self.offsets, self.K,
                           out[i:i + 1], lv[i:i + 1], rows[q], self.abort, self.counting)

        workers = numba.get_num_threads() if registry.threaded(self.job.backend) else 1
        if workers > 1 and starts.shape[0] > 1:
            from concurrent.futures import ThreadPoolExecutor

            with ThreadPoolExecutor(workers) as pool:
                ok = all(pool.map(one, range(starts.shape[0])))
        else:
            ok = all(one(q) for q in range(starts.shape[0]))
        counters += rows.sum(axis=0)
        return ok

    def _fine(self, alpha, r_lo, r_hi, out_c, counters, early) -> int:
        """Fine forms: one matrix (fine) or a batch (coarse+fine) per kernel call."""
        batch = 1 if self.job.parallel == "fine" else config.KDIFF_COARSE_FINE_BATCH
        opt3 = "opt3" in self.flags
        fine = self.kernels.fine_batch
        # conventional's stripes of rows (the study's tiles); alternative takes whole columns
        stripe = (config.KDIFF_FINE_STRIPE_ROWS,) if self.job.variant == "conventional" else ()
        nthreads = numba.get_num_threads()
        m_end = alpha.shape[0]
        r = r_lo
        while r < r_hi:
            width = min(batch, r_hi - r)
            starts = np.arange(r, r + width, dtype=np.int64)
            chunk = out_c[r - r_lo:r - r_lo + width]
            ok = fine(alpha, m_end, starts, self.beta, self.offsets, self.K, early, opt3, *stripe,
                      chunk, counters, self.abort, nthreads, self.counting)
            if not ok:
                return r - r_lo
            for q in range(width):
                if chunk[q] == m_end - (r + q):
                    return r - r_lo + q + 1
            r += width
        return r_hi - r_lo


class ScanRunner:
    """The scan of every target record's starts, a slice at a time (a SliceRunner).

    Units are start positions whose suffix is longer than k-1 (shorter ones always
    match). A record's scan stops at the first start whose whole suffix occurs: the
    starts after it have no candidate by definition and count as done.
    """

    def __init__(self, job: Job, call: KernelCall):
        self.call = call
        self.K = job.params["k"] - 1
        #: ``kdiff --all-k``: the lower levels (c at 0..K-1 edits) of every start, whose
        #: scan goes on until a whole suffix occurs exactly (k = 1)
        self.all_k = bool(job.params.get("all_k"))
        self.levels = self.K if self.all_k else 0
        self._floor = 0 if self.all_k else self.K  # suffixes this short always occur
        self.targets: tuple[Record, ...] = job.inputs["target"]
        self.total = sum(self.record_starts(i) for i in range(len(self.targets)))
        self._lengths: list[np.ndarray] = []  # per record (levels): starts x k, 0 = none
        self.first_slice = call.min_slice()
        self.done = 0
        self.counters = np.zeros(2, dtype=np.int64)
        self.found = ColumnBuffer(target=np.int32, start0=np.int64, length=np.int64)
        #: what a CandidateTable or a Landscape reads its rows from
        self._labels = dict(target_ids=tuple(t.id for t in self.targets),
                            texts=tuple(t.codes for t in self.targets),
                            shifts=tuple(t.offset for t in self.targets))
        self.profiles: dict[str, np.ndarray] = {}
        self.settled: dict[str, int] = {}
        self._index = -1
        self._open_next()

    @property
    def finished(self) -> bool:
        return self._index >= len(self.targets)

    def _open_next(self) -> None:
        self._index += 1
        if self.finished:
            return
        target = self.targets[self._index]
        self._alpha = np.ascontiguousarray(target.codes)
        self._gaps = gap_runs(self._alpha)
        self._r_end = self.record_starts(self._index)
        self._cs = np.full(self._r_end, -1, dtype=np.int64)
        if self.all_k:
            self._lengths.append(np.zeros((self._r_end, self.levels + 1), dtype=np.int32))
            self._stopped = np.zeros(self.levels + 1, dtype=bool)
        self._r = 0
        self.profiles[target.id] = self._cs[:0]
        self.settled[target.id] = 0
        if self._r_end == 0:
            self._open_next()

    def record_starts(self, record: int) -> int:
        """The starts of target ``record`` the scan computes (shorter suffixes always occur)."""
        return max(0, len(self.targets[record]) - self._floor)

    @property
    def position(self) -> tuple[int, int]:
        """(target record, start) the next slice begins at."""
        return self._index, (self._r if not self.finished else 0)

    def step(self, budget: int) -> Step:
        target, alpha, r = self.targets[self._index], self._alpha, self._r
        m = alpha.shape[0]
        r_hi = min(self._r_end, r + max(1, budget))
        out = np.full(r_hi - r, -1, dtype=np.int64)
        cells0, comps0 = int(self.counters[0]), int(self.counters[1])
        lv = np.full((r_hi - r, self.levels), -1, dtype=np.int64)  # (levels: --all-k only)
        settled = self.call(alpha, r, r_hi, out, self.counters, lv)
        aborted = settled < r_hi - r
        # The first start whose whole suffix occurs ends the record: no candidate there.
        starts = np.arange(r, r + settled, dtype=np.int64)
        whole = np.flatnonzero((lv[:settled, 0] if self.levels else out[:settled]) >= m - starts)
        stopped = whole.size > 0
        kept = int(whole[0]) if stopped else settled
        if stopped:
            aborted, settled = False, kept + 1
        self._cs[r:r + settled] = out[:settled]
        if self.all_k:
            starts = starts[:settled]
            table = self._lengths[-1]
            for t in range(self.levels):
                table[r:r + settled, t] = self._level_lengths(t, starts, lv[:settled, t], m)
            top = table[r:r + settled, self.levels]
            top[:] = self._level_lengths(self.levels, starts, out[:settled], m)
            clear = top > 0
            starts, lengths = starts[clear], top[clear].astype(np.int64)
        else:
            # No candidate holds an assembly gap base (the target's gaps are masked, engine.gaps).
            starts, lengths = starts[:kept], out[:kept] + 1
            clear = ~touches_gap(self._gaps, starts, starts + lengths)
            starts, lengths = starts[clear], lengths[clear]
        self.found.append(target=np.full(starts.shape[0], self._index, dtype=np.int32),
                          start0=starts, length=lengths)
        self._r = r + settled
        self.done += settled
        self.profiles[target.id] = self._cs[:self._r]
        self.settled[target.id] = self._r
        step = Step(settled, int(self.counters[0]) - cells0, int(self.counters[1]) - comps0, aborted)
        if stopped:
            self.done += self._r_end - self._r  # no candidates after the stop
        if stopped or self._r >= self._r_end:
            self._open_next()
        return step

    def _level_lengths(self, t: int, starts: np.ndarray, c: np.ndarray, m: int) -> np.ndarray:
        """Candidate lengths at t edits (k = t+1) of consecutive starts, 0 where none: at and
        after the first start whose whole suffix occurs within t (as that k's own scan stops
        there), and where the candidate holds an assembly gap base."""
        full = c >= m - starts
        none = np.logical_or.accumulate(full) | self._stopped[t]
        self._stopped[t] |= bool(full.any())
        lengths = c + 1
        none |= touches_gap(self._gaps, starts, starts + lengths)
        return np.where(none, 0, lengths)

    def landscape(self):
        """The lengths at every k of every start so far (``kdiff --all-k``; None otherwise):
        a record whose scan is done has a row for each start, the one in progress for those
        settled."""
        if not self.all_k:
            return None
        from engine.kdiff.landscape_table import Landscape

        # (a record is opened before any slice: the first one's table is always there)
        done = [table.shape[0] if i < self._index else self._r
                for i, table in enumerate(self._lengths)]
        return Landscape(np.repeat(np.arange(len(done), dtype=np.int32), done),
                         np.concatenate([np.arange(d, dtype=np.int64) for d in done]),
                         np.concatenate([t[:d] for t, d in zip(self._lengths, done)]),
                         **self._labels)

    def candidates(self) -> CandidateTable:
        """The candidates so far (a view: later slices only append)."""
        return CandidateTable(**self.found.view(), **self._labels)

    def report(self) -> dict:
        return {"partial": self.candidates()}
