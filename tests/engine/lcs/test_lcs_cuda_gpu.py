"""lcs on a real GPU: every CUDA variant and form against the CPU solvers on real DNA.

Marked ``gpu`` and skipped where numba.cuda finds no GPU (run them with
``scripts/gpu tests lcs`` on the lent GPU machine, which uses --noconftest: the
real DNA comes from fixtures of this file).
"""

from __future__ import annotations

import numpy as np
import pytest

from engine import config, lcs
from engine.jobs import CancelToken, drive
from tests.cuda_support import GPU_ONLY


pytestmark = GPU_ONLY

FORMS = [("bitparallel", None), ("wavefront", "tiled"), ("wavefront", "diagonal")]


def _label(form):
    return form[0] + (f"/{form[1]}" if form[1] else "")


def _assert_valid(a, b, res, length):
    """The pairs are increasing, match, spell the LCS and are ``length`` many."""
    pairs = np.asarray(res.pairs) - 1
    assert res.length == length and pairs.shape == (length, 2) and len(res.lcs) == length
    i, j = pairs[:, 0], pairs[:, 1]
    assert np.all(np.diff(i) > 0) and np.all(np.diff(j) > 0)
    assert np.all((a.codes[i] & b.codes[j]) != 0)


def _cuda(a, b, form, **kw):
    res = lcs.solve(a, b, variant=form[0], backend="cuda", parallel=form[1], **kw)
    assert res.info.backend == "cuda" and res.info.complete
    return res


@pytest.fixture(scope="module")
def length_pair(lambda_record, ecoli_record):
    a, b = lambda_record.slice(3000, 23000), ecoli_record.slice(500_000, 531_000)
    return a, b, lcs.length(a, b, variant="bitparallel", backend="multicore")


@pytest.mark.parametrize("form", FORMS, ids=_label)
def test_length_equals_the_cpu_on_lambda_vs_ecoli(length_pair, form):
    a, b, want = length_pair
    assert _cuda(a, b, form, task="length").length == want
    assert lcs.length(a, b, variant=form[0], backend="multicore") == want


@pytest.mark.parametrize("form", FORMS, ids=_label)
def test_lcs_equals_the_cpu_pair_for_pair(lambda_record, ecoli_record, form, monkeypatch):
    """Hirschberg with last-row passes on the GPU; the CPU run with the same leaf size
    makes the same splits, so the LCS is the same one, pair for pair."""
    a, b = lambda_record.slice(1000, 6000), ecoli_record.slice(0, 7000)
    got = _cuda(a, b, form)
    monkeypatch.setattr(config, "LCS_TRACEBACK_WORDS", config.LCS_CUDA_TRACEBACK_WORDS)
    want = lcs.solve(a, b, variant=form[0], backend="multicore")
    _assert_valid(a, b, got, want.length)
    assert np.array_equal(got.pairs, want.pairs) and got.lcs == want.lcs


def test_hirschberg_recovery_of_100kb_by_100kb(ecoli_record, monkeypatch):
    a, b = ecoli_record.slice(0, 100_000), ecoli_record.slice(1_000_000, 1_100_000)
    got = _cuda(a, b, ("bitparallel", None))
    monkeypatch.setattr(config, "LCS_TRACEBACK_WORDS", config.LCS_CUDA_TRACEBACK_WORDS)
    want = lcs.solve(a, b, variant="bitparallel", backend="multicore")
    _assert_valid(a, b, got, want.length)
    assert np.array_equal(got.pairs, want.pairs)


@pytest.mark.parametrize("m", [1, 31, 32, 33, 2047, 2048, 2049, 4160])
def test_band_edges_with_iupac(m):
    """Lengths around a band (32 rows of wavefront, 32 words of bitparallel) with IUPAC codes."""
    from engine.sequences import Record

    rng = np.random.default_rng(m)

    def codes(k):
        return np.where(rng.random(k) < 0.05, rng.integers(1, 16, k),
                        rng.choice([1, 2, 4, 8], k)).astype(np.uint8)

    a, b = Record("a", codes(m)), Record("b", codes(3001))
    want = lcs.length(a, b, variant="rows", backend="serial")
    for form in FORMS[:2]:
        assert _cuda(a, b, form, task="length").length == want, (form, m)
        assert _cuda(b, a, form, task="length").length == want, (form, m)


