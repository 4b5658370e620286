"""nw on a real GPU: every CUDA form against the CPU solver on real DNA (lambda vs E. coli).

Marked ``gpu`` and skipped where numba.cuda finds no GPU (run them with
``scripts/gpu tests nw`` on the lent GPU machine; the real DNA comes from the fixtures of
tests/cuda_support.py).
"""

from __future__ import annotations

import numpy as np
import pytest

from engine import config, gpu, nw
from engine.sequences import Record
from tests.cuda_support import GPU_ONLY
from tests.engine.nw.cuda_support import cuda_forms, label, options
from tests.engine.nw.helpers import check_alignment

pytestmark = GPU_ONLY

FORMS = cuda_forms()
SCHEMES = [(1, 0, -1), (2, -1, -2), (5, -4, -3)]


@pytest.fixture(scope="module")
def pair(lambda_record, ecoli_record):
    return lambda_record.slice(5_000, 9_000), ecoli_record.slice(100_000, 106_000)


@pytest.fixture(scope="module")
def cpu_scores(pair):
    a, b = pair
    return {s: nw.score(a, b, match=s[0], mismatch=s[1], gap=s[2], variant="diagonal",
                        backend="multicore") for s in SCHEMES}


@pytest.mark.parametrize("scheme", SCHEMES, ids=str)
@pytest.mark.parametrize("combo", FORMS, ids=label)
def test_every_form_scores_like_the_cpu(pair, cpu_scores, combo, scheme):
    a, b = pair
    res = nw.solve(a, b, match=scheme[0], mismatch=scheme[1], gap=scheme[2], traceback=False,
                   **options(combo))
    assert res.info.complete and res.info.backend == "cuda"
    assert res.score == cpu_scores[scheme], label(combo)


@pytest.mark.parametrize("combo", FORMS, ids=label)
def test_every_form_aligns_like_the_cpu(lambda_record, ecoli_record, combo, monkeypatch):
    """Hirschberg with its passes on the GPU (small base cases, so there are many passes):
    the same alignment as the CPU, column for column (both split at the first best column)."""
    monkeypatch.setattr(config, "NW_FULL_MATRIX_CELLS", 100_000)
    a, b = lambda_record.slice(20_000, 22_000), ecoli_record.slice(500_000, 502_500)
    want = nw.solve(a, b, match=2, mismatch=-1, gap=-2, variant="diagonal", backend="multicore")
    got = nw.solve(a, b, match=2, mismatch=-1, gap=-2, **options(combo))
    assert got.score == want.score
    check_alignment(got, a.codes, b.codes, 2, -1, -2)
    assert got.alignment.aligned_a == want.alignment.aligned_a
    assert got.alignment.aligned_b == want.alignment.aligned_b


@pytest.mark.parametrize("combo", [c for c in FORMS if label(c) in ("tiled", "prefix-multi-block")],
                         ids=label)
def test_alignment_of_20_kb_by_20_kb(lambda_record, ecoli_record, combo):
    a, b = lambda_record.slice(0, 20_000), ecoli_record.slice(0, 20_000)
    want = nw.solve(a, b, variant="diagonal", backend="multicore")
    got = nw.solve(a, b, **options(combo))
    assert got.score == want.score and got.info.complete
    check_alignment(got, a.codes, b.codes, 1, 0, -1)
    assert got.alignment.cigar == want.alignment.cigar


@pytest.mark.parametrize("tpb,rows,cols,chunk,blocks", [
    (32, 8, 4, 64, 0), (64, 4, 2, 64, 0), (128, 16, 1, 32, 0), (256, 8, 4, 128, 0),
    (1024, 4, 2, 32, 0), (32, 32, 1, 32, 0), (32, 1, 4, 96, 0), (16, 5, 2, 16, 0),
    (64, 4, 4, 32, 1), (32, 16, 2, 32, 3), (96, 7, 1, 32, 2), (32, 12, 4, 256, 0)])
def test_tiled_threads_rows_columns_tiles_and_blocks(pair, cpu_scores, monkeypatch, tpb, rows,
                                                     cols, chunk, blocks):
    monkeypatch.setattr(config, "NW_CUDA_TILED_ROWS", rows)
    monkeypatch.setattr(config, "NW_CUDA_TILED_COLUMNS", cols)
    monkeypatch.setattr(config, "NW_CUDA_TILED_CHUNK", chunk)
    a, b = pair
    got = nw.score(a, b, variant="diagonal", backend="cuda", threads_per_block=tpb, blocks=blocks)
    assert got == cpu_scores[(1, 0, -1)]


@pytest.mark.parametrize("variant,parallel,tpb,blocks", [
    ("prefix", "multi-block", 64, 0), ("prefix", "multi-block", 1024, 0),
    ("prefix", "multi-block", 256, 1), ("prefix", "multi-block", 128, 3),
    ("prefix", "multi-block", 32, 190), ("prefix", "one-block", 64, 0),
    ("prefix", "one-block", 1024, 0), ("diagonal", "one-block", 32, 0),
    ("diagonal", "multi-block", 1024, 0), ("diagonal", "multi-block", 64, 3)])
