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
  by chunk (engine.edit.problem); each chunk's pieces are the text records of a
  plan that knows where they lie in their records, so that a piece's tasks own only
  its own columns and its profile bins are its record's.
"""

from __future__ import annotations

import numpy as np

from engine import config, registry
from engine.columns import ColumnBuffer, labels
from engine.edit import cpu_common as cc
from engine.edit.hits import HIT_DTYPES, EditHits, PairDistance, ScoreProfile
from engine.edit.plan import UNSEEN, Pieces, Plan, align_items
from engine.gaps import GAP_CODE
from engine.jobs import Job
from engine.slices import Step


def simd_applies(job: Job) -> bool:
    """Whether the job runs cpu_simd: ``myers`` with the ``simd`` flag on the CPU, and at
    least config.EDIT_SIMD_MIN_LANES instances (patterns x strands) sharing each text."""
    if registry.on_gpu(job.backend) or job.variant != "myers" or "simd" not in job.flags:
        return False
    if job.params["pairing"] != "all":
        return False
    instances = len(job.inputs["pattern"]) * (2 if job.params["strands"] == "both" else 1)
    return instances >= config.EDIT_SIMD_MIN_LANES


def make_runner(job: Job, abort: np.ndarray, threads: int | None,
                pieces: Pieces | None = None) -> "ScanRunner":
    """The job's scan in memory on its backend's kernels; ``threads``: numba threads of a
    multicore job; ``pieces``: the job's text records are a chunk's pieces
    (engine.edit.problem)."""
    if registry.on_gpu(job.backend):  # (engine.edit.cuda.CudaRunner: numba.cuda for cuda jobs only)
        return ScanRunner(job, registry.kernels(job)(job, abort, pieces), 1, abort)
    workers = threads if registry.threaded(job.backend) else 1
    if simd_applies(job):
        lanes = SimdLanes(job, workers, abort, threads, pieces)
        return ScanRunner(job, lanes, workers * lanes.width, abort)
    nlanes = workers * registry.kernels(job).lanes_per_thread(job.variant)
    return ScanRunner(job, CpuLanes(job, Plan(job, nlanes, pieces=pieces), nlanes, abort, threads),
                      nlanes, abort)


class _LaneScan:
    """What the two CPU scans (:class:`CpuLanes`, :class:`SimdLanes`) share: an info row
    per lane or worker whose ``_nhits``, ``_cols`` and ``_cells`` columns count hits in its
    buffer, columns scanned and DP cells; the hit buffers and score profile; alignment."""

    _nhits = _cols = _cells = 0

    def _outputs(self, job, kernels, rows: int, hit_cap: int) -> None:
        """Hit buffers of ``hit_cap`` rows (one in modes without hits), the profile, and the
        scan and path kernels of the job's backend."""
        cap = hit_cap if self.plan.mode_id() == cc.MODE_HITS else 1
        self.hits = np.zeros((rows, cap, 3), dtype=np.int64)
        self.prof = np.full(int(self.plan.prof_offs[-1]), UNSEEN, dtype=np.int64)
        parallel = registry.threaded(job.backend)
        self.scan = kernels.run_parallel if parallel else kernels.run_serial
        self.align_kernel = None
        if job.params["align"]:  # (the path stage imported only then: pcr needs none)
            from engine.edit import cpu_align

            self.align_kernel = cpu_align.align_parallel if parallel else cpu_align.align_serial

    def columns(self) -> int:
        """Text columns scanned so far (overlaps and banded restarts included)."""
        return int(self.info[:, self._cols].sum())

    def cells(self) -> int:
        return int(self.info[:, self._cells].sum())

    def answers(self):
        """(done, best, end) per task, as the CPU kernels leave them in the task table (views):
        what Collector reads of every runner's ``answers()``."""
        tasks = self.plan.tasks
        return tasks[:, cc.T_DONE], tasks[:, cc.T_BEST], tasks[:, cc.T_END]

    def take_hits(self) -> np.ndarray:
        n = self.info[:, self._nhits]
        rows = np.concatenate([self.hits[w, :n[w]] for w in range(len(n))])
        self.info[:, self._nhits] = 0
        return rows

    def first_slice(self) -> int:
        """Columns per lane of the first slice (later slices adapt to SLICE_SECONDS)."""
        return config.EDIT_FIRST_SLICE_COLUMNS

    def align(self, items: np.ndarray):
        """(starts, cigars) for items [instance, end, record start, distance, start or -1].

        A cancelled item has cigar None.
        """
        return align_items(self.plan, self.align_kernel, self.abort, items)


class CpuLanes(_LaneScan):
    """The lanes' state, and calls to cpu_lanes and the path stage with the job's backend."""

    _nhits, _cols, _cells = cc.NHITS, cc.COLS, cc.CELLS

    def __init__(self, job, plan: Plan, nlanes: int, abort: np.ndarray, threads: int | None):
        cpu_lanes = registry.kernels(job)  # (engine/edit/spec.py)
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
        self._outputs(job, cpu_lanes, nlanes, config.EDIT_HIT_BUFFER)
        self.redo = plan.mode == "global" and plan.k is None

    def scan_slice(self, budget: int) -> None:
        p = self.plan
        self.scan(self.variant, p.mode_id(), self.redo, p.pats, p.p_offs, p.text, p.tasks,
                  self.info, self.ist, self.ust, self.hits, self.prof, self.per, budget,
                  self.abort)

    def finished(self) -> bool:
        return bool(np.all(self.info[:, cc.TASK] < 0)
                    and np.all(self.info[:, cc.NEXT] >= self.info[:, cc.END]))

    def comparisons(self) -> int:
        return int(self.info[:, cc.CMPS].sum())


class SimdLanes(_LaneScan):
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
        self._nhits, self._cols, self._cells = cpu_simd.W_NHITS, cpu_simd.W_COLS, cpu_simd.W_CELLS
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
        self._outputs(job, cpu_simd, W, max(config.EDIT_HIT_BUFFER, width))

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

    def scan_slice(self, budget: int) -> None:
        self.scan(self.plan.mode_id(), self.plan.text, self.peq, self.last, self.lane_m,
                  self.widths, self.m_sum, self.units, self.unit_tasks, self.plan.tasks, self.prof,
                  self.word, self.info, self.ws, self.ls, self.hits, budget, self.abort)

    def finished(self) -> bool:
        cs = self.cpu_simd
        return bool(np.all(self.info[:, cs.W_UNIT] < 0)
                    and np.all(self.info[:, cs.W_NEXT] >= len(self.units)))

    def comparisons(self) -> int:
        return 0


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


