"""engine.slices.run_slices, the one slice loop: slice sizing (and its growth cap), cancel
before the first slice, a kernel's abort inside a slice, phase offsets, and time a kernel
spends loading at its first launch (CUDA, issue #16) counted as compile time, not solve
time. A fake clock that the runners advance stands in for time: no sleeps, no races."""

from __future__ import annotations

import dataclasses

import pytest

from engine import config, slices
from engine.jobs import CancelToken, Job, drive
from engine.slices import Meter, Step, add_compile_time, compile_time, run_slices


class Clock:
    """engine.slices' clock, advanced by hand."""

    def __init__(self):
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


@pytest.fixture
def clock(monkeypatch) -> Clock:
    fake = Clock()
    monkeypatch.setattr(slices, "now", fake)
    monkeypatch.setattr(config, "SLICE_SECONDS", 0.1)
    return fake


def _job() -> Job:
    return Job(family="kdiff", inputs={}, variant="bitparallel", backend="cuda", parallel=None,
               flags=frozenset(), params={})


class Runner:
    """``total`` units, each taking ``per_unit`` seconds of the fake clock; records the
    budgets it was given. ``load``: seconds of 'kernel loading' in the first slice;
    ``abort_at``: the slice (0-based) in which a kernel sees the cancel flag."""

    first_slice = 1

    def __init__(self, clock: Clock, total: int, per_unit: float, load: float = 0.0,
                 abort_at: int | None = None):
        self.clock, self.total, self.per_unit = clock, total, per_unit
        self.load, self.abort_at = load, abort_at
        self.done = 0
        self.budgets: list[int] = []

    @property
    def finished(self) -> bool:
        return self.done >= self.total

    def step(self, budget: int) -> Step:
        if self.load and not self.budgets:  # a kernel loading at its first launch
            self.clock.t += self.load
            add_compile_time(self.load)
        self.budgets.append(budget)
        units = min(budget, self.total - self.done)
        if self.abort_at == len(self.budgets) - 1:
            self.clock.t += self.per_unit * units / 2
            return Step(0, cells=7, aborted=True)
        self.clock.t += self.per_unit * units
        self.done += units
        return Step(units, cells=units)

    def report(self) -> dict:
        return {"message": f"{self.done} done"}


def test_slices_grow_at_most_4x_towards_slice_seconds(clock):
    """Units of 1 µs: a slice of 0.1 s is 100,000 units, reached by growing 4x a slice
    from the first slice's size, never more; the last slice takes what is left."""
    runner = Runner(clock, total=1_000_000, per_unit=1e-6)
    meter = Meter(_job())
    progress = []
    assert drive(run_slices(runner, meter, CancelToken()), progress.append) is True
    assert runner.budgets[:9] == [1, 4, 16, 64, 256, 1024, 4096, 16384, 65536]
    assert all(b <= 4 * a for a, b in zip(runner.budgets, runner.budgets[1:]))
    assert set(runner.budgets[9:]) == {100_000}
    assert [p.done for p in progress] == [min(runner.total, sum(runner.budgets[:i + 1]))
                                         for i in range(len(runner.budgets))]
    assert progress[-1].done == progress[-1].total == 1_000_000
    assert meter.cells == 1_000_000 and meter.complete
    assert meter.elapsed == pytest.approx(1.0)
    assert progress[-1].message == "1000000 done"  # the runner's report rides along


def test_a_scaled_clock_sizes_slices_for_that_many_slice_seconds(clock):
    """scale=10 (kdiff on a GPU): slices of 1 s, 1,000,000 units of 1 µs, grown 4x a time."""
    runner = Runner(clock, total=3_000_000, per_unit=1e-6)
    assert drive(run_slices(runner, Meter(_job()), CancelToken(), scale=10)) is True
    assert runner.budgets[:10] == [1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144]
    assert set(runner.budgets[10:-1]) == {1_000_000}


