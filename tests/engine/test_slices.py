"""engine.slices: time a kernel spends loading at its first launch (CUDA, issue #16) is
compile time, left out of the job's seconds as compile_once's warm-up is."""

from __future__ import annotations

import time

from engine.jobs import CancelToken, Job, drive
from engine.slices import Meter, Step, add_compile_time, compile_time, run_slices


def _load(seconds: float) -> None:
    """Stand-in for a kernel loading at its first launch (engine.gpu.Device.launch)."""
    t0 = time.perf_counter()
    time.sleep(seconds)
    add_compile_time(time.perf_counter() - t0)


class _Runner:
    """Two slices of 0.05 s of work each; the first also 'loads a kernel' for 1 s."""

    total, done, first_slice, finished = 2, 0, 1, False

    def step(self, budget: int) -> Step:
        if self.done == 0:
            _load(1.0)
        time.sleep(0.05)
        self.done += 1
        self.finished = self.done == self.total
        return Step(1)

    def report(self) -> dict:
        return {}


def test_first_launch_loading_is_not_solve_time():
    job = Job(family="kdiff", inputs={}, variant="bitparallel", backend="cuda", parallel=None,
              flags=frozenset(), params={})
    meter = Meter(job)
    before = compile_time()
    assert drive(run_slices(_Runner(), meter, CancelToken())) is True
    assert 0.1 <= meter.elapsed < 0.6, meter.elapsed
    assert compile_time() - before >= 1.0
    elapsed = meter.elapsed
    meter.timed(lambda: _load(0.2))
    assert meter.elapsed - elapsed < 0.05, meter.elapsed - elapsed
