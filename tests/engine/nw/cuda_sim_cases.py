"""nw CUDA kernels in numba's CUDA simulator, against the oracle and the CPU solvers.

Run by test_nw_cuda.py in a subprocess with NUMBA_ENABLE_CUDASIM=1 (the variable must
be set before numba is first imported). Threads per block, rows per thread, chunks,
bands and Hirschberg base cases are patched small, so that the tiny inputs the
simulator can afford span several threads, bands, chunks, blocks and launch groups,
and alignments take Hirschberg passes on the "GPU".
"""

from __future__ import annotations

import os

import numpy as np
import pytest

if os.environ.get("NUMBA_ENABLE_CUDASIM") != "1":
    pytest.skip("run with NUMBA_ENABLE_CUDASIM=1 (test_nw_cuda.py does)", allow_module_level=True)

from tests.cuda_support import launches_refused, no_gpu_memory, simulator_cli  # noqa: E402
from engine import config, gpu, nw  # noqa: E402
from engine.jobs import CancelToken, drive  # noqa: E402
from benchmarks import nw_cuda as cuda_bench  # noqa: E402
from engine.nw.cpu_rows import rows_tile  # noqa: E402
from engine.nw.cuda import CudaKernels  # noqa: E402
from engine.nw.reference import nw_matrix, nw_reference  # noqa: E402
from engine.nw.scoring import Scores, cast_scores  # noqa: E402
from engine.sequences import Record, load  # noqa: E402
from tests.engine.nw.cuda_support import cuda_forms, label, options  # noqa: E402
from tests.engine.nw.helpers import check_alignment, small_pieces  # noqa: E402
from tests.strategies import random_codes  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")

FORMS = cuda_forms()
SCHEMES = [(1, 0, -1), (2, -1, -2), (3, -2, -5), (1, -1, 0), (2, 1, 1)]
TINY_TPB = {"tiled": 3, "per-launch": 4, "diagonal-one-block": 5, "prefix-one-block": 4,
            "prefix-multi-block": 2}


@pytest.fixture(autouse=True)
def small_gpu(monkeypatch):
    monkeypatch.setattr(config, "NW_CUDA_THREADS_PER_BLOCK", TINY_TPB)
    monkeypatch.setattr(config, "NW_CUDA_TILED_ROWS", 2)
    monkeypatch.setattr(config, "NW_CUDA_TILED_COLUMNS", 2)
    monkeypatch.setattr(config, "NW_CUDA_TILED_CHUNK", 6)
    monkeypatch.setattr(config, "NW_CUDA_PREFIX_MIN_COLUMNS", 1)
    monkeypatch.setattr(config, "NW_CUDA_FIRST_SLICE_CELLS", dict.fromkeys(TINY_TPB, 200))


def _records(a, b):
    return Record("a", np.asarray(a, dtype=np.uint8)), Record("b", np.asarray(b, dtype=np.uint8))


def test_forms_cover_the_study_and_the_tiled_wavefront():
    assert sorted(label(f) for f in FORMS) == sorted(
        ["tiled", "per-launch", "diagonal-one-block", "prefix-one-block", "prefix-multi-block"])


@pytest.mark.parametrize("combo", FORMS, ids=label)
def test_random_inputs_match_the_oracle(combo):
    """Scores and alignments (Hirschberg passes on the GPU), IUPAC codes, five schemes."""
    rng = np.random.default_rng(sum(map(ord, label(combo))))
    for case, (match, mismatch, gap) in enumerate(SCHEMES):
        m, n = int(rng.integers(9, 27)), int(rng.integers(9, 27))
        a = random_codes(rng, m, iupac_rate=0.15)
        b = random_codes(rng, n, iupac_rate=0.15)
        ra, rb = _records(a, b)
        want, _ = nw_reference(a, b, match, mismatch, gap)
        with small_pieces(full_matrix_cells=40):
            res = nw.solve(ra, rb, match=match, mismatch=mismatch, gap=gap, **options(combo))
        assert res.score == want, (label(combo), case)
        assert res.info.backend == "cuda" and res.info.complete
        check_alignment(res, a, b, match, mismatch, gap)
        assert nw.score(ra, rb, match=match, mismatch=mismatch, gap=gap, **options(combo)) == want


