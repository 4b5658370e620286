"""edit CUDA kernels in numba's CUDA simulator, against the oracle (engine.edit.reference).

Run by test_edit_cuda.py in a subprocess with NUMBA_ENABLE_CUDASIM=1 (the
variable must be set before numba is first imported). Threads per block are
patched small so that batches span several blocks and warps; patterns take
the lengths around word boundaries (63/64/65, 128/129) so that patterns span
several words, lanes and stripes, and several patterns share a warp; texts
carry IUPAC codes (the kernels' slow path), and k takes 1 and values above m.
"""

from __future__ import annotations

import math
import os

import numpy as np
import pytest

if os.environ.get("NUMBA_ENABLE_CUDASIM") != "1":
    pytest.skip("run with NUMBA_ENABLE_CUDASIM=1 (test_edit_cuda.py does)", allow_module_level=True)

from tests.cuda_support import launches_refused, no_gpu_memory, simulator_cli  # noqa: E402
from engine import config, edit  # noqa: E402
from engine import gpu as engine_gpu  # noqa: E402
from engine.edit import cuda as ecuda  # noqa: E402
from engine.edit import cuda_myers as ck  # noqa: E402
from benchmarks import edit_cuda as cuda_bench  # noqa: E402
from engine.edit import reference as ref  # noqa: E402
from engine.jobs import CancelToken, drive  # noqa: E402
from engine.sequences import Record, SeqColumns, decode, load, reverse_complement  # noqa: E402
from tests.engine.edit.cuda_support import COMBOS, hit_rows, label, options  # noqa: E402
from tests.strategies import mutate, random_codes  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")

BATCH_LENGTHS = (63, 64, 65, 128, 129, 5, 17, 1)


@pytest.fixture(autouse=True)
def small_gpu(monkeypatch):
    monkeypatch.setattr(config, "EDIT_CUDA_THREADS_PER_BLOCK", 32)  # whole warps (cooperative)
    monkeypatch.setattr(config, "EDIT_CUDA_MIN_CHUNK_COLUMNS", 24)
    monkeypatch.setattr(config, "EDIT_CUDA_CHUNK_OVERLAP_RATIO", 0)


def _batch(seed, lengths=BATCH_LENGTHS, iupac=0.06):
    """Queries of the given lengths, each with a region holding a mutated copy in random flanks,
    and one region holding none (its best distance is large)."""
    rng = np.random.default_rng(seed)
    queries, regions = [], []
    for i, m in enumerate(lengths):
        q = random_codes(rng, m, iupac)
        piece = mutate(rng, q, int(rng.integers(0, 4)))
        r = np.concatenate([random_codes(rng, int(rng.integers(1, 8)), iupac), piece,
                            random_codes(rng, int(rng.integers(1, 8)), iupac)])
        queries.append(Record(f"q{i}", q))
        regions.append(Record(f"r{i}", r))
    queries.append(Record("far", random_codes(rng, 40, iupac)))
    regions.append(Record("rfar", random_codes(rng, 30, iupac)))
    return queries, regions


_ORACLE: dict = {}


def _oracle(seed, lengths=BATCH_LENGTHS):
    """Per pair: global distance, best hit (start, end, d, cigar) and every hit within 2."""
    key = (seed, lengths)
    if key not in _ORACLE:
        queries, regions = _batch(seed, lengths)
        rows = []
        for q, r in zip(queries, regions):
            p, t = list(q.codes), list(r.codes)
            rows.append((ref.global_distance(p, t), ref.best_hit(p, t, None), ref.search_hits(p, t, 2)))
        _ORACLE[key] = (queries, regions, rows)
    return _ORACLE[key]


def _want_best(queries, regions, rows, k):
    out = []
    for q, r, (_, best, _) in zip(queries, regions, rows):
        if k is None or best[2] <= k:
            start, end, d, cigar = best
            out.append((q.id, r.id, "+", start, end, d, cigar, decode(r.codes[start - 1:end])))
    return out


