"""bitparallel's ``simd`` lanes (engine/kdiff/cpu_lanes.py) on their own, against the oracle.

The lanes kernel must be exact below the word width and must hand every start whose
candidate reaches the width to the next stage: batches mix short and long candidates,
lanes finish at different columns, lengths sit on the 31/32/33 and 63/64/65 edges.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine import kdiff
from engine.kdiff.cpu_lanes import lanes_group, lanes_parallel, lanes_serial, word_constants
from engine.kdiff.reference import kdiff_reference, longest_prefix_within
from engine.sequences import Record, reverse_complement
from tests.strategies import codes, mutate, random_codes


def _lanes(alpha, texts, K, bits, lanes, kernel=lanes_serial, levels=0):
    beta = np.concatenate(texts) if texts else np.zeros(0, np.uint8)
    offsets = np.cumsum([0] + [len(t) for t in texts]).astype(np.int64)
    rs = np.arange(len(alpha), dtype=np.int64)
    out = np.zeros(len(alpha), np.int64)
    lv = np.full((len(alpha), levels), -1, np.int64)
    grown = np.zeros(len(alpha), np.bool_)
    counters = np.zeros(2, np.int64)
    assert kernel(alpha, len(alpha), rs, beta, offsets, K, word_constants(bits), lanes, out, lv,
                  grown, counters, np.zeros(1, np.uint8))
    return out, grown, lv


def _check_lanes(alpha, texts, K, lanes):
    # The oracle's c(r) at every level, once: the eight kernel runs below check against it.
    want = [[longest_prefix_within(alpha[r:], texts, t + 1) for t in range(K + 1)]
            for r in range(len(alpha))]
    for bits in (32, 64):
        for kernel in (lanes_serial, lanes_parallel):
            # plain, then with every lower level (kdiff --all-k): the top is the same
            for levels in (0, K):
                out, grown, lv = _lanes(alpha, texts, K, bits, lanes, kernel, levels)
                for r in range(len(alpha)):
                    if grown[r]:  # handed on: the true candidate outgrew the word
                        assert want[r][K] >= bits and out[r] == bits, (bits, r, want[r][K])
                        continue
                    assert out[r] == want[r][K], (bits, r, K, want[r][K], out[r])
                    for t in range(levels):
                        assert lv[r, t] == want[r][t], (bits, r, K, t)


@given(alpha=codes(1, 90), texts=st.lists(codes(0, 70), min_size=1, max_size=3),
       K=st.integers(0, 6), lanes=st.sampled_from((1, 3, 16)), plant=st.integers(0, 200))
def test_lanes_against_the_oracle(alpha, texts, K, lanes, plant):
    # Plant a long piece of the target so that some lanes outgrow the word and others do not.
    a = plant % len(alpha)
    texts = [np.concatenate([texts[0], alpha[a:a + 40 + plant % 30]])] + texts[1:]
    _check_lanes(alpha, texts, K, lanes)


#: Candidate lengths at the edges of 32- and 64-bit words, and the edit budgets around them.
WORD_EDGE_LENGTHS = (31, 32, 33, 63, 64, 65)
WORD_EDGE_KS = (0, 1, 4)


@pytest.mark.parametrize("length", WORD_EDGE_LENGTHS)
@pytest.mark.parametrize("K", WORD_EDGE_KS)
def test_word_edges(length, K):
    rng = np.random.default_rng(length * 7 + K)
    alpha = random_codes(rng, length + 5, iupac_rate=0.05)
    # The background holds a near copy of exactly `length` symbols of the target.
    texts = [np.concatenate([random_codes(rng, 50), mutate(rng, alpha[2:2 + length], K // 2),
                             random_codes(rng, 30)]), random_codes(rng, 20)]
    _check_lanes(alpha, texts, K, 8)


#: numba compiling for a CPU with AVX2 and without AVX-512 (a Haswell's features).
AVX2_ONLY = {"NUMBA_CPU_NAME": "haswell",
             "NUMBA_CPU_FEATURES": "+avx2,+avx,+fma,+bmi,+bmi2,+popcnt,+sse4.2,+sse4.1,+ssse3,+sse3,"
                                   "+sse2,+sse,+cx16,+lzcnt,+movbe,-avx512f,-avx512vl,-avx512bw,"
                                   "-avx512dq,-avx512cd"}


def test_lanes_on_a_cpu_with_avx2_only(tmp_path):
    """The lanes kernels compiled for a CPU without AVX-512 (this file's word-edge cases and
    the register check below, in a process of their own with a cache of its own)."""
    env = dict(os.environ, **AVX2_ONLY, NUMBA_CACHE_DIR=str(tmp_path))
    root = Path(__file__).resolve().parents[3]
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "0",
                           "-k", "word_edges or avx512_registers", str(Path(__file__).resolve())],
                          env=env, cwd=root, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    # Every word edge case and the register check ran there (none skipped or left out).
    expected = len(WORD_EDGE_LENGTHS) * len(WORD_EDGE_KS) + 1
    assert f"{expected} passed" in proc.stdout and "skipped" not in proc.stdout, \
        proc.stdout[-500:]


@pytest.mark.skipif(os.environ.get("NUMBA_CPU_NAME") != "haswell",
                    reason="run by test_lanes_on_a_cpu_with_avx2_only")
def test_avx2_code_has_no_avx512_registers():
    """The lanes loop is vector code for AVX2: ymm registers (8 lanes of 32 bits), no zmm."""
    rng = np.random.default_rng(3)
    _check_lanes(random_codes(rng, 40), [random_codes(rng, 60)], 2, 8)  # (compiles lanes_group)
    asm = "".join(lanes_group.inspect_asm().values())
    assert "%ymm" in asm and "%zmm" not in asm


@given(target=codes(1, 120), background=codes(1, 150), k=st.integers(1, 8),
       strands=st.sampled_from(("both", "forward")), backend=st.sampled_from(("serial", "multicore")))
def test_simd_flag_equals_the_oracle_through_the_api(target, background, k, strands, backend):
    rng = np.random.default_rng(len(target) * 31 + len(background))
    # Long shared stretches make long candidates (the blocked tail) beside short ones.
    background = np.concatenate([background, mutate(rng, target[: 40 + len(target) // 2], 1)])
    betas = [background] + ([reverse_complement(background)] if strands == "both" else [])
    want = [(r + 1, r + n) for r, n in kdiff_reference(target, betas, k)]
    res = kdiff.solve([Record("t", target)], [Record("b", background)], k, variant="bitparallel",
                      backend=backend, flags={"simd"}, strands=strands)
    assert [(c.start, c.end) for c in res.candidates] == want


def test_simd_flag_changes_the_kernel_not_the_answer(lambda_record, ecoli_record):
    target = [Record("lambda", lambda_record.codes[20000:20400])]
    background = [Record("ecoli", ecoli_record.codes[:300_000])]
    runs = {flags: kdiff.solve(target, background, 5, variant="bitparallel", backend="multicore",
                               flags=flags, strands="both", count_comparisons=True)
            for flags in (frozenset(), frozenset({"simd"}))}
    old, new = runs[frozenset()], runs[frozenset({"simd"})]
    assert old.candidates == new.candidates and len(new.candidates) > 300
    assert new.info.flags == ("simd",) and old.info.flags == ()
    # The lanes do a full word per step (no cut-off), so they count different cells.
    assert new.info.cells != old.info.cells