def test_the_in_process_executor_runs_a_problems_slices_at_its_scale(monkeypatch):
    """kdiff on a GPU asks for longer slices (each slice's tier launches then get enough
    starts to fill the device); the in-process executor hands that scale to the slice loop,
    and a CPU problem keeps one SLICE_SECONDS."""
    from engine import kdiff
    from engine.executors import inprocess
    from engine.kdiff.problem import ScanProblem
    from engine.sequences import Record, encode

    target = Record("t", encode("ACGTTGCAAGGCTTAC"))
    background = Record("b", encode("ACGTACGTTTGACCAGT" * 4))
    gpu = Job(family="kdiff", inputs={"target": (target,), "background": (background,)},
              variant="bitparallel", backend="cuda", parallel=None, flags=frozenset(),
              params={"k": 2, "strands": "forward"})
    assert ScanProblem(gpu).slice_scale == config.KDIFF_CUDA_SLICE_SCALE > 1
    scales = []
    original = inprocess.run_slices

    def spy(runner, meter, cancel, **kw):
        scales.append(kw.get("scale", 1.0))
        return original(runner, meter, cancel, **kw)

    monkeypatch.setattr(inprocess, "run_slices", spy)
    monkeypatch.setattr(ScanProblem, "slice_scale", 7.0)
    kdiff.solve([target], [background], 2, backend="serial")
    assert scales == [7.0]
    monkeypatch.undo()
    assert ScanProblem(dataclasses.replace(gpu, backend="serial")).slice_scale == 1.0


def test_slices_never_exceed_the_runners_total(clock):
    runner = Runner(clock, total=50, per_unit=1e-9)
    drive(run_slices(runner, Meter(_job()), CancelToken()))
    assert max(runner.budgets) <= 50


def test_a_cancel_before_the_first_slice_runs_nothing(clock):
    runner = Runner(clock, total=10, per_unit=0.01)
    meter = Meter(_job())
    cancel = CancelToken()
    cancel.cancel()
    progress = []
    assert drive(run_slices(runner, meter, cancel), progress.append) is False
    assert runner.budgets == [] and progress == []
    assert not meter.complete and meter.elapsed == 0 and meter.cells == 0


def test_a_cancel_between_slices_stops_at_the_next_check(clock):
    runner = Runner(clock, total=1000, per_unit=0.01)
    meter = Meter(_job())
    cancel = CancelToken()
    gen = run_slices(runner, meter, cancel)
    first = next(gen)
    cancel.cancel()  # (the handshake: the loop is paused at its yield)
    with pytest.raises(StopIteration) as stop:
        next(gen)
    assert stop.value.value is False
    assert len(runner.budgets) == 1 and first.done == runner.done == 1
    assert not meter.complete


def test_an_abort_inside_a_slice_ends_the_phase_incomplete(clock):
    """A kernel that saw the cancel flag mid-slice: its time and cells count, no Progress
    reports the slice, the phase ends incomplete."""
    runner = Runner(clock, total=1000, per_unit=0.01, abort_at=2)
    meter = Meter(_job())
    progress = []
    assert drive(run_slices(runner, meter, CancelToken()), progress.append) is False
    assert len(runner.budgets) == 3 and len(progress) == 2
    assert progress[-1].done == runner.done == sum(runner.budgets[:2])
    assert meter.cells == runner.done + 7
    assert meter.elapsed == pytest.approx(clock.t)
    assert not meter.complete


def test_phase_offsets_place_a_phase_within_the_job(clock):
    """done_before and total_after(): a second phase's Progress counts the first phase's
    units as done and the phases after it as still to do; the meter sums both phases."""
    meter = Meter(_job())
    first = Runner(clock, total=30, per_unit=0.001)
    second = Runner(clock, total=70, per_unit=0.001)
    one = []
    drive(run_slices(first, meter, CancelToken(), total_after=lambda: second.total), one.append)
    two = []
    drive(run_slices(second, meter, CancelToken(), done_before=first.total), two.append)
    assert all(p.total == 100 for p in one + two)
    assert one[-1].done == 30 and two[0].done == 30 + second.budgets[0]
    assert two[-1].done == 100
    assert [p.done for p in one + two] == sorted(p.done for p in one + two)
    assert meter.cells == 100 and meter.elapsed == pytest.approx(0.1)


def test_first_launch_loading_is_not_solve_time(clock):
    """1 s of kernel loading in the first slice: compile time, left out of the solve
    time and of the slice sizing (the second slice grows as if it had not happened)."""
    runner = Runner(clock, total=2, per_unit=0.05, load=1.0)
    meter = Meter(_job())
    before = compile_time()
    assert drive(run_slices(runner, meter, CancelToken())) is True
    assert meter.elapsed == pytest.approx(0.1)
    assert compile_time() - before == pytest.approx(1.0)
    assert runner.budgets == [1, 1]  # (2 units: 0.05 s each already fills a slice)
    elapsed = meter.elapsed

    def load():
        clock.t += 0.2
        add_compile_time(0.2)

    meter.timed(load)
    assert meter.elapsed == pytest.approx(elapsed)
