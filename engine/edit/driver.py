"""edit's slices and dispatch: from a job to a task table, and the runner that scans it.

- :class:`Plan`: the flat arrays and the task table the kernels read (the
  CPU kernels its rows, made on first use; the GPU runner its fields, so that
  a batch of 200,000 pairs on the GPU makes no 22 MB table).
  *Instances*: every pattern on every strand asked for (the reverse
  complement follows its pattern), concatenated with offsets. *Groups*:
  (instance, text record) pairs: all of them, or pattern i with record i when
  zipped; a group's answer is final once all its tasks are done. *Tasks*: one
  per group, except in search, where a record is cut into chunks so that every
  lane (two per thread for ``myers``, see cpu_lanes) gets work. A chunk's hits
  are those ending in [own_lo, hi); it scans from own_lo - (m + min(k, m)) so
  that every hit within k is exact: an occurrence with d edits spans at most
  m + d text symbols, and d <= m always. *Profile* (search, when asked): per
  group, the record's end positions cut into at most PROFILE_BINS bins of equal
  width (the last one shorter), each holding min(C[m,j], T_CUT + 1) over its
  ends; flat over the groups. Chunks start on bin edges, so a bin belongs to
  one task.
  Inputs are columns (engine.sequences.SeqColumns: one buffer and a range per
  sequence; text records of ``pairing="all"`` may stay Records, read whole or
  streamed), so a batch of many pairs is planned with numpy alone. Zipped
  queries that are the same range of their buffer (a read against each of its
  candidate regions) are one instance; text records are ranges of ``text``
  ([t_lo, t_hi), candidate regions may be ranges of one genome).
- :class:`CpuLanes` runs the CPU kernels (cpu_lanes); :class:`SimdLanes` the
  ``simd`` scan of ``myers`` (cpu_simd: groups of instances over each chunk,
  their lanes standing for the plan's tasks); engine.edit.cuda's
  ``CudaRunner`` offers the same methods for the GPU variants.
- :class:`Collector` turns finished scans (each runner's ``answers()``: done,
  best and end per task) into hits and distances. Hits of
  ``report="hits"`` are final when found, so they are aligned in the slice that
  found them; a best hit or a global distance is final when every task of its
  group is done. Everything aligned so far is therefore ready when a cancel
  stops the job.
- :class:`ScanRunner`: the job's scan as an engine.slices.SliceRunner.
- :class:`Pieces`: a search over a background too large to hold whole runs chunk
  by chunk (engine.edit.streamed); each chunk's pieces are the text records of a
  plan that knows where they lie in their records, so that a piece's tasks own only
  its own columns and its profile bins are its record's.
"""

from __future__ import annotations

from functools import cached_property
from typing import NamedTuple

import numpy as np

from engine import config
from engine.columns import ColumnBuffer, Ids, labels
from engine.edit import PairDistance, ScoreProfile, make_job
from engine.edit import cpu_common as cc
from engine.edit.hits import HIT_DTYPES, EditHits
from engine.gaps import GAP_CODE
from engine.jobs import CancelToken, Job, drive
from engine.sequences import Record, SeqColumns
from engine.slices import Meter, Step, run_slices

#: Most bins of a score profile (per pattern, strand and record).
PROFILE_BINS = 4096

#: Profile bin value before any column of it was scanned (-1 once handed out).
UNSEEN = cc.INF


def _align_kernel(parallel: bool):
    """The path stage's kernel (imported when alignments are asked for: pcr needs none)."""
    from engine.edit import cpu_align

    return cpu_align.align_parallel if parallel else cpu_align.align_serial


def _distinct(starts: np.ndarray, ends: np.ndarray):
    """(index of each range among the distinct ones, their starts, their ends): equal
    ranges are one, sorted by (start, end). O(n) when the ranges come in that order."""
    ds, de = np.diff(starts), np.diff(ends)
    in_order = bool(np.all((ds > 0) | ((ds == 0) & (de >= 0))))
    order = None if in_order else np.lexsort((ends, starts))
    s, e = (starts, ends) if order is None else (starts[order], ends[order])
    new = np.ones(len(s), dtype=bool)
    new[1:] = (s[1:] != s[:-1]) | (e[1:] != e[:-1])
    rank = np.cumsum(new) - 1
    if order is None:
        return rank, s[new], e[new]
    index = np.empty_like(rank)
    index[order] = rank
    return index, s[new], e[new]


def _instances(codes: np.ndarray, starts: np.ndarray, ends: np.ndarray, strands: int):
    """(codes, offsets) of the instances end to end: each range, and after it its reverse
    complement when ``strands`` is 2. Ranges that already lie end to end on one strand are
    read in place."""
    n = len(starts)
    if strands == 1 and n and np.array_equal(starts[1:], ends[:-1]):
        offsets = np.empty(n + 1, dtype=np.int64)
        offsets[:-1] = starts - starts[0]
        offsets[-1] = ends[-1] - starts[0]
        return codes[starts[0]:ends[-1]], offsets
    from engine.edit.cpu_align import gather_windows
    from engine.sequences import COMPLEMENT_TABLE

    lo, hi = np.repeat(starts, strands), np.repeat(ends, strands)
    minus = np.tile(np.arange(strands) == 1, n)
    out = np.empty(int(np.sum(hi - lo)), dtype=np.uint8)
    offsets = np.zeros(n * strands + 1, dtype=np.int64)
    gather_windows(codes, lo, hi, minus, COMPLEMENT_TABLE, out, offsets)
    return out, offsets