def _want_hits(queries, regions, rows):
    out = []
    for q, r, (_, _, hits) in zip(queries, regions, rows):
        for start, end, d, cigar in hits:
            out.append((q.id, r.id, "+", start, end, d, cigar, decode(r.codes[start - 1:end])))
    return out


def _check_batch(combo, seed=1, lengths=BATCH_LENGTHS, full=True):
    """Global distances (k None, and 1 when ``full``), best hits (k None; and 1 and above m when
    ``full``) and every hit within 2, with starts and CIGARs."""
    queries, regions, rows = _oracle(seed, lengths)
    opts = options(combo)
    if combo[0] == "task":
        opts["threads_per_block"] = 4  # one thread per pair: several blocks even here
    res = edit.solve(queries, regions, pairing="zip", **opts)
    assert res.info.backend == "cuda" and res.info.complete
    assert [d.distance for d in res.distances] == [row[0] for row in rows], label(combo)
    assert res.info.cells == sum(len(q) * len(r) for q, r in zip(queries, regions))
    if full:
        res = edit.solve(queries, regions, pairing="zip", k=1, **opts)
        assert [d.distance for d in res.distances] == [row[0] if row[0] <= 1 else None
                                                       for row in rows]
    for k in (None, 1, 300) if full else (None,):  # 300: above every m: every pair has a hit
        res = edit.verify(queries, regions, k, **opts)
        assert hit_rows(res) == _want_best(queries, regions, rows, k), (label(combo), k)
    res = edit.solve(queries, regions, mode="search", k=2, pairing="zip", **opts)
    assert hit_rows(res) == _want_hits(queries, regions, rows), label(combo)


@pytest.mark.parametrize("combo", COMBOS, ids=label)
def test_zipped_batch_global_best_and_hits_match_oracle(combo):
    """Global distances (k None and 1), best hits (k None, 1, above m) and every hit within 2,
    with starts and CIGARs, for patterns of 1 to 129 symbols side by side."""
    _check_batch(combo)


@pytest.mark.parametrize("columns,words", [(1, 2), (4, 1)])
def test_cooperative_columns_per_step(monkeypatch, columns, words):
    monkeypatch.setattr(config, "EDIT_CUDA_COLUMNS_PER_STEP", columns)
    _check_batch(("cooperative", words), seed=2, lengths=(63, 65, 129, 5), full=False)


@pytest.mark.parametrize("max_lanes,words,lengths,want", [(2, 1, (129, 20, 257), [2, 1, 3]),
                                                          (1, 2, (129, 20), [2, 1])],
                         ids=["two-lanes", "two-words"])
def test_cooperative_stripes(monkeypatch, max_lanes, words, lengths, want):
    """Patterns longer than max_lanes x words words run in stripes (2 and 3 here), their
    carries passed on through memory: stripes of two lanes (3 of them: both carry rows), and
    of one lane of two words. (129 and 257: the shortest patterns of 2 and 3 stripes, a
    symbol past a word; the simulator's cost grows with the square of the length, so 257,
    two thirds of the cost, runs once.)"""
    monkeypatch.setattr(config, "EDIT_CUDA_MAX_LANES", max_lanes)
    stripes = [math.ceil(math.ceil(math.ceil(m / 64) / words) / max_lanes) for m in lengths]
    assert stripes == want
    _check_batch(("cooperative", words), seed=3, lengths=lengths, full=False)


def test_task_words_in_global_memory(monkeypatch):
    """With one register tier, patterns of more than 64 symbols keep their words in global memory."""
    monkeypatch.setattr(config, "EDIT_CUDA_TASK_TIERS", (1,))
    _check_batch(("task", None), seed=4, lengths=(65, 200, 64, 7), full=False)


def test_threads_per_block_is_a_job_parameter():
    queries, regions, rows = _oracle(1)
    for variant, tpb in (("task", 8), ("task", 5), ("cooperative", 64)):
        job = edit.make_job(queries, regions, mode="search", pairing="zip", report="best",
                            variant=variant, backend="cuda", threads_per_block=tpb)
        assert job.params["threads_per_block"] == tpb
        assert hit_rows(drive(edit.iter_solve(job))) == _want_best(queries, regions, rows, None)