@pytest.mark.parametrize("combo", FORMS, ids=label)
def test_one_symbol_inputs(combo):
    rng = np.random.default_rng(3)
    for a, b in (([4], [4]), ([1], [2]), ([15], random_codes(rng, 11)), (random_codes(rng, 13), [8]),
                 ([5], [10])):
        ra, rb = _records(a, b)
        for match, mismatch, gap in ((1, 0, -1), (2, -3, -1)):
            res = nw.solve(ra, rb, match=match, mismatch=mismatch, gap=gap, **options(combo))
            assert res.score == nw_reference(np.asarray(a, np.uint8), np.asarray(b, np.uint8), match,
                                             mismatch, gap)[0]
            check_alignment(res, np.asarray(a, np.uint8), np.asarray(b, np.uint8), match, mismatch,
                            gap)


def test_empty_inputs_are_value_errors():
    for combo in FORMS:
        with pytest.raises(ValueError, match="is empty"):
            nw.make_job(load("ACGT"), [Record("x", np.zeros(0, dtype=np.uint8))], **options(combo))


def _tile_reference(a, b, top, left, sc):
    """Bottom row and right column of a tile from its boundary, by the CPU rows kernel."""
    h, w = len(a), len(b)
    bottom, right = np.empty(w + 1, np.int32), np.empty(h + 1, np.int32)
    none = np.zeros(0, dtype=np.int64)
    rows_tile(a, b, top, left, bottom, right, *cast_scores(sc, np.int32), none, none,
              np.zeros((0, 0), np.int32), 0, 0, np.zeros(1, np.uint8))
    return bottom, right


@pytest.mark.parametrize("combo", FORMS, ids=label)
def test_tiles_with_any_boundary_and_several_launch_groups(combo, monkeypatch):
    """The tile contract with arbitrary (consistent) boundaries; the scratch budget is cut so
    that the multi-block prefix form splits a tile into several launches."""
    monkeypatch.setattr(gpu.Device, "scratch_budget", lambda self, fraction=0.5: 100)
    rng = np.random.default_rng(7)
    v, p, f = combo
    kernels = CudaKernels(v, p, f)
    for h, w in ((17, 23), (30, 5), (6, 29), (1, 9), (12, 1)):
        a, b = random_codes(rng, h, 0.1), random_codes(rng, w, 0.1)
        sc = Scores(*SCHEMES[int(rng.integers(len(SCHEMES)))])
        top = np.cumsum(rng.integers(-3, 3, w + 1)).astype(np.int32)
        left = np.cumsum(rng.integers(-3, 3, h + 1)).astype(np.int32)
        left += top[0] - left[0]
        want_bottom, want_right = _tile_reference(a, b, top, left, sc)
        bottom, right = np.empty(w + 1, np.int32), np.empty(h + 1, np.int32)
        none = np.zeros(0, dtype=np.int64)
        assert kernels.tile(a, b, top, left, bottom, right, cast_scores(sc, np.int32), none, none,
                            np.zeros((0, 0), np.int32), 0, 0, np.zeros(1, np.uint8))
        assert np.array_equal(bottom, want_bottom), (label(combo), h, w)
        assert np.array_equal(right, want_right), (label(combo), h, w)


@pytest.mark.parametrize("combo,tpb,blocks", [
    (("diagonal", "multi-block", frozenset({"tiled"})), 1, 0),
    (("diagonal", "multi-block", frozenset({"tiled"})), 2, 1),
    (("diagonal", "multi-block", frozenset({"tiled"})), 6, 2),   # persistent blocks
    (("diagonal", "multi-block", frozenset()), 3, 1),
    (("diagonal", "multi-block", frozenset()), 2, 3),
    (("diagonal", "one-block", frozenset()), 1, 0),
    (("prefix", "one-block", frozenset()), 7, 1),
    (("prefix", "multi-block", frozenset()), 3, 1),
    (("prefix", "multi-block", frozenset()), 1, 6),
    (("prefix", "multi-block", frozenset()), 2, 40),   # more blocks than columns: fewer run
], ids=lambda x: str(x) if not isinstance(x, tuple) else label(x))
def test_threads_per_block_and_blocks(combo, tpb, blocks):
    rng = np.random.default_rng(tpb * 10 + blocks)
    a, b = random_codes(rng, 21, 0.1), random_codes(rng, 17, 0.1)
    ra, rb = _records(a, b)
    job = nw.make_job(ra, rb, match=2, mismatch=-1, gap=-1, traceback=False, threads_per_block=tpb,
                      blocks=blocks, **options(combo))
    assert job.params["threads_per_block"] == tpb and job.params["blocks"] == blocks
    assert drive(nw.iter_solve(job)).score == nw_reference(a, b, 2, -1, -1)[0]


