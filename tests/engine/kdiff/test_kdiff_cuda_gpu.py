"""kdiff on a real GPU: every CUDA variant and flag against the CPU solver on real DNA.

Marked ``gpu`` and skipped where numba.cuda finds no GPU (run them with
``scripts/gpu tests kdiff`` on the lent GPU machine).
"""

from __future__ import annotations

import numpy as np
import pytest

from engine import config, kdiff
from engine.sequences import Record
from tests.engine.kdiff.cuda_support import cuda_combos, label
from tests.cuda_support import GPU_ONLY


pytestmark = GPU_ONLY

COMBOS = cuda_combos()


def _profiles(result):
    return {t: p.tolist() for t, p in result.profiles.items()}


@pytest.fixture(scope="module")
def real_inputs(lambda_record, ecoli_record):
    target = [lambda_record.slice(1000, 1600)]
    background = [ecoli_record.slice(0, 50_000), ecoli_record.slice(3_000_000, 3_040_000)]
    return target, background


@pytest.fixture(scope="module")
def cpu_answers(real_inputs):
    target, background = real_inputs
    return {k: kdiff.solve(target, background, k, variant="bitparallel", backend="multicore")
            for k in (1, 5, 100)}


# The lanes stages and the neighbour bounds first (a step time limit may cut the run short).
def test_lanes_words_live_in_registers(real_inputs):
    """Both lanes kernels keep their starts' words in registers: no local memory at all."""
    from engine.kdiff.cuda_lanes import WORDS, lanes_kernel

    target, background = real_inputs
    for word in WORDS:  # kernels load at their first launch: a pass of each width alone
        kdiff.solve(target, background, 5, variant="bitparallel", backend="cuda",
                    flags={f"word{word}"})
    for word in WORDS:
        kernel = lanes_kernel(word, config.KDIFF_CUDA_LANES_PER_THREAD[word],
                              config.KDIFF_CUDA_LANES_THREADS_PER_BLOCK)
        local = kernel.get_local_mem_per_thread()
        values = list(local.values()) if isinstance(local, dict) else [local]
        assert values and all(v == 0 for v in values), (word, local)


#: The flag sets of bitparallel on CUDA that the stretch below compares with the CPU.
STAGE_FLAGS = [frozenset(f) for f in ({"word32"}, {"word32", "word64"}, {"word64"},
                                      {"word32", "neighbours"}, {"word32", "word64", "neighbours"})]


@pytest.fixture(scope="module")
def shared_stretch(lambda_record, ecoli_record):
    """lambda[9000:10400] against the part of E. coli 536 holding a prophage that shares it
    (near 1.217 Mb) and another 100 kb (both strands): most c(r) are in the hundreds, next to
    short ones; and the CPU's answer."""
    target = [lambda_record.slice(9000, 10400)]
    background = [ecoli_record.slice(1_150_000, 1_300_000), ecoli_record.slice(0, 100_000)]
    want = kdiff.solve(target, background, 5, variant="bitparallel", backend="multicore",
                       flags={"simd"})
    return target, background, want


@pytest.mark.parametrize("flags", STAGE_FLAGS, ids=lambda f: "+".join(sorted(f)))
def test_stages_on_a_stretch_shared_with_the_background(shared_stretch, flags, monkeypatch):
    """Every lanes/neighbours flag set equals the CPU where c(r) runs long; the 64-bit stage
    receives starts (and settles some) in pass mode, and the neighbour rounds infer most of
    the long starts."""
    from engine.kdiff import cuda_lanes, neighbours

    given = {32: 0, 64: 0}
    settled64 = []
    original = cuda_lanes.LanesStage.run

    def spy(self, alpha, rs, counters, low=None, high=None, lv=None):
        got = original(self, alpha, rs, counters, low, high, lv)
        if alpha.shape[0] > 8:
            given[self.word] += len(rs)
            if self.word == 64:
                settled64.append(int(np.sum((got >= 32) & (got < 64))))
        return got

    monkeypatch.setattr(cuda_lanes.LanesStage, "run", spy)
    inferred = []
    infer = neighbours.SliceBounds.infer
    monkeypatch.setattr(neighbours.SliceBounds, "infer",
                        lambda self: inferred.append(infer(self)) or inferred[-1])
    target, background, want = shared_stretch
    got = kdiff.solve(target, background, 5, variant="bitparallel", backend="cuda", flags=flags,
                      count_comparisons=True)
    assert got.info.complete and set(got.info.flags) == set(flags)
    assert got.candidates == want.candidates
    assert _profiles(got) == _profiles(want)
    profile = next(iter(_profiles(want).values()))
    assert max(profile) > 200
    assert got.info.cells > 0 and got.info.comparisons == got.info.cells
    if "word64" in flags and "neighbours" not in flags:
        assert given[64] > 0 and sum(settled64) > 0, (given, settled64)
        if "word32" in flags:
            assert given[64] < given[32]
    if "neighbours" in flags:
        long = sum(1 for c in profile if c >= 32)
        assert sum(inferred) > long // 2, (sum(inferred), long)