def _long_texts(seed=5):
    rng = np.random.default_rng(seed)
    p0 = random_codes(rng, 20)
    p1 = random_codes(rng, 70, 0.05)
    t0 = np.concatenate([random_codes(rng, 90, 0.03), mutate(rng, p0, 1), random_codes(rng, 120),
                         reverse_complement(mutate(rng, p1, 2)), random_codes(rng, 80, 0.03)])
    t1 = np.concatenate([random_codes(rng, 30), p0, random_codes(rng, 60)])
    return [Record("p0", p0), Record("p1", p1)], [Record("t0", t0), Record("t1", t1)]


def _oracle_search(patterns, texts, k):
    out = []
    for p, pat in enumerate(patterns):
        for r, text in enumerate(texts):
            for s, strand in enumerate(("+", "-")):
                codes = pat.codes if strand == "+" else reverse_complement(pat.codes)
                for start, end, d, cigar in ref.search_hits(list(codes), list(text.codes), k):
                    window = text.codes[start - 1:end]
                    matched = decode(window if strand == "+" else reverse_complement(window))
                    cigar = cigar if strand == "+" else ref.reverse_cigar(cigar)
                    out.append(((p, r, end, s), (pat.id, text.id, strand, start, end, d, cigar,
                                                 matched)))
    return [row for _, row in sorted(out)]


@pytest.mark.parametrize("combo", [("task", None), ("cooperative", 2)], ids=label)
def test_search_in_long_texts_as_chunks(combo):
    """Every hit within k on both strands, the best per record and the score profiles, with
    the records cut into overlapping chunks (minimum chunk patched to 24 columns)."""
    patterns, texts = _long_texts()
    opts = options(combo)
    res = edit.solve(patterns, texts, mode="search", k=2, strands="both", **opts)
    assert hit_rows(res) == _oracle_search(patterns, texts, 2)
    for prof in res.profiles:
        pat = next(p for p in patterns if p.id == prof.pattern_id).codes
        codes = pat if prof.strand == "+" else reverse_complement(pat)
        text = next(t for t in texts if t.id == prof.record_id).codes
        want = ref.score_profile(ref.end_distances(list(codes), list(text)), 3, prof.bin_width)
        assert prof.values.tolist() == want.tolist(), (prof.pattern_id, prof.record_id, prof.strand)
    cpu = edit.solve(patterns, texts, mode="search", k=2, strands="both", backend="serial")
    assert [p.values.tolist() for p in res.profiles] == [p.values.tolist() for p in cpu.profiles]
    best = edit.solve(patterns, texts, mode="search", report="best", strands="both", **opts)
    cpu = edit.solve(patterns, texts, mode="search", report="best", strands="both",
                     backend="serial")
    assert hit_rows(best) == hit_rows(cpu)
    assert len(best.hits) == 2 * 2 * 2


def test_progress_slices_and_cancel(monkeypatch):
    monkeypatch.setattr(config, "EDIT_CUDA_MIN_CHUNK_COLUMNS", 1000)  # a task per pair
    monkeypatch.setattr(config, "EDIT_CUDA_FIRST_SLICE_COLUMNS", 30)
    monkeypatch.setattr(config, "EDIT_CUDA_MIN_SLICE_TASKS", 1)
    monkeypatch.setattr(config, "SLICE_SECONDS", 1e-4)
    queries, regions, rows = _oracle(1)
    job = edit.make_job(queries, regions, mode="search", pairing="zip", report="best",
                        variant="cooperative", backend="cuda")
    progress = []
    full = drive(edit.iter_solve(job), progress.append)
    running = [p for p in progress if p.phase == "running"]
    assert len(running) >= 3 and running[-1].done == running[-1].total
    assert hit_rows(full) == _want_best(queries, regions, rows, None)
    token = CancelToken()
    gen = edit.iter_solve(job, token)
    first = next(p for p in gen if p.phase == "running")
    token.cancel()
    part = drive(gen)
    assert not part.info.complete
    assert 0 < len(part.hits) < len(full.hits) and first.partial
    assert set(hit_rows(part)) <= set(hit_rows(full))