def test_study_forms_threads_and_blocks(pair, cpu_scores, variant, parallel, tpb, blocks):
    a, b = pair
    flags = () if variant == "diagonal" else None
    got = nw.score(a, b, variant=variant, backend="cuda", parallel=parallel, flags=flags,
                   threads_per_block=tpb, blocks=blocks)
    assert got == cpu_scores[(1, 0, -1)]


def test_several_launches_per_band(pair, cpu_scores, monkeypatch):
    """A small memory budget: the prefix rows spread over several launches (the tiled form
    needs no more than a row, whatever the budget)."""
    monkeypatch.setattr(gpu.Device, "scratch_budget", lambda self, fraction=0.5: 1 << 16)
    a, b = pair
    for variant in ("diagonal", "prefix"):
        assert nw.score(a, b, variant=variant, backend="cuda") == cpu_scores[(1, 0, -1)], variant


@pytest.mark.parametrize("shape", [(40, 30_000), (30_000, 40), (1, 5_000), (5_000, 1)], ids=str)
def test_long_thin_and_tall_narrow_problems(lambda_record, ecoli_record, shape):
    a, b = lambda_record.slice(1_000, 1_000 + shape[0]), ecoli_record.slice(7_000, 7_000 + shape[1])
    want = nw.score(a, b, variant="diagonal", backend="multicore")
    for combo in FORMS:
        if label(combo) == "per-launch" and max(shape) > 10_000:
            continue   # 30,000 launches: covered at other shapes
        assert nw.score(a, b, **options(combo)) == want, label(combo)


@pytest.mark.parametrize("combo", FORMS, ids=label)
def test_snapshots_equal_the_cpu(lambda_record, ecoli_record, combo):
    a, b = lambda_record.slice(30_000, 31_500), ecoli_record.slice(9_000, 11_000)
    want = nw.solve(a, b, variant="rows", backend="serial", traceback=False, snapshots=True)
    got = nw.solve(a, b, traceback=False, snapshots=True, **options(combo))
    assert np.array_equal(got.snapshot, want.snapshot) and (got.snapshot > 0).all()


def test_out_of_memory_and_launch_failures_leave_everything_usable(pair, cpu_scores):
    from numba import cuda

    from engine.nw.cuda_diagonal import tiled_kernel

    a, b = pair
    dev = gpu.Device(64)
    _, total = cuda.current_context().get_memory_info()
    with pytest.raises(gpu.CudaFailure, match="ran out of memory") as err:
        dev.empty((4 * total,), np.uint8, "a test array bigger than the GPU")
    assert "\n" not in str(err.value)
    # The kernel a tiled job uses, launched with more threads per block than any GPU allows.
    nw.score(a.slice(0, 50), b.slice(0, 60), variant="diagonal", backend="cuda")
    h, w = 50, 60

    def ints(n):
        return dev.zeros(n, np.int32, "test")

    slots = dev.upload(np.full(1, -1, np.int32), "slots")
    args = (dev.upload(a.codes[:h], "a"), dev.zeros(w + 64, np.uint32, "b"), h, w, ints(w + 1),
            ints(h + 1), dev.zeros(2 * (w + 1), np.int64, "ring"), w + 1, np.int64(1), ints(1),
            np.int32(3), np.int32(2), ints(h + 1), slots, slots, dev.zeros((1, 1), np.int32, "snap"),
            1000, ints(1))
    kernel = tiled_kernel(config.NW_CUDA_TILED_ROWS, config.NW_CUDA_TILED_COLUMNS,
                          config.NW_CUDA_TILED_CHUNK, 32, 1, False,
                          gpu.register_cap(config.NW_CUDA_THREADS_PER_BLOCK["tiled"]))
    with pytest.raises(gpu.CudaFailure, match="CUDA error while launching") as err:
        dev.launch(kernel, 1, 4096, 0, *args)
    assert "\n" not in str(err.value)
    # The GPU and the CPU both still answer.
    assert nw.score(a, b, variant="diagonal", backend="cuda") == cpu_scores[(1, 0, -1)]
    assert nw.score(a, b, variant="prefix", backend="serial") == cpu_scores[(1, 0, -1)]


def test_iupac_codes_on_the_gpu(pair):
    a, b = pair
    rng = np.random.default_rng(5)
    codes_a, codes_b = a.codes.copy(), b.codes.copy()
    codes_a[rng.random(len(codes_a)) < 0.05] = 15
    codes_b[rng.random(len(codes_b)) < 0.05] = 5
    ra, rb = Record("a", codes_a), Record("b", codes_b)
    want = nw.score(ra, rb, variant="prefix", backend="multicore")
    for combo in FORMS:
        assert nw.score(ra, rb, **options(combo)) == want, label(combo)
