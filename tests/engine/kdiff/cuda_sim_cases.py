"""kdiff CUDA kernels in numba's CUDA simulator, against the oracle.

Run by test_kdiff_cuda.py in a subprocess with NUMBA_ENABLE_CUDASIM=1 (the
variable must be set before numba is first imported, so these cases cannot
share a process with the rest of the suite). Threads per block are patched
small so that the tiny inputs the simulator can afford span several blocks,
stripes and tiles, and the bitparallel tiers so that chunks overlap, words
overflow and r are re-run.
"""

from __future__ import annotations

import itertools
import os

import numpy as np
import pytest

if os.environ.get("NUMBA_ENABLE_CUDASIM") != "1":
    pytest.skip("run with NUMBA_ENABLE_CUDASIM=1 (test_kdiff_cuda.py does)", allow_module_level=True)

from tests.cuda_support import launches_refused, no_gpu_memory, simulator_cli  # noqa: E402
from engine import config, kdiff  # noqa: E402
from engine.jobs import CancelToken, drive  # noqa: E402
from engine.kdiff import cuda as kcuda  # noqa: E402
from benchmarks import kdiff_cuda as cuda_bench
from engine.kdiff import cuda_bitparallel  # noqa: E402
from engine.kdiff.spec import SPEC  # noqa: E402
from engine.registry import missing_requirements  # noqa: E402
from engine.sequences import Record, load, reverse_complement  # noqa: E402
from tests.engine.kdiff.cuda_support import cuda_combos, label, tiny_kdiff_gpu  # noqa: E402
from tests.engine.kdiff.oracle_rows import candidates  # noqa: E402
from tests.strategies import mutate, random_codes  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")

COMBOS = cuda_combos()


@pytest.fixture(autouse=True)
def small_gpu(monkeypatch):
    tiny_kdiff_gpu(monkeypatch)


def _expected(target, background, k, strands):
    betas = [b.codes for b in background]
    if strands == "both":
        betas = betas + [reverse_complement(b) for b in betas]
    out = []
    for t in target:
        out += [(t.id, r + 1, r + length) for r, length in candidates(t.codes, betas, k)]
    return out


def _solve(target, background, k, combo, strands="both", **kw):
    v, f = combo
    res = kdiff.solve(target, background, k, variant=v, backend="cuda", flags=f, strands=strands, **kw)
    assert res.info.backend == "cuda" and res.info.complete
    return [(c.target_id, c.start, c.end) for c in res.candidates], res


def test_combos_cover_the_study_flags():
    names = {label(c) for c in COMBOS}
    assert "conventional+opt1+opt3+opt4+opt5" in names and "conventional" in names
    assert "alternative+opt3+opt4+opt5+opt6" in names and "alternative+opt6" not in names
    assert "bitparallel" in names
    assert "bitparallel+word32" in names and "bitparallel+neighbours+word32+word64" in names
    # Every flag subset of each variant's cuda backend but those that lack a flag they need.
    for v in SPEC.variants:
        flags = v.backend("cuda").flags
        subsets = {frozenset(s) for n in range(len(flags) + 1)
                   for s in itertools.combinations(flags, n)}
        runnable = {s for s in subsets if not missing_requirements(SPEC, v.name, "cuda", s)}
        assert {f for name, f in COMBOS if name == v.name} == runnable
        assert len(runnable) < len(subsets)  # each variant has a flag that needs another
    assert len(set(COMBOS)) == len(COMBOS)


@pytest.mark.parametrize("combo", COMBOS, ids=label)
def test_seed_example(combo):
    got, _ = _solve(load("ACTG"), load("AGCAAG"), 2, combo, "forward")
    assert [(s, e) for _, s, e in got] == [(1, 3), (2, 4)]