@pytest.mark.parametrize("rows,cols,chunk,tpb", [(1, 1, 1, 1), (2, 1, 3, 3), (3, 2, 4, 2),
                                                 (2, 4, 8, 4), (4, 2, 8, 2), (1, 1, 10, 5),
                                                 (5, 1, 3, 1), (3, 4, 12, 4), (2, 2, 6, 3),
                                                 (3, 4, 4, 1)])
def test_tiled_rows_columns_and_tiles(monkeypatch, rows, cols, chunk, tpb):
    """Rows and columns per lane and step, lanes per band and tile widths: bands that end
    inside a lane's rows (padding rows), widths that end inside a step and inside a tile,
    one- and many-tile rows."""
    monkeypatch.setattr(config, "NW_CUDA_TILED_ROWS", rows)
    monkeypatch.setattr(config, "NW_CUDA_TILED_COLUMNS", cols)
    monkeypatch.setattr(config, "NW_CUDA_TILED_CHUNK", chunk)
    rng = np.random.default_rng(rows * 1000 + cols * 100 + chunk * 10 + tpb)
    for m, n in ((23, 19), (7, 31), (1, 17), (16, 1)):
        a, b = random_codes(rng, m, 0.1), random_codes(rng, n, 0.1)
        ra, rb = _records(a, b)
        got = nw.score(ra, rb, match=2, mismatch=-1, gap=-2, variant="diagonal", backend="cuda",
                       threads_per_block=tpb)
        assert got == nw_reference(a, b, 2, -1, -2)[0], (m, n)


def test_tiled_band_that_waits_in_vain_reports_it():
    """A band whose band above never runs (its ticket skipped) gives up after the spin
    limit and sets the status flag, which the host turns into a one-line CudaFailure."""
    from engine.nw.cuda_diagonal import tiled_kernel

    dev = gpu.Device(4)
    h, w = 12, 10
    status = dev.zeros(1, np.int32, "status")
    slots = dev.upload(np.full(1, -1, np.int32), "slots")
    kernel = tiled_kernel(2, 2, 6, 3, 1, False, 255)
    dev.launch(kernel, 1, 3, 0, dev.upload(random_codes(np.random.default_rng(1), h, 0), "a"),
               dev.zeros(w + 16, np.uint16, "b"), h, w, dev.zeros(w + 1, np.int32, "top"),
               dev.zeros(h + 1, np.int32, "left"),
               dev.zeros(2 * (w + 1), np.int64, "ring"), w + 1, np.int64(1),
               dev.upload(np.ones(1, np.int32), "the ticket: band 0 skipped"), np.int32(3),
               np.int32(2), dev.zeros(h + 1, np.int32, "r"),
               slots, slots, dev.zeros((1, 1), np.int32, "snap"), 50, status)
    assert status.copy_to_host()[0] == 1


def test_tiled_chunk_must_be_a_multiple_of_the_lanes_and_columns(monkeypatch):
    monkeypatch.setattr(config, "NW_CUDA_TILED_CHUNK", 4)
    with pytest.raises(gpu.CudaFailure, match=r"multiple of the lanes of a band \(3\)"):
        nw.score(load("ACGT"), load("ACGT"), variant="diagonal", backend="cuda")
    monkeypatch.setattr(config, "NW_CUDA_TILED_CHUNK", 9)
    with pytest.raises(gpu.CudaFailure, match=r"and of NW_CUDA_TILED_COLUMNS \(2\)"):
        nw.score(load("ACGT"), load("ACGT"), variant="diagonal", backend="cuda")
    monkeypatch.setattr(config, "NW_CUDA_TILED_COLUMNS", 3)
    with pytest.raises(gpu.CudaFailure, match=r"must be one of \(1, 2, 4\), got 3"):
        nw.score(load("ACGT"), load("ACGT"), variant="diagonal", backend="cuda")