@pytest.mark.parametrize("k", [1, 5, 100])
@pytest.mark.parametrize("combo", COMBOS, ids=label)
def test_every_variant_equals_the_cpu_on_lambda_vs_ecoli(real_inputs, cpu_answers, combo, k):
    target, background = real_inputs
    v, flags = combo
    got = kdiff.solve(target, background, k, variant=v, backend="cuda", flags=flags, strands="both",
                      count_comparisons=True)
    want = cpu_answers[k]
    assert got.info.complete and got.info.backend == "cuda"
    assert got.candidates == want.candidates, label(combo)
    assert _profiles(got) == _profiles(want), label(combo)
    assert got.info.cells > 0


@pytest.mark.parametrize("tpb,factor", [(64, 1), (128, 2), (512, 3), (1024, 3)])
def test_alternative_threads_per_block_and_prefetch_factor(real_inputs, cpu_answers, tpb, factor):
    target, background = real_inputs
    got = kdiff.solve(target, background, 100, variant="alternative", backend="cuda",
                      threads_per_block=tpb, prefetch_factor=factor)
    assert got.candidates == cpu_answers[100].candidates


def test_bitparallel_long_candidates_and_every_tier(lambda_record, ecoli_record):
    """A stretch of lambda planted in the background: its starts get c(r) in the
    thousands, which only the global-memory tiers hold; the rest stay short."""
    target = [lambda_record.slice(29_000, 34_000)]
    background = [ecoli_record.slice(0, 400_000), lambda_record.slice(30_000, 33_000)]
    want = kdiff.solve(target, background, 5, variant="bitparallel", backend="multicore")
    got = kdiff.solve(target, background, 5, variant="bitparallel", backend="cuda")
    assert max(c.length for c in want.candidates) > 2000
    assert got.candidates == want.candidates
    assert _profiles(got) == _profiles(want)


def test_bitparallel_register_tiers_alone(lambda_record, ecoli_record, monkeypatch):
    """Small chunks and two register tiers: overlaps and re-runs on real data."""
    monkeypatch.setattr(config, "KDIFF_CUDA_MIN_CHUNK", 256)
    monkeypatch.setattr(config, "KDIFF_CUDA_BITPARALLEL_TIERS", ((2, 96), (4, 256)))
    target = [lambda_record.slice(5_000, 8_000)]
    background = [ecoli_record.slice(1_000_000, 1_300_000)]
    want = kdiff.solve(target, background, 5, variant="bitparallel", backend="multicore")
    got = kdiff.solve(target, background, 5, variant="bitparallel", backend="cuda")
    assert _profiles(got) == _profiles(want)


def test_out_of_memory_and_launch_failures_leave_everything_usable(real_inputs, cpu_answers):
    from numba import cuda

    from engine.kdiff.cuda import Device
    from engine.kdiff.cuda_lanes import match_table_kernel

    target, background = real_inputs
    dev = Device(np.array([1, 2, 4, 8], dtype=np.uint8), np.array([0, 4]), 128)
    _, total = cuda.current_context().get_memory_info()
    with pytest.raises(RuntimeError, match="ran out of memory") as err:
        dev.empty((4 * total,), np.uint8, "a test array bigger than the GPU")
    assert "\n" not in str(err.value)
    with pytest.raises(RuntimeError, match="CUDA error while launching") as err:
        dev.launch(match_table_kernel(64), 1, 4096, 0, dev.beta, dev.empty((16, 4), np.uint64, "t"))
    assert "\n" not in str(err.value)
    # The GPU and the CPU both still answer.
    again = kdiff.solve(target, background, 5, variant="bitparallel", backend="cuda")
    assert again.candidates == cpu_answers[5].candidates
    assert kdiff.solve(target, background, 5, backend="serial").candidates == cpu_answers[5].candidates


def test_multi_record_target(lambda_record, ecoli_record):
    target = [lambda_record.slice(0, 300), Record("second", lambda_record.slice(40_000, 40_400).codes)]
    background = [ecoli_record.slice(2_000_000, 2_100_000)]
    want = kdiff.solve(target, background, 5, variant="bitparallel", backend="multicore")
    for variant in ("bitparallel", "alternative", "conventional"):
        got = kdiff.solve(target, background, 5, variant=variant, backend="cuda")
        assert got.candidates == want.candidates, variant


