"""Drives one job's slices: the kernels, the path stage, and the answers as they become final.

:class:`Runner` runs the CPU kernels; engine.edit.cuda's ``CudaRunner`` offers the
same methods for the GPU variants, so :class:`Collector` serves both.

Hits of ``report="hits"`` are final when found, so they are aligned in the
slice that found them. A best hit or a global distance is final when every
task of its group is done. Everything aligned so far is therefore ready when
a cancel stops the job.
"""

from __future__ import annotations

import numpy as np

from engine import config
from engine.edit import cpu_align, cpu_driver
from engine.edit import cpu_common as cc
from engine.edit.plan import UNSEEN, Plan
from engine.edit.results import Hit, PairDistance, ScoreProfile


class Runner:
    """The lanes' state, and calls to the driver and the path stage with the job's backend."""

    def __init__(self, job, plan: Plan, nlanes: int, abort: np.ndarray):
        self.job, self.plan, self.abort = job, plan, abort
        self.variant = cpu_driver.VARIANTS.index(job.variant)
        n_int, n_uint = cpu_driver.state_sizes(job.variant, plan.max_m)
        self.info = np.zeros((nlanes, cc.NINFO), dtype=np.int64)
        self.info[:, cc.TASK] = -1
        self.per = cpu_driver.lanes_per_thread(job.variant)
        self.info[:, cc.NEXT] = np.arange(nlanes)  # lane l: tasks l, l + nlanes, ...
        self.info[:, cc.END] = len(plan.tasks)
        self.ist = np.zeros((nlanes, n_int), dtype=np.int64)
        self.ust = np.zeros((nlanes, n_uint), dtype=np.uint64)
        cap = config.EDIT_HIT_BUFFER if plan.mode_id() == cc.MODE_HITS else 1
        self.hits = np.zeros((nlanes, cap, 3), dtype=np.int64)
        self.prof = np.full(int(plan.prof_offs[-1]), UNSEEN, dtype=np.int64)
        self.redo = plan.mode == "global" and plan.k is None
        parallel = job.backend == "multicore"
        self.scan = cpu_driver.run_parallel if parallel else cpu_driver.run_serial
        self.align_kernel = cpu_align.align_parallel if parallel else cpu_align.align_serial

    def compiled(self) -> bool:
        return bool(self.scan.signatures) and (not self.job.params["align"]
                                               or bool(self.align_kernel.signatures))

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
    bad = np.flatnonzero((counts == -1) | (starts < 0))
    if bad.size:
        raise RuntimeError(f"edit: alignment disagrees with the scanned distance for item "
                           f"{items[bad[0]].tolist()}")
    return starts, cpu_align.cigar_strings(ops, op_offs, counts)


class Collector:
    """Turns finished scans into :class:`Hit` and :class:`PairDistance` objects."""

    def __init__(self, plan: Plan, runner: Runner, align: bool):
        self.plan, self.runner, self.align = plan, runner, align
        groups = len(plan.g_inst)
        self.hits: list[Hit] = []
        self.keys: list[tuple] = []  # (pattern, record, end, strand) indices, for the final order
        self.distances: dict[int, PairDistance] = {}
        self.left = np.bincount(plan.task_group, minlength=groups)
        self.seen = np.zeros(len(plan.tasks), dtype=bool)
        self.best = np.full(groups, cc.INF, dtype=np.int64)
        self.best_end = np.full(groups, -1, dtype=np.int64)

    def absorb(self) -> None:
        """Collect the slice's hits and the groups it finished."""
        plan, tasks = self.plan, self.plan.tasks
        mode = plan.mode_id()
        if mode == cc.MODE_HITS:
            rows = self.runner.take_hits()
            self._add_hits(plan.task_group[rows[:, 2]], rows[:, 0], rows[:, 1])
        newly = np.flatnonzero((tasks[:, cc.T_DONE] == 1) & ~self.seen)
        if newly.size == 0:
            return
        self.seen[newly] = True
        g = plan.task_group[newly]
        np.subtract.at(self.left, g, 1)
        if mode == cc.MODE_HITS:
            return
        if mode == cc.MODE_GLOBAL:
            self._add_pairs(g, tasks[newly, cc.T_BEST])
            return
        # Best of a group's chunks: smallest distance, then first end.
        best, end = tasks[newly, cc.T_BEST], tasks[newly, cc.T_END]
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
        if len(g) == 0:
            return
        plan = self.plan
        rec_lo = plan.t_offs[plan.g_rec[g]]
        starts, cigars, matched = None, [None] * len(g), [None] * len(g)
        if self.align:
            items = np.column_stack((plan.g_inst[g], end, rec_lo, dist, np.full(len(g), -1)))
            starts, cigars = self.runner.align(items.astype(np.int64))
            done = np.array([c is not None for c in cigars], dtype=bool)
            matched = cpu_align.matched_strings(plan.text, np.where(done, starts, 0),
                                                np.where(done, end, 0), plan.g_strand[g] == 1)
            starts = np.where(done, starts - rec_lo + 1, -1).tolist()
        strands, patterns, texts = plan.strands, plan.patterns, plan.texts
        for h, (gi, e, d, lo, cigar, text) in enumerate(zip(g.tolist(), end.tolist(), dist.tolist(),
                                                            rec_lo.tolist(), cigars, matched)):
            p, r, s = int(plan.g_pattern[gi]), int(plan.g_rec[gi]), int(plan.g_strand[gi])
            shift = texts[r].offset  # the loaded record's coordinates
            start = starts[h] + shift if cigar is not None else None
            self.hits.append(Hit(patterns[p].id, texts[r].id, strands[s], start, e - lo + shift, d,
                                 cigar, text if cigar is not None else None))
            self.keys.append((p, r, e, s))

    def _add_pairs(self, g: np.ndarray, score: np.ndarray) -> None:
        plan = self.plan
        # banded reports T+1 for "beyond its band"; without k its band grew until exact.
        within = np.ones(len(g), dtype=bool) if plan.k is None else score <= plan.k
        cigars = [None] * len(g)
        if self.align and within.any():
            sel = np.flatnonzero(within)
            gs = g[sel]
            lo, hi = plan.t_offs[plan.g_rec[gs]], plan.t_offs[plan.g_rec[gs] + 1]
            items = np.column_stack((plan.g_inst[gs], hi, lo, score[sel], lo)).astype(np.int64)
            _, aligned = self.runner.align(items)
            for i, cigar in zip(sel.tolist(), aligned):
                cigars[i] = cigar
        for gi, d, ok, cigar in zip(g.tolist(), score.tolist(), within.tolist(), cigars):
            self.distances[gi] = PairDistance(plan.patterns[plan.g_pattern[gi]].id,
                                              plan.texts[plan.g_rec[gi]].id, d if ok else None,
                                              cigar)

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
            out.append(ScoreProfile(plan.patterns[plan.g_pattern[gi]].id, plan.texts[r].id,
                                    plan.strands[plan.g_strand[gi]], int(plan.binw[gi]),
                                    int(plan.t_offs[r + 1] - plan.t_offs[r]),
                                    int(plan.g_cut[gi]) + 1,
                                    values[lo:hi]))
        return tuple(out)

    def sorted_hits(self) -> tuple[Hit, ...]:
        """Hits in pattern order, then record order, end, strand ('+' first)."""
        order = sorted(range(len(self.hits)), key=self.keys.__getitem__)
        return tuple(self.hits[i] for i in order)

    def sorted_distances(self) -> tuple[PairDistance, ...]:
        return tuple(self.distances[g] for g in sorted(self.distances))
