"""``kdiff --all-k K`` (issue #33): at every k <= K the landscape's candidates are what the
oracle (and a separate kdiff run at that k) gives, on every CPU variant and form that
takes it; the others refuse by name; the bedGraph tracks read back to the same lengths."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine import kdiff
from engine.kdiff.landscape_table import Landscape, have_pybigwig
from engine.sequences import Record, load
from tests.engine.gap_cases import gapped, kdiff_expected, planted
from tests.engine.kdiff.combos import all_combos, label
from tests.engine.kdiff.counter_model import COUNTER_COLUMNS, COUNTER_STARTS, replay_counters
from tests.strategies import examples, mutate, random_codes

#: the forms --all-k runs on: every CPU variant's serial and coarse forms, all flags
ALL_K = [c for c in all_combos() if c[2] in (None, "coarse")]
HEALTH = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.function_scoped_fixture]


def _rows(cands):
    return sorted((c.target_id, c.start, c.end) for c in cands)


def _landscape(target, background, K, combo, **options):
    v, b, p, f = combo
    res = kdiff.solve(target, background, K, variant=v, backend=b, parallel=p, flags=f,
                      all_k=True, **options)
    assert res.info.complete
    return res


def test_the_forms_that_take_it():
    names = {label(c) for c in ALL_K}
    assert {"bitparallel/serial+simd", "bitparallel/multicore/coarse+simd",
            "conventional/serial+opt1", "alternative/multicore/coarse+opt2"} <= names


@given(data=st.data(), K=st.integers(1, 6), gap_min=st.integers(5, 10),
       strands=st.sampled_from(["both", "forward"]), combo=st.sampled_from(ALL_K))
@settings(max_examples=examples(60), deadline=None, suppress_health_check=HEALTH)
def test_every_k_equals_the_oracle(data, K, gap_min, strands, combo):
    """IUPAC codes, short N runs, assembly gaps in both inputs, one or two records each."""
    background = data.draw(gapped(gap_min, piece_len=(0, 50)))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    targets = [planted(rng, background, data.draw(st.integers(1, 40)))
               for _ in range(data.draw(st.integers(1, 2)))]
    if data.draw(st.booleans()):  # a gap in the first target too
        at = int(rng.integers(0, targets[0].size + 1))
        targets[0] = np.concatenate([targets[0][:at], np.full(gap_min, 15, np.uint8),
                                     targets[0][at:]])
    t = [Record(f"t{i}", codes) for i, codes in enumerate(targets)]
    b = [Record("b", background)]
    if data.draw(st.booleans()):  # a second background record
        b.append(Record("b2", data.draw(gapped(gap_min, pieces=(1, 2), piece_len=(1, 30)))))
    res = _landscape(t, b, K, combo, strands=strands, gap_min=gap_min)
    land = res.landscape
    assert land.k == list(range(1, K + 1))
    assert len(land) == sum(len(x) for x in targets)  # a row for every start
    for k in land.k:
        assert _rows(land.candidates(k)) == kdiff_expected(t, b, k, gap_min, strands), \
            f"{label(combo)} at k={k} of {K}"
    assert _rows(res.candidates) == _rows(land.candidates(K))


@pytest.mark.parametrize("combo", [c for c in ALL_K if c[0] == "bitparallel"], ids=label)
def test_real_data_equals_separate_runs(lambda_record, ecoli_record, combo):
    """lambda against 60 kb of E. coli 536, both strands: each k as its own run."""
    target = [lambda_record.slice(20_000, 20_600)]
    background = [ecoli_record.slice(0, 60_000)]
    K = 5
    land = _landscape(target, background, K, combo).landscape
    v, b, p, f = combo
    for k in range(1, K + 1):
        alone = kdiff.solve(target, background, k, variant=v, backend=b, parallel=p, flags=f)
        assert _rows(land.candidates(k)) == _rows(alone.candidates), f"k={k}"
        assert len(alone.candidates) > 0
    # lengths grow with k where a start has a candidate at both
    lens = land.lengths
    both = (lens[:, :-1] > 0) & (lens[:, 1:] > 0)
    assert np.all(lens[:, 1:][both] >= lens[:, :-1][both])


@pytest.mark.parametrize("combo", [c for c in ALL_K if c[0] != "bitparallel"], ids=label)
def test_real_data_row_and_diagonal_variants(msx2_records, combo):
    target = [msx2_records[0].slice(100, 160)]
    background = [msx2_records[3].slice(80, 300), msx2_records[6].slice(0, 120)]
    land = _landscape(target, background, 4, combo).landscape
    for k in range(1, 5):
        alone = kdiff.solve(target, background, k, backend="serial")
        assert _rows(land.candidates(k)) == _rows(alone.candidates), f"k={k}"


@pytest.mark.parametrize("options, message", [
    ({"backend": "cuda", "variant": "alternative"},
     "kdiff --all-k does not run with --variant alternative on the cuda backend"),
    ({"backend": "cuda", "flags": {"word32", "neighbours"}},
     "kdiff --all-k does not run with the neighbours flag"),
    ({"backend": "multicore", "variant": "conventional", "parallel": "fine"},
     "kdiff --all-k does not run with --parallel fine"),
])
def test_refusals_name_what_cannot(monkeypatch, options, message):
    from engine import registry

    monkeypatch.setenv("NUMBA_ENABLE_CUDASIM", "1")  # (so that cuda is a backend here)
    registry.backend_status.cache_clear()  # (an earlier test may have asked without it)
    try:
        with pytest.raises(ValueError, match=message.replace("-", r"\-")):
            kdiff.make_job(load("ACGT"), load("ACGA"), 2, all_k=True, **options)
    finally:
        registry.backend_status.cache_clear()  # (the next asker sees the real machine)


def test_cuda_defaults_drop_neighbours(monkeypatch):
    """Without --opt, cuda's --all-k runs bitparallel with its default flags but neighbours."""
    from engine import registry

    monkeypatch.setenv("NUMBA_ENABLE_CUDASIM", "1")  # (so that cuda is a backend here)
    registry.backend_status.cache_clear()
    try:
        job = kdiff.make_job(load("ACGT"), load("ACGA"), 2, all_k=True, backend="cuda")
        plain = kdiff.make_job(load("ACGT"), load("ACGA"), 2, backend="cuda")
    finally:
        registry.backend_status.cache_clear()
    assert job.variant == "bitparallel" and "neighbours" in plain.flags
    assert set(job.flags) == set(plain.flags) - {"neighbours"}