def test_bitparallel_words_live_in_registers(real_inputs, monkeypatch):
    """The register tiers keep their words in registers: no local memory at all."""
    from engine.kdiff.cuda_bitparallel import chunk_kernel
    from engine.gpu import register_cap

    target, background = real_inputs
    cap = register_cap(config.KDIFF_CUDA_BITPARALLEL_THREADS_PER_BLOCK)
    for words, overlap in config.KDIFF_CUDA_BITPARALLEL_TIERS:
        if words > config.KDIFF_CUDA_REGISTER_WORDS:
            continue
        # A job launches only the tiers its starts reach: one tier alone, and no lanes
        # stage (flags=set()), makes every start run in it, so it compiles.
        monkeypatch.setattr(config, "KDIFF_CUDA_BITPARALLEL_TIERS", ((words, overlap),))
        kdiff.solve(target, background, 5, variant="bitparallel", backend="cuda", flags=set())
        local = chunk_kernel(words, cap).get_local_mem_per_thread()
        values = list(local.values()) if isinstance(local, dict) else [local]
        assert values and all(v == 0 for v in values), (words, local)



@pytest.mark.parametrize("flags", [None, {"word32"}, {"word32", "word64"}, {"word64"}, set()],
                         ids=lambda f: "default" if f is None else "+".join(sorted(f)) or "tiers")
def test_all_k_equals_separate_runs_on_real_data(real_inputs, flags):
    """kdiff --all-k 5 on the GPU: every k's candidates are a separate cuda run's at that k,
    and the lengths are the multicore landscape's."""
    target, background = real_inputs
    got = kdiff.solve(target, background, 5, backend="cuda", flags=flags, all_k=True)
    assert got.info.complete and got.info.backend == "cuda"
    if flags is None:  # the default flags but neighbours (bounds on one k's c(r))
        assert "neighbours" not in got.info.flags and "word32" in got.info.flags
    cpu = kdiff.solve(target, background, 5, backend="multicore", all_k=True).landscape
    np.testing.assert_array_equal(got.landscape.lengths, cpu.lengths)
    for k in range(1, 6):
        alone = kdiff.solve(target, background, k, backend="cuda")
        assert got.landscape.candidates(k) == alone.candidates, k


def test_all_k_routes_through_the_tiers(lambda_record, ecoli_record):
    """--all-k 4 with word32 on real DNA with near-copies of the target planted, mismatches
    placed so that starts outgrow the 32-bit lanes at K only (register tiers without levels),
    at the top two levels too (register tiers probing them), past 64 rows at level 2 (back
    to the every-level tiers) and at level 0: the landscape is the multicore one's, and the
    levels kernels that ran keep no local memory."""
    from engine.gpu import register_cap
    from engine.kdiff.cuda_bitparallel import chunk_kernel
    from engine.kdiff.cuda_lanes import lanes_kernel

    alpha = lambda_record.codes[1000:1300]
    swap = {1: 2, 2: 4, 4: 8, 8: 1}

    def copy(a, b, positions):
        out = alpha[a:b].copy()
        for p in positions:
            out[p] = swap.get(int(out[p]), 1)
        return out

    planted = np.concatenate([copy(0, 38, (9, 19, 29)), copy(40, 80, (12, 25)),
                              copy(82, 150, (4, 14)), copy(116, 150, ())])
    target = [Record("t", alpha)]
    background = [ecoli_record.slice(0, 60_000), Record("planted", planted)]
    want = kdiff.solve(target, background, 4, backend="multicore", all_k=True).landscape
    got = kdiff.solve(target, background, 4, backend="cuda", flags={"word32"}, all_k=True)
    np.testing.assert_array_equal(got.landscape.lengths, want.lengths)
    lanes = lanes_kernel(32, config.KDIFF_CUDA_LANES_PER_THREAD[32],
                         config.KDIFF_CUDA_LANES_THREADS_PER_BLOCK, 255, 3)
    tier = chunk_kernel(config.KDIFF_CUDA_BITPARALLEL_TIERS[0][0],
                        register_cap(config.KDIFF_CUDA_BITPARALLEL_THREADS_PER_BLOCK), 3, 2)
    for kernel in (lanes, tier):
        local = kernel.get_local_mem_per_thread()
        values = list(local.values()) if isinstance(local, dict) else [local]
        assert values and all(v == 0 for v in values), (kernel.py_func.__name__, local)


def test_all_k_long_candidates_in_the_global_tiers(lambda_record, ecoli_record):
    """A stretch of lambda planted in the background: levels in the thousands of rows, which
    the global-memory tier walks block by block."""
    target = [lambda_record.slice(29_000, 31_000)]
    background = [ecoli_record.slice(0, 200_000), lambda_record.slice(29_500, 30_800)]
    want = kdiff.solve(target, background, 4, backend="multicore", all_k=True).landscape
    got = kdiff.solve(target, background, 4, backend="cuda", all_k=True).landscape
    assert want.lengths.max() > 1000
    np.testing.assert_array_equal(got.lengths, want.lengths)