@pytest.mark.parametrize("tpb,tile", [(32, 256), (128, 256), (5, 256), (64, 100)])
def test_threads_per_block_and_tiles(length_pair, tpb, tile, monkeypatch):
    monkeypatch.setattr(config, "LCS_CUDA_TILE_COLUMNS", {"bitparallel": tile, "wavefront": tile})
    a, b, want = length_pair
    for form in FORMS[:2]:
        assert _cuda(a, b, form, task="length", threads_per_block=tpb).length == want


@pytest.mark.parametrize("form", FORMS, ids=_label)
def test_many_launches_keep_the_state(lambda_record, ecoli_record, form):
    """A pass cut into a launch per tile anti-diagonal gives the one-launch last row."""
    from engine.lcs.cpu_common import PLAIN
    from engine.lcs.cuda import CudaPasses

    a, b = lambda_record.slice(0, 6000).codes, ecoli_record.slice(0, 5000).codes
    job = lcs.make_job("A", "C", variant=form[0], backend="cuda", parallel=form[1], task="length")
    passes = CudaPasses(job)
    whole = passes.new_pass(a, b, PLAIN)
    whole.run(whole.total, np.zeros(1, dtype=np.uint8))
    sliced = passes.new_pass(a, b, PLAIN)
    launches = 0
    while not sliced.finished:
        sliced.run(1 if form[1] != "diagonal" else 5000, np.zeros(1, dtype=np.uint8))
        launches += 1
    assert launches > 20 and whole.finished
    assert np.array_equal(whole.last_row(), sliced.last_row())


@pytest.mark.parametrize("form", FORMS, ids=_label)
def test_snapshots_equal_the_cpu(lambda_record, ecoli_record, form):
    a, b = lambda_record.slice(0, 3000), ecoli_record.slice(0, 2500)
    got = _cuda(a, b, form, task="length", snapshots=True)
    want = lcs.solve(a, b, variant=form[0], backend="serial", task="length", snapshots=True)
    assert got.length == want.length and np.array_equal(got.snapshot, want.snapshot)


def test_cancel_mid_pass(ecoli_record, monkeypatch):
    monkeypatch.setattr(config, "SLICE_SECONDS", 1e-3)
    a, b = ecoli_record.slice(0, 300_000), ecoli_record.slice(2_000_000, 2_300_000)
    job = lcs.make_job(a, b, variant="wavefront", backend="cuda", task="length")
    token = CancelToken()
    gen = lcs.iter_solve(job, token)
    first = next(p for p in gen if p.phase == "running")
    token.cancel()
    part = drive(gen)
    assert not part.info.complete and part.length is None and first.done < first.total


def test_out_of_memory_and_launch_failures_leave_everything_usable(length_pair):
    from numba import cuda

    from engine.gpu import Device
    from engine.lcs.cuda_diagonal import diagonal_kernel

    a, b, want = length_pair
    dev = Device(64)
    _, total = cuda.current_context().get_memory_info()
    with pytest.raises(RuntimeError, match="ran out of memory") as err:
        dev.empty((4 * total,), np.uint8, "a test array bigger than the GPU")
    assert "\n" not in str(err.value)
    tiny = dev.zeros(4, np.uint8, "t")
    with pytest.raises(RuntimeError, match="CUDA error while launching") as err:
        dev.launch(diagonal_kernel(False), 1, 4096, 0, tiny, tiny, dev.zeros((4, 5), np.int32, "b"), 2)
    assert "\n" not in str(err.value)
    assert _cuda(a, b, FORMS[0], task="length").length == want
    assert lcs.length(a, b, backend="serial") == want