def test_a_slice_of_long_tasks_takes_a_wave_of_them(monkeypatch):
    """Slices take at least EDIT_CUDA_MIN_SLICE_TASKS tasks however small the column budget:
    a genome chunk's tasks are ~1M columns long, so a budget of a few tasks' columns kept
    the GPU nearly idle (69 tasks a slice against a 3.1 Gb store)."""
    monkeypatch.setattr(config, "EDIT_CUDA_MIN_CHUNK_COLUMNS", 64)
    monkeypatch.setattr(config, "EDIT_CUDA_CHUNK_OVERLAP_RATIO", 1)
    monkeypatch.setattr(config, "EDIT_CUDA_MIN_SLICE_TASKS", 5)
    rng = np.random.default_rng(11)
    text = random_codes(rng, 2000, 0.0)
    pattern = text[500:520].copy()
    job = edit.make_job([Record("p", pattern)], [Record("t", text)], mode="search", k=2,
                        backend="cuda", variant="task", strands="forward")
    runner = ecuda.CudaRunner(job, np.zeros(1, dtype=np.uint8))
    assert len(runner.widths) > 10
    runner.scan_slice(1)
    assert runner.next == 5
    while not runner.finished():
        runner.scan_slice(1)
    hits = runner.take_hits()
    assert hits.size and runner.next == len(runner.widths)


@pytest.mark.parametrize("mode,profile", [("search", False), ("search", True), ("global", False)])
def test_job_rows_fill_every_field_of_a_reused_page_locked_table(monkeypatch, mode, profile):
    """job_rows reads the plan's fields (not its task table) into a job table in reused
    page-locked memory: every field as the task table's rows give it, nothing left of the
    job before (a block of the same size, filled with -7, is handed back first)."""
    from engine.edit import cpu_common as cc

    monkeypatch.setattr(config, "EDIT_CUDA_MIN_CHUNK_COLUMNS", 64)
    monkeypatch.setattr(config, "EDIT_CUDA_CHUNK_OVERLAP_RATIO", 1)
    rng = np.random.default_rng(12)
    texts = [Record(f"t{i}", random_codes(rng, n, 0.0)) for i, n in enumerate((900, 40, 300))]
    patterns = [Record(f"p{i}", random_codes(rng, m, 0.0)) for i, m in enumerate((20, 70, 33))]
    options = dict(mode=mode, k=3 if mode == "search" else None, backend="cuda",
                   variant="cooperative")
    if mode == "search":
        options["profile"] = profile
    job = edit.make_job(patterns, texts, pairing="zip", **options)
    runner = ecuda.CudaRunner(job, np.zeros(1, dtype=np.uint8))
    plan = runner.plan
    tasks = plan.tasks
    assert plan.one_task_each == (mode == "global") and len(tasks) >= 3
    a, b = 1, len(tasks)
    stale = engine_gpu.pinned_empty(ck.NJ * (b - a), np.int64)
    stale[:] = -7
    del stale
    inst, jobs = ecuda.job_rows(plan, runner.lengths, a, b)
    t = tasks[a:b]
    want = np.zeros((ck.NJ, b - a), dtype=np.int64)
    want[ck.J_SCAN] = t[:, cc.T_SCAN_LO]
    want[ck.J_N] = t[:, cc.T_HI] - t[:, cc.T_SCAN_LO]
    want[ck.J_OWN] = t[:, cc.T_OWN_LO] - t[:, cc.T_SCAN_LO]
    want[ck.J_M] = runner.lengths[t[:, cc.T_PAT]]
    want[ck.J_THRESH] = np.minimum(t[:, cc.T_THRESH], cc.INF)
    want[ck.J_ID] = np.arange(a, b)
    if profile:
        binw = t[:, cc.T_BINW]
        bin_ = (t[:, cc.T_OWN_LO] - t[:, cc.T_REC_LO]) // binw
        want[ck.J_BINW] = binw
        want[ck.J_BIN] = t[:, cc.T_PROF] + bin_
        want[ck.J_EDGE] = t[:, cc.T_REC_LO] + (bin_ + 1) * binw - t[:, cc.T_SCAN_LO]
        want[ck.J_CAP] = t[:, cc.T_CUT] + 1
        assert want[ck.J_BINW].min() > 0
    assert inst.tolist() == t[:, cc.T_PAT].tolist()
    np.testing.assert_array_equal(jobs, want)


