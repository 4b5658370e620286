"""kmismatch on a real GPU: every CUDA method against the CPU solver on real DNA.

Marked ``gpu`` and skipped where numba.cuda finds no GPU (run them with
``scripts/gpu tests kmismatch`` on the lent GPU machine, which runs this file with
--noconftest and tests/cuda_support.py as a plugin: the real DNA comes from its fixtures).
"""

from __future__ import annotations


import numpy as np
import pytest

from engine import config, kmismatch
from engine.kmismatch.cuda_options import SHARED_MEM_MAX_THREADS
from engine.sequences import Record
from tests.cuda_support import GPU_ONLY

METHODS = ("thread", "block-thread", "shared-mem", "pair-tile")


pytestmark = GPU_ONLY


def _windows(record, length, count, seed):
    rng = np.random.default_rng(seed)
    starts = np.sort(rng.choice(len(record) // length, size=count, replace=False)) * length
    return [Record(f"{record.id}:{s}+{length}", record.codes[s:s + length].copy())
            for s in starts.tolist()]


def _columns(result):
    h = result.hits
    return h.pos, h.code, h.mismatches


def _same(got, want, label):
    assert got.info.complete and got.info.backend == "cuda", label
    assert len(got.hits) == len(want.hits), label
    for a, b in zip(_columns(got), _columns(want)):
        assert np.array_equal(a, b), label
    assert np.array_equal(got.pattern_hits, want.pattern_hits), label
    for a, b in zip(got.density, want.density):
        assert np.array_equal(a.counts, b.counts), label


@pytest.fixture(scope="module")
def mixed(lambda_record, ecoli_record):
    """Two E. coli stretches; lambda patterns of lengths 12 (8, both strands: one word of 16
    4-bit counters at k = 6, two words of 5-bit ones at k = 0), 20 (20 patterns: 40 slots,
    four words) and 40 (past KMISMATCH_CUDA_UNROLL_MAX: the any-length kernels)."""
    text = [ecoli_record.slice(0, 400_000), ecoli_record.slice(2_000_000, 2_150_000)]
    patterns = (_windows(lambda_record, 12, 8, 3) + _windows(lambda_record, 20, 20, 4)
                + _windows(lambda_record, 40, 2, 6))
    return text, patterns


@pytest.fixture(scope="module")
def mixed_cpu(mixed):
    text, patterns = mixed
    return {k: kmismatch.solve(patterns, text, k, variant="pmasm", backend="multicore")
            for k in (0, 6)}


@pytest.mark.parametrize("k", [0, 6])
@pytest.mark.parametrize("method", METHODS)
def test_every_method_equals_the_cpu_on_mixed_lengths(mixed, mixed_cpu, method, k):
    text, patterns = mixed
    got = kmismatch.solve(patterns, text, k, variant=method, backend="cuda")
    _same(got, mixed_cpu[k], f"{method} k={k}")
    if k == 6:
        assert len(got.hits) > 100_000


@pytest.fixture(scope="module")
def genome_cpu(lambda_record, ecoli_record):
    from benchmarks.kmismatch import patterns_from_lambda

    patterns = patterns_from_lambda()  # the benchmark's 8 lambda 12-mers
    return patterns, {strands: kmismatch.solve(patterns, [ecoli_record], 4, variant="pmasm",
                                               backend="multicore", strands=strands)
                      for strands in ("both", "forward")}


@pytest.mark.parametrize("strands", ["both", "forward"])
@pytest.mark.parametrize("method", METHODS)
def test_every_method_equals_the_cpu_on_the_whole_ecoli_genome(ecoli_record, genome_cpu, method,
                                                               strands):
    patterns, want = genome_cpu
    got = kmismatch.solve(patterns, [ecoli_record], 4, variant=method, backend="cuda",
                          strands=strands)
    _same(got, want[strands], f"{method} {strands}")
    assert len(got.hits) > 100_000 or strands == "forward"


@pytest.mark.parametrize("method", ["shared-mem", "pair-tile"])
def test_a_repeated_search_takes_the_text_left_on_the_gpu(mixed, mixed_cpu, method,
                                                          monkeypatch):
    """The first search uploads the text in many pieces and leaves it on the GPU for
    its records; the second finds it there: both equal the CPU's hits."""
    from engine import gpu

    monkeypatch.setattr(config, "GPU_UPLOAD_BYTES", 1 << 13)
    text, patterns = mixed
    gpu.DEVICE_TEXTS.clear()
    first = kmismatch.solve(patterns, text, 6, variant=method, backend="cuda")
    assert len(gpu.DEVICE_TEXTS) == 1
    again = kmismatch.solve(patterns, text, 6, variant=method, backend="cuda")
    _same(first, mixed_cpu[6], f"{method} uploaded")
    _same(again, mixed_cpu[6], f"{method} on the GPU")
    gpu.DEVICE_TEXTS.clear()


@pytest.mark.parametrize("tpb", [32, 100, 1024])
@pytest.mark.parametrize("method", ["thread", "shared-mem", "pair-tile"])
def test_threads_per_block(mixed, mixed_cpu, method, tpb):
    text, patterns = mixed
    if method == "shared-mem" and tpb > SHARED_MEM_MAX_THREADS:
        with pytest.raises(ValueError, match="threads_per_block of shared-mem must be <= 512"):
            kmismatch.make_job(patterns, text, 6, variant=method, backend="cuda",
                               threads_per_block=tpb)
        return
    got = kmismatch.solve(patterns, text, 6, variant=method, backend="cuda",
                          threads_per_block=tpb)
    _same(got, mixed_cpu[6], f"{method} tpb={tpb}")


def test_hit_buffer_overflow_and_splits_on_real_data(mixed, mixed_cpu, monkeypatch):
    """A first guess of almost no hits (every launch overflows and runs again), then a
    memory limit of 5000 hits a launch (launches split)."""
    from engine.kmismatch import cuda as kcuda

    text, patterns = mixed
    original = kcuda.CudaSearch._group

    def pessimist(self, *args):
        g = original(self, *args)
        g.per_window = 1e-6
        return g

    runs = []
    original_run = kcuda.CudaSearch.run_batch

    def spy(self, work):
        before = self.reruns
        n = original_run(self, work)
        runs.append((n, self.reruns - before))
        return n

    monkeypatch.setattr(config, "KMISMATCH_CUDA_MIN_HITS", 1)
    monkeypatch.setattr(kcuda.CudaSearch, "_group", pessimist)
    monkeypatch.setattr(kcuda.CudaSearch, "run_batch", spy)
    for method in METHODS:
        _same(kmismatch.solve(patterns, text, 6, variant=method, backend="cuda"), mixed_cpu[6],
              method)
    assert any(reruns for _, reruns in runs)
    runs.clear()
    monkeypatch.setattr(kcuda.CudaSearch, "_group", original)
    free = kcuda.gpu.Device().scratch_budget(config.KMISMATCH_CUDA_MEMORY_FRACTION)
    monkeypatch.setattr(kcuda, "HIT_BYTES", free // 5000)
    _same(kmismatch.solve(patterns, text, 6, variant="pair-tile", backend="cuda"), mixed_cpu[6],
          "split")
    assert sum(n is None for n, _ in runs) >= 3


def test_multi_record_text_with_short_records(lambda_record, ecoli_record):
    """Records shorter than the patterns and windows at every record edge."""
    pieces = [ecoli_record.slice(s, s + n) for s, n in ((0, 7), (100, 30_000), (50_000, 11),
                                                        (60_000, 12), (70_000, 20_001))]
    text = [Record(f"r{i}", p.codes) for i, p in enumerate(pieces)]
    patterns = _windows(lambda_record, 12, 6, 8) + [Record("edge", pieces[3].codes.copy())]
    want = kmismatch.solve(patterns, text, 5, variant="pmasm", backend="multicore")
    for method in METHODS:
        _same(kmismatch.solve(patterns, text, 5, variant=method, backend="cuda"), want, method)


def _pattern_at_every_record_start(lambda_record, ecoli_record, records, length):
    """``records`` records of a lambda pattern (40 or 65 symbols, one symbol changed in every
    third) and 200-299 E. coli symbols: hits at every record start, right after the windows
    that cross the previous record's end."""
    patterns = _windows(lambda_record, 40, 2, 11) + _windows(lambda_record, 65, 2, 12)
    rng = np.random.default_rng(13)
    text = []
    for i in range(records):
        head = patterns[i % len(patterns)].codes.copy()
        if i % 3 == 0:
            head[int(rng.integers(0, len(head)))] = 1 << int(rng.integers(0, 4))
        at = int(rng.integers(0, len(ecoli_record) - 300))
        tail = ecoli_record.codes[at:at + length + i % 100]
        text.append(Record(f"r{i}", np.concatenate([head, tail])))
    return text, patterns


def test_blocks_that_take_several_tiles_across_record_ends(lambda_record, ecoli_record):
    """4000 records (about 1.2 M windows) are more tiles than block-thread's 32 blocks an SM
    take at once, so its blocks take tiles in turn; patterns of 40 and 65 symbols make
    blocks of two and three warps, where thread 0 places a tile while other warps may still
    be checking its last windows against the record end (they once shared a scalar)."""
    text, patterns = _pattern_at_every_record_start(lambda_record, ecoli_record, 4000, 200)
    want = kmismatch.solve(patterns, text, 3, variant="pmasm", backend="multicore")
    assert len(want.hits) >= 4000
    for method in METHODS:
        _same(kmismatch.solve(patterns, text, 3, variant=method, backend="cuda"), want, method)


def test_out_of_memory_and_launch_failures_leave_everything_usable(mixed, mixed_cpu):
    from numba import cuda

    from engine.gpu import Device
    from engine.kmismatch.cuda_search import hold

    text, patterns = mixed
    dev = Device(128)
    _, total = cuda.current_context().get_memory_info()
    with pytest.raises(RuntimeError, match="ran out of memory") as err:
        dev.empty((4 * total,), np.uint8, "a test array bigger than the GPU")
    assert "\n" not in str(err.value)
    with pytest.raises(RuntimeError, match="CUDA error while launching") as err:
        dev.launch(hold, 1, 4096, 0, 1)
    assert "\n" not in str(err.value)
    # The GPU and the CPU both still answer.
    _same(kmismatch.solve(patterns, text, 6, variant="pair-tile", backend="cuda"), mixed_cpu[6],
          "after failures")
    cpu = kmismatch.solve(patterns, text, 6, backend="serial")
    assert np.array_equal(cpu.hits.pos, mixed_cpu[6].hits.pos)


def test_kernel_resources(mixed):
    """Registers and local memory of the compiled search kernels (printed with -s; the
    study methods and pair-tile keep their counters in registers: no local memory)."""
    from engine.kmismatch import cuda as kcuda
    from engine.kmismatch.cuda_search import pair_tile_kernel, shared_mem_kernel, window_kernel

    text, patterns = mixed
    for method in ("thread", "shared-mem", "pair-tile"):
        kmismatch.solve(patterns, text, 6, variant=method, backend="cuda")
    for name, kernel in (("thread", window_kernel(12, True)),
                         ("shared-mem", shared_mem_kernel(12, True, True,
                                                          kcuda.shared_mem_registers(256))),
                         ("pair-tile", pair_tile_kernel(6, True))):
        regs = kernel.get_regs_per_thread()
        local = kernel.get_local_mem_per_thread()
        regs = max(regs.values()) if isinstance(regs, dict) else regs
        local = max(local.values()) if isinstance(local, dict) else local
        print(f"{name} (m = 12): {regs} registers, {local} bytes of local memory a thread")
        assert local == 0, name
