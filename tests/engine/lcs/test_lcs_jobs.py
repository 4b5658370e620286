"""iter_solve: progress, snapshots, cancellation, validation and linear-space recovery."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from engine import config, lcs, registry
from engine.jobs import CancelToken, Progress, drive
from engine.sequences import Record, SequenceError
from tests.conftest import ROOT
from tests.engine.lcs.helpers import COMBOS, VARIANTS, assert_valid_lcs


def test_registry_lists_the_family():
    fam = registry.family("lcs")
    assert [v.name for v in fam.variants] == list(VARIANTS)
    assert all({"serial", "multicore"} <= {b.name for b in v.backends} for v in fam.variants)
    assert fam.fastest_variant == "bitparallel"


@pytest.mark.parametrize("kwargs,message", [
    ({"task": "path"}, "task"),
    ({"threads": 0}, "threads"),
    ({"threads": 1.5}, "threads"),
    ({"variant": "diagonal"}, "no variant"),
    ({"backend": "gpu"}, "unknown backend"),
    ({"backend": "cuda"}, "cuda"),
    ({"snapshots": "yes"}, "snapshots"),
])
def test_make_job_rejects_bad_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        lcs.make_job("ACGT", "ACGT", **kwargs)


def test_make_job_rejects_bad_inputs():
    with pytest.raises(TypeError, match="a sequence string, a file path"):  # (engine.api)
        lcs.make_job(b"ACGT", "ACGT")
    with pytest.raises(SequenceError, match="position 3"):
        lcs.make_job("AC-T", "ACGT")
    with pytest.raises(ValueError, match="non-empty"):
        lcs.make_job(Record("e", np.zeros(0, dtype=np.uint8)), "ACGT")


def test_progress_reports_cells_and_snapshots(msx2_records):
    a, b = msx2_records[0], msx2_records[3]
    job = lcs.make_job(a, b, variant="rows", backend="serial", snapshots=True)
    seen: list[Progress] = []
    res = drive(lcs.iter_solve(job), seen.append)
    running = [p for p in seen if p.phase == "running"]
    assert running and res.info.complete
    score = [p for p in running if p.snapshot is not None]
    assert score, "the score pass yields snapshots"
    for p in score:
        assert p.snapshot.dtype == np.uint16 and p.snapshot.shape == (1024, 1024)
        assert p.snapshot_shape == (len(a), len(b))
    assert all(p2.cells >= p1.cells for p1, p2 in zip(running, running[1:]))
    assert all(p.done <= p.total for p in running)
    assert running[-1].done == running[-1].total == res.info.cells
    assert res.info.cells >= 2 * len(a) * len(b)  # score pass + recovery
    # The heatmap's last sampled cell is L[m, n].
    assert res.snapshot[-1, -1] == res.length
    assert_valid_lcs(a.codes, b.codes, res, res.length)


def test_compiling_phase_comes_first(monkeypatch):
    from engine.lcs import driver

    monkeypatch.setattr(driver, "_cpu_compiled", lambda mod, backend: False)
    phases = [p.phase for p in _progresses(lcs.make_job("ACGTACGT", "TTACG", backend="serial"))]
    assert phases[0] == "compiling" and "running" in phases


def _progresses(job, cancel=None):
    out = []
    drive(lcs.iter_solve(job, cancel), out.append)
    return out


@pytest.mark.parametrize("variant,backend", COMBOS)
def test_cancel_keeps_a_valid_prefix_of_an_lcs(variant, backend, lambda_record, ecoli_record,
                                               monkeypatch):
    from rapidfuzz.distance import LCSseq

    monkeypatch.setattr(config, "LCS_TRACEBACK_WORDS", 64)
    monkeypatch.setattr(config, "SLICE_SECONDS", 0.0)  # report after every kernel call
    a, b = lambda_record.slice(0, 3000), ecoli_record.slice(0, 3000)
    cancel = CancelToken()
    gen = lcs.iter_solve(lcs.make_job(a, b, variant=variant, backend=backend), cancel)
    while True:
        progress = next(gen)
        if progress.partial is not None and len(progress.partial) >= 5:
            cancel.cancel()
            break
    try:
        while True:
            next(gen)
    except StopIteration as stop:
        res = stop.value
    assert not res.info.complete and res.length is None
    assert_valid_lcs(a.codes, b.codes, res, None)
    # A prefix of an optimal LCS: what is left after its last pair still completes it.
    i, j = res.pairs[-1]
    rest = LCSseq.similarity(a.text[i:], b.text[j:])
    assert len(res.pairs) + rest == LCSseq.similarity(a.text, b.text)


def test_cancel_during_the_score_pass(msx2_records):
    cancel = CancelToken()
    job = lcs.make_job(msx2_records[0], msx2_records[3], variant="rows", backend="serial",
                       task="length")
    cancel.cancel()
    res = drive(lcs.iter_solve(job, cancel))
    assert not res.info.complete and res.length is None and res.lcs is None


def test_length_task_skips_the_recovery(msx2_records):
    a, b = msx2_records[0], msx2_records[3]
    res = lcs.solve(a, b, task="length", variant="wavefront", backend="serial")
    assert res.lcs is None and res.pairs is None
    assert res.info.cells == len(a) * len(b)
    assert res.length == lcs.solve(a, b, variant="rows", backend="serial").length


def test_recovery_of_long_inputs_takes_linear_space():
    """lambda x E. coli[0:48502]: a full int32 matrix would be 9.4 GB and a bit matrix 294 MB."""
    code = textwrap.dedent("""
        import json, resource, threading, time
        from engine import lcs
        from benchmarks import data
        a, b = data.lambda_phage(), data.ecoli().slice(0, 48502)
        lcs.solve("ACGT" * 200, "TGCA" * 150, variant="bitparallel", backend="serial")
        def rss():
            with open("/proc/self/statm") as fh:
                return int(fh.read().split()[1]) * resource.getpagesize()
        base, peak, done = rss(), [0], []
        def watch():
            while not done:
                peak[0] = max(peak[0], rss())
                time.sleep(0.002)
        t = threading.Thread(target=watch); t.start()
        res = lcs.solve(a, b, variant="bitparallel", backend="serial")
        done.append(1); t.join()
        print(json.dumps({"grow": max(peak[0], rss()) - base, "length": res.length,
                          "pairs": len(res.pairs)}))
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                         check=True, timeout=300)
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["length"] == got["pairs"] == 31423  # RapidFuzz's LCSseq.similarity
    assert got["grow"] < 64 * 2**20, f"recovery grew RSS by {got['grow'] / 2**20:.0f} MiB"


def test_docstring_examples_run():
    import doctest

    assert doctest.testmod(lcs, raise_on_error=False).failed == 0


@pytest.mark.parametrize("variant", VARIANTS)
def test_cancel_from_another_thread_stops_a_running_kernel(variant, lambda_record, ecoli_record):
    """The kernels poll the flag: a multicore pass (pipeline waits included) stops promptly."""
    import threading

    # Big enough that the run is still going when the cancel comes, on a quiet machine too.
    n = 200_000 if variant == "bitparallel" else 30_000
    a, b = ecoli_record.slice(2_000_000, 2_000_000 + n), ecoli_record.slice(0, n)
    cancel = CancelToken()
    job = lcs.make_job(a, b, variant=variant, backend="multicore", threads=2)
    out = {}
    worker = threading.Thread(target=lambda: out.update(res=drive(lcs.iter_solve(job, cancel))),
                              daemon=True)
    worker.start()
    threading.Timer(0.05, cancel.cancel).start()
    worker.join(timeout=60)
    assert not worker.is_alive(), "the run did not stop after cancel"
    res = out["res"]
    assert not res.info.complete
    assert_valid_lcs(a.codes, b.codes, res, None)