@pytest.mark.parametrize("combo", COMBOS, ids=label)
def test_random_inputs_match_oracle(combo):
    """Two small random cases per combination: IUPAC codes, planted near-copies, both strands."""
    rng = np.random.default_rng(sum(map(ord, label(combo))))
    for case in range(2):
        m = int(rng.integers(8, 17))
        alpha = random_codes(rng, m, iupac_rate=0.1)
        beta = random_codes(rng, int(rng.integers(4, 14)), iupac_rate=0.1)
        start = int(rng.integers(0, m - 4))
        beta = np.concatenate([beta, mutate(rng, alpha[start:start + 10], int(rng.integers(0, 3)))])
        k = int(rng.integers(1, 5))
        strands = ("both", "forward")[case]
        target, background = [Record("t", alpha)], [Record("b", beta)]
        got, _ = _solve(target, background, k, combo, strands)
        assert got == _expected(target, background, k, strands), f"{label(combo)} case {case}"


@pytest.mark.parametrize("variant", ["conventional", "alternative", "bitparallel"])
def test_multi_record_targets_and_backgrounds(variant):
    rng = np.random.default_rng(11)
    target = [Record("t1", random_codes(rng, 9, 0.1)), Record("t2", random_codes(rng, 7))]
    background = [Record("b1", np.concatenate([random_codes(rng, 5), target[0].codes[2:8]])),
                  Record("b2", random_codes(rng, 9, 0.1))]
    got, _ = _solve(target, background, 2, (variant, None))
    assert got == _expected(target, background, 2, "both")


def test_bitparallel_tiers_overflow_and_reruns(monkeypatch):
    """A long planted copy: tier 1's short overlap cannot settle the long c(r), tier 2 sees
    them whole but overflows its two words, and the exact tier in global memory finishes."""
    monkeypatch.setattr(config, "KDIFF_CUDA_BITPARALLEL_TIERS", ((2, 30), (2, 300)))
    calls = []
    original = cuda_bitparallel.BitparallelDriver._launch
    original_init = cuda_bitparallel.BitparallelDriver.__init__

    def from_the_first_tier(self, *args):
        original_init(self, *args)
        self.first = 0

    monkeypatch.setattr(cuda_bitparallel.BitparallelDriver, "__init__", from_the_first_tier)

    def spy(self, rs, c0, m_end, words, overlap, counters, exact=False, lv=None):
        got, over, truncated = original(self, rs, c0, m_end, words, overlap, counters, exact, lv)
        calls.append((words, exact, int(over.sum()), truncated))
        return got, over, truncated

    monkeypatch.setattr(cuda_bitparallel.BitparallelDriver, "_launch", spy)
    rng = np.random.default_rng(5)
    alpha = random_codes(rng, 140, iupac_rate=0.03)
    beta = np.concatenate([random_codes(rng, 10), mutate(rng, alpha[3:138], 1), random_codes(rng, 6)])
    target, background = [Record("t", alpha)], [Record("b", beta)]
    got, _ = _solve(target, background, 3, ("bitparallel", {"word32"}), "forward")  # the ladder
    assert got == _expected(target, background, 3, "forward")
    assert any(over for _, exact, over, _ in calls if not exact), "no tier overflowed"
    assert any(exact for _, exact, _, _ in calls), "the exact tier never ran"
    assert any(trunc for *_, trunc in calls), "no chunk needed its overlap"


