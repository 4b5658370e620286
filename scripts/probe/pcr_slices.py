"""What each GPU slice of a long edit search costs (issue 17: pcr against the 3.1 Gb store
ran past 330 s while 200 Mb took 3.8 s). Logs to FILE, one line each:

- ``plan``: a chunk's CudaRunner: tasks, groups, text columns, the task widths (min,
  median, max) and the chunk columns the plan chose;
- ``slice``: tasks a..b, their columns, seconds, hits, and the kernel seconds;
- ``rerun``: a launch whose hits overflowed its buffer ran again.

    python3 scripts/probe/pcr_slices.py FILE CLI-ARGUMENTS...   (e.g. pcr PRIMERS STORE ...)"""
import sys
import time

import numpy as np

from engine.edit import cuda as ec
from engine.edit import cpu_common as cc

log = open(sys.argv[1], "w", buffering=1)
t_start = time.perf_counter()


def note(*parts):
    log.write(f"{time.perf_counter() - t_start:8.2f} " + " ".join(str(p) for p in parts) + "\n")


init = ec.CudaRunner.__init__


def traced_init(self, job, abort, pieces=None):
    t0 = time.perf_counter()
    init(self, job, abort, pieces)
    w = self.widths
    note("plan", f"tasks={len(w)}", f"groups={len(self.plan.g_inst)}", f"text={len(self.plan.text)}",
         f"widths={int(w.min())}/{int(np.median(w))}/{int(w.max())}",
         f"resident={self.dev.resident_threads()}", f"setup={time.perf_counter() - t0:.2f}s")


scan = ec.CudaRunner.scan_slice


def traced_scan(self, budget):
    a, t0, k0 = self.next, time.perf_counter(), self.pairs.kernel_seconds
    hits0 = sum(len(h) for h in self._hits)
    scan(self, budget)
    b = self.next
    note("slice", f"budget={budget}", f"tasks={a}..{b}", f"n={b - a}",
         f"columns={int(self.widths[a:b].sum())}", f"seconds={time.perf_counter() - t0:.3f}",
         f"kernel={self.pairs.kernel_seconds - k0:.3f}",
         f"hits={sum(len(h) for h in self._hits) - hits0}",
         f"groups={len(np.unique(self.plan.task_group[a:b]))}",
         f"maxn={int((self.plan.tasks[a:b, cc.T_HI] - self.plan.tasks[a:b, cc.T_SCAN_LO]).max())}")


run = ec.GpuPairs.run


def traced_run(self, inst, jobs, prof_d=None, hit_cap=1):
    launches = []
    empty = self.dev.empty

    def watch(shape, dtype, what):
        launches.append(what)
        return empty(shape, dtype, what)

    self.dev.empty = watch
    try:
        return run(self, inst, jobs, prof_d, hit_cap)
    finally:
        self.dev.empty = empty
        buffers = [w for w in launches if w.startswith("a buffer for")]
        if len(buffers) > 1:
            note("rerun", buffers)


ec.CudaRunner.__init__ = traced_init
ec.CudaRunner.scan_slice = traced_scan
ec.GpuPairs.run = traced_run

from engine.cli import main  # noqa: E402

status = main(sys.argv[2:])
note(f"finished: status {status}")
