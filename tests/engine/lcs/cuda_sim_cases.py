"""lcs CUDA kernels in numba's CUDA simulator, against the oracle.

Run by test_lcs_cuda.py in a subprocess with NUMBA_ENABLE_CUDASIM=1 (the variable
must be set before numba is first imported). Threads per block, tile columns and
the recovery's leaf size are patched small, so that the tiny inputs the simulator
can afford span several bands (blocks), tiles and launches, and the recovery runs
its last-row passes on the (simulated) GPU.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

if os.environ.get("NUMBA_ENABLE_CUDASIM") != "1":
    pytest.skip("run with NUMBA_ENABLE_CUDASIM=1 (test_lcs_cuda.py does)", allow_module_level=True)

from tests.cuda_support import launches_refused, no_gpu_memory, simulator_cli  # noqa: E402
from engine import config, gpu, lcs  # noqa: E402
from engine.jobs import CancelToken, drive  # noqa: E402
from engine.lcs import cuda as lcuda  # noqa: E402
from engine.lcs import driver  # noqa: E402
from benchmarks import lcs_cuda as cuda_bench
from engine.lcs import reference  # noqa: E402
from engine.lcs.cpu_common import PLAIN, SNAPSHOT, make_sampling  # noqa: E402
from engine.sequences import Record  # noqa: E402
from tests.engine.lcs.helpers import assert_valid_lcs  # noqa: E402
from tests.strategies import random_codes  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")

#: (variant, parallel form, threads per block): one band of 1, 2 or 3 lanes per block.
FORMS = [("bitparallel", None, 1), ("bitparallel", None, 2), ("wavefront", "tiled", 3),
         ("wavefront", "diagonal", 8)]


def label(form) -> str:
    v, p, tpb = form
    return f"{v}{'/' + p if p else ''}/tpb={tpb}"


@pytest.fixture(autouse=True)
def small_gpu(monkeypatch):
    monkeypatch.setattr(config, "LCS_CUDA_TILE_COLUMNS", {"bitparallel": 5, "wavefront": 5})
    monkeypatch.setattr(config, "LCS_CUDA_THREADS_PER_BLOCK", 2)
    monkeypatch.setattr(config, "LCS_CUDA_TRACEBACK_WORDS", 24)


def _rec(codes, name):
    return Record(name, np.asarray(codes, dtype=np.uint8))


def _solve(a, b, form, **kw):
    v, p, tpb = form
    res = lcs.solve(_rec(a, "a"), _rec(b, "b"), variant=v, backend="cuda", parallel=p,
                    threads_per_block=tpb, **kw)
    assert res.info.backend == "cuda" and res.info.complete and res.info.parallel == p
    return res


def _inputs(seed, m, n, iupac=0.1):
    rng = np.random.default_rng(seed)
    return random_codes(rng, m, iupac), random_codes(rng, n, iupac)


# Lengths around the word (64) and band edges; the per-diagonal form runs a launch per
# anti-diagonal, each with a simulated thread per cell, so it gets the shorter ones.
SIZES = {
    "bitparallel": [(63, 64), (65, 128), (129, 129), (128, 65), (1, 129), (129, 1), (1, 1)],
    "tiled": [(63, 65), (129, 40), (1, 64), (64, 1), (1, 1)],
    "diagonal": [(64, 63), (65, 20), (1, 30), (1, 1)],
}


@pytest.mark.parametrize("form", FORMS, ids=label)
def test_length_and_lcs_equal_the_oracle(form):
    """IUPAC codes, lengths 63/64/65/128/129 and one-symbol inputs; the LCS and its pairs
    are re-checked (increasing, matching, as many as the oracle's length)."""
    sizes = SIZES[form[1] or form[0]]
    for k, (m, n) in enumerate(sizes):
        a, b = _inputs(1000 * m + n + k, m, n)
        expected, _ = reference.lcs(a, b)
        length = lcs.length(_rec(a, "a"), _rec(b, "b"), variant=form[0], backend="cuda",
                            parallel=form[1], threads_per_block=form[2])
        assert length == expected, (label(form), m, n)
        if form[2] == 2 or form[1] == "diagonal" or (m, n) == (63, 65):
            continue  # the recovery is the same driver; each kernel recovers a few times
        res = _solve(a, b, form)
        assert_valid_lcs(a, b, res, expected)


def test_one_symbol_and_empty_inputs():
    for form in FORMS[1:3]:
        assert _solve([15], [4], form).length == 1      # N matches G
        assert _solve([1], [2], form).length == 0
        assert _solve([2], [1, 8, 2, 2], form).pairs.tolist() == [[1, 3]]
    with pytest.raises(ValueError, match="non-empty"):
        lcs.make_job(_rec([], "a"), "ACGT", backend="cuda")
    with pytest.raises(ValueError, match="empty"):
        lcs.make_job("ACGT", "", backend="cuda")


def _passes(form, task="length"):
    v, p, tpb = form
    return lcuda.CudaPasses(lcs.make_job("A", "C", variant=v, backend="cuda", parallel=p,
                                         threads_per_block=tpb, task=task))


@pytest.mark.parametrize("form", FORMS, ids=label)
def test_every_launch_boundary_keeps_the_state(form):
    """One launch per tile anti-diagonal (or per anti-diagonal): bands restart from their
    saved state every time; the last row equals the oracle's L[m, :]."""
    m, n = (70, 23) if form[1] == "diagonal" else (130, 41)
    a, b = _inputs(7, m, n)
    want = np.array(reference.lcs_matrix(a, b)[-1], dtype=np.int64)
    p = _passes(form).new_pass(a, b, PLAIN)
    launches = 0
    while not p.finished:
        p.run(1, np.zeros(1, dtype=np.uint8))
        launches += 1
    assert launches == p.cumulative.shape[0] - 1 > 5
    if form[1] != "diagonal":
        assert p.nbands >= 2 and p.nchunks >= 5
    assert np.array_equal(p.last_row(), want)


@pytest.mark.parametrize("form", [FORMS[0], FORMS[2], FORMS[3]], ids=label)
def test_snapshots_equal_the_cpu(form, monkeypatch):
    """The GUI's heatmap: every sampled cell, sparse sampling included."""
    monkeypatch.setattr(config, "SNAPSHOT_MAX_SIDE", 9)
    a, b = _inputs(3, 66, 30)
    job = lcs.make_job(_rec(a, "a"), _rec(b, "b"), variant=form[0], backend="cuda",
                       parallel=form[1], threads_per_block=form[2], task="length", snapshots=True)
    got = drive(lcs.iter_solve(job))
    want = lcs.solve(_rec(a, "a"), _rec(b, "b"), variant=form[0], backend="serial", task="length",
                     snapshots=True)
    assert got.snapshot.shape == (9, 9) and got.length == want.length
    assert np.array_equal(got.snapshot, want.snapshot)
    # Dense sampling (every cell) checked against the oracle's matrix.
    full = make_sampling(20, 17, 64)
    a2, b2 = a[:20], b[:17]
    p = _passes(form).new_pass(a2, b2, SNAPSHOT, full)
    while not p.finished:
        p.run(7, np.zeros(1, dtype=np.uint8))
    assert np.array_equal(full.image, np.array(reference.lcs_matrix(a2, b2))[1:, 1:])


def test_threads_per_block_whole_warps_and_several_bands_per_block():
    """32 lanes per band; above 32 threads the GPU puts several bands in a block (the
    simulator runs one per block, as it runs blocks one at a time)."""
    a, b = _inputs(9, 129, 70, iupac=0.2)
    expected, _ = reference.lcs(a, b)
    for tpb in (32, 64):
        assert lcs.length(_rec(a, "a"), _rec(b, "b"), variant="bitparallel", backend="cuda",
                          threads_per_block=tpb) == expected
    assert gpu.band_layout(64) == (32, 1) and gpu.band_layout(5) == (5, 1)


def test_recovery_splits_on_the_gpu_and_finishes_leaves_on_the_cpu(monkeypatch):
    """Hirschberg: last-row passes on the GPU, leaves on the CPU with the variant's kernels."""
    made = []
    original = lcuda.CudaPasses.new_pass

    def spy(self, a, b, mode, sampling=None):
        p = original(self, a, b, mode, sampling)
        made.append(type(p).__name__)
        return p

    monkeypatch.setattr(lcuda.CudaPasses, "new_pass", spy)
    a, b = _inputs(11, 129, 90)
    expected, _ = reference.lcs(a, b)
    res = _solve(a, b, FORMS[0])
    assert_valid_lcs(a, b, res, expected)
    assert made.count("BandPass") >= 2 and made.count("Pass") >= 2
    # The same cap on the CPU splits the same way: the same LCS, pair for pair.
    monkeypatch.setattr(config, "LCS_TRACEBACK_WORDS", config.LCS_CUDA_TRACEBACK_WORDS)
    cpu = lcs.solve(_rec(a, "a"), _rec(b, "b"), variant="bitparallel", backend="serial")
    assert np.array_equal(cpu.pairs, res.pairs) and cpu.lcs == res.lcs


def test_progress_slices_and_cancel(monkeypatch):
    monkeypatch.setattr(config, "SLICE_SECONDS", 1e-4)
    monkeypatch.setattr(driver, "FIRST_SLICE_CELLS", 64)  # a few tile anti-diagonals per launch
    a, b = _inputs(2, 130, 60)
    job = lcs.make_job(_rec(a, "a"), _rec(b, "b"), variant="bitparallel", backend="cuda",
                       threads_per_block=1, task="length")
    progress = []
    full = drive(lcs.iter_solve(job), progress.append)
    running = [p for p in progress if p.phase == "running"]
    assert len(running) >= 3 and running[-1].done == running[-1].total == 130 * 60
    assert full.length == reference.lcs(a, b)[0]
    token = CancelToken()
    gen = lcs.iter_solve(job, token)
    next(p for p in gen if p.phase == "running")
    token.cancel()
    part = drive(gen)
    assert not part.info.complete and part.length is None


def test_a_band_that_waits_forever_becomes_a_one_line_failure():
    """Starting at tile anti-diagonal nchunks leaves band 1 waiting for a tile band 0
    never ran: the spin guard gives up and the host raises a one-line CudaFailure."""
    a, b = _inputs(4, 130, 12)
    p = _passes(FORMS[0]).new_pass(a, b, PLAIN)
    p.diagonal = p.nchunks
    with pytest.raises(RuntimeError, match="waited too long") as err:
        p.run(1, np.zeros(1, dtype=np.uint8))
    assert "\n" not in str(err.value)


def test_out_of_memory_and_launch_failures_are_one_line_errors(monkeypatch):
    a, b = _inputs(5, 40, 30)
    expected, _ = reference.lcs(a, b)

    with no_gpu_memory(monkeypatch):
        with pytest.raises(RuntimeError, match="ran out of memory") as err:
            _solve(a, b, FORMS[0])
        assert "\n" not in str(err.value)

    with launches_refused(monkeypatch):
        with pytest.raises(RuntimeError, match="CUDA error while launching") as err:
            _solve(a, b, FORMS[2])
        assert "\n" not in str(err.value)
    # Nothing is left broken: the CPU and the GPU paths both still work.
    assert lcs.length(_rec(a, "a"), _rec(b, "b"), backend="serial") == expected
    assert _solve(a, b, FORMS[2]).length == expected


def test_shared_memory_beyond_the_device_is_a_clear_failure(monkeypatch):
    monkeypatch.setattr(config, "LCS_CUDA_TILE_COLUMNS", {"bitparallel": 1 << 20})
    with pytest.raises(RuntimeError, match="shared memory") as err:
        _solve(*_inputs(6, 10, 10), FORMS[0], task="length")  # (a GPU pass)
    assert "\n" not in str(err.value)


def _cli(*args):
    return simulator_cli("lcs", *args)


def test_cli_runs_cuda_and_reports_bad_options():
    ok = _cli("ACCGGTT", "ACGTAGT", "--backend", "cuda", "--variant", "wavefront", "--parallel",
              "diagonal", "--threads-per-block", "4", "--json")
    assert ok.returncode == 0, ok.stderr
    assert '"length": 5' in ok.stdout and '"backend": "cuda"' in ok.stdout
    bad = _cli("ACGT", "ACGT", "--backend", "cuda", "--variant", "bitparallel", "--parallel", "tiled")
    assert bad.returncode == 2 and "no parallel forms" in bad.stderr
    bad = _cli("ACGT", "ACGT", "--backend", "cuda", "--threads-per-block", "48")
    assert bad.returncode == 2 and "multiple of 32" in bad.stderr
    assert len(bad.stderr.strip().splitlines()) == 1


def test_bench_cases_run_on_tiny_workloads(monkeypatch):
    """The CUDA bench plumbing (peers, agreement, kernel timing) on simulator-sized inputs."""
    monkeypatch.setattr(cuda_bench, "G1", ((0, 70), (2_000_000, 2_000_040)))
    monkeypatch.setattr(cuda_bench, "H1", ((0, 60), (1_000_000, 1_000_050)))
    monkeypatch.setattr(cuda_bench, "F7_LENGTHS", (30,))
    monkeypatch.setattr(cuda_bench, "_lengths", {})
    monkeypatch.setattr(cuda_bench, "_rates", {})
    monkeypatch.setattr(cuda_bench, "_kernel_seconds", _sim_kernel_seconds)
    cases = cuda_bench.cases(None)
    names = {(c.workload, c.name) for c in cases}
    for ratio in cuda_bench.RATIOS:
        if ratio.workload.startswith("F7") and ratio.workload != "F7-30":
            continue
        assert (ratio.workload, ratio.subject) in names and (ratio.workload, ratio.baseline) in names
    for case in cases:
        if "tile=" in case.name or "tpb=" in case.name or "multicore" in case.name:
            continue  # repeats of the same plumbing (and the parallel CPU kernels)
        metrics = case.run()
        assert metrics["seconds"] is not None and metrics["agrees"] in (True, "reference"), case.name
        if "/cuda" in case.name:
            assert metrics["device"] == "CUDA simulator"


def _sim_kernel_seconds(job, repeat):
    """The simulator has no CUDA events: time the same single launch with the clock."""
    import time

    from engine.lcs.cuda import CudaPasses

    p = CudaPasses(job).new_pass(job.inputs["a"][0].codes, job.inputs["b"][0].codes, PLAIN)
    t0 = time.perf_counter()
    p.run(p.total, np.zeros(1, dtype=np.uint8))
    assert p.finished
    return time.perf_counter() - t0


def test_diagonal_form_recovers_the_lcs_pairs(monkeypatch):
    """Issue 20: the per-diagonal form runs task="lcs" (its last-row passes on the simulated
    GPU) and rebuilds a valid LCS whose pairs are the CPU rows variant's, pair for pair."""
    made = []
    original = lcuda.CudaPasses.new_pass

    def spy(self, a, b, mode, sampling=None):
        made.append(type(p := original(self, a, b, mode, sampling)).__name__)
        return p

    monkeypatch.setattr(lcuda.CudaPasses, "new_pass", spy)
    monkeypatch.setattr(config, "LCS_TRACEBACK_WORDS", config.LCS_CUDA_TRACEBACK_WORDS)
    for seed, (m, n) in enumerate([(40, 23), (9, 30), (1, 12)]):
        a, b = _inputs(300 + seed, m, n)
        expected, _ = reference.lcs(a, b)
        res = _solve(a, b, FORMS[3])
        assert_valid_lcs(a, b, res, expected)
        cpu = lcs.solve(_rec(a, "a"), _rec(b, "b"), variant="rows", backend="serial")
        assert np.array_equal(cpu.pairs, res.pairs) and cpu.lcs == res.lcs, (m, n)
    assert made.count("DiagonalPass") >= 2, made  # the splits ran on the (simulated) GPU
