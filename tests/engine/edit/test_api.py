"""make_job's argument checks, progress, and cancellation (between slices and inside kernels)."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from engine import config, edit
from engine.edit import cpu_align, cpu_lanes
from engine.edit import cpu_common as cc
from engine.jobs import CancelToken, drive
from engine.sequences import Record, load

P = load("ACGTACGT")
T = load("TTACGTACGTAATT")
LONG = [Record("long", np.tile(np.array([1, 2, 4, 8], np.uint8), 20))]


@pytest.mark.parametrize("kwargs, message", [
    ({"mode": "local"}, "mode must be"),
    ({"k": -1}, "k must be >= 0"),
    ({"k": 1.5}, "k must be an integer"),
    ({"k": True}, "k must be an integer"),
    ({"strands": "reverse"}, "strands must be"),
    ({"strands": "both"}, "applies to search mode only"),
    ({"pairing": "cross"}, "pairing must be"),
    ({"report": "all"}, "report must be"),
    ({"report": "best"}, "report applies to search mode only"),
    ({"mode": "search"}, "search mode needs k"),
    ({"align": "yes"}, "align must be True or False"),
    ({"threads": 0}, "threads must be >= 1"),
    ({"variant": "smith-waterman"}, "no variant"),
    ({"backend": "cuda"}, "cuda"),
    ({"backend": "quantum"}, "unknown backend"),
    ({"backend": "serial", "parallel": "coarse"}, "no parallel forms"),
    ({"flags": {"opt1"}}, "no flag"),
])
def test_bad_arguments_raise_value_error(kwargs, message):
    with pytest.raises(ValueError, match=message):
        edit.make_job(P, T, **kwargs)


def test_bad_inputs_raise_value_error():
    with pytest.raises(ValueError, match="no pattern records"):
        edit.make_job([], T)
    with pytest.raises(ValueError, match="no text records"):
        edit.make_job(P, [])
    with pytest.raises(ValueError, match="as many patterns as text records"):
        edit.make_job(P, T + T, pairing="zip")
    with pytest.raises(ValueError, match="up to 64 symbols"):
        edit.make_job(LONG, T, variant="myers")
    with pytest.raises(TypeError, match="Record"):  # (any sequence form is taken: engine.api)
        edit.make_job([42], T)


def test_defaults_and_result_shape():
    job = edit.make_job(P, T, mode="search", k=1)
    assert job.variant == "myers-blocked" and job.params["align"] is True
    assert job.params["report"] == "hits"
    res = drive(edit.iter_solve(job))
    assert res.info.complete and res.info.family == "edit" and res.info.cells > 0
    assert res.best == 0 and res.hits[0].cigar is not None
    res = edit.solve(P, T, mode="search", k=1, align=False, backend="serial")
    assert all(h.start is None and h.cigar is None for h in res.hits) and res.hits
    res = edit.solve(P, T, backend="serial")
    assert res.distances[0].cigar is None and res.distances[0].distance == res.best


def test_progress_reports_and_partial_hits(lambda_record, monkeypatch):
    text = [lambda_record.slice(0, 40_000)]
    primer = [lambda_record.slice(30_000, 30_024)]
    monkeypatch.setattr(config, "EDIT_FIRST_SLICE_COLUMNS", 256)
    gen = edit.iter_solve(edit.make_job(primer, text, mode="search", k=2, variant="dp",
                                        backend="serial"))
    reports = []
    while True:
        try:
            reports.append(next(gen))
        except StopIteration as stop:
            res = stop.value
            break
    running = [p for p in reports if p.phase == "running"]
    assert len(running) >= 2
    assert all(0 <= p.done <= p.total for p in running)
    assert [p.done for p in running] == sorted(p.done for p in running)
    assert running[-1].fraction == 1.0 and running[-1].cells == res.info.cells
    assert set(running[-1].partial) == set(res.hits)
    assert any(h.start == 30_001 and h.distance == 0 for h in res.hits)


def _drain(gen):
    while True:
        try:
            next(gen)
        except StopIteration as stop:
            return stop.value


def test_cancel_returns_partial_result(ecoli_record, monkeypatch):
    text = [ecoli_record.slice(0, 600_000)]
    primer = [ecoli_record.slice(10_000, 10_012)]
    full = edit.solve(primer, text, mode="search", k=2, variant="myers", backend="serial")
    cancel = CancelToken()
    monkeypatch.setattr(config, "EDIT_FIRST_SLICE_COLUMNS", 64)
    gen = edit.iter_solve(edit.make_job(primer, text, mode="search", k=2, variant="myers",
                                        backend="serial"), cancel)
    for progress in gen:
        if progress.phase == "running" and progress.done > 20_000:
            cancel.cancel()
            break
    res = _drain(gen)
    assert not res.info.complete
    assert 0 < len(res.hits) < len(full.hits)
    # The two lanes of a thread scan two chunks of the text at once, so the hits so far
    # are an ordered subset of all hits (a prefix of each chunk's), not a prefix of them.
    index = {h: i for i, h in enumerate(full.hits)}
    assert all(h in index for h in res.hits)
    assert [index[h] for h in res.hits] == sorted(index[h] for h in res.hits)


def test_cancel_reaches_into_a_running_kernel(monkeypatch):
    """One slice would scan the whole 60k x 60k matrix (seconds); the kernel must stop at its next poll."""
    rng = np.random.default_rng(1)
    a = Record("a", rng.choice(np.array([1, 2, 4, 8], np.uint8), 60_000))
    b = Record("b", rng.choice(np.array([1, 2, 4, 8], np.uint8), 60_000))
    edit.solve([a.slice(0, 10)], [b.slice(0, 10)], variant="dp", backend="serial")  # compiled
    monkeypatch.setattr(config, "EDIT_FIRST_SLICE_COLUMNS", 1 << 20)
    cancel = CancelToken()
    timer = threading.Timer(0.3, cancel.cancel)
    try:
        timer.start()
        res = _drain(edit.iter_solve(edit.make_job([a], [b], variant="dp", backend="serial"), cancel))
    finally:
        timer.cancel()
    assert not res.info.complete
    assert res.distances == ()
    assert 0 < res.info.cells < 60_000 * 60_000 // 2


def test_kernels_poll_the_abort_flag():
    pats = np.array([1, 2, 4, 8], np.uint8)
    p_offs = np.array([0, 4], np.int64)
    text = np.tile(np.array([1, 2, 4, 8], np.uint8), 5000)
    tasks = np.zeros((1, cc.NTASK), np.int64)
    tasks[0, cc.T_HI] = tasks[0, cc.T_OWN_LO] = len(text)
    tasks[0, cc.T_THRESH] = 1
    info = np.zeros((1, cc.NINFO), np.int64)  # one lane (banded: one lane per thread)
    info[0, cc.TASK] = -1
    info[0, cc.END] = 1
    hits = np.zeros((1, 4, 3), np.int64)
    abort = np.ones(1, np.uint8)
    args = (np.zeros((1, 8), np.int64), np.zeros((1, 18), np.uint64), hits, np.zeros(1, np.int64),
            1, 10_000, abort)
    cpu_lanes.run_serial(3, cc.MODE_HITS, False, pats, p_offs, text, tasks, info, *args)
    assert info[0, cc.COLS] == 0 and tasks[0, cc.T_DONE] == 0  # no column scanned, not finished
    abort[0] = 0
    cpu_lanes.run_serial(3, cc.MODE_HITS, False, pats, p_offs, text, tasks, info, *args)
    assert info[0, cc.COLS] > 0  # the same call scans once the flag is down
    ops = np.zeros(8, np.uint8)
    abort[0] = 1
    assert cpu_align.align_window(pats, 4, text, 0, 5000, 4996, 1, ops, abort) == cpu_align.ABORTED