def _concat(arrays) -> tuple[np.ndarray, np.ndarray]:
    lengths = np.fromiter((a.shape[0] for a in arrays), dtype=np.int64, count=len(arrays))
    offsets = np.zeros(len(arrays) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    if len(arrays) == 1:  # one record (a genome): read in place, the kernels never write it
        return np.ascontiguousarray(arrays[0], dtype=np.uint8), offsets
    return np.ascontiguousarray(np.concatenate(arrays), dtype=np.uint8), offsets


def _table(fields: dict, count: int) -> np.ndarray:
    """A (count, cpu_common.NTASK) task table from its fields (field -> a scalar, or an array
    of ``count``): the scalars in one pass (a broadcast row), then a column per array."""
    row = np.array([0 if np.ndim(fields[f]) else fields[f] for f in range(cc.NTASK)],
                   dtype=np.int64)
    tasks = np.empty((count, cc.NTASK), dtype=np.int64)
    tasks[:] = row
    for f, value in fields.items():
        if np.ndim(value):
            tasks[:, f] = value
    return tasks


class Pieces(NamedTuple):
    """The job's text records as pieces of background records (engine.streaming): record i
    is columns [start[i], start[i] + its length) of a record of ``length[i]`` columns, and
    owns those from ``own[i]`` on (ends before it are the piece before's). ``codes`` and
    ``offsets``: the records end to end (a streamed chunk's text, or an
    engine.streaming.FlatText for a plan that only describes the whole records)."""

    codes: object
    offsets: np.ndarray
    start: np.ndarray
    own: np.ndarray
    length: np.ndarray


class Plan:
    """Everything the kernels read for one job."""

    def __init__(self, job, nlanes: int, min_chunk: int | None = None, together: int = 1,
                 pieces: Pieces | None = None):
        """``nlanes``: workers to give search chunks to; ``min_chunk``: the shortest chunk
        (default config.EDIT_MIN_CHUNK_COLUMNS, sized for CPU threads). ``together``:
        instances that scan a chunk together (simd): chunks are sized by the text they
        share, and every chunk's scan starts where the longest instance's must.
        ``pieces``: the text records are pieces of a streamed background (search)."""
        self.min_chunk = config.EDIT_MIN_CHUNK_COLUMNS if min_chunk is None else min_chunk
        self.together = together
        params = job.params
        self.mode, self.k, self.report = params["mode"], params["k"], params["report"]
        self.profile = self.mode == "search" and params["profile"]
        patterns, texts = job.inputs["pattern"], job.inputs["text"]  # SeqColumns (texts: or Records)
        self.patterns, self.texts = patterns, texts
        self.strands = ("+", "-") if params["strands"] == "both" else ("+",)
        S = len(self.strands)
        P, R = len(patterns), len(texts)
        zipped = params["pairing"] == "zip"
        if zipped:
            inst_of, lo, hi = _distinct(patterns.starts, patterns.ends)
        else:
            inst_of, lo, hi = np.arange(P), patterns.starts, patterns.ends
        self.pats, self.p_offs = _instances(patterns.codes, lo, hi, S)
        self.pattern_ids = patterns.ids
        self.pieces = pieces
        if isinstance(texts, SeqColumns):
            self.text_ids, self.shifts = texts.ids, texts.shift_array()
        else:
            self.text_ids = Ids([t.id for t in texts])
            #: per text record, bases of the loaded record before its codes (Record.offset):
            #: hits are reported in the loaded record's coordinates.
            self.shifts = np.fromiter((t.offset for t in texts), dtype=np.int64, count=R)
        if pieces is not None:
            self.text, offsets = pieces.codes, pieces.offsets
            self.t_lo, self.t_hi = offsets[:-1], offsets[1:]
        elif isinstance(texts, SeqColumns):
            self.text, self.t_lo, self.t_hi = texts.codes, texts.starts, texts.ends
        else:
            self.text, offsets = _concat([r.codes for r in texts])
            self.t_lo, self.t_hi = offsets[:-1], offsets[1:]
        if zipped:
            pat_of = rec_of = np.arange(P)
        else:
            pat_of, rec_of = np.repeat(np.arange(P), R), np.tile(np.arange(R), P)
        # Groups in output order: pattern, record, strand (one strand: the pairs as they are,
        # no copies).
        if S == 1:
            self.g_pattern, self.g_rec = pat_of, rec_of
            self.g_strand = np.broadcast_to(np.int64(0), (len(pat_of),))
            self.g_inst = inst_of if zipped else pat_of
        else:
            self.g_pattern, self.g_rec = np.repeat(pat_of, S), np.repeat(rec_of, S)
            self.g_strand = np.tile(np.arange(S, dtype=np.int64), len(pat_of))
            self.g_inst = inst_of[self.g_pattern] * S + self.g_strand
        self._build_tasks(nlanes, identity=zipped and S == 1)

    def _build_tasks(self, nlanes: int, identity: bool) -> None:
        """The tasks as :attr:`fields`: each field of the task table (cpu_common.T_*) as a
        scalar where it is alike in every task, else an array per task. ``identity``: group g
        is text record g. A batch of pairs that are one task each (short regions) skips the
        chunk arithmetic."""
        lo = self.t_lo if identity else self.t_lo[self.g_rec]
        hi = self.t_hi if identity else self.t_hi[self.g_rec]
        lengths = np.diff(self.p_offs)
        self.max_m = int(lengths.max())
        # Pattern length per group (a scalar when all patterns are as long: one read length).
        m = self.max_m if int(lengths.min()) == self.max_m else lengths[self.g_inst]
        G = len(lo)
        # A piece of a record: where it starts in the record, the first column it owns
        # (relative), and the record's length (its profile bins are the record's).
        if self.pieces is None:
            p_start = p_own = 0
            rec_lo = lo  # where the record's column 0 would lie (profile bins count from it)
        else:
            p_start = self.pieces.start[self.g_rec]
            p_own = self.pieces.own[self.g_rec] - p_start
            rec_lo = lo - p_start
        # Profile cap - 1: k, or m (C[m,j] <= m, so no cap without k).
        cut = self.k if self.k is not None else m
        self.g_cut = np.broadcast_to(np.asarray(cut, dtype=np.int64), (G,))
        if self.profile:
            rec_len = hi - lo if self.pieces is None else self.pieces.length[self.g_rec]
            self.binw = -(-rec_len // PROFILE_BINS)
            nbins = -(-rec_len // self.binw)
            self.prof_offs = np.zeros(G + 1, dtype=np.int64)
            np.cumsum(nbins, out=self.prof_offs[1:])
            prof = self.prof_offs[:-1]
        else:
            self.binw = np.broadcast_to(np.int64(0), (G,))
            self.prof_offs = np.zeros(G + 1, dtype=np.int64)
            prof = 0
        # Chunk length (0: one task for the whole record), whole bins per chunk.
        chunk = self._chunk_columns(nlanes, -(-int(np.sum(hi - lo)) // self.together))
        # Chunks own from the piece's first owned column, then from bin edges on.
        first = lo if self.pieces is None else lo + p_own
        if self.profile:
            chunk = -(-chunk // self.binw) * self.binw
            first = rec_lo + (p_start + p_own) // self.binw * self.binw
        span = hi - first
        if np.ndim(chunk):
            count = np.where(chunk > 0, -(-span // np.maximum(chunk, 1)), 1)
        elif chunk > 0:  # (one chunk each when every span fits one: no count per group)
            count = 1 if span.min() > 0 and span.max() <= chunk else -(-span // chunk)
        else:
            count = 1
        # (a batch of short regions: one task per group, so per-task columns are per-group ones)
        self.one_task_each = bool(np.all(count == 1))
        if self.one_task_each:
            self.task_group = first_task = np.arange(G, dtype=np.int64)
            index = 0

            def per_task(a):
                return a
        else:
            self.task_group = np.repeat(np.arange(G, dtype=np.int64), count)
            first_task = np.concatenate(([0], np.cumsum(count)[:-1])).astype(np.int64)
            index = np.arange(len(self.task_group)) - first_task[self.task_group]

            def per_task(a):
                return a if np.ndim(a) == 0 else a[self.task_group]
        self.first_task = first_task
        fields = {cc.T_PAT: per_task(self.g_inst), cc.T_BEST: cc.INF, cc.T_END: -1, cc.T_DONE: 0,
                  cc.T_REC_LO: per_task(rec_lo), cc.T_BINW: per_task(self.binw if self.profile else 0),
                  cc.T_PROF: per_task(prof), cc.T_CUT: per_task(cut), cc.T_LEAD: per_task(first_task),
                  cc.T_SHARED: -1}
        if self.mode == "global":
            fields[cc.T_SCAN_LO] = lo
            fields[cc.T_OWN_LO] = hi  # nothing is recorded on the way
            fields[cc.T_HI] = hi
            # k, or the first band of banded's doubling.
            fields[cc.T_THRESH] = self.k if self.k is not None else \
                np.abs((hi - lo) - m) + config.EDIT_BAND_FIRST_SLACK
            self.widths = hi - lo
        else:
            lo_t, hi_t, first_t = per_task(lo), per_task(hi), per_task(first)
            if self.one_task_each:  # its chunk owns from its first column to the record's end
                own_lo = first_t if not self.profile else np.maximum(lo_t + p_own, first_t)
                own_hi = hi_t
            else:
                chunk_t = per_task(chunk)
                own_lo = np.maximum(lo_t + per_task(p_own), first_t + index * chunk_t)
                own_hi = np.where(chunk_t > 0, np.minimum(hi_t, first_t + (index + 1) * chunk_t),
                                  hi_t)
            mo = self.max_m if self.together > 1 else per_task(m)
            overlap = mo + (np.minimum(self.k, mo) if self.k is not None else mo)
            # (a task that owns its whole record scans from its start: no pass over them)
            scan_lo = lo_t if own_lo is lo_t else np.maximum(lo_t, own_lo - overlap)
            fields[cc.T_SCAN_LO] = scan_lo
            fields[cc.T_OWN_LO] = own_lo
            fields[cc.T_HI] = own_hi
            fields[cc.T_THRESH] = self.k if self.k is not None else cc.INF
            self.widths = own_hi - scan_lo
        self.fields = fields
        #: per task, the text columns it scans (banded global may scan more: restarts)
        self.columns = int(np.sum(self.widths))

    @cached_property
    def tasks(self) -> np.ndarray:
        """The task table the CPU kernels read and write (:attr:`fields` as rows), made on
        first use: a GPU runner reads the fields and keeps the answers itself, so that a
        batch of 200,000 pairs on the GPU never makes these 22 MB."""
        return _table(self.fields, len(self.task_group))

    def _chunk_columns(self, nlanes: int, total: int) -> int:
        """Chunk length for search (0: no chunks), so that every lane gets work."""
        if self.mode == "global" or nlanes == 1:
            return 0
        return max(self.min_chunk, -(-total // (nlanes * config.EDIT_CHUNKS_PER_THREAD)))

    def mode_id(self) -> int:
        if self.mode == "global":
            return cc.MODE_GLOBAL
        return cc.MODE_HITS if self.report == "hits" else cc.MODE_BEST


def simd_applies(job: Job) -> bool:
    """Whether the job runs cpu_simd: ``myers`` with the ``simd`` flag on the CPU, and at
    least config.EDIT_SIMD_MIN_LANES instances (patterns x strands) sharing each text."""
    if job.backend == "cuda" or job.variant != "myers" or "simd" not in job.flags:
        return False
    if job.params["pairing"] != "all":
        return False
    instances = len(job.inputs["pattern"]) * (2 if job.params["strands"] == "both" else 1)
    return instances >= config.EDIT_SIMD_MIN_LANES


def streamed_text(job: Job):
    """The job's text as an engine.streaming.Background when the search must read it a chunk
    at a time (over config.STREAM_MEMORY_BASES; cuda: config.GPU_STREAM_BYTES), else None.
    Global distances and zipped batches take their records whole."""
    from engine.streaming import Background

    if job.params["mode"] != "search" or job.params["pairing"] != "all":
        return None
    text = Background(job.inputs["text"], "forward", gpu=job.backend == "cuda")
    return None if text.fits() else text


def make_runner(job: Job, abort: np.ndarray, threads: int | None,
                pieces: Pieces | None = None) -> "ScanRunner":
    """The job's scan on its backend; ``threads``: numba threads of a multicore job;
    ``pieces``: the job's text records are a streamed chunk's pieces (engine.edit.streamed).
    A dask job's runner submits the chunks' searches to a cluster (engine.edit.cluster)."""
    if job.backend == "dask":
        from engine.edit.cluster import ClusterRunner

        return ClusterRunner(job, abort)
    if pieces is None:
        background = streamed_text(job)
        if background is not None:
            from engine.edit.streamed import StreamedRunner

            return StreamedRunner(job, abort, threads, background)
    if job.backend == "cuda":
        from engine.edit.cuda import CudaRunner  # numba.cuda is imported for cuda jobs only

        return ScanRunner(job, CudaRunner(job, abort, pieces), 1, abort)
    if simd_applies(job):
        workers = threads if job.backend == "multicore" else 1
        lanes = SimdLanes(job, workers, abort, threads, pieces)
        return ScanRunner(job, lanes, workers * lanes.width, abort)
    from engine.edit import cpu_lanes

    per_thread = cpu_lanes.lanes_per_thread(job.variant)
    nlanes = (threads if job.backend == "multicore" else 1) * per_thread
    return ScanRunner(job, CpuLanes(job, Plan(job, nlanes, pieces=pieces), nlanes, abort, threads),
                      nlanes, abort)


class CpuLanes:
    """The lanes' state, and calls to cpu_lanes and the path stage with the job's backend."""

    def __init__(self, job, plan: Plan, nlanes: int, abort: np.ndarray, threads: int | None):
        from engine.edit import cpu_lanes

        self.job, self.plan, self.abort, self.threads = job, plan, abort, threads
        self.variant = cpu_lanes.VARIANTS.index(job.variant)
        n_int, n_uint = cpu_lanes.state_sizes(job.variant, plan.max_m)
        self.info = np.zeros((nlanes, cc.NINFO), dtype=np.int64)
        self.info[:, cc.TASK] = -1
        self.per = cpu_lanes.lanes_per_thread(job.variant)
        self.info[:, cc.NEXT] = np.arange(nlanes)  # lane l: tasks l, l + nlanes, ...
        self.info[:, cc.END] = len(plan.tasks)
        self.ist = np.zeros((nlanes, n_int), dtype=np.int64)
        self.ust = np.zeros((nlanes, n_uint), dtype=np.uint64)
        cap = config.EDIT_HIT_BUFFER if plan.mode_id() == cc.MODE_HITS else 1
        self.hits = np.zeros((nlanes, cap, 3), dtype=np.int64)
        self.prof = np.full(int(plan.prof_offs[-1]), UNSEEN, dtype=np.int64)
        self.redo = plan.mode == "global" and plan.k is None
        parallel = job.backend == "multicore"
        self.scan = cpu_lanes.run_parallel if parallel else cpu_lanes.run_serial
        self.align_kernel = _align_kernel(parallel) if job.params["align"] else None

    def compiled(self) -> bool:
        return bool(self.scan.signatures) and (not self.job.params["align"]
                                               or bool(self.align_kernel.signatures))

    def warm_up(self) -> None:
        """Compile (or load from the cache) the job's kernels on a tiny search job.

        Modes and variants are run-time arguments of the same kernels, so one
        search job compiles everything the real job calls.
        """
        job = self.job
        tiny = Record("w", np.array([1, 2, 4, 8, 15], dtype=np.uint8))
        warm = make_job([tiny], [tiny], mode="search", k=1, variant=job.variant,
                        backend=job.backend, parallel=job.parallel, flags=job.flags,
                        align=job.params["align"], profile=True, threads=job.threads)
        cancel = CancelToken()
        drive(run_slices(make_runner(warm, cancel.flag, self.threads),
                         Meter(warm, threads=self.threads), cancel))

    def scan_slice(self, budget: int) -> None:
        p = self.plan
        self.scan(self.variant, p.mode_id(), self.redo, p.pats, p.p_offs, p.text, p.tasks,
                  self.info, self.ist, self.ust, self.hits, self.prof, self.per, budget,
                  self.abort)

    def finished(self) -> bool:
        return bool(np.all(self.info[:, cc.TASK] < 0)
                    and np.all(self.info[:, cc.NEXT] >= self.info[:, cc.END]))

    def columns(self) -> int:
        """Text columns scanned so far (overlaps and banded restarts included)."""
        return int(self.info[:, cc.COLS].sum())

    def cells(self) -> int:
        return int(self.info[:, cc.CELLS].sum())

    def comparisons(self) -> int:
        return int(self.info[:, cc.CMPS].sum())

    def answers(self):
        return table_answers(self.plan.tasks)

    def take_hits(self) -> np.ndarray:
        out = [self.hits[s, :self.info[s, cc.NHITS]] for s in range(self.info.shape[0])]
        rows = np.concatenate(out)
        self.info[:, cc.NHITS] = 0
        return rows

    def first_slice(self) -> int:
        """Columns per lane of the first slice (later slices adapt to SLICE_SECONDS)."""
        return config.EDIT_FIRST_SLICE_COLUMNS

    def align(self, items: np.ndarray):
        """(starts, cigars) for items [instance, end, record start, distance, start or -1].

        A cancelled item has cigar None.
        """
        return align_items(self.plan, self.align_kernel, self.abort, items)


class SimdLanes:
    """The ``simd`` scan (cpu_simd): groups of instances advanced together over each chunk.

    Instances (in Plan order) are cut into the fewest groups of at most
    config.EDIT_SIMD_MAX_LANES lanes, all as wide but the last; a *unit* is a chunk of a
    record (the same chunks as the plan's tasks) with one group, and its lane l
    stands for the plan's task of that instance, record and chunk, so hits,
    bests and distances reach the Collector as the other kernels leave them.
    """

    def __init__(self, job, workers: int, abort: np.ndarray, threads: int | None,
                 pieces: Pieces | None = None):
        from engine.edit import cpu_simd

        self.cpu_simd = cpu_simd
        self.job, self.abort, self.threads = job, abort, threads
        S = 2 if job.params["strands"] == "both" else 1
        count = len(job.inputs["pattern"]) * S
        ngroups = -(-count // config.EDIT_SIMD_MAX_LANES)
        width = -(-count // ngroups)
        self.width = width
        self.plan = plan = Plan(job, workers, together=width, pieces=pieces)
        m = np.diff(plan.p_offs)
        dtype = cpu_simd.word_type(plan.max_m)
        self.word = cpu_simd.word_constants(dtype)
        group_of = np.arange(count) // width
        self.widths = np.bincount(group_of, minlength=ngroups).astype(np.int64)
        self.peq = np.zeros((ngroups, 16 * width), dtype=dtype)
        self.last = np.zeros((ngroups, width), dtype=dtype)
        self.lane_m = np.zeros((ngroups, width), dtype=np.int64)
        for g in range(ngroups):
            inst = np.arange(g * width, min(count, (g + 1) * width))
            peq = cpu_simd.build_peq([plan.pats[plan.p_offs[i]:plan.p_offs[i + 1]] for i in inst],
                                     dtype)
            self.peq[g].reshape(16, width)[:, :len(inst)] = peq
            self.last[g, :len(inst)] = m[inst] - 1
            self.lane_m[g, :len(inst)] = m[inst]
        self.m_sum = self.lane_m.sum(axis=1)
        self._build_units(count, ngroups)
        W = workers
        self.info = np.zeros((W, cpu_simd.NWINFO), dtype=np.int64)
        self.info[:, cpu_simd.W_UNIT] = -1
        self.info[:, cpu_simd.W_NEXT] = np.arange(W)
        self.info[:, cpu_simd.W_STRIDE] = W
        self.ws = np.zeros((W, cpu_simd.NWORD, width), dtype=dtype)
        self.ls = np.zeros((W, cpu_simd.NLANE, width), dtype=np.int64)
        cap = max(config.EDIT_HIT_BUFFER, width) if plan.mode_id() == cc.MODE_HITS else 1
        self.hits = np.zeros((W, cap, 3), dtype=np.int64)
        self.prof = np.full(int(plan.prof_offs[-1]), UNSEEN, dtype=np.int64)
        parallel = job.backend == "multicore"
        self.scan = cpu_simd.run_parallel if parallel else cpu_simd.run_serial
        self.align_kernel = _align_kernel(parallel) if job.params["align"] else None

    def _build_units(self, count: int, ngroups: int) -> None:
        """Units (record, chunk, group), and the plan's task behind each of their lanes."""
        cs, plan, tasks = self.cpu_simd, self.plan, self.plan.tasks
        R = len(plan.texts)
        group = np.empty((count, R), dtype=np.int64)  # (instance, record) -> plan group
        group[plan.g_inst, plan.g_rec] = np.arange(len(plan.g_inst))
        chunks = np.bincount(plan.task_group, minlength=len(plan.g_inst))[group[0]]  # per record
        rec = np.repeat(np.arange(R), chunks)
        chunk = np.arange(len(rec)) - np.repeat(np.cumsum(chunks) - chunks, chunks)
        u_rec, u_chunk = np.repeat(rec, ngroups), np.repeat(chunk, ngroups)
        u_group = np.tile(np.arange(ngroups), len(rec))
        inst = u_group[:, None] * self.width + np.arange(self.width)[None, :]
        live = inst < count
        self.unit_tasks = np.full(inst.shape, -1, dtype=np.int64)
        self.unit_tasks[live] = (plan.first_task[group[np.where(live, inst, 0), u_rec[:, None]]]
                                 + u_chunk[:, None])[live]
        first = tasks[self.unit_tasks[:, 0]]
        units = np.zeros((len(u_rec), cs.NUNIT), dtype=np.int64)
        units[:, cs.U_GROUP] = u_group
        units[:, cs.U_REC_LO] = first[:, cc.T_REC_LO]
        units[:, cs.U_SCAN_LO] = first[:, cc.T_SCAN_LO]
        units[:, cs.U_OWN_LO] = first[:, cc.T_OWN_LO]
        units[:, cs.U_HI] = first[:, cc.T_HI]
        units[:, cs.U_BINW] = first[:, cc.T_BINW]
        self.units = units

    def _args(self):
        return (self.plan.mode_id(), self.plan.text, self.peq, self.last, self.lane_m, self.widths,
                self.m_sum, self.units, self.unit_tasks, self.plan.tasks, self.prof, self.word,
                self.info, self.ws, self.ls, self.hits)

    def compiled(self) -> bool:
        import numba

        word = numba.typeof(self.word)
        return any(word in sig for sig in self.scan.signatures) and (
            not self.job.params["align"] or bool(self.align_kernel.signatures))

    def warm_up(self) -> None:
        """Compile (or load) the kernels on a tiny search job of the same word width."""
        job = self.job
        m = 5 if self.word.dtype == np.uint32 else 33
        pats = [Record(f"w{i}", np.resize(np.array([1, 2, 4, 8, 15], dtype=np.uint8), m))
                for i in range(max(1, config.EDIT_SIMD_MIN_LANES))]
        text = Record("t", np.array([1, 2, 4, 8, 15], dtype=np.uint8))
        warm = make_job(pats, [text], mode="search", k=1, variant=job.variant,
                        backend=job.backend, parallel=job.parallel, flags=job.flags,
                        align=job.params["align"], profile=True, threads=job.threads)
        cancel = CancelToken()
        drive(run_slices(make_runner(warm, cancel.flag, self.threads),
                         Meter(warm, threads=self.threads), cancel))

    def scan_slice(self, budget: int) -> None:
        self.scan(*self._args(), budget, self.abort)

    def finished(self) -> bool:
        cs = self.cpu_simd
        return bool(np.all(self.info[:, cs.W_UNIT] < 0)
                    and np.all(self.info[:, cs.W_NEXT] >= len(self.units)))

    def columns(self) -> int:
        return int(self.info[:, self.cpu_simd.W_COLS].sum())

    def cells(self) -> int:
        return int(self.info[:, self.cpu_simd.W_CELLS].sum())

    def comparisons(self) -> int:
        return 0

    def answers(self):
        return table_answers(self.plan.tasks)

    def take_hits(self) -> np.ndarray:
        n = self.info[:, self.cpu_simd.W_NHITS]
        rows = np.concatenate([self.hits[w, :n[w]] for w in range(len(n))])
        self.info[:, self.cpu_simd.W_NHITS] = 0
        return rows

    def first_slice(self) -> int:
        return config.EDIT_FIRST_SLICE_COLUMNS

    def align(self, items: np.ndarray):
        return align_items(self.plan, self.align_kernel, self.abort, items)


def table_answers(tasks: np.ndarray):
    """(done, best, end) per task, as the CPU kernels leave them in the task table (views):
    what engine.edit.driver.Collector reads of every runner's ``answers()``."""
    return tasks[:, cc.T_DONE], tasks[:, cc.T_BEST], tasks[:, cc.T_END]


def align_items(plan, kernel, abort: np.ndarray, items: np.ndarray):
    """The path stage (cpu_align) for items [instance, end, record start, distance, start or -1]
    of a plan: (starts, cigars), cigar None for an item a cancel stopped. Every backend's
    hits and pairs go through it, so all report the same start and CIGAR."""
    m = np.diff(plan.p_offs)[items[:, 0]]
    longest = np.where(items[:, 4] >= 0, items[:, 1] - items[:, 4],
                       np.minimum(items[:, 1] - items[:, 2], m + items[:, 3]))
    op_offs = np.zeros(len(items) + 1, dtype=np.int64)
    np.cumsum(m + longest, out=op_offs[1:])
    ops = np.zeros(int(op_offs[-1]), dtype=np.uint8)
    starts = np.zeros(len(items), dtype=np.int64)
    counts = np.zeros(len(items), dtype=np.int64)
    kernel(plan.pats, plan.p_offs, plan.text, np.ascontiguousarray(items), op_offs, ops, starts,
           counts, config.EDIT_ALIGN_STORE_WORDS, abort)
    from engine.edit import cpu_align

    bad = np.flatnonzero((counts == -1) | (starts < 0))
    if bad.size:
        raise RuntimeError(f"edit: alignment disagrees with the scanned distance for item "
                           f"{items[bad[0]].tolist()}")
    return starts, Cigars(*cpu_align.cigar_text(ops, op_offs, counts), counts >= 0)


class Cigars(NamedTuple):
    """The CIGARs of aligned items as one byte string: item h's is text[offs[h]:offs[h+1]]
    where ``done[h]`` (False: a cancel stopped it)."""

    text: np.ndarray
    offs: np.ndarray
    done: np.ndarray

    def strings(self) -> list:
        """One str per item (None where not done)."""
        text, bounds = self.text.tobytes().decode("ascii"), self.offs.tolist()
        return [text[bounds[h]:bounds[h + 1]] if ok else None
                for h, ok in enumerate(self.done.tolist())]


class Collector:
    """Turns finished scans into :class:`Hit` and :class:`PairDistance` objects."""

    def __init__(self, plan: Plan, runner, align: bool):
        self.plan, self.runner, self.align = plan, runner, align
        groups = len(plan.g_inst)
        self.found = ColumnBuffer(**HIT_DTYPES)  # hits in the order found
        self.cigar_text = ColumnBuffer(byte=np.uint8)  # their CIGARs end to end
        self.ids = (plan.pattern_ids, plan.text_ids)
        self.shifts = plan.shifts
        self.distances: dict[int, PairDistance] = {}
        self.left = np.ones(groups, dtype=np.int64) if plan.one_task_each else \
            np.bincount(plan.task_group, minlength=groups)  # tasks left per group
        self.seen = np.zeros(len(plan.task_group), dtype=bool)
        self.best = np.full(groups, cc.INF, dtype=np.int64)
        self.best_end = np.full(groups, -1, dtype=np.int64)

    def absorb(self) -> None:
        """Collect the slice's hits and the groups it finished."""
        plan = self.plan
        mode = plan.mode_id()
        if mode == cc.MODE_HITS:
            rows = self.runner.take_hits()
            self._add_hits(plan.task_group[rows[:, 2]], rows[:, 0], rows[:, 1])
        done, task_best, task_end = self.runner.answers()
        newly = np.flatnonzero((done == 1) & ~self.seen)
        if newly.size == 0:
            return
        # Tasks finished as a run (a GPU slice's) are read as a slice of the table, not gathered.
        at = slice(int(newly[0]), int(newly[-1]) + 1) if newly[-1] - newly[0] < newly.size \
            else newly
        self.seen[at] = True
        g = plan.task_group[at]
        if plan.one_task_each:  # (task i is group i: a run of them is a slice)
            self.left[at] = 0
        else:
            self.left -= np.bincount(g, minlength=len(self.left))
        if mode == cc.MODE_HITS:
            return
        if mode == cc.MODE_GLOBAL:
            self._add_pairs(g, task_best[at])
            return
        best, end = task_best[at], task_end[at]
        if plan.one_task_each:  # a group's one task: its best, if any, is final
            found = np.flatnonzero(best < cc.INF)
            g, best, end = g[found], best[found], end[found]
            self.best[g], self.best_end[g] = best, end
            self._add_hits(g, end, best)
            return
        # Best of a group's chunks: smallest distance, then first end.
        order = np.lexsort((end, best, g))
        g, best, end = g[order], best[order], end[order]
        first = np.concatenate(([True], g[1:] != g[:-1]))
        g, best, end = g[first], best[first], end[first]
        better = (best < self.best[g]) | ((best == self.best[g]) & (end < self.best_end[g]))
        self.best[g[better]] = best[better]
        self.best_end[g[better]] = end[better]
        final = g[(self.left[g] == 0) & (self.best[g] < cc.INF)]
        self._add_hits(final, self.best_end[final], self.best[final])

    def _add_hits(self, g: np.ndarray, end: np.ndarray, dist: np.ndarray) -> None:
        plan = self.plan
        # A hit that ends on an assembly gap base (code 0, engine.gaps) would not exist with
        # the gap as a record break: dropped (and never aligned: find_start stops at gaps).
        clear = plan.text[end - 1] != GAP_CODE if len(g) else None
        if clear is not None and not clear.all():
            g, end, dist = g[clear], end[clear], dist[clear]
        if len(g) == 0:
            return
        rec_lo = plan.t_lo[plan.g_rec[g]]
        shift = self.shifts[plan.g_rec[g]]
        none = np.full(len(g), -1, dtype=np.int64)
        start, cig_lo, cig_hi = none, none, none
        if self.align:
            items = np.column_stack((plan.g_inst[g], end, rec_lo, dist, none))
            starts, cigars = self.runner.align(items.astype(np.int64))
            done = cigars.done
            start = np.where(done, starts - rec_lo + 1 + shift, -1)
            base = len(self.cigar_text)
            self.cigar_text.append(byte=cigars.text)
            cig_lo = np.where(done, base + cigars.offs[:-1], -1)
            cig_hi = np.where(done, base + cigars.offs[1:], -1)
        self.found.append(pattern=plan.g_pattern[g], record=plan.g_rec[g], strand=plan.g_strand[g],
                          end=end - rec_lo + shift, distance=dist, start=start, cig_lo=cig_lo,
                          cig_hi=cig_hi)

    def _add_pairs(self, g: np.ndarray, score: np.ndarray) -> None:
        plan = self.plan
        # banded reports T+1 for "beyond its band"; without k its band grew until exact.
        within = np.ones(len(g), dtype=bool) if plan.k is None else score <= plan.k
        cigars = [None] * len(g)
        if self.align and within.any():
            sel = np.flatnonzero(within)
            gs = g[sel]
            lo, hi = plan.t_lo[plan.g_rec[gs]], plan.t_hi[plan.g_rec[gs]]
            items = np.column_stack((plan.g_inst[gs], hi, lo, score[sel], lo)).astype(np.int64)
            _, aligned = self.runner.align(items)
            for i, cigar in zip(sel.tolist(), aligned.strings()):
                cigars[i] = cigar
        pids = labels(plan.pattern_ids, plan.g_pattern[g])
        rids = labels(plan.text_ids, plan.g_rec[g])
        for gi, pid, rid, d, ok, cigar in zip(g.tolist(), pids, rids, score.tolist(),
                                              within.tolist(), cigars):
            self.distances[gi] = PairDistance(pid, rid, d if ok else None, cigar)

    def profiles(self) -> tuple[ScoreProfile, ...]:
        """One profile per group (pattern, record, strand order); bins not scanned are -1."""
        plan = self.plan
        if not plan.profile:
            return ()
        values = np.where(self.runner.prof == UNSEEN, -1, self.runner.prof).astype(np.int32)
        out = []
        for gi in range(len(plan.g_inst)):
            lo, hi = plan.prof_offs[gi], plan.prof_offs[gi + 1]
            r = plan.g_rec[gi]
            out.append(ScoreProfile(plan.pattern_ids[int(plan.g_pattern[gi])],
                                    plan.text_ids[int(r)],
                                    plan.strands[plan.g_strand[gi]], int(plan.binw[gi]),
                                    int(plan.t_hi[r] - plan.t_lo[r]),
                                    int(plan.g_cut[gi]) + 1,
                                    values[lo:hi]))
        return tuple(out)

    def hit_table(self) -> EditHits:
        """The hits so far, in the order found (a view: later slices only append)."""
        plan = self.plan
        return EditHits(self.found.view(), pattern_ids=self.ids[0], record_ids=self.ids[1],
                        text=plan.text, starts=plan.t_lo, shifts=self.shifts,
                        cigars=self.cigar_text.view()["byte"])

    def sorted_hits(self) -> EditHits:
        """Hits in pattern order, then record order, end, strand ('+' first): found so
        already, as a batch's best hits are, they are kept as they are."""
        hits = self.hit_table()
        keys = (hits.strand, hits.end, hits.record, hits.pattern)
        return hits if _in_order(keys) else hits.take(np.lexsort(keys))

    def sorted_distances(self) -> tuple[PairDistance, ...]:
        return tuple(self.distances[g] for g in sorted(self.distances))


def _in_order(keys) -> bool:
    """Whether rows are sorted by ``keys`` (np.lexsort's order: the last key first)."""
    if len(keys[0]) < 2:
        return True
    undecided = np.ones(len(keys[0]) - 1, dtype=bool)  # pairs equal on the keys so far
    for key in reversed(keys):
        step = np.diff(key.astype(np.int64, copy=False))
        if np.any(undecided & (step < 0)):
            return False
        undecided &= step == 0
        if not undecided.any():
            return True
    return True


class ScanRunner:
    """The job's scan, a slice at a time (an engine.slices.SliceRunner).

    Units are text columns: ``done``/``total`` count them over all lanes
    (overlaps of chunks included; banded global restarts may scan more than
    planned), a slice's budget and its ``Step.units`` per lane.
    """

    def __init__(self, job: Job, lanes, nlanes: int, abort: np.ndarray):
        self.lanes = lanes  # CpuLanes or engine.edit.cuda.CudaRunner
        self.plan = lanes.plan
        self.nlanes = nlanes
        self.abort = abort
        self.collector = Collector(self.plan, lanes, job.params["align"])
        self.first_slice = lanes.first_slice()

    @property
    def total(self) -> int:
        return max(self.plan.columns, self.lanes.columns())

    @property
    def done(self) -> int:
        return min(self.lanes.columns(), self.plan.columns)

    @property
    def finished(self) -> bool:
        return self.lanes.finished()

    def step(self, budget: int) -> Step:
        lanes = self.lanes
        before = lanes.columns(), lanes.cells(), lanes.comparisons()
        lanes.scan_slice(budget)
        self.collector.absorb()
        return Step(max(1, (lanes.columns() - before[0]) // self.nlanes), lanes.cells() - before[1],
                    lanes.comparisons() - before[2], aborted=bool(self.abort[0]))

    def report(self) -> dict:
        c = self.collector
        return {"partial": c.hit_table() if self.plan.mode == "search"
                else tuple(c.distances.values())}