def test_dask_gpu_workers_run_all_k_on_cuda_without_neighbours(monkeypatch):
    """A Dask --all-k job hands GPU workers bitparallel on CUDA with cuda's default flags but
    neighbours (bounds on one k), as make_job does for a cuda job; a one-k job keeps them,
    and CPU workers keep the job's own. (cuda_sim_bitparallel.py runs such tasks.)"""
    from engine import config, registry
    from engine.kdiff.problem import ScanProblem

    pytest.importorskip("distributed")
    monkeypatch.setenv("NUMBA_ENABLE_CUDASIM", "1")  # (so that cuda is a backend here)
    registry.backend_status.cache_clear()
    try:
        job = kdiff.make_job(load("ACGT"), load("ACGA"), 2, all_k=True, backend="dask")
        cuda = kdiff.make_job(load("ACGT"), load("ACGA"), 2, all_k=True, backend="cuda")
        plain = kdiff.make_job(load("ACGT"), load("ACGA"), 2, backend="dask")
    finally:
        registry.backend_status.cache_clear()
    problem = ScanProblem(job)
    worker = problem.worker_job(gpu=True)
    assert (worker.variant, worker.backend) == ("bitparallel", "cuda")
    assert worker.flags == cuda.flags and "neighbours" not in worker.flags
    assert worker.params["all_k"] and "scheduler" not in worker.params
    kdiff._check_all_k(worker)  # a selection --all-k runs on
    problem.tasks([])
    assert problem._granule == config.CLUSTER_GPU_STARTS  # ranges sized for a GPU's launch
    assert "neighbours" in ScanProblem(plain).worker_job(gpu=True).flags
    cpu = ScanProblem(job).worker_job(gpu=False)
    assert (cpu.backend, cpu.flags) == ("multicore", job.flags)