@pytest.mark.parametrize("combo", FORMS, ids=label)
def test_snapshots_equal_the_cpu(combo):
    rng = np.random.default_rng(11)
    a, b = random_codes(rng, 19, 0.1), random_codes(rng, 22, 0.1)
    ra, rb = _records(a, b)
    with small_pieces(full_matrix_cells=60, snapshot_side=9):
        cpu = nw.solve(ra, rb, match=2, mismatch=-1, gap=-2, variant="rows", backend="serial",
                       snapshots=True)
        got = nw.solve(ra, rb, match=2, mismatch=-1, gap=-2, snapshots=True, **options(combo))
    assert got.snapshot.shape == cpu.snapshot.shape == (9, 9)
    assert np.array_equal(got.snapshot, cpu.snapshot)
    assert (got.snapshot > 0).all()
    # Every sampled cell holds H (scaled): check the raw values against the oracle.
    H = np.array(nw_matrix(a, b, 2, -1, -2))
    sampled = H[np.ix_(got.snapshot_rows, got.snapshot_cols)]
    assert np.array_equal(got.snapshot, 1 + (sampled - got.snapshot_base) // got.snapshot_step)


def test_progress_and_cancel(monkeypatch):
    monkeypatch.setattr(config, "NW_CUDA_FIRST_SLICE_CELLS", dict.fromkeys(TINY_TPB, 40))
    monkeypatch.setattr(config, "SLICE_SECONDS", 1e-4)
    rng = np.random.default_rng(2)
    ra, rb = _records(random_codes(rng, 40), random_codes(rng, 12))
    job = nw.make_job(ra, rb, variant="diagonal", backend="cuda", traceback=False)
    reports = []
    full = drive(nw.iter_solve(job), reports.append)
    running = [p for p in reports if p.phase == "running"]
    assert len(running) >= 2 and running[-1].done == running[-1].total
    token = CancelToken()
    gen = nw.iter_solve(job, token)
    next(p for p in gen if p.phase == "running")
    token.cancel()
    part = drive(gen)
    assert not part.info.complete and part.score is None and full.score is not None


def test_out_of_memory_and_launch_failures_are_one_line_errors(monkeypatch):
    ra, rb = load("ACGTTGCAAGGTACCA"), load("TTGCAAGCCGTACG")
    want = nw.solve(ra, rb, backend="serial").score

    with no_gpu_memory(monkeypatch):
        with pytest.raises(gpu.CudaFailure, match="ran out of memory") as err:
            nw.solve(ra, rb, variant="diagonal", backend="cuda")
        assert "\n" not in str(err.value)

    for combo in FORMS:
        with launches_refused(monkeypatch):
            with pytest.raises(gpu.CudaFailure, match="CUDA error while launching") as err:
                nw.solve(ra, rb, **options(combo))
            assert "\n" not in str(err.value)
    # Nothing is left broken: the CPU and the GPU paths both still work.
    assert nw.solve(ra, rb, backend="serial").score == want
    assert nw.solve(ra, rb, variant="prefix", backend="multicore").score == want
    for combo in FORMS:
        assert nw.solve(ra, rb, **options(combo)).score == want


@pytest.mark.parametrize("kwargs,message", [
    ({"variant": "prefix", "flags": {"tiled"}}, "does not apply"),
    ({"variant": "diagonal", "parallel": "one-block", "flags": {"tiled"}}, "does not apply"),
    ({"variant": "rows"}, "has no cuda backend"),
    ({"variant": "diagonal", "parallel": "fine"}, "no parallel form 'fine'"),
    ({"variant": "diagonal", "parallel": "one-block", "blocks": 4}, "multi-block forms only"),
    ({"variant": "prefix", "threads_per_block": 2048}, "threads_per_block must be <= 1024, got 2048"),
    ({"variant": "prefix", "threads_per_block": -1}, "threads_per_block must be"),
    ({"variant": "prefix", "blocks": 1.5}, "blocks must be an integer"),
    ({"variant": "diagonal", "threads_per_block": 48}, r"at most 32 or a multiple of 32 .*got 48"),
])
def test_bad_cuda_options_raise_value_error(kwargs, message):
    with pytest.raises(ValueError, match=message):
        nw.make_job(load("ACGT"), load("ACGT"), backend="cuda", **kwargs)


def test_problems_too_large_for_32_bits_are_refused():
    big = Record("big", np.ones(300_000, dtype=np.uint8))
    with pytest.raises(ValueError, match="too large for the CUDA"):
        nw.make_job(big, big, match=1000, mismatch=-1000, gap=-1000, backend="cuda")
    nw.make_job(big, big, backend="cuda")   # 1 / 0 / -1 fits easily


def _cli(*args):
    return simulator_cli("nw", *args)


def test_cli_runs_every_form_and_reports_bad_options_in_one_line():
    import json

    want = nw.solve(load("GATTACAGATTACA"), load("GATCACAGTTACA"), backend="serial")
    for args in (("--variant", "diagonal"), ("--variant", "diagonal", "--opt", "none"),
                 ("--variant", "diagonal", "--parallel", "one-block"),
                 ("--variant", "prefix", "--parallel", "one-block", "--threads-per-block", "3"),
                 ("--variant", "prefix", "--blocks", "2")):
        out = _cli("GATTACAGATTACA", "GATCACAGTTACA", "--backend", "cuda", "--json", *args)
        assert out.returncode == 0, out.stderr
        payload = json.loads(out.stdout)
        assert payload["backend"] == "cuda" and payload["score"] == want.score
        assert payload["aligned_a"] == want.alignment.aligned_a, args   # one tie-breaking rule
    tiled = json.loads(_cli("ACGT", "ACGT", "--backend", "cuda", "--json").stdout)
    assert tiled["parallel"] == "multi-block" and tiled["flags"] == ["tiled"]
    bad = _cli("ACGT", "ACGT", "--backend", "cuda", "--parallel", "one-block", "--blocks", "3")
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1
    assert "multi-block forms only" in bad.stderr and "Traceback" not in bad.stderr


def test_bench_cases_run_on_tiny_workloads(monkeypatch):
    """The CUDA bench plumbing (peers, agreement, the study table, block counts) on
    simulator-sized inputs."""
    from benchmarks.data import ecoli, lambda_phage

    lam, eco = lambda_phage(), ecoli()
    sizes = {"L1": (lam.slice(0, 20), eco.slice(0, 24)), "E1": (eco.slice(0, 22), eco.slice(50, 70)),
             "T20": (lam.slice(0, 30), eco.slice(0, 26)), "B14": (eco.slice(0, 16), eco.slice(90, 106))}

    def inputs(workload):
        if workload in sizes:
            return sizes[workload]
        n = int(workload[1:])
        return eco.slice(0, n), eco.slice(300, 300 + n)

    monkeypatch.setattr(cuda_bench, "_inputs", inputs)
    monkeypatch.setattr(cuda_bench, "STUDY_LENGTHS", (8, 16))
    monkeypatch.setattr(cuda_bench, "TILED_CONFIGS", ((4, 2, 2, 4), (2, 3, 1, 4)))
    monkeypatch.setattr(cuda_bench, "STUDY_FORMS", {k: v[:3] + ((3,),)
                                                    for k, v in cuda_bench.STUDY_FORMS.items()})
    monkeypatch.setattr(cuda_bench, "BLOCK_COUNTS", {k: (1, 2) for k in cuda_bench.BLOCK_COUNTS})
    for name in ("_scores", "_seconds", "_study", "_blocks"):
        monkeypatch.setattr(cuda_bench, name, {})
    cases = cuda_bench.cases(None)
    names = {(c.workload, c.name) for c in cases}
    for ratio in cuda_bench.RATIOS:
        assert (ratio.workload, ratio.subject) in names and (ratio.workload, ratio.baseline) in names
    with small_pieces(full_matrix_cells=100):
        for case in cases:
            metrics = case.run()
            assert metrics["seconds"] is not None, case.name
            if "agrees" in metrics:
                assert metrics["agrees"] is True, case.name
            if "/cuda" in case.name or case.name.startswith("study"):
                assert metrics["device"] == "CUDA simulator"
    table = next(c for c in cases if c.name == "study crossover").run()
    assert set(table) >= {"crossover_study_forms", "crossover_any_form"}