def test_verify_arrays_reads_regions_of_one_text():
    rng = np.random.default_rng(7)
    text = random_codes(rng, 300, 0.04)
    queries = [random_codes(rng, m, 0.04) for m in (30, 70, 129)]
    queries[1] = mutate(rng, text[100:170], 3)
    flat = np.concatenate(queries)
    offsets = np.concatenate(([0], np.cumsum([len(q) for q in queries])))
    starts = np.array([90, 0, 150, 95, 10, 120])
    ends = np.array([180, 60, 300, 175, 90, 260])
    pair_query = np.array([1, 0, 2, 1, 2, 0])
    dev = engine_gpu.Device(32)
    for variant in ("task", "cooperative"):
        for k in (None, 4):
            got = ecuda.verify_arrays(dev, variant, text, starts, ends, flat, offsets, pair_query, k)
            for i, (a, b, q) in enumerate(zip(starts, ends, pair_query)):
                found = ref.best_hit(list(queries[q]), list(text[a:b]), k)
                assert (got.best[i], got.end[i]) == ((found[2], found[1]) if found else (-1, -1))
        got = ecuda.verify_arrays(dev, variant, text, starts, ends, flat, offsets, pair_query,
                                  mode="global")
        assert got.best.tolist() == [ref.global_distance(list(queries[q]), list(text[a:b]))
                                     for a, b, q in zip(starts, ends, pair_query)]


def _columns_forms(queries, regions):
    """The batch as columns end to end, and as ranges: regions backwards in one text, each
    query stored once and read by range, pair 0 once more at the end."""
    def offsets(parts):
        return np.concatenate(([0], np.cumsum([len(p) for p in parts]))).astype(np.int64)

    q_ids, r_ids = [q.id for q in queries], [r.id for r in regions]
    flat = SeqColumns.from_offsets(np.concatenate([q.codes for q in queries]), offsets(queries),
                                   q_ids)
    ends = offsets(regions[::-1])
    text = np.concatenate([r.codes for r in regions[::-1]])
    lo, hi = ends[:-1][::-1], ends[1:][::-1]
    q_offs = offsets(queries)
    ranges = (SeqColumns.from_ranges(flat.codes, np.append(q_offs[:-1], 0),
                                     np.append(q_offs[1:], q_offs[1]), q_ids + q_ids[:1]),
              SeqColumns.from_ranges(text, np.append(lo, lo[0]), np.append(hi, hi[0]),
                                     r_ids + r_ids[:1]))
    regions_flat = SeqColumns.from_offsets(np.concatenate([r.codes for r in regions]),
                                           offsets(regions), r_ids)
    return {"offsets": (flat, regions_flat), "ranges": ranges}


@pytest.mark.parametrize("combo", [("task", None), ("cooperative", 2)], ids=label)
def test_zipped_columns_match_the_oracle(combo):
    """edit.verify over columns (engine.sequences.SeqColumns: end to end, or ranges of one
    text with a query read once for two pairs) gives the oracle's best hits (the Records'
    own are checked above)."""
    queries, regions, rows = _oracle(1)
    opts = options(combo)
    forms = _columns_forms(queries, regions)
    want = _want_best(queries, regions, rows, None)
    assert hit_rows(edit.verify(*forms["offsets"], None, **opts)) == want, label(combo)
    want = _want_best(queries, regions, rows, 1)
    again = [row for row in want if row[0] == queries[0].id]
    assert hit_rows(edit.verify(*forms["ranges"], 1, **opts)) == want + again, label(combo)
    bare = edit.verify(*forms["ranges"], 1, align=False, **opts).hits
    assert bare.end.tolist() == [row[4] for row in want + again]


