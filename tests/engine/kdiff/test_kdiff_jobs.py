"""kdiff through the job generator: progress, cancellation, metrics, validation."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from engine import iter_solve, kdiff, registry
from engine.jobs import CancelToken, drive
from engine.sequences import Record, load


def _w1_like(lambda_record, ecoli_record, n=60_000):
    return [lambda_record.slice(0, 500)], [ecoli_record.slice(0, n)]


def test_progress_is_reported_and_final_counts_add_up(lambda_record, ecoli_record):
    target, background = _w1_like(lambda_record, ecoli_record, 20_000)
    job = kdiff.make_job(target, background, 20, backend="serial", strands="forward")
    progress = []
    result = drive(iter_solve(job), progress.append)
    running = [p for p in progress if p.phase == "running"]
    assert running and running[-1].done == running[-1].total == 500 - 19
    assert [p.done for p in running] == sorted(p.done for p in running)
    assert len(result.candidates) == running[-1].partial.__len__()
    assert result.info.complete and result.info.cells > 0


@pytest.mark.alone  # a latency bound: run it with -n 0, not beside other workers
@pytest.mark.parametrize("variant,backend,parallel,flags", [
    ("conventional", "serial", None, frozenset()),           # one huge matrix per r: kernel polls
    ("alternative", "multicore", "fine", frozenset({"opt3"})),
    ("bitparallel", "multicore", "coarse", frozenset()),
])
def test_cancel_stops_within_half_a_second_and_keeps_partial_results(
        lambda_record, ecoli_record, variant, backend, parallel, flags):
    target, background = [lambda_record.slice(0, 3000)], [ecoli_record.slice(0, 120_000)]
    # Warm the kernels so that the timing below measures cancellation, not compilation.
    kdiff.solve([target[0].slice(0, 50)], [background[0].slice(0, 300)], 3, variant=variant, backend=backend,
                parallel=parallel, flags=flags)
    job = kdiff.make_job(target, background, 100, variant=variant, backend=backend,
                         parallel=parallel, flags=flags, strands="forward")
    token = CancelToken()
    gen = iter_solve(job, token)
    t_start = time.perf_counter()
    while time.perf_counter() - t_start < 0.6:
        next(gen)
    token.cancel()
    t_cancel = time.perf_counter()
    result = drive(gen)
    latency = time.perf_counter() - t_cancel
    assert latency < 0.5, f"cancel took {latency:.3f}s"
    assert not result.info.complete
    # What was kept is exactly the start of the full answer.
    settled = result.settled[target[0].id]
    # Candidates here are a few hundred long, so 1000 more symbols settle every kept start.
    full = kdiff.solve([target[0].slice(0, settled + 1000)], background, 100,
                       variant="bitparallel", strands="forward")
    expected = [(c.start, c.end) for c in full.candidates if c.start <= settled]
    assert [(c.start, c.end) for c in result.candidates] == expected


def test_cancel_from_another_thread():
    token = CancelToken()
    rng = np.random.default_rng(0)
    target = [Record("t", rng.choice(np.array([1, 2, 4, 8], np.uint8), 400))]
    background = [Record("b", rng.choice(np.array([1, 2, 4, 8], np.uint8), 400_000))]
    job = kdiff.make_job(target, background, 30, variant="conventional", backend="serial",
                         flags=frozenset())
    threading.Timer(0.3, token.cancel).start()
    t0 = time.perf_counter()
    result = drive(iter_solve(job, token))
    assert time.perf_counter() - t0 < 0.3 + 0.5 + 5  # compile may precede; cancel is prompt
    assert not result.info.complete


def test_comparison_counter_matches_cells_for_conventional_and_is_off_by_default():
    target, background = load("ACGTTGCAAGGT"), load("TTGCAAGCCGTACG")
    on = kdiff.solve(target, background, 3, variant="conventional", backend="serial",
                     flags=frozenset(), count_comparisons=True)
    off = kdiff.solve(target, background, 3, variant="conventional", backend="serial",
                      flags=frozenset(), count_comparisons=False)
    # Without opt1 every row of every matrix is filled: sum over r of |suffix| * n, both strands.
    n, m = 14, 12
    assert on.info.comparisons == sum((m - r) * n * 2 for r in range(len(on.profiles["literal"])))
    assert off.info.comparisons == 0 and on.candidates == off.candidates


def test_opt1_and_opt2_reduce_the_work(lambda_record, ecoli_record):
    target, background = [lambda_record.slice(0, 200)], [ecoli_record.slice(0, 2000)]
    def cmps(variant, flags):
        return kdiff.solve(target, background, 4, variant=variant, backend="serial", flags=flags,
                           count_comparisons=True).info.comparisons
    assert cmps("conventional", {"opt1"}) < cmps("conventional", set()) / 3
    # opt2 only saves work in matrices where the whole suffix is found. The background holds the
    # target, so every suffix is found whole and opt2 must stop each matrix early.
    rng = np.random.default_rng(1)
    text = "".join(rng.choice(np.array(list("ACGT")), 200))
    target, background = load(text[:60]), load(text)
    with_opt2 = kdiff.solve(target, background, 4, variant="alternative", backend="serial",
                            flags={"opt2"}, count_comparisons=True)
    without = kdiff.solve(target, background, 4, variant="alternative", backend="serial",
                          flags=set(), count_comparisons=True)
    assert with_opt2.candidates == without.candidates
    assert with_opt2.info.comparisons < without.info.comparisons / 2


@pytest.mark.parametrize("kwargs,message", [
    ({"k": 0}, "k must be >= 1"),
    ({"k": 2.5}, "k must be an integer"),
    ({"k": 2, "strands": "reverse"}, "strands must be"),
    ({"k": 2, "variant": "fastest"}, "has no variant"),
    ({"k": 2, "variant": "bitparallel", "parallel": "fine", "backend": "multicore"}, "no parallel form"),
    ({"k": 2, "variant": "bitparallel", "flags": {"opt1"}, "backend": "serial"}, "does not apply"),
    ({"k": 2, "variant": "conventional", "backend": "multicore", "parallel": "coarse",
      "flags": {"opt3"}}, "does not apply"),
])
def test_bad_arguments_raise_value_error(kwargs, message):
    with pytest.raises(ValueError, match=message):
        kdiff.make_job(load("ACGT"), load("ACGT"), **kwargs)


def test_registry_marks_cuda_unavailable_with_a_reason(monkeypatch):
    monkeypatch.delenv("NUMBA_ENABLE_CUDASIM", raising=False)
    registry.backend_status.cache_clear()
    import ctypes.util

    monkeypatch.setattr(ctypes.util, "find_library", lambda name: None)
    monkeypatch.setattr(registry.os.path, "exists", lambda p: False)
    ok, reason = registry.backend_status("cuda")
    registry.backend_status.cache_clear()
    assert not ok and "no NVIDIA GPU" in reason
    with pytest.raises(ValueError, match="cuda backend is not available: no NVIDIA GPU"):
        kdiff.make_job(load("ACGT"), load("ACGT"), 2, backend="cuda")
