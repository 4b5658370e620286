"""edit on a real GPU: every CUDA variant and parameter against the CPU solver on real DNA.

Marked ``gpu`` and skipped where numba.cuda finds no GPU (run them with
``scripts/gpu tests edit`` on the lent GPU machine, which runs pytest with
--noconftest: nothing here needs hypothesis or tests/conftest.py).
"""

from __future__ import annotations

import numpy as np
import pytest

from engine import config, edit
from engine.sequences import Record
from tests.engine.edit.cuda_support import hit_rows, label, options, pair_rows
from tests.cuda_support import GPU_ONLY


pytestmark = GPU_ONLY

#: task, and cooperative with 1, 2 and 4 words per thread (3 runs in the simulator cases).
COMBOS = (("task", None), ("cooperative", 1), ("cooperative", 2), ("cooperative", 4))
CPU = {"variant": "myers-blocked", "backend": "multicore"}


@pytest.fixture(scope="module")
def reads(ecoli_record):
    """Reads of 100, 400 and 1000 bases sampled from E. coli with about 5% edits, each with 8
    candidate regions of m + m/5 bases (its origin and random ones), as in the benchmark."""
    from benchmarks import edit_cuda as cuda_bench

    out = {}
    saved = cuda_bench.READS, cuda_bench.CANDIDATES
    cuda_bench.READS, cuda_bench.CANDIDATES = 40, 8
    try:
        for m in (100, 400, 1000):
            cuda_bench.workload.cache_clear()
            genome, starts, ends, flat, offsets, pair_read, k, _ = cuda_bench.workload(m)
            queries = [Record(f"read{q}", flat[offsets[q]:offsets[q + 1]]) for q in pair_read]
            regions = [Record(f"cand{i}", genome[a:b]) for i, (a, b) in enumerate(zip(starts, ends))]
            out[m] = (queries, regions, k)
    finally:
        cuda_bench.READS, cuda_bench.CANDIDATES = saved
        cuda_bench.workload.cache_clear()
    return out


@pytest.fixture(scope="module")
def cpu_reads(reads):
    """The CPU's best hits per pair (k = m/5, with starts and CIGARs), and global distances."""
    return {m: (edit.verify(q, r, k, **CPU), edit.solve(q, r, pairing="zip", **CPU))
            for m, (q, r, k) in reads.items()}


@pytest.mark.parametrize("m", [100, 400, 1000])
@pytest.mark.parametrize("combo", COMBOS, ids=label)
def test_read_verification_equals_the_cpu(reads, cpu_reads, combo, m):
    """Best hit per (read, candidate) within k = m/5 with start and CIGAR; global distances
    per pair for m = 400."""
    queries, regions, k = reads[m]
    best, dist = cpu_reads[m]
    got = edit.verify(queries, regions, k, **options(combo))
    assert got.info.complete and got.info.backend == "cuda"
    assert hit_rows(got) == hit_rows(best), (label(combo), m)
    if m == 400:
        got = edit.solve(queries, regions, pairing="zip", **options(combo))
        assert pair_rows(got) == pair_rows(dist), (label(combo), m)


@pytest.mark.parametrize("m", [100, 1000])
@pytest.mark.parametrize("combo", [("task", None), ("cooperative", 2)], ids=label)
def test_columnar_batch_equals_the_cpu(cpu_reads, combo, m):
    """The batch as columns from the benchmark's arrays (engine.sequences.SeqColumns: each read
    stored once and read by range, the regions ranges of the genome) gives the CPU's best hits
    and the same rows as the Records (the ids are made when read)."""
    from benchmarks import edit_cuda as cuda_bench
    from engine.columns import Ids
    from engine.sequences import SeqColumns

    saved = cuda_bench.READS, cuda_bench.CANDIDATES
    cuda_bench.READS, cuda_bench.CANDIDATES = 40, 8
    try:
        cuda_bench.workload.cache_clear()
        genome, starts, ends, flat, offsets, pair_read, k, _ = cuda_bench.workload(m)
    finally:
        cuda_bench.READS, cuda_bench.CANDIDATES = saved
        cuda_bench.workload.cache_clear()
    queries = SeqColumns.from_ranges(flat, offsets[pair_read], offsets[pair_read + 1],
                                     Ids.numbered("read", len(pair_read), pair_read))
    regions = SeqColumns.from_ranges(genome, starts, ends, "cand")
    got = edit.verify(queries, regions, k, **options(combo))
    assert got.info.complete and isinstance(got.hits.record_ids, Ids)
    assert hit_rows(got) == hit_rows(cpu_reads[m][0]), (label(combo), m)


@pytest.mark.parametrize("columns", [1, 4])
def test_cooperative_columns_per_step(reads, cpu_reads, monkeypatch, columns):
    monkeypatch.setattr(config, "EDIT_CUDA_COLUMNS_PER_STEP", columns)
    queries, regions, k = reads[400]
    got = edit.verify(queries, regions, k, variant="cooperative", backend="cuda")
    assert hit_rows(got) == hit_rows(cpu_reads[400][0])


@pytest.fixture(scope="module")
def lambda_search(lambda_record, ecoli_record):
    patterns = [lambda_record.slice(1000, 1030), lambda_record.slice(20_000, 20_200), lambda_record.slice(40_000, 40_070)]
    texts = [ecoli_record.slice(0, 150_000), ecoli_record.slice(3_000_000, 3_060_000),
             Record("lambda_piece", lambda_record.codes[19_900:20_400].copy())]
    return patterns, texts