def test_text_is_packed_on_the_gpu_as_the_kernels_read_it(monkeypatch):
    """upload_text: the codes PAD symbols in, and their lookups packed 16 per word (code 0,
    the padding and an assembly gap base, as 4: it matches nothing, engine.gaps),
    for lengths around the word's 16 symbols; by pack_kernel, and (the simulator's way for
    a long text) by numpy."""
    rng = np.random.default_rng(9)
    dev = engine_gpu.Device(32)
    for n in (1, 15, 16, 17, 33, 200, -200):
        if n < 0:
            monkeypatch.setattr(ecuda, "SIMULATOR_PACK_LIMIT", 10)
            n = -n
        codes = random_codes(rng, n, 0.2)
        lookups_d, padded_d = ecuda.upload_text(dev, codes)
        padded = padded_d.copy_to_host()
        total = -(-(ck.PAD + n + ck.PAD + 32) // 16) * 16
        want = np.zeros(total, dtype=np.uint8)
        want[ck.PAD:ck.PAD + n] = codes
        assert padded.tolist() == want.tolist()
        nibbles = ck.LOOKUP[want].astype(np.uint64).reshape(-1, 16)
        packed = np.bitwise_or.reduce(nibbles << (4 * np.arange(16, dtype=np.uint64)), axis=1)
        assert lookups_d.copy_to_host().tolist() == packed.tolist(), n


def test_out_of_memory_and_launch_failures_are_one_line_errors(monkeypatch):
    queries, regions, rows = _oracle(1)

    with no_gpu_memory(monkeypatch):
        for variant in ("task", "cooperative"):
            with pytest.raises(RuntimeError, match="ran out of memory") as err:
                edit.verify(queries, regions, variant=variant, backend="cuda")
            assert "\n" not in str(err.value)

    with launches_refused(monkeypatch):
        for variant in ("task", "cooperative"):
            with pytest.raises(RuntimeError, match="CUDA error while launching") as err:
                edit.verify(queries, regions, variant=variant, backend="cuda")
            assert "\n" not in str(err.value)
    # Nothing is left broken: the CPU and the GPU paths both still work.
    want = _want_best(queries, regions, rows, None)
    assert hit_rows(edit.verify(queries, regions, backend="serial")) == want
    assert hit_rows(edit.verify(queries, regions, variant="cooperative", backend="cuda")) == want


@pytest.mark.parametrize("kwargs,message", [
    ({"variant": "task", "words_per_thread": 2}, "words_per_thread applies to the cooperative"),
    ({"variant": "cooperative", "words_per_thread": 0}, "words_per_thread must be >= 1"),
    ({"variant": "cooperative", "words_per_thread": 9}, "words_per_thread must be <= 8"),
    ({"variant": "cooperative", "words_per_thread": 1.5}, "words_per_thread must be an integer"),
    ({"variant": "cooperative", "threads_per_block": 48}, "multiple of 32"),
    ({"variant": "task", "threads_per_block": 0}, "threads_per_block must be >= 1"),
    ({"variant": "task", "threads_per_block": 2048}, "threads_per_block must be <= 1024"),
    ({"variant": "myers", "backend": "serial", "threads_per_block": 64}, "cuda backend only"),
    ({"variant": "myers-blocked", "backend": "multicore", "words_per_thread": 2},
     "cuda backend only"),
    ({"variant": "cooperative", "backend": "serial"}, "no serial backend"),
])
def test_bad_cuda_options_raise_value_error(kwargs, message):
    kwargs = {"backend": "cuda", **kwargs}
    with pytest.raises(ValueError, match=message):
        edit.make_job(load("ACGT"), load("ACGTT"), **kwargs)


def _cli(*args):
    return simulator_cli("edit", *args)


def test_cli_runs_cuda_and_reports_failures_in_one_line(tmp_path):
    ok = _cli("ACGTTGCA", "GGACGTAGCATT", "--mode", "search", "-k", "2", "--report", "best",
              "--backend", "cuda", "--variant", "cooperative", "--words-per-thread", "2", "--json")
    assert ok.returncode == 0, ok.stderr
    assert '"hits": [[3, 10, 1]]' in ok.stdout and '"backend": "cuda"' in ok.stdout
    out = tmp_path / "out.csv"
    bad = _cli("ACGTTGCA", "GGACGTAGCATT", "--backend", "cuda", "--variant", "cooperative",
               "--threads-per-block", "1024", "--words-per-thread", "8", "-o", str(out))
    assert bad.returncode == 1
    assert len(bad.stderr.strip().splitlines()) == 1 and "shared memory" in bad.stderr
    assert "Traceback" not in bad.stderr and not out.exists()
    wrong = _cli("ACGT", "ACGT", "--backend", "cuda", "--variant", "task", "--words-per-thread", "2")
    assert wrong.returncode == 2 and "cooperative variant only" in wrong.stderr


def test_bench_cases_run_on_tiny_workloads(monkeypatch):
    """The CUDA bench plumbing (workload, agreement, CPU check, family API row) at toy scale."""
    monkeypatch.setattr(cuda_bench, "READ_LENGTHS", (20, 70))
    monkeypatch.setattr(cuda_bench, "READS", 3)
    monkeypatch.setattr(cuda_bench, "CANDIDATES", 2)
    monkeypatch.setattr(cuda_bench, "CPU_SAMPLE", 4)
    monkeypatch.setattr(cuda_bench, "WORDS", (1,))
    monkeypatch.setattr(cuda_bench, "FAMILY_RUNS", 1)  # the timed calls after the warm-up
    monkeypatch.setattr(cuda_bench, "_reference", {})
    cuda_bench.workload.cache_clear()
    try:
        cases = cuda_bench.cases(None)
        names = {c.name for c in cases}
        assert {"task/cuda", "cooperative/cuda w=2", "cooperative/cuda w=2 c=1",
                "cooperative/cuda verify() columns", "cooperative/cuda verify() flat columns",
                "cooperative/cuda verify() from Records", "cpu check (peer)"} <= names
        for case in cases:
            if " c=" in case.name:
                continue  # other columns per step: the same plumbing
            metrics = case.run()
            assert metrics["seconds"] is not None
            for key in ("agrees", "agrees_with_gpu", "cpu_agrees"):
                if key in metrics:
                    assert metrics[key] in (True, "reference"), (case.workload, case.name)
            if case.name == "cooperative/cuda verify() columns":
                assert metrics["agrees"] is True and metrics["cpu_pairs"] == 6
                assert metrics["vs_cpu"] > 0 and metrics["hits"] >= 3
            if "/cuda" in case.name:
                assert metrics["device"] == "CUDA simulator"
    finally:
        cuda_bench.workload.cache_clear()


def test_cooperative_reads_stop_at_each_pairs_end(monkeypatch):
    """A pair shorter than the longest of its warp runs the warp's steps; its reads must stop
    at its own end. Here the short record ends the text: reading on past it left the text
    (the simulator's arrays raise IndexError; on a GPU it was an out-of-bounds read that an
    allocation's slack hid, until it did not)."""
    monkeypatch.setattr(config, "EDIT_CUDA_MIN_CHUNK_COLUMNS", 4096)  # the long record whole
    rng = np.random.default_rng(7)
    patterns = [Record("p", random_codes(rng, 20))]
    texts = [Record("long", random_codes(rng, 700)), Record("short", random_codes(rng, 25))]
    for k in (3, 30):  # k > m: every end is a hit
        got = edit.solve(patterns, texts, mode="search", k=k, strands="both", variant="cooperative",
                         backend="cuda", words_per_thread=1)
        want = edit.solve(patterns, texts, mode="search", k=k, strands="both", backend="serial")
        assert hit_rows(got) == hit_rows(want), k


@pytest.mark.parametrize("variant,report", [("cooperative", "best"), ("task", "hits")])
def test_a_job_gives_its_device_memory_to_the_next(monkeypatch, variant, report):
    """A job's device arrays go back to engine.gpu.SPARES (a batch's once its results are in,
    the text and patterns when the runner finishes), and the same job again takes every one
    of them from there (no new allocation: each cost a driver call and a deferred free that
    waits for the device), with the same answers."""
    queries, regions = _batch(5)
    opts = dict(mode="search", k=2, report=report, variant=variant, backend="cuda",
                pairing="zip", align=False)
    monkeypatch.setattr(config, "GPU_SPARE_BYTES", 1 << 30)
    engine_gpu.SPARES.clear()
    first = edit.solve(queries, regions, **opts)
    kept = {key: len(arrays) for key, arrays in engine_gpu.SPARES.free.items()
            if key.startswith("edit ")}
    for what in ("text", "the patterns", "the pairs", "the results", "the score profile",
                 "match words", "match-table plan", "hits"):
        assert kept.get(f"edit {what}"), what
    made = []
    empty = engine_gpu.Device.empty
    monkeypatch.setattr(engine_gpu.Device, "empty",
                        lambda self, shape, dtype, what: made.append(what) or
                        empty(self, shape, dtype, what))
    again = edit.solve(queries, regions, **opts)
    assert made == []
    assert hit_rows(again) == hit_rows(first) and len(first.hits) > 0
    assert {key: len(arrays) for key, arrays in engine_gpu.SPARES.free.items()
            if key.startswith("edit ")} == kept


def test_a_genome_stays_on_the_gpu_for_the_next_batch_of_its_regions(monkeypatch):
    """Regions as ranges of the caller's read-only genome array (SeqColumns): the genome is
    left on the GPU for that array (engine.gpu.DEVICE_TEXTS) and the next batch of its
    regions takes it as it is, with no upload; another array uploads its own, and a writable
    one (which its owner may change in place between batches) every time."""
    rng = np.random.default_rng(21)
    genome = random_codes(rng, 3000, 0.02)
    reads = np.concatenate([mutate(rng, genome[s:s + 40], 2) for s in (100, 900, 2500)])
    genome.flags.writeable = False
    starts = np.array([80, 1500, 880, 2480, 0])
    q_lo = np.array([0, 0, 40, 80, 80])
    opts = dict(variant="cooperative", backend="cuda", align=False)

    def batch(codes):
        queries = SeqColumns.from_ranges(reads, q_lo, q_lo + 40, "read")
        return queries, SeqColumns.from_ranges(codes, starts, starts + 70, "cand")

    edit.verify(*batch(genome.copy()), 3, **opts)  # warm (its tiny chunk's upload) before counting
    uploads = []
    upload = ecuda.upload_text
    monkeypatch.setattr(ecuda, "upload_text", lambda dev, codes, into=None:
                        uploads.append(len(codes)) or upload(dev, codes, into))
    engine_gpu.DEVICE_TEXTS.clear()
    first = edit.verify(*batch(genome), 3, **opts)
    assert uploads == [3000]
    again = edit.verify(*batch(genome), 3, **opts)
    assert uploads == [3000]  # (taken from the GPU)
    writable = genome.copy()
    other = edit.verify(*batch(writable), 3, **opts)
    assert uploads == [3000, 3000]
    edit.verify(*batch(writable), 3, **opts)
    assert uploads == [3000, 3000, 3000]  # (not kept: it may have changed)
    want = edit.verify(*batch(genome), 3, backend="serial", align=False)
    rows = [(h.pattern_id, h.record_id, h.end, h.distance) for h in want.hits]
    assert len(rows) >= 3
    for res in (first, again, other):
        assert [(h.pattern_id, h.record_id, h.end, h.distance) for h in res.hits] == rows