def test_simd_levels_settles_counted_alike_serial_and_multicore():
    """The simd lanes count each settle of a lower level in the comparisons; the threaded
    groups once left theirs out (0 on multicore, thousands serial). (The counts need not
    be equal: the slices, sized by time, cut the starts into other lane groups.)"""
    rng = np.random.default_rng(1)
    target = random_codes(rng, 400)
    background = random_codes(rng, 3000)
    background[100:400] = target[50:350]  # shared stretches: the levels settle often
    got = {}
    for backend, parallel in (("serial", None), ("multicore", "coarse")):
        res = kdiff.solve([Record("t", target)], [Record("b", background)], 3, all_k=True,
                          variant="bitparallel", backend=backend, parallel=parallel,
                          flags=("simd",))
        got[backend] = res.info.comparisons
    assert got["serial"] > 0 and got["multicore"] > 0, got


def test_to_pandas_and_rows():
    land = kdiff.landscape(load("ACTG"), load("AGCAAG"), 2, strands="forward", backend="serial")
    # k=1: AC, CT and T are absent from AGCAAG, G occurs; k=2: the seed example's ACT, CTG
    assert land.rows() == [["literal", 1, 2, 3], ["literal", 2, 2, 3], ["literal", 3, 1, None],
                           ["literal", 4, None, None]]
    frame = land.to_pandas()
    assert list(frame.columns) == ["target_id", "start", "len_k1", "len_k2"]
    assert frame["len_k2"].isna().tolist() == [False, False, True, True]
    assert frame["len_k2"].dtype.name == "Int32"


def _read_bedgraph(text):
    lines = text.splitlines()
    assert lines[0].startswith("track type=bedGraph ")
    return [(c, int(a), int(b), int(v)) for c, a, b, v in (ln.split("\t") for ln in lines[1:])]


def test_bedgraph_round_trip(lambda_record, ecoli_record, tmp_path):
    """Two records, one loaded as a region (genome coordinates: its offset added)."""
    t2 = lambda_record.region(30_000, 30_300)
    target = [Record("zeta", lambda_record.slice(20_000, 20_400).codes), t2]
    land = kdiff.landscape(target, [ecoli_record.slice(0, 50_000)], 4, backend="serial")
    for k in land.k:
        rows = _read_bedgraph(land.bedgraph_text(k))
        assert rows
        # sorted by name then start, half-open, non-overlapping
        assert rows == sorted(rows, key=lambda r: (r[0], r[1]))
        for (c1, a1, b1, _), (c2, a2, _, _) in zip(rows, rows[1:]):
            assert a1 < b1 and (c1 != c2 or b1 <= a2)
        # every base of an interval is one start with that length; the rest have none
        back = {}
        for c, a, b, v in rows:
            for p in range(a, b):
                back[(c, p)] = v
        want = {}
        lens = land.length_at(k)
        for i, (t, s0) in enumerate(zip(land.target.tolist(), land.start0.tolist())):
            if lens[i]:
                want[(land.target_ids[t], s0 + target[t].offset)] = int(lens[i])
        assert back == want
    files = land.bedgraph_files(str(tmp_path / "x"))
    assert sorted(files) == [str(tmp_path / f"x.k{k}.bedGraph") for k in (1, 2, 3, 4)]
    assert t2.offset > 0 and any(r[0] == t2.id and r[1] >= t2.offset
                                 for r in _read_bedgraph(files[str(tmp_path / "x.k4.bedGraph")]))


@pytest.mark.skipif(not have_pybigwig(), reason="pyBigWig is not installed (optional extra)")
def test_bigwig_reads_back_equal(lambda_record, ecoli_record, tmp_path):
    import pyBigWig

    land = kdiff.landscape([lambda_record.slice(20_000, 20_300)], [ecoli_record.slice(0, 30_000)],
                           3, backend="serial")
    paths = land.write_bigwigs(str(tmp_path / "x"))
    for k, path in zip(land.k, paths):
        bw = pyBigWig.open(path)
        got = [(c, a, b, int(v)) for c in bw.chroms() for a, b, v in (bw.intervals(c) or [])]
        bw.close()
        assert got == _read_bedgraph(land.bedgraph_text(k))


def test_landscape_is_columnar():
    land = Landscape(np.array([0, 0]), np.array([0, 1]), np.array([[2, 3], [0, 3]]),
                     target_ids=("a",), texts=(np.array([1, 2, 4, 8], np.uint8),))
    assert land.start.tolist() == [1, 2]
    assert [c.sequence for c in land.candidates(1)] == ["AC"]
    assert [c.sequence for c in land.candidates(2)] == ["ACG", "CGT"]


