"""kmismatch: every variant x backend against the oracles, on generated and real DNA."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine import config, kmismatch
from engine.jobs import CancelToken, Progress
from engine.kmismatch import cpu_pmasm, driver
from engine.kmismatch.hits import HitBuffer
from engine.kmismatch.spec import SPEC
from engine.kmismatch.reference import kmismatch_reference
from engine.sequences import Record, decode, load, reverse_complement
from tests.engine.kmismatch.oracles import engine_rows, numpy_hits
from tests.strategies import WORD_EDGE_LENGTHS, codes, examples

VARIANTS = ("naive", "shift-add", "pmasm")
BACKENDS = ("serial", "multicore")
COMBOS = [(v, b) for v in VARIANTS for b in BACKENDS]
#: Pattern lengths around the packing edges: 64 // b counters a word (b = 4 at m = 12..15,
#: 5 at 16, 6 at 63, 7 at 64..127, 8 at 128..129), so several words are needed.
EDGE_LENGTHS = tuple(sorted(set(WORD_EDGE_LENGTHS) | {3, 12, 15, 16, 17, 31, 32}))


def records(arrays, prefix):
    return [Record(f"{prefix}{i}", np.asarray(a, dtype=np.uint8)) for i, a in enumerate(arrays)]


@pytest.fixture()
def small_tunables(monkeypatch):
    """Tiny blocks and chunks so that small inputs cross every boundary the kernels have."""
    monkeypatch.setattr(config, "KMISMATCH_PMASM_BLOCK", 16)
    monkeypatch.setattr(config, "KMISMATCH_MIN_CHUNK", 8)
    monkeypatch.setattr(config, "KMISMATCH_FIRST_SLICE_CELLS", {v.name: 64 for v in SPEC.variants})
    monkeypatch.setattr(config, "KMISMATCH_DENSITY_BINS", 7)


def check_counts(res, texts):
    """Hits per pattern and the density profile agree with the hits themselves."""
    h = res.hits
    assert res.pattern_hits.tolist() == np.bincount(h.pattern, minlength=len(res.pattern_ids)
                                                    ).tolist()
    for r, (profile, text) in enumerate(zip(res.density, texts)):
        width = profile.bin_width
        assert width & (width - 1) == 0 and profile.length == len(text)
        assert len(profile.counts) == -(-len(text) // width) <= config.KMISMATCH_DENSITY_BINS
        starts = h.start0[h.record == r]
        assert profile.counts.tolist() == np.bincount(starts // width,
                                                      minlength=len(profile.counts)).tolist()


# -- hand-made cases ----------------------------------------------------------------------

def test_seed_example_of_the_study():
    """Fig. 1/3 of the study: patterns {ACTG, ATCG, CACT}, text ACTTGTAC, k = 2."""
    pats = [Record(n, load(s)[0].codes)
            for n, s in (("p1", "ACTG"), ("p2", "ATCG"), ("p3", "CACT"))]
    for variant, backend in COMBOS:
        res = kmismatch.solve(pats, load("ACTTGTAC"), 2, variant=variant, backend=backend,
                              strands="forward")
        got = [(h.pattern_id, h.start, h.mismatches, h.matched) for h in res.hits]
        # The study's thread 0 reads counters 1, 3, 3 for ACTT.
        assert got == [("p1", 1, 1, "ACTT"), ("p1", 2, 2, "CTTG"), ("p2", 2, 2, "CTTG")], variant


def test_iupac_sets_intersect_and_minus_strand_coordinates():
    text = load("AACGTRNAA")  # R = A|G, N = anything
    pats = [Record("p", load("CGTA")[0].codes)]
    for variant, backend in COMBOS:
        res = kmismatch.solve(pats, text, 0, variant=variant, backend=backend)
        rows = [(h.start, h.end, h.strand, h.mismatches, h.matched) for h in res.hits]
        # CGTR holds CGTA (R = A|G); on '-' (TACG) TRNA fails only at its last symbol.
        assert rows == [(3, 6, "+", 0, "CGTR")], (variant, backend, rows)
        res = kmismatch.solve(pats, load("TTACGTT"), 0, variant=variant, backend=backend)
        assert [(h.start, h.end, h.strand, h.matched) for h in res.hits] == [(2, 5, "-", "CGTA")]


def test_pattern_longer_than_text_gives_no_hits_and_mixed_lengths_are_grouped():
    text = load("ACGTACGTAC")
    pats = [Record("long", load("ACGTACGTACGT")[0].codes), Record("short", load("GTA")[0].codes),
            Record("mid", load("CGTAC")[0].codes)]
    for variant, backend in COMBOS:
        res = kmismatch.solve(pats, text, 0, variant=variant, backend=backend, strands="forward")
        assert [(h.pattern_id, h.start) for h in res.hits] == [
            ("mid", 2), ("short", 3), ("mid", 6), ("short", 7)]
        expected = numpy_hits([text[0].codes], [p.codes for p in pats], 0, "forward")
        assert engine_rows(res) == expected
        assert res.pattern_hits.tolist() == [0, 2, 2]


def test_k_at_least_m_reports_every_window_with_its_distance():
    text = load("ACGTTGCA")
    pats = [Record("p", load("GGG")[0].codes)]
    expected = numpy_hits([text[0].codes], [pats[0].codes], 5, "both")
    assert len(expected) == 2 * 6
    for variant, backend in COMBOS:
        res = kmismatch.solve(pats, text, 5, variant=variant, backend=backend)
        assert engine_rows(res) == expected


def test_make_job_rejects_bad_arguments():
    text, pats = load("ACGT"), load("AC")
    with pytest.raises(ValueError, match="k must be >= 0"):
        kmismatch.make_job(pats, text, -1)
    with pytest.raises(ValueError, match="integer"):
        kmismatch.make_job(pats, text, 1.5)
    with pytest.raises(ValueError, match="empty pattern set"):
        kmismatch.make_job([], text, 1)
    with pytest.raises(ValueError, match="no text"):
        kmismatch.make_job(pats, [], 1)
    with pytest.raises(ValueError, match="strands"):
        kmismatch.make_job(pats, text, 1, strands="reverse")
    with pytest.raises(ValueError, match="variant"):
        kmismatch.make_job(pats, text, 1, variant="bitap")
    with pytest.raises(ValueError, match="cuda"):
        kmismatch.make_job(pats, text, 1, backend="cuda")


# -- generated inputs ---------------------------------------------------------------------

@st.composite
def problems(draw, max_text=160, max_patterns=12, lengths=EDGE_LENGTHS):
    iupac = draw(st.booleans())
    texts = draw(st.lists(codes(1, max_text, iupac=iupac), min_size=1, max_size=3))
    n_pat = draw(st.integers(1, max_patterns))
    pats = []
    for _ in range(n_pat):
        m = draw(st.sampled_from(lengths))
        if draw(st.booleans()) and len(texts[0]) >= m:
            # A window of the text, so that hits with few mismatches are common.
            at = draw(st.integers(0, len(texts[0]) - m))
            pats.append(texts[0][at:at + m].copy())
        else:
            pats.append(draw(codes(m, m, iupac=iupac)))
    k = draw(st.sampled_from([0, 1, 2, 3, 5, 8, 13, 40, 200]))
    strands = draw(st.sampled_from(["both", "forward"]))
    return texts, pats, k, strands


@settings(max_examples=examples(40))
@given(problems(max_text=60, max_patterns=4, lengths=(1, 2, 3, 5, 12, 16, 17)))
def test_python_oracle_agrees_with_numpy_oracle(problem):
    texts, pats, k, strands = problem
    assert kmismatch_reference(texts, pats, k, strands) == numpy_hits(texts, pats, k, strands)


@settings(max_examples=examples(50))
@given(problems())
def test_every_variant_and_backend_equals_the_oracle(problem):
    texts, pats, k, strands = problem
    expected = numpy_hits(texts, pats, k, strands)
    text_recs, pat_recs = records(texts, "t"), records(pats, "p")
    for variant, backend in COMBOS:
        res = kmismatch.solve(pat_recs, text_recs, k, variant=variant, backend=backend,
                              strands=strands)
        assert engine_rows(res) == expected, (variant, backend)
        check_counts(res, texts)
        assert res.info.complete and res.scanned == sum(len(t) for t in texts)


@settings(max_examples=examples(25), suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(problem=problems(max_text=120, max_patterns=12))
def test_small_blocks_chunks_and_slices_change_nothing(small_tunables, problem):
    texts, pats, k, strands = problem
    expected = numpy_hits(texts, pats, k, strands)
    for variant, backend in COMBOS:
        res = kmismatch.solve(records(pats, "p"), records(texts, "t"), k, variant=variant,
                              backend=backend, strands=strands, threads=2)
        assert engine_rows(res) == expected, (variant, backend)
        check_counts(res, texts)


@settings(max_examples=examples(20), suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(problem=problems(max_text=100, max_patterns=6), budget_exp=st.integers(0, 3))
def test_pmasm_with_a_small_lookup_memory(monkeypatch, problem, budget_exp):
    """A tight memory budget groups fewer levels per table (down to one level, 16 symbols)."""
    monkeypatch.setattr(config, "KMISMATCH_TABLE_BYTES", 256 << (4 * budget_exp))
    texts, pats, k, strands = problem
    res = kmismatch.solve(records(pats, "p"), records(texts, "t"), k, variant="pmasm",
                          backend="serial", strands=strands)
    assert engine_rows(res) == numpy_hits(texts, pats, k, strands)


@pytest.mark.parametrize("m", [12, 15, 16, 63, 64, 65, 127, 128, 129])
@pytest.mark.parametrize("n_patterns", [4, 9, 17])
def test_several_counter_words(m, n_patterns):
    """R * b > 64 (pmasm) and m * b > 64 (shift-add) on both strands, IUPAC in the text."""
    rng = np.random.default_rng(m * 100 + n_patterns)
    text = rng.choice(np.array([1, 2, 4, 8], np.uint8), 700)
    text[rng.random(700) < 0.05] = 15
    pats = []
    for i in range(n_patterns):
        at = int(rng.integers(0, 700 - m))
        pat = text[at:at + m].copy()
        flips = rng.random(m) < 0.08
        pat[flips] = rng.choice(np.array([1, 2, 4, 8], np.uint8), flips.sum())
        pats.append(reverse_complement(pat) if i % 3 == 0 else pat)
    k = max(1, m // 10)
    model = driver.build_model("pmasm", np.array(pats + [reverse_complement(p) for p in pats]), k)
    assert model.prm[5] == -(-2 * n_patterns // (64 // cpu_pmasm.counter_bits(m)))
    expected = numpy_hits([text], pats, k, "both")
    for variant, backend in COMBOS:
        res = kmismatch.solve(records(pats, "p"), records([text], "t"), k, variant=variant,
                              backend=backend)
        assert engine_rows(res) == expected, (variant, backend)


@pytest.mark.parametrize("m", [5, 12, 13, 20])
def test_pmasm_switches_memories_between_plain_and_iupac_blocks(m, small_tunables):
    """Blocks of plain A/C/G/T read the 2-bit memory, blocks with an N or R the 4-bit one."""
    rng = np.random.default_rng(m)
    text = rng.choice(np.array([1, 2, 4, 8], np.uint8), 900)
    text[rng.choice(900, 6, replace=False)] = [15, 5, 15, 10, 15, 6]
    pats = [text[at:at + m].copy() for at in rng.integers(0, 900 - m, 5)]
    pats.append(np.full(m, 15, np.uint8))  # all N: hits everywhere
    expected = numpy_hits([text], pats, 2, "both")
    for backend in BACKENDS:
        res = kmismatch.solve(records(pats, "p"), records([text], "t"), 2, variant="pmasm",
                              backend=backend, threads=2)
        assert engine_rows(res) == expected


def test_a_full_hit_buffer_is_resumed_where_it_stopped():
    rng = np.random.default_rng(5)
    text = rng.choice(np.array([1, 2, 4, 8], np.uint8), 3000)
    pats = np.array([text[10:22], text[500:512], text[7:19]])
    expected = numpy_hits([text], list(pats), 6, "forward")
    for variant in VARIANTS:
        model = driver.build_model(variant, pats, 6)
        for backend in BACKENDS:
            los, his = np.array([0, 1000, 2000]), np.array([1000, 2000, 3000 - 11])
            out = HitBuffer()
            out.append(np.array([7]), np.array([0]), np.array([0]))  # hits already in stay
            counts = driver.Counts([len(text)], 3, 64)
            assert driver.scan(model, text, los, his, backend, np.zeros(1, np.uint8), out,
                               0.0, counts) == len(expected)
            assert counts.bins.sum() == counts.pattern_hits.sum() == len(expected)
            pos, slot, mis = (col[1:len(out)] for col in out.columns)
            assert out.columns[0][0] == 7
            got = sorted(zip([0] * len(pos), pos.tolist(), slot.tolist(), [0] * len(pos),
                             mis.tolist()))
            assert got == expected
            assert np.all(np.diff(pos) >= 0)


# -- real DNA ----------------------------------------------------------------------------

def _real_patterns(lambda_record, ecoli_record, rng):
    """Windows of lambda and mutated windows of E. coli (so there are close hits)."""
    pats = []
    for i in range(10):
        m = int(rng.choice([12, 16, 20, 25]))
        at = int(rng.integers(0, len(lambda_record) - m))
        pats.append(Record(f"lambda{i}", lambda_record.codes[at:at + m].copy()))
    for i in range(6):
        m = int(rng.choice([12, 18, 30]))
        at = int(rng.integers(0, 60_000 - m))
        pat = ecoli_record.codes[at:at + m].copy()
        hit = rng.integers(0, m, 2)
        pat[hit] = rng.choice(np.array([1, 2, 4, 8], np.uint8), 2)
        pats.append(Record(f"ecoli{i}", reverse_complement(pat) if i % 2 else pat))
    return pats


@pytest.mark.slow
def test_real_dna_all_variants_equal_the_numpy_oracle(lambda_record, ecoli_record):
    rng = np.random.default_rng(11)
    pats = _real_patterns(lambda_record, ecoli_record, rng)
    text = [ecoli_record.slice(0, 60_000), ecoli_record.slice(1_000_000, 1_040_000)]
    for k in (2, 4):
        expected = numpy_hits([t.codes for t in text], [p.codes for p in pats], k, "both")
        assert any(row[3] == 1 for row in expected) and any(row[3] == 0 for row in expected)
        for variant, backend in COMBOS:
            res = kmismatch.solve(pats, text, k, variant=variant, backend=backend, threads=2)
            assert engine_rows(res) == expected, (variant, backend, k)


def test_real_dna_matched_text_and_coordinates(lambda_record, ecoli_record):
    rng = np.random.default_rng(2)
    pats = _real_patterns(lambda_record, ecoli_record, rng)
    text = [ecoli_record.slice(0, 60_000)]
    res = kmismatch.solve(pats, text, 3, variant="pmasm", backend="multicore")
    assert len(res.hits) > 0
    seq = text[0].codes
    matched = res.hits.matched()
    for i in range(len(res.hits)):
        hit = res.hits[i]
        window = seq[hit.start - 1:hit.end]
        on_strand = window if hit.strand == "+" else reverse_complement(window)
        assert hit.matched == matched[i] == decode(on_strand)
        pattern = pats[res.pattern_ids.index(hit.pattern_id)].codes
        assert int(np.sum((pattern & on_strand) == 0)) == hit.mismatches <= 3
    assert res.pattern_hits.sum() == len(res.hits)
    assert res.pattern_hits.tolist() == np.bincount(res.hits.pattern, minlength=len(pats)).tolist()
    (profile,) = res.density
    assert profile.counts.tolist() == np.bincount(res.hits.start0 // profile.bin_width,
                                                  minlength=len(profile.counts)).tolist()


# -- jobs: progress, partial results, cancellation, profile -------------------------------

def test_iter_solve_progress_partial_and_density(ecoli_record, monkeypatch):
    monkeypatch.setattr(config, "KMISMATCH_FIRST_SLICE_CELLS",
                        {v.name: 4096 * 16 for v in SPEC.variants})
    monkeypatch.setattr(config, "KMISMATCH_DENSITY_BINS", 100)
    text = [ecoli_record.slice(0, 150_000), ecoli_record.slice(200_000, 230_000)]
    pats = [ecoli_record.slice(5000, 5012), ecoli_record.slice(9000, 9014)]
    job = kmismatch.make_job(pats, text, 4, variant="shift-add", backend="serial")
    gen = kmismatch.iter_solve(job)
    seen = []
    while True:
        try:
            seen.append(next(gen))
        except StopIteration as stop:
            result = stop.value
            break
    running = [p for p in seen if p.phase == "running"]
    assert len(running) >= 2
    assert [p.done for p in running] == sorted(p.done for p in running)
    assert running[-1].done == running[-1].total == 180_000
    assert running[-1].cells == 180_000 * 4 - 2 * (11 + 13) * 2
    lengths = [len(p.partial) for p in running]
    assert lengths == sorted(lengths) and lengths[-1] == len(result.hits)
    first = running[0].partial
    assert engine_rows_prefix(first) == engine_rows(result)[:len(first)]
    assert result.info.complete and result.info.cells == running[-1].cells
    assert [d.record_id for d in result.density] == [t.id for t in text]
    d0 = result.density[0]
    assert d0.bin_width == 2048 and d0.counts.shape == (74,)  # <= 100 bins, power-of-two width
    assert sum(int(d.counts.sum()) for d in result.density) == len(result.hits)
    expected0 = np.bincount(result.hits.start0[result.hits.record == 0] // 2048, minlength=74)
    assert d0.counts.tolist() == expected0.tolist()


def engine_rows_prefix(table):
    return list(zip(table.record.tolist(), table.start0.tolist(), table.pattern.tolist(),
                    table.strand.tolist(), table.mismatches.tolist()))


@pytest.mark.parametrize("backend", BACKENDS)
def test_cancel_keeps_the_hits_of_finished_slices(ecoli_record, monkeypatch, backend):
    monkeypatch.setattr(config, "KMISMATCH_FIRST_SLICE_CELLS", {v.name: 20_000 for v in SPEC.variants})
    text = [ecoli_record.slice(0, 400_000)]
    pats = [ecoli_record.slice(1000 * i, 1000 * i + 15) for i in range(1, 5)]
    cancel = CancelToken()
    job = kmismatch.make_job(pats, text, 5, variant="naive", backend=backend)
    gen = kmismatch.iter_solve(job, cancel)
    progress = next(gen)
    while progress.phase != "running":
        progress = next(gen)
    cancel.cancel()
    with pytest.raises(StopIteration) as stop:
        next(gen)
    result = stop.value.value
    assert not result.info.complete
    assert 0 < result.scanned < 400_000
    full = numpy_hits([text[0].codes[:result.scanned + 14]], [p.codes for p in pats], 5)
    assert engine_rows(result) == [row for row in full if row[1] < result.scanned]


def test_cancel_flag_stops_a_kernel_inside_a_slice():
    rng = np.random.default_rng(1)
    text = rng.choice(np.array([1, 2, 4, 8], np.uint8), 50_000)
    model = driver.build_model("pmasm", np.array([text[:12]]), 2)
    abort = np.ones(1, np.uint8)
    for backend in BACKENDS:
        out = HitBuffer()
        out.append(np.array([7]), np.array([0]), np.array([0]))
        assert driver.scan(model, text, np.array([0, 20_000]), np.array([20_000, 40_000]),
                           backend, abort, out, 0.1, driver.Counts([50_000], 1, 8)) is None
        assert len(out) == 1


def test_progress_type_and_partial_is_a_hit_table():
    res_gen = kmismatch.iter_solve(kmismatch.make_job(load("CGT"), load("ACGTACGTAA"), 0,
                                                      backend="serial"))
    items = list(_drain(res_gen))
    assert all(isinstance(p, Progress) for p in items[:-1])
    last = [p for p in items[:-1] if p.phase == "running"][-1]
    assert isinstance(last.partial, kmismatch.HitTable)
    hits = items[-1].hits
    # CGT at 2 and 6; its reverse complement ACG at 1 and 5 (reported on '-').
    assert [(h.start, h.strand, h.matched) for h in hits] == [
        (1, "-", "CGT"), (2, "+", "CGT"), (5, "-", "CGT"), (6, "+", "CGT")]


def _drain(gen):
    while True:
        try:
            yield next(gen)
        except StopIteration as stop:
            yield stop.value
            return
