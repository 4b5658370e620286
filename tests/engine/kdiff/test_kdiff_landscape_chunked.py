"""``kdiff --all-k K`` (issue #33) over the chunked plumbing (engine/kdiff/problem.py): a
streamed background cut into tiny chunks, so that chunk edges cut matches, and Dask tasks
on a 2-worker LocalCluster. At every k <= K the landscape equals the oracle and a
separate run at that k: hypothesis inputs (IUPAC, gaps, several records, both strands),
targets of 63, 64 and 65 bases (the word edges), k = 1, K longer than the target, and
real data."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine import config, kdiff
from engine.sequences import Record
from tests.engine.gap_cases import gapped, kdiff_expected, planted
from tests.engine.kdiff.combos import all_combos, label
from tests.strategies import examples

#: the forms --all-k runs on (as in test_kdiff_landscape)
ALL_K = [c for c in all_combos() if c[2] in (None, "coarse")]
HEALTH = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.function_scoped_fixture]
CHUNK = 40  # bases a chunk owns: many edges in a small background
SIMD = ("bitparallel", "serial", None, frozenset({"simd"}))


def _rows(cands):
    return sorted((c.target_id, c.start, c.end) for c in cands)


@pytest.fixture
def streamed(monkeypatch):
    """Nothing fits in memory: every background runs as chunks of CHUNK bases."""
    monkeypatch.setattr(config, "STREAM_MEMORY_BASES", 1)
    monkeypatch.setattr(config, "STREAM_CHUNK_BASES", CHUNK)
    monkeypatch.setattr(config, "STREAM_OVERLAP_RATIO", 1)


def _solve(target, background, K, combo, **options):
    v, b, p, f = combo
    res = kdiff.solve(target, background, K, variant=v, backend=b, parallel=p, flags=f,
                      all_k=True, **options)
    assert res.info.complete
    return res


def _check_every_k(res, target, background, K, gap_min, strands):
    land = res.landscape
    assert land.k == list(range(1, K + 1))
    assert len(land) == sum(len(t) for t in target)  # a row for every start
    for k in land.k:
        assert _rows(land.candidates(k)) == kdiff_expected(target, background, k, gap_min,
                                                           strands), f"k={k} of {K}"
    assert _rows(res.candidates) == _rows(land.candidates(K))


@st.composite
def _case(draw):
    gap_min = draw(st.integers(5, 10))
    background = draw(gapped(gap_min, piece_len=(0, 60)))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    target = [Record(f"t{i}", planted(rng, background, draw(st.integers(1, 40))))
              for i in range(draw(st.integers(1, 2)))]
    records = [Record("b", background)]
    if draw(st.booleans()):  # a second background record
        records.append(Record("b2", draw(gapped(gap_min, pieces=(1, 2), piece_len=(1, 30)))))
    return target, records, gap_min


@given(case=_case(), K=st.integers(1, 6), strands=st.sampled_from(["both", "forward"]),
       combo=st.sampled_from(ALL_K))
@settings(max_examples=examples(20), deadline=None, suppress_health_check=HEALTH)
def test_streamed_every_k_equals_the_oracle(streamed, case, K, strands, combo):
    target, background, gap_min = case
    res = _solve(target, background, K, combo, strands=strands, gap_min=gap_min)
    _check_every_k(res, target, background, K, gap_min, strands)


def _word_edge_case():
    """Targets of 63, 64 and 65 bases (IUPAC codes among them) planted with substitutions
    and an indel in a background of two records."""
    rng = np.random.default_rng(64)
    bases = np.array([1, 2, 4, 8], dtype=np.uint8)
    texts = [bases[rng.integers(0, 4, n)] for n in (300, 170)]
    targets = []
    for i, n in enumerate((63, 64, 65)):
        at = int(rng.integers(0, 300 - n))
        t = texts[0][at:at + n].copy() if i != 1 else texts[1][40:40 + n].copy()
        t[rng.integers(0, n, 3)] = bases[rng.integers(0, 4, 3)]
        t[int(rng.integers(0, n))] = int(rng.integers(1, 16))  # an IUPAC code
        targets.append(np.delete(t, int(rng.integers(0, n))) if i == 2 else t)
    targets[2] = np.append(targets[2], bases[rng.integers(0, 4, 1)])  # back to 65
    return ([Record(f"t{len(t)}", t) for t in targets],
            [Record(f"b{i}", t) for i, t in enumerate(texts)])


def _short_case():
    """Targets shorter than K (5 and 3 bases, one with an IUPAC code) against a background
    that holds one of them within an edit."""
    target = [Record("t5", np.array([1, 2, 4, 8, 2], np.uint8)),
              Record("t3", np.array([8, 5, 1], np.uint8))]
    return target, [Record("b", np.array([4, 4, 1, 2, 8, 8, 2, 1, 1, 4, 8, 2], np.uint8))]


@pytest.mark.parametrize("combo", [SIMD, ("bitparallel", "multicore", "coarse", frozenset()),
                                   ("alternative", "serial", None, frozenset({"opt2"}))],
                         ids=label)
def test_streamed_word_edges_k1_and_k_past_the_target(streamed, combo):
    target, background = _word_edge_case()
    assert [len(t) for t in target] == [63, 64, 65]
    for K in (1, 2):
        _check_every_k(_solve(target, background, K, combo), target, background, K, 10, "both")
    target, background = _short_case()
    _check_every_k(_solve(target, background, 7, combo), target, background, 7, 10, "both")


def test_streamed_real_data_equals_separate_runs(lambda_record, ecoli_record, monkeypatch):
    """lambda against 24 kb of E. coli 536 in chunks of 3 kb: each k as its own run on the
    background whole."""
    target = [lambda_record.slice(20_000, 20_300)]
    background = [ecoli_record.slice(0, 16_000), ecoli_record.slice(40_000, 48_000)]
    alone = {k: _rows(kdiff.solve(target, background, k, backend="serial").candidates)
             for k in range(1, 5)}
    monkeypatch.setattr(config, "STREAM_MEMORY_BASES", 1)
    monkeypatch.setattr(config, "STREAM_CHUNK_BASES", 3000)
    land = _solve(target, background, 4, SIMD).landscape
    for k in range(1, 5):
        assert _rows(land.candidates(k)) == alone[k], f"k={k}"
        assert alone[k]


# ------------------------------------------------------------------------------------ Dask

distributed = pytest.importorskip("distributed")


@given(case=_case(), K=st.integers(1, 5), strands=st.sampled_from(["both", "forward"]))
@settings(max_examples=examples(4), deadline=None, suppress_health_check=HEALTH)
def test_dask_every_k_equals_the_oracle(dask_cluster, monkeypatch, case, K, strands):
    monkeypatch.setattr(config, "STREAM_CHUNK_BASES", CHUNK)  # (the client plans the chunks)
    monkeypatch.setattr(config, "STREAM_OVERLAP_RATIO", 1)
    target, background, gap_min = case
    res = kdiff.solve(target, background, K, backend="dask", scheduler=dask_cluster[0],
                      strands=strands, gap_min=gap_min, all_k=True)
    assert res.info.complete and res.info.backend == "dask"
    _check_every_k(res, target, background, K, gap_min, strands)


def test_dask_word_edges_and_real_data(dask_cluster, monkeypatch, lambda_record, ecoli_record):
    monkeypatch.setattr(config, "STREAM_CHUNK_BASES", CHUNK)
    monkeypatch.setattr(config, "STREAM_OVERLAP_RATIO", 1)
    for (target, background), K in ((_word_edge_case(), 1), (_short_case(), 7)):
        res = kdiff.solve(target, background, K, backend="dask", scheduler=dask_cluster[0],
                          all_k=True)
        _check_every_k(res, target, background, K, 10, "both")
    target = [lambda_record.slice(20_000, 20_120)]
    background = [ecoli_record.slice(0, 3_000)]
    monkeypatch.setattr(config, "STREAM_CHUNK_BASES", 1000)
    land = kdiff.solve(target, background, 3, backend="dask", scheduler=dask_cluster[0],
                       all_k=True).landscape
    for k in range(1, 4):
        alone = kdiff.solve(target, background, k, backend="serial")
        assert _rows(land.candidates(k)) == _rows(alone.candidates), f"k={k}"
