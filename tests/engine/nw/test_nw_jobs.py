"""The job API: validation, progress with snapshots, cancellation, the compile phase."""

from __future__ import annotations

import numpy as np
import pytest

from engine import nw
from engine.jobs import CancelToken, drive
from engine.sequences import Record, load
from tests.engine.nw.helpers import small_pieces


@pytest.mark.parametrize("kwargs, message", [
    ({"match": 1.5}, "match must be an integer"),
    ({"gap": True}, "gap must be an integer"),
    ({"mismatch": 5000}, "mismatch must be <= 1000, got 5000"),
    ({"gap": None}, "the gap score must be an integer, got None"),
    ({"threads": 0}, "threads must be"),
    ({"variant": "wavefront"}, "no variant 'wavefront'"),
    ({"backend": "gpu"}, "unknown backend"),
    ({"parallel": "fine"}, "no parallel forms"),
    ({"flags": ["opt1"]}, "no flag 'opt1'"),
])
def test_make_job_rejects_bad_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        nw.make_job(load("ACGT"), load("ACG"), **kwargs)


def test_empty_sequences_are_rejected():
    with pytest.raises(ValueError, match="sequence B .* is empty"):
        nw.make_job(load("ACGT"), [Record("x", np.zeros(0, dtype=np.uint8))])
    with pytest.raises(ValueError, match="no records for sequence A"):
        nw.make_job([], load("ACGT"))


def test_progress_carries_cells_snapshots_and_the_result_the_path(msx2_records):
    a, b = msx2_records[1], msx2_records[5]
    job = nw.make_job(a, b, variant="diagonal", backend="serial", snapshots=True)
    reports = []
    with small_pieces(full_matrix_cells=200_000):
        res = drive(nw.iter_solve(job), reports.append)
    running = [p for p in reports if p.phase == "running"]
    assert len(running) >= 2
    assert all(x.cells <= y.cells for x, y in zip(running, running[1:]))
    shot = running[0].snapshot
    assert shot.dtype == np.uint16 and shot.shape == (805, 805)   # the whole matrix: 805 <= 1024
    assert running[0].snapshot_shape == (805, 805)
    assert (shot == 0).any() and (running[-1].snapshot > 0).all()
    assert res.score is not None and res.info.complete
    assert res.snapshot.shape == (805, 805) and res.snapshot_shape == (805, 805)
    path = res.alignment.path
    assert path.shape == (res.alignment.columns + 1, 2)
    assert res.info.cells >= len(a) * len(b)


def test_cancel_keeps_what_was_found(msx2_records):
    a, b = msx2_records[0], msx2_records[3]
    cancel = CancelToken()
    with small_pieces(full_matrix_cells=10_000):
        full = nw.solve(a, b, variant="prefix", backend="serial", snapshots=True)
        gen = nw.iter_solve(nw.make_job(a, b, variant="prefix", backend="serial", snapshots=True),
                            cancel)
        cancelled = None
        while True:
            try:
                p = next(gen)
            except StopIteration as stop:
                cancelled = stop.value
                break
            if p.phase == "running":
                cancel.cancel()
        # a token cancelled before the start gives an empty, incomplete result too
        res = drive(nw.iter_solve(nw.make_job(a, b, variant="prefix", backend="serial",
                                              snapshots=True), cancel))
    assert not res.info.complete and res.score is None and res.alignment is None
    assert res.snapshot is not None
    # The cancelled run: no score, no path, but the part of the matrix swept so far, exactly as
    # the full run has it (same sampling and scaling); the rest is marked 0 (not computed).
    assert full.info.complete and full.score is not None
    assert not cancelled.info.complete and cancelled.score is None and cancelled.alignment is None
    assert (cancelled.a_length, cancelled.b_length) == (len(a), len(b))
    shot = cancelled.snapshot
    assert shot is not None and shot.shape == full.snapshot.shape
    assert cancelled.snapshot_shape == full.snapshot_shape
    assert (cancelled.snapshot_base, cancelled.snapshot_step) == (full.snapshot_base, full.snapshot_step)
    computed = shot > 0
    assert computed.any() and not computed.all() and (full.snapshot > 0).all()
    assert np.array_equal(shot[computed], full.snapshot[computed])
    assert 0 < cancelled.info.cells < full.info.cells


def test_a_cancel_inside_the_traceback_keeps_the_score(msx2_records):
    a, b = msx2_records[0].slice(0, 700), msx2_records[3].slice(0, 600)
    cancel = CancelToken()
    with small_pieces(full_matrix_cells=10_000):
        gen = nw.iter_solve(nw.make_job(a, b, variant="rows", backend="serial"), cancel)
        result = None
        while True:
            try:
                p = next(gen)
            except StopIteration as stop:
                result = stop.value
                break
            if p.message == "traceback":
                cancel.cancel()
    assert not result.info.complete and result.alignment is None
    assert result.score == nw.score(a, b, backend="serial")


def test_a_cancel_flag_stops_a_kernel_inside_its_slice():
    from engine.nw.driver import Kernels, Sweep
    from engine.nw.scoring import Scores

    a = np.ones(300, dtype=np.uint8)
    flag = np.ones(1, dtype=np.uint8)
    for variant in ("rows", "diagonal", "prefix"):
        for backend in ("serial", "multicore"):
            sweep = Sweep(Kernels(variant, backend), a, a, Scores(), (np.int16, 0), flag)
            assert sweep.band(300) is None and sweep.r == 0, (variant, backend)


def test_the_first_run_reports_a_compile_phase(monkeypatch):
    from engine import slices

    monkeypatch.setattr(slices, "_WARMED", set())
    job = nw.make_job(load("ACGTACGT"), load("ACGTTACG"), backend="serial", traceback=False)
    phases = []
    res = drive(nw.iter_solve(job), lambda p: phases.append(p.phase))
    assert phases[0] == "compiling" and res.score == 5, res.info.seconds
