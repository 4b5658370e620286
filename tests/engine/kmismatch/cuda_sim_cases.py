"""kmismatch CUDA kernels in numba's CUDA simulator, against the oracles.

Run by test_kmismatch_cuda.py in a subprocess with NUMBA_ENABLE_CUDASIM=1 (the
variable must be set before numba is first imported, so these cases cannot
share a process with the rest of the suite). Threads per block, block-thread's
tile and the ordering pass's block are patched small, so that the tiny inputs
the simulator can afford span several tiles and ordering groups.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

if os.environ.get("NUMBA_ENABLE_CUDASIM") != "1":
    pytest.skip("run with NUMBA_ENABLE_CUDASIM=1 (test_kmismatch_cuda.py does)",
                allow_module_level=True)

from tests.cuda_support import launches_refused, no_gpu_memory, simulator_cli  # noqa: E402
from engine import config, kmismatch  # noqa: E402
from engine.jobs import CancelToken, drive  # noqa: E402
from engine.kmismatch import cuda as kcuda  # noqa: E402
from engine.kmismatch.driver import slot_groups  # noqa: E402
from benchmarks import kmismatch_cuda as cuda_bench  # noqa: E402
from engine.kmismatch.reference import kmismatch_reference  # noqa: E402
from engine.sequences import Record, load, reverse_complement  # noqa: E402
from tests.engine.kmismatch.oracles import engine_rows, numpy_hits  # noqa: E402
from tests.strategies import random_codes  # noqa: E402

pytestmark = [pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning"),
              pytest.mark.filterwarnings("ignore:Simulator timings are bogus")]

METHODS = kcuda.METHODS


@pytest.fixture(autouse=True)
def small_gpu(monkeypatch):
    # The passes over the text and the hits (unpack, merge, tally) take 8 threads a block,
    # not 256: the simulator runs each thread in Python, and most of 256 had nothing to do.
    monkeypatch.setattr(kcuda, "_PASS_THREADS", 8)
    monkeypatch.setattr(config, "KMISMATCH_CUDA_THREADS_PER_BLOCK", 8)
    monkeypatch.setattr(config, "KMISMATCH_CUDA_SHARED_MEM_THREADS_PER_BLOCK", 8)
    monkeypatch.setattr(config, "KMISMATCH_CUDA_BLOCK_THREAD_WINDOWS", 5)
    monkeypatch.setattr(config, "KMISMATCH_CUDA_ORDER_THREADS", 4)


def records(arrays, prefix):
    return [Record(f"{prefix}{i}", np.asarray(a, dtype=np.uint8)) for i, a in enumerate(arrays)]


def planted_text(rng, n, patterns, copies=4, iupac_rate=0.1):
    """Random text with near-copies of the patterns (and of their reverse complements)."""
    text = random_codes(rng, n, iupac_rate)
    for i in range(copies):
        p = patterns[i % len(patterns)]
        p = p if i % 2 == 0 else reverse_complement(p)
        if len(p) >= n:
            continue
        at = int(rng.integers(0, n - len(p)))
        text[at:at + len(p)] = p
        text[at + int(rng.integers(0, len(p)))] = rng.choice(np.array([1, 2, 4, 8], np.uint8))
    return text


def check(method, text, patterns, k, strands="both", oracle=False, **kw):
    """The method's hits equal the numpy brute force (and, with ``oracle``, the family's
    reference); the per-pattern counts agree with the hits."""
    res = kmismatch.solve(patterns, text, k, variant=method, backend="cuda", strands=strands, **kw)
    assert res.info.backend == "cuda" and res.info.variant == method and res.info.complete
    got = engine_rows(res)
    texts, pats = [t.codes for t in text], [p.codes for p in patterns]
    assert got == numpy_hits(texts, pats, k, strands), (method, k, strands)
    if oracle:
        assert got == kmismatch_reference(texts, pats, k, strands)
    assert res.pattern_hits.tolist() == np.bincount(res.hits.pattern, minlength=len(patterns)
                                                    ).tolist()
    return res


@pytest.mark.parametrize("method", METHODS)
def test_seed_example_of_the_study(method):
    """Fig. 1/3 of the study: patterns {ACTG, ATCG, CACT}, text ACTTGTAC, k = 2."""
    pats = [Record(n, load(s)[0].codes) for n, s in (("p1", "ACTG"), ("p2", "ATCG"), ("p3", "CACT"))]
    res = kmismatch.solve(pats, load("ACTTGTAC"), 2, variant=method, backend="cuda",
                          strands="forward")
    got = [(h.pattern_id, h.start, h.mismatches, h.matched) for h in res.hits]
    assert got == [("p1", 1, 1, "ACTT"), ("p1", 2, 2, "CTTG"), ("p2", 2, 2, "CTTG")]


@pytest.mark.parametrize("method", METHODS)
def test_random_inputs_match_the_oracles(method):
    """IUPAC in text and patterns, mixed lengths, several records (one shorter than a
    pattern), both strands and forward, k = 0, 1 and k >= m (every window hits)."""
    rng = np.random.default_rng(sum(map(ord, method)))
    pats = records([random_codes(rng, m, 0.15) for m in (3, 5, 8, 5)], "p")
    text = records([planted_text(rng, 70, [p.codes for p in pats]), random_codes(rng, 4, 0.2),
                    planted_text(rng, 23, [pats[2].codes], 1)], "t")
    check(method, text, pats, 1, oracle=True)
    check(method, text, pats, 0, "forward")
    pats = records([random_codes(rng, m, 0.15) for m in (4, 6)], "q")
    check(method, text[:2], pats, 6)


@pytest.mark.parametrize("method", METHODS)
def test_many_slots_need_several_counter_words(method):
    """40 slots of 5-bit counters (m = 12, k = 1) fill four words; 6 slots of m = 17 one."""
    rng = np.random.default_rng(7)
    pats = records([random_codes(rng, 12, 0.05) for _ in range(20)]
                   + [random_codes(rng, 17) for _ in range(3)], "p")
    text = records([planted_text(rng, 80, [p.codes for p in pats], copies=8, iupac_rate=0.05)], "t")
    for k in (1, 4):
        check(method, text, pats, k)


@pytest.mark.parametrize("method", METHODS)
def test_long_patterns_use_the_any_length_kernels(method, monkeypatch):
    """Lengths past KMISMATCH_CUDA_UNROLL_MAX run the run-time-loop kernels; pair-tile
    stages their pair look-up memory two pair levels at a time (m = 9: three pieces)."""
    monkeypatch.setattr(config, "KMISMATCH_CUDA_UNROLL_MAX", 4)
    monkeypatch.setattr(config, "KMISMATCH_CUDA_LUT_BYTES", 2 * 2048)
    rng = np.random.default_rng(9)
    pats = records([random_codes(rng, 9, 0.1) for _ in range(14)]
                   + [random_codes(rng, 10), random_codes(rng, 4)], "p")
    text = records([planted_text(rng, 60, [p.codes for p in pats], copies=6)], "t")
    check(method, text, pats, 2)


@pytest.mark.parametrize("method", METHODS)
def test_windows_never_span_two_records(method):
    """CGTA across t0|t1 is no hit; TACG (its reverse complement) in t0 and t1 are."""
    text = records([load("TTACG")[0].codes, load("TACGT")[0].codes, load("ACG")[0].codes], "t")
    pats = [Record("p", load("CGTA")[0].codes)]
    res = check(method, text, pats, 0)
    assert [(h.record_id, h.start, h.strand) for h in res.hits] == [("t0", 2, "-"),
                                                                    ("t1", 1, "-")]


@pytest.mark.parametrize("method", ["shared-mem", "pair-tile"])
def test_several_windows_a_thread_across_records_and_ranges(method, monkeypatch):
    """shared-mem takes 8 windows a thread, pair-tile 4 (tiles of 64 and 32 windows at 8
    threads a block): records of 63, 64, 65, 1, 13 and 130 symbols end inside tiles and
    inside threads' windows, and the text length is no multiple of the windows a thread.
    A text going up in pieces of 24 symbols is searched a piece at a time, in launches over
    the windows that start 1 - m (mod 8) into a piece: at offsets 3, 1, 6 and 4 from a
    tile's or a thread's first window (shared-mem realigns its chunk to a word), they give
    exactly the hits of those windows. (Those offsets depend on m and the piece size only:
    the pieces' part searches the 65, 1 and 13 records, four pieces, not the whole text.)"""
    from engine import gpu

    rng = np.random.default_rng(21)
    pats = records([random_codes(rng, 6, 0.1), random_codes(rng, 9)], "p")
    lens = (63, 64, 65, 1, 13, 130)
    text = records([planted_text(rng, n, [p.codes for p in pats], copies=2) for n in lens], "t")
    for k in (1, 3):
        check(method, text, pats, k)
    monkeypatch.setattr(config, "GPU_UPLOAD_BYTES", 12)
    pieces_text = text[2:5]
    n = sum(len(r) for r in pieces_text)
    for m in (6, 8, 11, 13):  # the longest pattern sets where a piece's windows start
        pats = records([random_codes(rng, 5, 0.1), random_codes(rng, m, 0.1)], "p")
        gpu.DEVICE_TEXTS.clear()  # (a text left on the GPU would go up in one piece)
        with gpu.tally() as counts:
            res = check(method, pieces_text, pats, 2)
        assert counts.batches >= gpu.packed_bytes(n) // 12 - 1 >= 2  # a piece's each
        assert len(res.hits) > 10


def _expect_almost_no_hits(monkeypatch):
    """The searches size their hit room for almost no hits (a first guess far too low)."""
    monkeypatch.setattr(config, "KMISMATCH_CUDA_MIN_HITS", 1)
    monkeypatch.setattr(config, "KMISMATCH_CUDA_HIT_GUESS", 1e-6)


@pytest.mark.parametrize("method", METHODS)
def test_hit_buffer_overflow_runs_the_launch_again(method, monkeypatch):
    """Tile regions sized for almost no hits and a tiny spill area: tiles spill, the spill
    area overflows, and the launch runs again with room for all."""
    from engine import gpu

    _expect_almost_no_hits(monkeypatch)
    rng = np.random.default_rng(3)
    pats = records([random_codes(rng, 5), random_codes(rng, 3)], "p")
    text = records([random_codes(rng, 40, 0.1)], "t")
    with gpu.tally() as counts:
        check(method, text, pats, 5)  # k >= m: every window hits every slot (the oracles')
    assert counts.reruns > 0 and counts.batches > 0


@pytest.mark.parametrize("first_guess", ["random DNA", "almost no hits"])
def test_hits_beyond_the_memory_for_one_launch_split_it(monkeypatch, first_guess):
    """Room for 16 hits a batch: ranges are halved until their hits fit. With a first guess
    of almost no hits, a batch overflows first and asks for more room than there is: it is
    halved too (and the room asked for is not kept for the halves)."""
    monkeypatch.setattr(kcuda, "HIT_BYTES", 1 << 24)  # room for 16 hits a launch
    from engine import gpu

    if first_guess != "random DNA":
        _expect_almost_no_hits(monkeypatch)
    rng = np.random.default_rng(4)
    pats = records([random_codes(rng, 4, 0.2)], "p")
    text = records([random_codes(rng, 50, 0.1)], "t")
    with gpu.tally() as counts:
        check("pair-tile", text, pats, 4)  # 94 hits (the oracles')
    assert counts.oversized >= 3


def test_progress_slices_and_cancel(monkeypatch):
    """Slices, progress and cancel are the same for every method (iter_solve's loop)."""
    monkeypatch.setattr(config, "SLICE_SECONDS", 1e-4)
    monkeypatch.setattr(config, "KMISMATCH_CUDA_FIRST_SLICE_CELLS", 2)  # slices of 4096 windows
    monkeypatch.setattr(config, "KMISMATCH_CUDA_THREADS_PER_BLOCK", 64)
    rng = np.random.default_rng(12)
    pats = records([random_codes(rng, 6)], "p")
    text = records([random_codes(rng, 8400)], "t")
    job = kmismatch.make_job(pats, text, 2, variant="pair-tile", backend="cuda")
    progress = []
    full = drive(kmismatch.iter_solve(job), progress.append)
    running = [p for p in progress if p.phase == "running"]
    assert len(running) == 3 and running[-1].done == running[-1].total == 8400
    assert engine_rows(full) == numpy_hits([text[0].codes], [pats[0].codes], 2)
    token = CancelToken()
    gen = kmismatch.iter_solve(job, token)
    first = next(p for p in gen if p.phase == "running")
    token.cancel()
    part = drive(gen)
    assert not part.info.complete and part.scanned == first.done == 4096
    assert engine_rows(part) == [h for h in engine_rows(full) if h[1] < first.done]


@pytest.mark.parametrize("method", ["thread", "shared-mem", "pair-tile"])
def test_threads_per_block_is_a_job_parameter(method):
    rng = np.random.default_rng(5)
    pats = records([random_codes(rng, 7, 0.1), random_codes(rng, 4)], "p")
    text = records([planted_text(rng, 50, [p.codes for p in pats])], "t")
    for tpb in (1, 3, 32):
        job = kmismatch.make_job(pats, text, 2, variant=method, backend="cuda",
                                 threads_per_block=tpb)
        assert job.params["threads_per_block"] == tpb
        assert engine_rows(drive(kmismatch.iter_solve(job))) == numpy_hits(
            [text[0].codes], [p.codes for p in pats], 2)


@pytest.mark.parametrize("kwargs,message", [
    ({"backend": "serial", "threads_per_block": 64}, "applies to the cuda backend only"),
    ({"variant": "block-thread", "threads_per_block": 64}, "does not apply to block-thread"),
    ({"variant": "thread", "threads_per_block": 0}, "threads_per_block must be >= 1"),
    ({"variant": "thread", "threads_per_block": 2048}, "threads_per_block must be <= 1024"),
    ({"variant": "pmasm", "backend": "cuda"}, "has no cuda backend"),
    ({"variant": "shared-mem", "backend": "multicore"}, "has no multicore backend"),
])
def test_bad_options_raise_value_error(kwargs, message):
    kwargs = {"backend": "cuda", **kwargs}
    with pytest.raises(ValueError, match=message):
        kmismatch.make_job(load("ACG"), load("ACGTACGT"), 1, **kwargs)


def test_cuda_limits_raise_value_error():
    with pytest.raises(ValueError, match="at most 65535 symbols"):
        kmismatch.make_job([Record("long", np.ones(70_000, np.uint8))], load("ACGT"), 1,
                           backend="cuda")
    many = [Record(f"p{i}", np.ones(3, np.uint8)) for i in range(32_769)]
    with pytest.raises(ValueError, match="exceed the cuda backend's 65536 per length"):
        kmismatch.make_job(many, load("ACGT"), 1, backend="cuda")
    kmismatch.make_job(many, load("ACGT"), 1, backend="cuda", strands="forward")


def test_defaults_pick_the_fastest_cuda_method_where_a_gpu_is():
    assert kmismatch.make_job(load("ACG"), load("ACGT"), 1, backend="cuda").variant == "pair-tile"
    job = kmismatch.make_job(load("ACG"), load("ACGT"), 1)
    assert (job.variant, job.backend) == ("pair-tile", "cuda")
    assert kmismatch.make_job(load("ACG"), load("ACGT"), 1, backend="serial").variant == "pmasm"


def test_out_of_memory_and_launch_failures_are_one_line_errors(monkeypatch):
    text, pats = load("ACGTTGCAAGGTACCAGT"), load("TTGCA")

    with no_gpu_memory(monkeypatch):
        with pytest.raises(RuntimeError, match="ran out of memory") as err:
            kmismatch.solve(pats, text, 1, variant="shared-mem", backend="cuda")
        assert "\n" not in str(err.value)

    with launches_refused(monkeypatch):
        with pytest.raises(RuntimeError, match="CUDA error while launching") as err:
            kmismatch.solve(pats, text, 1, variant="pair-tile", backend="cuda")
        assert "\n" not in str(err.value)
    # Nothing is left broken: the CPU and the GPU paths both still work.
    cpu = kmismatch.solve(pats, text, 1, backend="serial")
    gpu = kmismatch.solve(pats, text, 1, variant="pair-tile", backend="cuda")
    assert engine_rows(cpu) == engine_rows(gpu) and len(cpu.hits) > 0


def _cli(*args):
    return simulator_cli("kmismatch", *args)


def test_cli_runs_cuda_and_reports_failures_in_one_line(tmp_path):
    ok = _cli("ACTTGTAC", "ACTG,ATCG,CACT", "-k", "2", "--strands", "forward", "--backend", "cuda",
              "--variant", "shared-mem", "--threads-per-block", "3", "--json")
    assert ok.returncode == 0, ok.stderr
    assert '"backend": "cuda"' in ok.stdout and '"variant": "shared-mem"' in ok.stdout
    assert ('"hits": [["literal1", "literal", 1, 4, "+", 1], ["literal1", "literal", 2, 5, "+", 2], '
            '["literal2", "literal", 2, 5, "+", 2]]') in ok.stdout
    # A pattern this long needs more shared memory for shared-mem's text chunk than a block has.
    (tmp_path / "t.fa").write_text(">t\n" + "ACGT" * 12_600 + "\n")
    (tmp_path / "p.fa").write_text(">p\n" + "ACGT" * 12_500 + "\n")
    out = tmp_path / "out.csv"
    bad = _cli(str(tmp_path / "t.fa"), str(tmp_path / "p.fa"), "-k", "3", "--backend", "cuda",
               "--variant", "shared-mem", "-o", str(out))
    assert bad.returncode == 1, bad.stderr
    assert len(bad.stderr.strip().splitlines()) == 1 and "shared memory" in bad.stderr
    assert "Traceback" not in bad.stderr and not out.exists()
    usage = _cli("ACGT", "ACG", "-k", "1", "--backend", "serial", "--threads-per-block", "64")
    assert usage.returncode == 2 and "cuda backend only" in usage.stderr


def test_bench_cases_run_on_tiny_workloads(monkeypatch):
    """The CUDA bench plumbing (kernel and end-to-end rows, peers, digests) on tiny texts."""
    from benchmarks.data import lambda_phage

    rng = np.random.default_rng(6)
    lam = lambda_phage().codes
    texts = {}
    for workload, n in (("T3x20", 170), ("T3x1", 90)):
        codes = random_codes(rng, n)
        for at in range(0, n - 40, 40):  # stretches of lambda, so that the 12-mers hit
            start = int(rng.integers(0, len(lam) - 40))
            codes[at:at + 30] = lam[start:start + 30]
        texts[workload] = Record(workload, codes)
    monkeypatch.setattr(cuda_bench, "_texts", texts)
    monkeypatch.setattr(cuda_bench, "_reference", {})
    monkeypatch.setattr(cuda_bench, "SWEEP_TPB", (16,))
    monkeypatch.setattr(cuda_bench, "SWEEP_REGISTERS", (80,))
    monkeypatch.setattr(cuda_bench, "KERNEL_RUNS", 1)
    monkeypatch.setattr(cuda_bench, "SOLVE_RUNS", 1)
    cases = cuda_bench.cases(None)
    names = {c.name for c in cases}
    for ratio in cuda_bench.RATIOS:
        assert ratio.subject in names and ratio.baseline in names, ratio
    for case in cases:
        if "multicore" in case.name or "naive" in case.name or "shift-add" in case.name:
            continue  # CPU peers of their own tests; here only the reference peer runs
        metrics = case.run()
        if "computed" in case.name:
            continue
        # (the simulator times kernels as 0 s)
        assert metrics["seconds"] >= 0 and metrics["agrees"] in (True, "reference"), case.name
        if "/cuda" in case.name:
            assert metrics["device"] == "CUDA simulator" and metrics["hits"] > 0


# -- end to end: pieces of text, batches, columns, memory reuse (issue 16) ------------------
def same_as_the_cpu(res, text, patterns, k, strands="both"):
    """Hits (order and content), per-pattern counts and density profiles equal the serial
    CPU backend's."""
    cpu = kmismatch.solve(patterns, text, k, backend="serial", strands=strands)
    assert len(res.hits) == len(cpu.hits)
    for a, b in ((res.hits.pos, cpu.hits.pos), (res.hits.code, cpu.hits.code),
                 (res.hits.mismatches, cpu.hits.mismatches)):
        assert np.array_equal(a, b)
    assert np.array_equal(res.hits.start, cpu.hits.start) and res.hits.start.dtype == np.int64
    assert list(res.hits.tuples()) == list(cpu.hits.tuples())
    assert res.pattern_hits.tolist() == cpu.pattern_hits.tolist()
    for a, b in zip(res.density, cpu.density):
        assert (a.record_id, a.bin_width) == (b.record_id, b.bin_width)
        assert a.counts.tolist() == b.counts.tolist()


def warmed(method, patterns, k, strands="both"):
    """Run the job's warm-up (the generic one: its problem on a tiny chunk) on a short text
    first, so that a gpu.tally() of the real run counts that run's work alone."""
    kmismatch.solve(patterns, records([np.array([1, 2, 4, 8, 1, 2], np.uint8)], "w"), k,
                    variant=method, backend="cuda", strands=strands)


@pytest.mark.parametrize("method", METHODS)
def test_many_hits_across_upload_pieces_and_records(method, monkeypatch):
    """Pieces of 8 packed bytes (16 symbols): a slice is searched a piece at a time, each
    batch waiting for its own piece, its hits copied back while the next is searched;
    hundreds of hits (k = 3 of 5 and 7, IUPAC, both strands, two lengths merged on the GPU,
    records of 1 to 180 symbols, small density bins)."""
    from engine import gpu

    monkeypatch.setattr(config, "GPU_UPLOAD_BYTES", 8)
    monkeypatch.setattr(config, "KMISMATCH_DENSITY_BINS", 8)
    rng = np.random.default_rng(30 + len(method))
    pats = records([random_codes(rng, m, 0.1) for m in (5, 7, 5)], "p")
    text = records([planted_text(rng, n, [p.codes for p in pats], copies=3, iupac_rate=0.15)
                    for n in (180, 1, 37, 64)], "t")
    warmed(method, pats, 3)
    with gpu.tally() as counts:
        res = check(method, text, pats, 3)
    # one batch a piece of the 282 symbols, each with its hits copied back
    assert len(res.hits) > 300 and counts.batches >= 282 // 16
    assert counts.downloads >= counts.batches and counts.reruns == 0
    assert (res.hits.pos.dtype, res.hits.code.dtype, res.hits.mismatches.dtype) == (
        np.int32, np.int8, np.int8)
    same_as_the_cpu(res, text, pats, 3)


@pytest.mark.parametrize("method", METHODS)
def test_patterns_of_63_64_and_65_symbols(method):
    """Lengths past the unrolled kernels' (and the counters of a 64-bit word) on both
    strands, with near-copies planted, forward and reverse complement. (A record is two
    halves of 80 with a copy each, the second reverse complemented: records of 300 with two
    copies at random cost the simulator twice the windows.)"""
    rng = np.random.default_rng(63)
    pats = records([random_codes(rng, m, 0.05) for m in (63, 64, 65)], "p")
    text = records([np.concatenate([planted_text(rng, 80, [p.codes], copies=1),
                                    reverse_complement(planted_text(rng, 80, [p.codes], copies=1))])
                    for p in pats], "t")
    res = check(method, text, pats, 4)
    assert len(res.hits) >= 3 and set(res.hits.strand.tolist()) == {0, 1}
    same_as_the_cpu(res, text, pats, 4)


def test_block_thread_blocks_take_tiles_across_many_record_ends():
    """block-thread's blocks take tiles in turn (32 blocks here: the simulator's device has
    one SM). 30 records of 10-12 symbols, the pattern at each start, make 66 tiles of 5
    windows, many ending in windows that cross a record end: thread 0 places such a tile
    while the other threads may still be checking those windows against the record end."""
    rng = np.random.default_rng(1)
    pat = random_codes(rng, 6)
    text = records([np.concatenate([pat, random_codes(rng, 4 + i % 3)]) for i in range(30)], "t")
    assert sum(len(r) for r in text) > 2 * 32 * config.KMISMATCH_CUDA_BLOCK_THREAD_WINDOWS
    res = check("block-thread", text, [Record("p", pat)], 1)
    assert len(res.hits) >= 30


@pytest.mark.parametrize("method", ["shared-mem", "pair-tile"])
def test_no_hits_at_all(method):
    """An empty result: no hit columns copied, zero counts, the table and writers work."""
    pats = [Record("p", load("ACGTACGTAC")[0].codes)]
    text = records([load("T" * 90)[0].codes, load("G" * 30)[0].codes], "t")
    res = check(method, text, pats, 1)
    assert len(res.hits) == 0 and list(res.hits.tuples()) == [] and res.hits.start.shape == (0,)
    assert res.pattern_hits.tolist() == [0] and all(d.counts.sum() == 0 for d in res.density)


@pytest.mark.parametrize("method", ["shared-mem"])
def test_spill_overflow_in_a_batch_of_two_groups(method, monkeypatch):
    """Regions for almost no hits and a spill area of one hit (the first guess of hits a
    window near zero), two length groups in each batch: a launch overflows, and the batch
    runs again with the room asked for; the hits equal the CPU's (nothing lost or
    repeated, groups merged in order). (A solve on "thread" with these small blocks runs
    without a spill overflow; its overflow is test_hit_buffer_overflow_runs_the_launch_again's.)"""
    from engine import gpu

    rng = np.random.default_rng(8)
    pats = records([random_codes(rng, 4), random_codes(rng, 6, 0.2)], "p")
    codes = random_codes(rng, 150, 0.1)
    text = records([codes[:60], codes[60:]], "t")
    warmed(method, pats, 2)  # (before the tiny guess: the warm-up's own overflow would grow
    monkeypatch.setattr(config, "KMISMATCH_CUDA_MIN_HITS", 1)  # the spill area the run uses)
    monkeypatch.setattr(config, "KMISMATCH_CUDA_HIT_GUESS", 1e-9)
    with gpu.tally() as counts:
        res = check(method, text, pats, 2)
    assert counts.reruns >= 1 and counts.batches >= 1
    assert sum(counts.launches.values()) > counts.batches  # (two groups a batch, and passes)
    assert len(res.hits) > 20
    same_as_the_cpu(res, text, pats, 2)


def test_the_text_is_unpacked_on_the_gpu_as_it_was():
    """Packed two codes a byte (odd lengths, every code 0-15), uploaded in pieces, unpacked:
    the device text is the host text, then zeros to a whole number of 8-code words."""
    from engine import gpu

    rng = np.random.default_rng(2)
    pats = slot_groups([Record("p", np.array([1, 2, 4], np.uint8))], "both")
    for n in (1, 7, 8, 9, 17, 33, 100):
        codes = rng.integers(0, 16, n).astype(np.uint8)
        with pytest.MonkeyPatch.context() as mp, gpu.tally() as counts:
            mp.setattr(config, "GPU_UPLOAD_BYTES", 4)
            search = kcuda.CudaSearch("thread", codes, np.array([0, n]), pats, 1)
        search.dev.synchronize("", search.copy_stream)
        up = search.text.copy_to_host()
        assert up.shape[0] == -(-n // 8) * 8 and up.shape[0] % 8 == 0
        assert np.array_equal(up[:n], codes) and not up[n:].any(), n
        assert counts.launches["unpack_text"] == -(-n // 8)  # pieces of 4 packed bytes
        search.close()


def test_solving_the_same_records_again_reuses_the_packed_text():
    """The packed text is kept for the records (by identity, while they live): a second
    solve packs nothing; other records are packed; dead records' texts are dropped."""
    from engine import gpu

    rng = np.random.default_rng(11)
    pats = records([random_codes(rng, 6)], "p")
    text = records([planted_text(rng, 70, [pats[0].codes]), random_codes(rng, 20)], "t")
    check("pair-tile", text[1:], pats, 2)  # (compiled: the warm-up packs a text of its own)
    gpu.PACKED_TEXTS.clear()
    with gpu.tally() as counts:
        first = check("pair-tile", text, pats, 2)
    assert counts.packs == 1
    with gpu.tally() as counts:
        again = check("pair-tile", text, pats, 2)
    assert counts.packs == 0 and engine_rows(again) == engine_rows(first)
    other = [Record(r.id, r.codes.copy()) for r in text]
    with gpu.tally() as counts:
        check("pair-tile", other, pats, 2)
    assert counts.packs == 1 and len(gpu.PACKED_TEXTS) == 2
    del other  # (its entry is only noted by the weakref callback: gone at the next call)
    assert len(gpu.PACKED_TEXTS) == 1


def test_collector_callbacks_inside_the_pools_locks_do_not_hang():
    """A dead text's weakref callback and a search's ``__del__`` run wherever the garbage
    collector does, also inside PACKED_TEXTS' or SPARES' own locked code on the same thread:
    neither may block there (a plain lock hung the kmismatch GPU tests at random), and the
    dead text's entry is gone at the next call."""
    import threading

    from engine import gpu

    gpu.PACKED_TEXTS.clear()
    owner = Record("t", np.ones(9, np.uint8))
    assert gpu.PACKED_TEXTS.keep((owner,), np.zeros(8, np.uint8))
    assert gpu.PACKED_TEXTS.get((owner,)) is not None
    done = threading.Event()
    spare = np.zeros(8, dtype=np.uint8)

    def body():
        nonlocal owner
        with gpu.PACKED_TEXTS.lock:
            owner = None  # its weakref callback fires here, inside the locked section
        with gpu.SPARES.lock:
            gpu.SPARES.give("test", spare)  # as a search's __del__ inside take
        done.set()

    threading.Thread(target=body, daemon=True).start()
    assert done.wait(10), "a pool's lock blocked its own thread"
    assert len(gpu.PACKED_TEXTS) == 0  # the dead owner's text went at the next call
    assert gpu.SPARES.take("test", 8) is spare
    gpu.SPARES.clear()


def test_hit_columns_are_pooled_page_locked_memory():
    """The result's columns are page-locked blocks from engine.gpu.PINNED: while a result
    lives its blocks are its own (the next solve takes new ones); a block goes back to the
    pool when the last result using it is gone, and the next solve takes it again."""
    from engine import gpu

    rng = np.random.default_rng(12)
    pats = records([random_codes(rng, 5)], "p")
    text = records([planted_text(rng, 120, [pats[0].codes])], "t")
    check("shared-mem", text, pats, 2)  # (compiled)
    gpu.PINNED.clear()  # (free blocks of earlier tests would serve the columns)
    res = check("shared-mem", text, pats, 2)
    columns = [c.copy() for c in (res.hits.pos, res.hits.code, res.hits.mismatches)]
    with gpu.tally() as counts:
        again = check("shared-mem", text, pats, 2)
    assert counts.pinned >= 3  # res holds its blocks: one a column at least
    del res, again  # (their blocks go back)
    with gpu.tally() as counts:
        res = check("shared-mem", text, pats, 2)
    assert counts.pinned == 0
    for a, b in zip(columns, (res.hits.pos, res.hits.code, res.hits.mismatches)):
        assert np.array_equal(a, b)


def test_a_job_leaves_its_device_memory_for_the_next():
    """A finished search gives its device arrays to engine.gpu.SPARES; the next job of the
    same shape allocates none."""
    from engine import gpu

    rng = np.random.default_rng(13)
    pats = records([random_codes(rng, 5)], "p")
    text = records([planted_text(rng, 120, [pats[0].codes])], "t")
    with gpu.tally() as counts:
        first = check("thread", text, pats, 2)
    assert counts.allocations > 0  # (the probe sees them)
    with gpu.tally() as counts:
        again = check("thread", text, pats, 2)
    assert counts.allocations == 0 and engine_rows(again) == engine_rows(first)


# -- the text left on the GPU for its records (issue 16) -------------------------------------
def _uploaded(counts) -> int:
    """Text pieces unpacked on the GPU in a tally (one an upload piece)."""
    return counts.launches["unpack_text"]


def test_a_repeated_search_finds_its_text_on_the_gpu(monkeypatch):
    """The text is left on the GPU for its records (by identity, while they live): a second
    solve of them uploads nothing and searches in one batch, with the same hits; other
    records upload theirs; a dead record's text goes."""
    from engine import gpu

    monkeypatch.setattr(config, "GPU_UPLOAD_BYTES", 8)
    rng = np.random.default_rng(40)
    pats = records([random_codes(rng, 5), random_codes(rng, 7)], "p")
    text = records([planted_text(rng, 90, [p.codes for p in pats], copies=3),
                    random_codes(rng, 30)], "t")
    check("shared-mem", text[1:], pats, 2)  # (compiled)
    gpu.DEVICE_TEXTS.clear()
    with gpu.tally() as counts:
        first = check("shared-mem", text, pats, 2)
    pieces = -(-gpu.packed_bytes(120) // 8)
    assert _uploaded(counts) == pieces and counts.batches > 1
    assert len(gpu.DEVICE_TEXTS) == 1 and gpu.DEVICE_TEXTS.bytes == 2 * gpu.packed_bytes(120)
    with gpu.tally() as counts:
        again = check("shared-mem", text, pats, 2)
    assert _uploaded(counts) == 0 and counts.batches == 1 and len(again.hits) > 10
    assert engine_rows(again) == engine_rows(first)
    same_as_the_cpu(again, text, pats, 2)
    other = [Record(r.id, r.codes.copy()) for r in text]
    with gpu.tally() as counts:
        check("shared-mem", other, pats, 2)
    assert _uploaded(counts) == pieces and len(gpu.DEVICE_TEXTS) == 2
    del other  # (its entry is only noted by the weakref callback: gone at the next call)
    assert len(gpu.DEVICE_TEXTS) == 1


def test_a_resident_search_reads_nothing_of_its_text_on_the_host(monkeypatch):
    """The benchmark's resident case (T3x20's "cuda resident" row, issue #29): a repeated
    solve of the same record with a gap finds its text on the GPU and reads none of it on the
    host (no pass for its gap bases: 20 ms of T3x20's 24 ms), with the hits over the gap
    dropped as before. Reads are counted at Record.chunk, the accessor a record is read
    through a piece at a time."""
    from engine import gpu

    rng = np.random.default_rng(41)
    pat = random_codes(rng, 8)
    codes = random_codes(rng, 90)
    codes[10:18] = codes[60:68] = pat
    codes[64:80] = 15  # an assembly gap over the second copy
    pats, text = [Record("p", pat)], [Record("chr", codes)]
    cpu = kmismatch.solve(pats, text, 1, variant="pmasm", backend="serial")
    options = dict(variant="shared-mem", backend="cuda", strands="both")
    kmismatch.solve(pats, text, 1, **options)  # (compiled; the text left on the GPU)
    read = []
    real = Record.chunk
    monkeypatch.setattr(Record, "chunk", lambda self, a, z: read.append(z - a) or real(self, a, z))
    with gpu.tally() as counts:
        again = kmismatch.solve(pats, text, 1, **options)
    assert _uploaded(counts) == 0 and counts.packs == 0 and counts.batches == 1
    assert sum(read) == 0
    assert engine_rows(again) == engine_rows(cpu)
    starts = again.hits.start0.tolist()
    assert 10 in starts and 60 not in starts


def test_texts_left_on_the_gpu_keep_to_their_budget(monkeypatch):
    """Beyond GPU_DEVICE_TEXT_BYTES the least recently used text goes; a text larger than
    the budget, or than its share of the free device memory, is not kept (and is uploaded
    again); the hits are the same either way."""
    from engine import gpu

    rng = np.random.default_rng(41)
    pats = records([random_codes(rng, 6)], "p")
    a = records([planted_text(rng, 100, [pats[0].codes])], "a")
    b = records([planted_text(rng, 100, [pats[0].codes])], "b")
    check("thread", b, pats, 2)  # (compiled)
    gpu.DEVICE_TEXTS.clear()
    monkeypatch.setattr(config, "GPU_DEVICE_TEXT_BYTES", 150)
    check("thread", a, pats, 2)
    # (one code a byte, in whole words of 8: what a 100-symbol text holds on the GPU)
    on_gpu = 2 * gpu.packed_bytes(len(a[0]))
    assert on_gpu < config.GPU_DEVICE_TEXT_BYTES < 2 * on_gpu  # room for one text, not two
    assert len(gpu.DEVICE_TEXTS) == 1 and gpu.DEVICE_TEXTS.bytes == on_gpu

    def uploads_of(text) -> int:
        with gpu.tally() as counts:
            check("thread", text, pats, 2)
        return _uploaded(counts)

    assert uploads_of(a) == 0  # found on the GPU
    check("thread", b, pats, 2)  # b is kept; a, least recently used, goes
    assert len(gpu.DEVICE_TEXTS) == 1
    assert uploads_of(a) > 0  # uploaded again; now a is kept and b went
    assert uploads_of(b) > 0
    gpu.DEVICE_TEXTS.clear()
    monkeypatch.setattr(config, "GPU_DEVICE_TEXT_BYTES", 100)  # less than one text
    check("thread", a, pats, 2)
    assert len(gpu.DEVICE_TEXTS) == 0 and uploads_of(a) > 0
    monkeypatch.setattr(config, "GPU_DEVICE_TEXT_BYTES", 1 << 20)
    monkeypatch.setattr(gpu.Device, "free_bytes", lambda self: 2 * on_gpu - 8)  # half: too little
    check("thread", a, pats, 2)
    assert len(gpu.DEVICE_TEXTS) == 0 and uploads_of(a) > 0
    monkeypatch.setattr(gpu.Device, "free_bytes", lambda self: 2 * on_gpu + 2)
    with gpu.tally() as counts:
        first = check("thread", a, pats, 2)
        again = check("thread", a, pats, 2)
    assert len(gpu.DEVICE_TEXTS) == 1 and _uploaded(counts) == 1
    assert engine_rows(first) == engine_rows(again)


def test_a_full_gpu_drops_the_texts_left_on_it(monkeypatch):
    """An allocation that finds the GPU full drops the memory kept for later jobs (texts
    left on the GPU, spare arrays) and tries once more."""
    from engine import gpu
    from tests.cuda_support import DriverError

    rng = np.random.default_rng(42)
    pats = records([random_codes(rng, 6)], "p")
    a = records([planted_text(rng, 80, [pats[0].codes])], "a")
    b = records([planted_text(rng, 90, [pats[0].codes])], "b")

    def uploads_of(text) -> int:
        with gpu.tally() as counts:
            check("pair-tile", text, pats, 2)
        return _uploaded(counts)

    check("pair-tile", a, pats, 2)
    assert uploads_of(a) == 0  # a's text is left on the GPU
    fails = [1]
    original = gpu.cuda.device_array

    def once(*args, **kwargs):
        if fails:
            fails.pop()
            raise DriverError("[2] Call to cuMemAlloc results in CUDA_ERROR_OUT_OF_MEMORY")
        return original(*args, **kwargs)

    with monkeypatch.context() as mp:
        mp.setattr(gpu.cuda, "device_array", once)
        res = check("pair-tile", b, pats, 2)
    assert not fails and len(res.hits) > 0
    assert len(gpu.DEVICE_TEXTS) == 1 and uploads_of(b) == 0  # b's is kept, a's was dropped
    assert uploads_of(a) > 0


def test_the_hit_columns_grow_once_for_a_scan_in_pieces(monkeypatch):
    """A scan in many pieces of text grows the hit columns once, before any hit is in, for
    all the hits at the rate of its first piece (none copied from smaller columns), and
    they are the CPU's."""
    from engine import gpu
    from engine.kmismatch.hits import HitBuffer

    monkeypatch.setattr(config, "GPU_UPLOAD_BYTES", 8)
    pats = load("ACGTA")  # and TACGT: two hits every 4 windows of ACGT...
    n = 400
    codes = np.resize(load("ACGT")[0].codes, n)
    text = [Record("t", codes)]
    grown = []
    with gpu.tally() as counts:
        search = kcuda.CudaSearch("thread", codes, np.array([0, n]), slot_groups(pats, "both"),
                                  0)
        out = HitBuffer(dtypes=search.dtypes)
        out.columns = tuple(c[:1] for c in out.columns)
        original = out.reserve

        def spy(capacity):
            grown.append((len(out), capacity))
            original(capacity)

        out.reserve = spy
        assert search.scan(0, n, out) == len(out)
    assert counts.launches["unpack_text"] == n // 16  # the text went up in pieces of 8 bytes
    search.close()
    cpu = kmismatch.solve(pats, text, 0, backend="serial").hits
    assert len(grown) == 1 and grown[0][0] == 0 and len(out) <= grown[0][1] < 1.3 * len(out)
    got = [c[:len(out)] for c in out.columns]
    assert len(out) == len(cpu) > 150
    for a, b in zip(got, (cpu.pos, cpu.code, cpu.mismatches)):
        assert np.array_equal(a, b)


# -- the host side of a search (issue 16: set-up and waits) ----------------------------------
def test_searches_take_their_streams_from_the_pool():
    """A closed search gives its two streams back (engine.gpu.STREAMS); the next search takes
    those and creates none; two live searches never share one."""
    from engine import gpu

    pats = slot_groups(load("ACGTA"), "both")
    codes = np.resize(load("ACGT")[0].codes, 40)
    gpu.STREAMS.clear()  # (those of earlier tests)
    with gpu.tally() as counts:
        first = kcuda.CudaSearch("thread", codes, np.array([0, 40]), pats, 0)
        first.close()
    assert counts.streams == 2
    with gpu.tally() as counts:
        a = kcuda.CudaSearch("thread", codes, np.array([0, 40]), pats, 0)
    assert counts.streams == 0  # the two the closed search left
    assert {id(a.stream), id(a.copy_stream)} == {id(first.stream), id(first.copy_stream)}
    with gpu.tally() as counts:
        b = kcuda.CudaSearch("thread", codes, np.array([0, 40]), pats, 0)
    assert counts.streams == 2
    assert len({id(s) for s in (a.stream, a.copy_stream, b.stream, b.copy_stream)}) == 4
    a.close(), b.close()
    assert gpu.STREAMS.clear() == 4 <= gpu.STREAMS.LIMIT


def test_the_counts_come_back_with_the_last_scans_hits():
    """The constants go up queued on the compute stream (setting a search up waits for
    nothing); the counts come back with a scan's hits, so that reading them afterwards copies
    and waits for nothing; before any scan they are read from the GPU (zeros)."""
    from engine import gpu
    from engine.kmismatch.driver import Counts
    from engine.kmismatch.hits import HitBuffer

    pats = load("ACGTA")  # and TACGT
    n = 200
    codes = np.resize(load("ACGT")[0].codes, n)
    counts = Counts([n], 1, config.KMISMATCH_DENSITY_BINS)
    with gpu.tally() as setup:
        search = kcuda.CudaSearch("thread", codes, np.array([0, n]),
                                  slot_groups(pats, "both"), 0, counts=counts, n_patterns=1)
    assert setup.waits == 0 and setup.downloads == 0
    with gpu.tally() as before:
        search.fetch_counts(counts)
    assert (before.downloads, before.waits) == (1, 1)
    assert not counts.pattern_hits.any() and not counts.bins.any()
    out = HitBuffer(dtypes=search.dtypes)
    found = search.scan(0, n, out)
    with gpu.tally() as after:
        search.fetch_counts(counts)
    assert after.downloads == 0 and after.waits == 0
    cpu = kmismatch.solve(pats, [Record("t", codes)], 0, backend="serial")
    assert found == len(cpu.hits) > 50
    assert np.array_equal(counts.pattern_hits, cpu.pattern_hits)
    assert np.array_equal(counts.bins, cpu.density[0].counts)
    search.close()


@pytest.mark.parametrize("shared", [True, False], ids=["block-histograms", "global-atomics"])
def test_counts_of_one_batch_whose_hits_span_many_tally_blocks(shared, monkeypatch):
    """Over 700 hits in one batch, so the tally pass (8 threads a block here, 32 hits
    a thread) runs several blocks: every block's per-pattern counts (through its shared
    histogram, or straight to global memory) and density bins reach the totals, which equal
    the CPU's."""
    if not shared:
        monkeypatch.setattr(kcuda, "_SHARED_PATTERNS", 0)
    rng = np.random.default_rng(61)
    pats = records([random_codes(rng, 5), random_codes(rng, 5)], "p")
    text = records([random_codes(rng, 1500), random_codes(rng, 300)], "t")
    from engine import gpu

    warmed("thread", pats, 2)
    with gpu.tally() as counts:
        res = check("thread", text, pats, 2)
    assert counts.batches == 1 and len(res.hits) > 2 * 8 * 32, (counts.batches, len(res.hits))
    same_as_the_cpu(res, text, pats, 2)
