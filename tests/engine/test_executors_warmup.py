"""The generic warm-up (engine.slices.compile_once, ChunkedProblem.warm_up).

A job's kernels warm up once per process and warm key, by running its own problem on a
tiny chunk of its background; a kernel that the tiny chunk does not reach compiles at its
first call inside a slice, and that counts as compile time, not solve time.
"""

from __future__ import annotations

import numba
import numpy as np

from engine import kmismatch, slices
from engine.executors import protocol
from engine.jobs import CancelToken, Job, drive, now
from engine.kmismatch.driver import ScanProblem
from engine.sequences import Record
from engine.slices import Meter, Step, run_slices

BASES = np.array([1, 2, 4, 8], dtype=np.uint8)


def _phases(job) -> list[str]:
    phases = []
    drive(kmismatch.iter_solve(job), lambda p: phases.append(p.phase))
    return phases


def test_a_job_warms_up_once_on_a_tiny_chunk_of_its_background(monkeypatch):
    rng = np.random.default_rng(3)
    text = Record("t", BASES[rng.integers(0, 4, 5000)])
    patterns = [Record("p", text.codes[100:112].copy()), Record("q", text.codes[900:915].copy())]
    monkeypatch.setattr(slices, "_WARMED", set())
    opened = []
    original = ScanProblem.open

    def spy(self, task, chunk_text, abort, threads):
        opened.append(len(chunk_text.codes))
        return original(self, task, chunk_text, abort, threads)

    monkeypatch.setattr(ScanProblem, "open", spy)
    job = kmismatch.make_job(patterns, [text], 1, variant="pmasm", backend="serial")
    assert _phases(job)[0] == "compiling"
    # the warm-up opened one task, on the first overlap + WARM_BASES columns
    assert opened == [14 + protocol.WARM_BASES]
    assert "compiling" not in _phases(job)
    assert len(opened) == 1  # (the job itself ran whole: the background fits)
    # Another k is another warm key: warmed again, on a tiny chunk again.
    assert _phases(kmismatch.make_job(patterns, [text], 2, variant="pmasm",
                                      backend="serial"))[0] == "compiling"
    assert opened == [14 + protocol.WARM_BASES] * 2


def test_a_kernel_compiled_inside_a_slice_is_compile_time_not_solve_time():
    @numba.njit(cache=False)
    def fresh(x):  # compiled at its first call, inside the slice
        return x + 1

    class OneSlice:
        total, done, first_slice, finished = 1, 0, 1, False

        def step(self, budget):
            fresh(1)
            self.done, self.finished = 1, True
            return Step(1)

        def report(self):
            return {}

    meter = Meter(Job("kmismatch", {}, backend="serial"))
    started = now()
    assert drive(run_slices(OneSlice(), meter, CancelToken()))
    wall = now() - started
    assert wall > 0.02, wall  # (numba compiled)
    assert meter.elapsed < wall / 4, (meter.elapsed, wall)