@pytest.mark.parametrize("k", [1, 5, 100])
@pytest.mark.parametrize("combo", [("task", None), ("cooperative", 2)], ids=label)
def test_lambda_search_in_ecoli_slices_equals_the_cpu(lambda_search, combo, k):
    """Every end within k on both strands (records cut into overlapping chunks), the best per
    record, and the score profiles. k = 100 is above two patterns' lengths (every end is a
    hit), so it runs on the first 5,000 bases of each E. coli slice, without alignments."""
    patterns, texts = lambda_search
    align = k <= 5
    if k == 100:
        texts = [t.slice(0, 5000) for t in texts]
    want = edit.solve(patterns, texts, mode="search", k=k, strands="both", align=align, **CPU)
    got = edit.solve(patterns, texts, mode="search", k=k, strands="both", align=align,
                     **options(combo))
    assert hit_rows(got) == hit_rows(want), (label(combo), k)
    assert [p.values.tolist() for p in got.profiles] == [p.values.tolist() for p in want.profiles]
    if k == 5:
        want = edit.solve(patterns, texts, mode="search", report="best", strands="both", **CPU)
        got = edit.solve(patterns, texts, mode="search", report="best", strands="both",
                         **options(combo))
        assert hit_rows(got) == hit_rows(want)


@pytest.fixture(scope="module")
def long_pieces(lambda_record, ecoli_record):
    patterns = [lambda_record.slice(0, 3000), lambda_record.slice(10_000, 15_000), lambda_record.slice(30_000, 30_500)]
    texts = [ecoli_record.slice(100_000, 103_100), Record("lambda_part", lambda_record.codes[10_010:15_100].copy()),
             ecoli_record.slice(2_000_000, 2_005_000)]
    return patterns, texts, edit.solve(patterns, texts, pairing="zip", align=True, **CPU)


@pytest.mark.parametrize("combo", [("task", None), ("cooperative", 1), ("cooperative", 2)],
                         ids=label)
def test_long_lambda_pieces_against_ecoli_slices(long_pieces, combo):
    """Global distances and alignments of lambda pieces of up to 5,000 bases (79 words:
    stripes with 1 and 2 words per thread, words in global memory for task) against E. coli
    slices and a stretch of lambda; best hits too with one word per thread."""
    patterns, texts, want = long_pieces
    got = edit.solve(patterns, texts, pairing="zip", align=True, **options(combo))
    assert pair_rows(got) == pair_rows(want), label(combo)
    if combo == ("cooperative", 1):
        assert hit_rows(edit.verify(patterns, texts, **options(combo))) == \
            hit_rows(edit.verify(patterns, texts, **CPU))


def test_out_of_memory_and_launch_failures_leave_everything_usable(reads, cpu_reads):
    from numba import cuda

    from engine.edit import cuda_myers
    from engine.gpu import Device

    queries, regions, k = reads[100]
    want = hit_rows(cpu_reads[100][0])
    dev = Device(128)
    _, total = cuda.current_context().get_memory_info()
    with pytest.raises(RuntimeError, match="ran out of memory") as err:
        dev.empty((4 * total,), np.uint8, "a test array bigger than the GPU")
    assert "\n" not in str(err.value)
    table = dev.empty(64, np.uint64, "t")
    with pytest.raises(RuntimeError, match="CUDA error while launching") as err:
        dev.launch(cuda_myers.peq_kernel, 1, 4096, 0, dev.zeros(4, np.uint8, "p"),
                   dev.zeros(2, np.int64, "o"), dev.zeros(1, np.int64, "w"),
                   dev.zeros(1, np.int64, "w"), dev.zeros(1, np.int64, "w"), True, table)
    assert "\n" not in str(err.value)
    with pytest.raises(RuntimeError, match="shared memory") as err:
        edit.verify(queries, regions, k, variant="cooperative", backend="cuda",
                    words_per_thread=8, threads_per_block=1024)
    assert "\n" not in str(err.value)
    # The GPU and the CPU both still answer.
    assert hit_rows(edit.verify(queries, regions, k, variant="cooperative", backend="cuda")) == want
    assert hit_rows(edit.verify(queries, regions, k, backend="serial")) == want


def test_cooperative_words_live_in_registers(reads):
    """The cooperative kernels and the task register tiers keep their words in registers:
    no local memory at all."""
    from engine.edit import cuda_myers
    from engine.edit.cpu_common import MODE_BEST
    from engine.gpu import register_cap

    queries, regions, k = reads[1000]
    for words in (1, 2, 4):
        edit.verify(queries[:4], regions[:4], k, variant="cooperative", backend="cuda",
                    words_per_thread=words, align=False)
    edit.verify(queries[:4], regions[:4], k, variant="task", backend="cuda", align=False)
    cap = register_cap(config.EDIT_CUDA_THREADS_PER_BLOCK)
    kernels = [cuda_myers.cooperative_kernel(w, config.EDIT_CUDA_COLUMNS_PER_STEP, MODE_BEST,
                                               False, False, cap) for w in (1, 2, 4)]
    kernels.append(cuda_myers.task_kernel(16, MODE_BEST, False, cap))
    for kernel in kernels:
        local = kernel.get_local_mem_per_thread()
        values = list(local.values()) if isinstance(local, dict) else [local]
        assert values and all(v == 0 for v in values), local