def test_avoid_masked_drops_each_ks_masked_candidates(lambda_record, ecoli_record, tmp_path):
    """A soft-masked stretch in the target: at every k, what a run at that k keeps."""
    from engine.sequences import decode

    text = decode(lambda_record.slice(20_000, 20_400).codes)
    text = text[:150] + text[150:260].lower() + text[260:]
    (tmp_path / "t.fa").write_text(">t\n" + text + "\n")
    target = load(tmp_path / "t.fa")
    assert target[0].soft_mask is not None
    background = [ecoli_record.slice(0, 40_000)]
    land = kdiff.landscape(target, background, 4, backend="serial", avoid_masked=True)
    dropped = 0
    for k in land.k:
        alone = kdiff.solve(target, background, k, backend="serial", avoid_masked=True)
        plain = kdiff.solve(target, background, k, backend="serial")
        assert _rows(land.candidates(k)) == _rows(alone.candidates), k
        dropped += len(plain.candidates) - len(alone.candidates)
    assert dropped > 0


#: the bitparallel forms, whose levels come from counters of D - M (the simd lanes:
#: engine/kdiff/cpu_lanes.py; the blocked kernel, a word per 64 rows: cpu_bitparallel.py)
COUNTER_FORMS = [c for c in ALL_K if c[0] == "bitparallel"]


@given(data=st.data(), K=st.integers(1, 9), gap_min=st.integers(5, 10),
       strands=st.sampled_from(["both", "forward"]), combo=st.sampled_from(COUNTER_FORMS))
@settings(max_examples=examples(25), deadline=None, suppress_health_check=HEALTH)
def test_counters_every_k_equals_separate_runs_across_word_edges(data, K, gap_min, strands,
                                                                 combo):
    """Near copies of 31-33, 63-65 and 127-129 target bases in the background (candidates on
    the 32- and 64-bit word edges, each width's lanes and the blocked tail, and on the
    blocked kernel's block edges, blocks grown and dropped), IUPAC codes, gaps, several
    records, k = 1 and K past a short target: each k as its own run."""
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    background = data.draw(gapped(gap_min, pieces=(1, 3), piece_len=(10, 60)))
    size = data.draw(st.sampled_from((31, 32, 33, 63, 64, 65, 127, 128, 129)))
    long_target = random_codes(rng, data.draw(st.integers(max(63, size + 2), size + 32)),
                               iupac_rate=0.03)
    copy = long_target[2:2 + size]
    background = np.concatenate([background, mutate(rng, copy, data.draw(st.integers(0, 2))),
                                 random_codes(rng, 20)])
    targets = [long_target, planted(rng, background, data.draw(st.integers(1, 30)))]
    if data.draw(st.booleans()):  # a target shorter than K
        targets.append(random_codes(rng, data.draw(st.integers(1, 4))))
    t = [Record(f"t{i}", codes) for i, codes in enumerate(targets)]
    b = [Record("b", background), Record("b2", random_codes(rng, 40, iupac_rate=0.05))]
    res = _landscape(t, b, K, combo, strands=strands, gap_min=gap_min)
    v, be, p, f = combo
    for k in res.landscape.k:
        alone = kdiff.solve(t, b, k, variant=v, backend=be, parallel=p, flags=f,
                            strands=strands, gap_min=gap_min)
        assert _rows(res.landscape.candidates(k)) == _rows(alone.candidates), \
            f"{label(combo)} at k={k} of {K}"


@given(start=COUNTER_STARTS, deltas=COUNTER_COLUMNS)
@settings(max_examples=examples(200), deadline=None)
def test_counters_hold_at_their_top_and_flag_only_a_fall_at_zero(start, deltas):
    """The simd lanes' and blocked kernel's bit-sliced counters of e = D - M against a plain
    model (tests/engine/kdiff/counter_model.py): held at 15, not wrapped (a wrapped counter
    flagged the lane at the next -1, which settled 64-bit lanes hundreds of times too
    often), and a row flagged exactly when its counter is 0 and its delta -1."""
    from engine.kdiff.cpu_lanes import counter_step

    replay_counters(counter_step, start, deltas)