@pytest.mark.parametrize("flags", [{"word32"}, None], ids=["ladder", "default"])
@pytest.mark.parametrize("m,k", [(64, 6), (65, 66), (129, 1)])
def test_bitparallel_word_boundaries(monkeypatch, m, k, flags):
    monkeypatch.setattr(config, "KDIFF_CUDA_BITPARALLEL_TIERS", ((2, 40), (3, 80), (5, 200)))
    rng = np.random.default_rng(m * 100 + k)
    alpha = random_codes(rng, m, iupac_rate=0.03)
    beta = np.concatenate([random_codes(rng, 12), mutate(rng, alpha[5:], max(1, k // 3)),
                           random_codes(rng, 8)])
    target, background = [Record("t", alpha)], [Record("b", beta)]
    got, _ = _solve(target, background, k, ("bitparallel", flags), "forward")
    assert got == _expected(target, background, k, "forward")


def test_register_tier_stretches_rise_and_fall(monkeypatch):
    """The register tiers' stretches (cuda_bitparallel.run_stretch, one code path per count
    of live blocks): copies of parts of the target with few and many edits, between random
    stretches, make the starts' live blocks rise and fall within one chunk (c(r) from 12 to
    118: one, two and three blocks); IUPAC in both texts; no lanes pass, so every start runs
    in the tiers. (A stretch that kept running after its count changed fails here.)"""
    monkeypatch.setattr(config, "KDIFF_CUDA_BITPARALLEL_TIERS", ((4, 2000), (8, 4000)))
    rng = np.random.default_rng(12)
    alpha = random_codes(rng, 160, iupac_rate=0.03)
    parts = [random_codes(rng, 80, iupac_rate=0.02)]
    for a, b, edits in ((0, 80, 2), (32, 140, 6), (80, 160, 1)):
        parts += [mutate(rng, alpha[a:b], edits), random_codes(rng, 20)]
    target, background = [Record("t", alpha)], [Record("b", np.concatenate(parts))]
    got, _ = _solve(target, background, 12, ("bitparallel", set()), "forward")
    assert got == _expected(target, background, 12, "forward")


@pytest.mark.parametrize("m", [31, 32, 33, 40])
@pytest.mark.parametrize("k", [1, 4])
def test_word32_first_pass_at_the_word_edge(m, k):
    """The 32-bit pass settles what fits and hands on what outgrows 32 (planted copies
    of 31, 32, 33 symbols and longer), with lanes finishing at different columns."""
    rng = np.random.default_rng(m * 10 + k)
    alpha = random_codes(rng, m + 6, iupac_rate=0.05)
    beta = np.concatenate([random_codes(rng, 20), mutate(rng, alpha[3:3 + m], k // 2),
                           random_codes(rng, 15)])
    target, background = [Record("t", alpha)], [Record("b", beta), Record("c", alpha[10:30])]
    want = _expected(target, background, k, "both")
    with_pass, res = _solve(target, background, k, ("bitparallel", {"word32"}))
    without, _ = _solve(target, background, k, ("bitparallel", set()))
    assert with_pass == want and without == want
    assert res.info.flags == ("word32",)


def test_no_match_spans_two_background_records():
    target = [Record("t", np.array([1, 2, 4, 8, 1, 2, 4, 8], np.uint8))]
    background = [Record("b1", np.array([8, 8, 1, 2, 4, 8], np.uint8)),
                  Record("b2", np.array([1, 2, 4, 8, 8, 8], np.uint8))]
    for variant in ("conventional", "alternative", "bitparallel"):
        got, _ = _solve(target, background, 1, (variant, None), "forward")
        assert got == _expected(target, background, 1, "forward"), variant
        assert got[0][2] - got[0][1] + 1 == 5


def test_counts_match_the_cpu_kernels():
    """Without the early stops, CUDA counts the cells and comparisons the CPU counts."""
    # Far apart, so the scan runs to the last start and no slice computes a start past the stop.
    target, background = load("ACGACGACGACGAC"), load("TTTTTTTTTTTT")
    for variant, cpu_flags, gpu_flags in (("alternative", set(), {"opt3", "opt4", "opt5", "opt6"}),
                                          ("conventional", set(), {"opt3"})):
        cpu = kdiff.solve(target, background, 3, variant=variant, backend="serial", flags=cpu_flags,
                          strands="forward", count_comparisons=True)
        gpu = kdiff.solve(target, background, 3, variant=variant, backend="cuda", flags=gpu_flags,
                          strands="forward", count_comparisons=True)
        assert len(cpu.profiles["literal"]) == 14 - 2, "the scan must only stop at the end here"
        assert (gpu.info.cells, gpu.info.comparisons) == (cpu.info.cells, cpu.info.comparisons)
        off = kdiff.solve(target, background, 3, variant=variant, backend="cuda", flags=gpu_flags,
                          strands="forward")
        assert off.info.comparisons == 0 and off.candidates == gpu.candidates


def test_opt1_skips_stripes():
    """opt1 stops a matrix at the first saved row without a value <= k-1."""
    rng = np.random.default_rng(8)
    target = [Record("t", random_codes(rng, 16))]
    background = [Record("b", random_codes(rng, 10))]
    tiled = _solve(target, background, 2, ("conventional", {"opt4"}), count_comparisons=True)[1]
    stopped = _solve(target, background, 2, ("conventional", {"opt1", "opt4"}),
                     count_comparisons=True)[1]
    assert stopped.info.cells < 0.75 * tiled.info.cells
    assert stopped.candidates == tiled.candidates


def test_progress_slices_and_cancel(monkeypatch):
    monkeypatch.setattr(kcuda.CudaSliceRunner, "min_slice", lambda self: 2)
    monkeypatch.setattr(config, "SLICE_SECONDS", 1e-4)
    rng = np.random.default_rng(2)
    target = [Record("t", random_codes(rng, 16))]
    background = [Record("b", random_codes(rng, 10))]
    for variant in ("alternative", "bitparallel"):
        job = kdiff.make_job(target, background, 2, variant=variant, backend="cuda")
        progress = []
        full = drive(kdiff.iter_solve(job), progress.append)
        running = [p for p in progress if p.phase == "running"]
        assert len(running) >= 3 and running[-1].done == running[-1].total
        token = CancelToken()
        gen = kdiff.iter_solve(job, token)
        first = next(p for p in gen if p.phase == "running")
        token.cancel()
        part = drive(gen)
        assert not part.info.complete
        settled = part.settled["t"]
        assert first.done <= settled < 15
        assert part.candidates == tuple(c for c in full.candidates if c.start <= settled)


def test_out_of_memory_and_launch_failures_are_one_line_errors(monkeypatch):
    target, background = load("ACGTTGCAAGGTACCA"), load("TTGCAAGCCGTACG")

    with no_gpu_memory(monkeypatch):
        with pytest.raises(RuntimeError, match="ran out of memory") as err:
            kdiff.solve(target, background, 3, variant="bitparallel", backend="cuda")
        assert "\n" not in str(err.value)

    with launches_refused(monkeypatch):
        with pytest.raises(RuntimeError, match="CUDA error while launching") as err:
            kdiff.solve(target, background, 3, variant="alternative", backend="cuda")
        assert "\n" not in str(err.value)
    # Nothing is left broken: the CPU and the GPU paths both still work.
    cpu = kdiff.solve(target, background, 3, backend="serial")
    gpu = kdiff.solve(target, background, 3, variant="alternative", backend="cuda")
    assert cpu.candidates == gpu.candidates


@pytest.mark.parametrize("kwargs,message", [
    ({"variant": "conventional", "flags": {"opt1"}}, "opt1 of conventional/cuda needs opt4"),
    ({"variant": "conventional", "flags": {"opt5", "opt3"}}, "opt5 of conventional/cuda needs opt4"),
    ({"variant": "alternative", "flags": {"opt6", "opt5"}}, "opt6 of alternative/cuda needs opt4"),
    ({"variant": "alternative", "flags": {"opt2"}}, "does not apply"),
    ({"variant": "bitparallel", "flags": {"opt4"}}, "does not apply"),
    ({"variant": "alternative", "threads_per_block": 1}, "threads_per_block must be >= 2"),
    ({"variant": "alternative", "threads_per_block": 2048}, "threads_per_block must be <= 1024, got 2048"),
    ({"variant": "alternative", "prefetch_factor": 0}, "prefetch_factor must be >= 1"),
    ({"variant": "alternative", "prefetch_factor": 2.0}, "prefetch_factor must be an integer"),
])
def test_bad_cuda_options_raise_value_error(kwargs, message):
    with pytest.raises(ValueError, match=message):
        kdiff.make_job(load("ACGT"), load("ACGT"), 2, backend="cuda", **kwargs)


def test_threads_per_block_and_prefetch_factor_are_job_parameters():
    target = [Record("t", random_codes(np.random.default_rng(4), 12))]
    background = [Record("b", random_codes(np.random.default_rng(5), 12))]
    expected = _expected(target, background, 3, "both")
    for tpb, factor in ((2, 1), (3, 2), (8, 3)):
        job = kdiff.make_job(target, background, 3, variant="alternative", backend="cuda",
                             threads_per_block=tpb, prefetch_factor=factor)
        assert job.params["threads_per_block"] == tpb and job.params["prefetch_factor"] == factor
        got = [(c.target_id, c.start, c.end) for c in drive(kdiff.iter_solve(job)).candidates]
        assert got == expected, (tpb, factor)


def _cli(*args):
    return simulator_cli("kdiff", *args)


def test_cli_runs_cuda_and_reports_failures_in_one_line(tmp_path):
    ok = _cli("ACTG", "AGCAAG", "-k", "2", "--strands", "forward", "--backend", "cuda", "--json")
    assert ok.returncode == 0, ok.stderr
    assert '"candidates": [["literal", 1, 3], ["literal", 2, 4]]' in ok.stdout
    assert '"backend": "cuda"' in ok.stdout
    # k this large needs more shared memory for the opt4 carry than a block may have.
    target = tmp_path / "t.fa"
    target.write_text(">t\n" + "ACGT" * 1600 + "\n")
    out = tmp_path / "out.csv"
    bad = _cli(str(target), "ACGTAC", "-k", "5000", "--backend", "cuda", "--variant", "alternative",
               "-o", str(out))
    assert bad.returncode == 1
    assert len(bad.stderr.strip().splitlines()) == 1 and "shared memory" in bad.stderr
    assert "Traceback" not in bad.stderr and not out.exists()
    dep = _cli("ACGT", "ACGT", "-k", "2", "--backend", "cuda", "--variant", "conventional",
               "--opt", "opt1")
    assert dep.returncode == 2 and "needs opt4" in dep.stderr


def test_bench_cases_run_on_tiny_workloads(monkeypatch):
    """The CUDA bench plumbing (peers, agreement, rates, sweeps) on simulator-sized workloads."""
    monkeypatch.setattr(cuda_bench, "WORKLOADS", {"W2": (14, 30, 3, "forward"),
                                                  "W2s": (12, 30, 3, "forward"),
                                                  "W4": (10, 30, 2, "both"),
                                                  "W4k8": (12, 30, 3, "both")})
    monkeypatch.setattr(cuda_bench, "_profiles", {})
    monkeypatch.setattr(cuda_bench, "_found", {})
    cases = [c for c in cuda_bench.cases(None) if "CLI" not in c.name]
    names = {c.name for c in cases}
    assert "alternative/cuda+opt3+opt4+opt5+opt6 tpb=1024" in names and len(cases) == 26
    assert "bitparallel/cuda+word32 all-k" in names  # W4k8: --all-k 8 against -k 8
    assert {"bitparallel/cuda", "bitparallel/cuda+word32", "bitparallel/cuda+neighbours+word32",
            "bitparallel/cuda+neighbours+word32+word64"} <= names  # W4: none, before, after
    for ratio in cuda_bench.RATIOS:
        assert ratio.subject in names and ratio.baseline in names
    for case in cases:
        if "tpb=" in case.name or "c=" in case.name or "multicore" in case.name:
            continue  # sweeps repeat runs (with hundreds of simulated threads per block), and
            # the multicore peer only loads the parallel CPU kernels
        metrics = case.run()
        assert metrics["seconds"] is not None and metrics["agrees"] in (True, "reference"), case.name
        if "/cuda" in case.name:
            assert metrics["device"] == "CUDA simulator"


def _cuda_subsets():
    """(variant, every subset of its cuda flags) for the variants the cuda backend offers."""
    for v in kdiff.SPEC.variants:
        b = v.backend("cuda")
        if b is None:
            continue
        for n in range(len(b.flags) + 1):
            for subset in itertools.combinations(b.flags, n):
                yield v.name, frozenset(subset)


def test_every_flag_subset_is_accepted_or_refused_by_name():
    """Issue 20: each subset of a variant's cuda flags either makes a job (and is one of
    cuda_combos(), which the cases above run against the oracle) or is refused with a
    ValueError naming the flag and the requirement it lacks (BackendSpec.flag_requires)."""
    accepted, refused = [], 0
    for variant, subset in _cuda_subsets():
        missing = missing_requirements(kdiff.SPEC, variant, "cuda", subset)
        if missing:
            flag = sorted(missing)[0]
            needs = ", ".join(missing[flag])
            with pytest.raises(ValueError, match=f"flag {flag} of {variant}/cuda needs {needs}$"):
                kdiff.make_job(load("ACGT"), load("ACGT"), 2, variant=variant, backend="cuda",
                               flags=subset)
            refused += 1
            continue
        job = kdiff.make_job(load("ACGT"), load("ACGT"), 2, variant=variant, backend="cuda",
                             flags=subset)
        assert (job.variant, set(job.flags)) == (variant, set(subset))
        accepted.append((variant, subset))
    assert sorted(map(label, accepted)) == sorted(map(label, COMBOS))
    # conventional: 16 subsets, 6 with opt1 or opt5 but no opt4; alternative: 16, 4 with opt6 only;
    # bitparallel: 8, 2 with neighbours but no word32.
    assert refused == 6 + 4 + 2 and len(accepted) == len(COMBOS)


def _defaults_and_without_opt4(variant):
    b = kdiff.SPEC.variant(variant).backend("cuda")
    full = frozenset(b.default_flags)
    off = frozenset(f for f in full if f != "opt4" and "opt4" not in b.flag_requires.get(f, ()))
    return [("default", full), ("no-opt4", off)]


# Each flag set takes 63, 64 and 65 with k alternating (1, 3, 1 with the defaults; 3, 1, 3
# without opt4): every length meets both k in each variant, every flag set both k (each
# case runs ~5-10 s in the simulator: 12 cases instead of every combination's 24).
WORD_EDGE = [(v, name, flags, m, k)
             for v in ("conventional", "alternative")
             for i, (name, flags) in enumerate(_defaults_and_without_opt4(v))
             for j, m in enumerate((63, 64, 65)) for k in [(1, 3)[(i + j) % 2]]]


@pytest.mark.parametrize("variant,name,flags,m,k", WORD_EDGE,
                         ids=[f"{v}-{n}-m{m}-k{k}" for v, n, _, m, k in WORD_EDGE])
def test_word_edge_targets_of_the_matrix_variants(variant, name, flags, m, k):
    """Targets of 63, 64 and 65 symbols (a 64-bit word's edge) with a planted near-copy in a
    background of ~80 symbols, for the D and L kernels with their defaults and without tiling."""
    rng = np.random.default_rng(m * 10 + k + (variant == "alternative"))
    alpha = random_codes(rng, m, iupac_rate=0.03)
    beta = np.concatenate([random_codes(rng, 8), mutate(rng, alpha[4:m - 2], k // 2),
                           random_codes(rng, 80 - 8 - (m - 6))])
    target, background = [Record("t", alpha)], [Record("b", beta)]
    got, res = _solve(target, background, k, (variant, flags), "forward")
    assert got == _expected(target, background, k, "forward")
    assert set(res.info.flags) == set(flags)
