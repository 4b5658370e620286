"""Assembly gaps (issue #28) on the CUDA kernels, in numba's CUDA simulator: every family's
answer with gaps equals its reference with each gap as a record break (gap_cases.py).

Run by test_gaps_cuda.py in a subprocess with NUMBA_ENABLE_CUDASIM=1 (set before numba is
first imported). Inputs are tiny and the GPU settings shrunk (the families' own simulator
helpers), so that gaps fall across blocks, chunks and tiers.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

if os.environ.get("NUMBA_ENABLE_CUDASIM") != "1":
    pytest.skip("run with NUMBA_ENABLE_CUDASIM=1 (test_gaps_cuda.py does)", allow_module_level=True)

from engine import config, edit, kdiff, kmismatch  # noqa: E402
from engine.edit import plan as edit_plan  # noqa: E402
from engine.kmismatch import cuda as kcuda  # noqa: E402
from engine.sequences import Record  # noqa: E402
from tests.engine.edit.cuda_support import COMBOS as EDIT_COMBOS  # noqa: E402
from tests.engine.edit.cuda_support import label as edit_label, options  # noqa: E402
from tests.engine.gap_cases import (BASES, edit_expected, edit_rows, kdiff_expected,  # noqa: E402
                                    kdiff_rows, kmismatch_expected, kmismatch_rows, planted)
from tests.engine.kdiff.cuda_support import cuda_combos, label, tiny_kdiff_gpu  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")


@pytest.fixture(autouse=True)
def small_gpu(monkeypatch):
    tiny_kdiff_gpu(monkeypatch)
    monkeypatch.setattr(config, "KMISMATCH_CUDA_THREADS_PER_BLOCK", 8)
    monkeypatch.setattr(config, "KMISMATCH_CUDA_SHARED_MEM_THREADS_PER_BLOCK", 8)
    monkeypatch.setattr(config, "KMISMATCH_CUDA_BLOCK_THREAD_WINDOWS", 5)
    monkeypatch.setattr(config, "KMISMATCH_CUDA_ORDER_THREADS", 4)
    monkeypatch.setattr(config, "EDIT_CUDA_THREADS_PER_BLOCK", 32)
    monkeypatch.setattr(config, "EDIT_CUDA_MIN_CHUNK_COLUMNS", 24)
    monkeypatch.setattr(config, "EDIT_CUDA_CHUNK_OVERLAP_RATIO", 0)


def _gapped(seed: int, pieces=(23, 40, 9, 31), lead=True, trail=True) -> np.ndarray:
    """ACGT pieces (a few IUPAC codes and an N run shorter than a gap) joined by gaps of
    10-20 N, with a gap at the start and the end."""
    rng = np.random.default_rng(seed)
    parts = [np.full(12, 15, np.uint8)] if lead else []
    for i, n in enumerate(pieces):
        piece = BASES[rng.integers(0, 4, n)]
        piece[rng.integers(0, n)] = rng.integers(1, 16)
        piece[3:8] = 15  # five N: the set rule
        parts.append(piece)
        if i < len(pieces) - 1 or trail:
            parts.append(np.full(int(rng.integers(10, 21)), 15, np.uint8))
    return np.concatenate(parts)


def _kdiff_combos():
    """Each variant without flags and with all its flags, and bitparallel's passes one by one
    (the simulator is slow: the flags' own cases are tests/engine/kdiff/cuda_sim_cases.py)."""
    combos = cuda_combos()
    most = {v: max((f for w, f in combos if w == v), key=len) for v, _ in combos}
    keep = [(v, frozenset()) for v in most] + list(most.items())
    keep += [("bitparallel", frozenset({"word32"})), ("bitparallel", frozenset({"word64"}))]
    return list(dict.fromkeys(keep))


@pytest.mark.parametrize("combo", _kdiff_combos(), ids=label)
@pytest.mark.parametrize("strands", ["both"])  # (forward: the CPU tests; the simulator is slow)
def test_kdiff_cuda_with_gaps_equals_the_oracle(combo, strands):
    variant, flags = combo
    background = _gapped(7)
    rng = np.random.default_rng(8)
    target = np.concatenate([planted(rng, background, 20), np.full(10, 15, np.uint8),
                             planted(rng, background, 14)])
    t, b = [Record("t", target)], [Record("b", background)]
    got = kdiff.solve(t, b, 2, variant=variant, backend="cuda", flags=flags, strands=strands)
    assert kdiff_rows(got) == kdiff_expected(t, b, 2, 10, strands)


@pytest.mark.parametrize("method", kcuda.METHODS)
def test_kmismatch_cuda_with_gaps_equals_the_oracle(method):
    text = _gapped(9)
    rng = np.random.default_rng(10)
    patterns = [Record(f"p{i}", planted(rng, text, m)) for i, m in enumerate((5, 7, 6))]
    t = [Record("t", text)]
    got = kmismatch.solve(patterns, t, 2, variant=method, backend="cuda")
    assert kmismatch_rows(got) == kmismatch_expected(t, patterns, 2, 10)


@pytest.mark.parametrize("combo", EDIT_COMBOS, ids=edit_label)
def test_edit_search_cuda_with_gaps_equals_the_oracle(combo):
    text = _gapped(11)
    rng = np.random.default_rng(12)
    patterns = [Record(f"p{i}", planted(rng, text, m)) for i, m in enumerate((8, 6))]
    t = [Record("t", text)]
    got = edit.solve(patterns, t, mode="search", k=2, strands="both", **options(combo))
    assert edit_rows(got) == edit_expected(patterns, t, 2, 10)


@pytest.mark.parametrize("combo", [("task", None), ("cooperative", 1)], ids=edit_label)
def test_edit_search_cuda_streamed_past_a_leading_gap_equals_the_oracle(monkeypatch, combo):
    """Streamed, the piece after a skipped gap owns the gap's columns: a record that starts
    with 250 N (a skip ten GPU tasks long) once gave its first tasks an end before their
    start, and the cooperative kernel, whose warp (one here: 28 tasks) ran on for the tasks
    with columns, read before the text (CUDA_ERROR_ILLEGAL_ADDRESS on the GPU, an IndexError
    here). Its score profiles are the whole text's, bins inside the skipped gaps included."""
    rng = np.random.default_rng(13)
    text = np.concatenate([np.full(250, 15, np.uint8), BASES[rng.integers(0, 4, 90)],
                           np.full(60, 15, np.uint8), BASES[rng.integers(0, 4, 40)]])
    patterns = [Record("p", text[280:290].copy())]
    t = [Record("t", text)]
    monkeypatch.setattr(edit_plan, "PROFILE_BINS", 50)  # bins of 9 columns: shared by pieces

    def solve():
        return edit.solve(patterns, t, mode="search", k=2, strands="both", profile=True,
                          **options(combo))

    whole = solve()
    monkeypatch.setattr(config, "GPU_STREAM_BYTES", 100)  # (one strand of text: 440 bytes)
    got = solve()
    assert edit_rows(got) == edit_expected(patterns, t, 2, 10)
    assert got.hits
    # score profiles as the whole text's, bins inside the skipped gaps included
    assert [p.values.tolist() for p in got.profiles] == [p.values.tolist()
                                                         for p in whole.profiles]
