"""bitparallel's CUDA stages in numba's CUDA simulator, against the oracle: the lanes stages
of both word widths on their own, and the flags word32, word64 and neighbours through the API.

Run by test_kdiff_cuda.py in a subprocess with NUMBA_ENABLE_CUDASIM=1 (see
cuda_sim_cases.py, whose small-GPU settings apply here too; chunks are also cut as short as
their overlap allows, so that occurrences straddle them). Inputs mix short and long
candidates in one batch (a planted near-copy of the target makes the long ones), sit on the
31/32/33 and 63/64/65 edges, carry IUPAC codes and search both strands.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

if os.environ.get("NUMBA_ENABLE_CUDASIM") != "1":
    pytest.skip("run with NUMBA_ENABLE_CUDASIM=1 (test_kdiff_cuda.py does)", allow_module_level=True)

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from engine import config, kdiff  # noqa: E402
from engine.kdiff import cuda as kcuda  # noqa: E402
from engine.kdiff import cuda_bitparallel, cuda_lanes, neighbours  # noqa: E402
from engine.kdiff.cuda import Device  # noqa: E402
from engine.kdiff.reference import longest_prefix_within  # noqa: E402
from engine.sequences import Record, reverse_complement  # noqa: E402
from tests.engine.kdiff.cuda_sim_cases import _expected, _solve, small_gpu  # noqa: E402,F401
from tests.engine.kdiff.counter_model import (  # noqa: E402
    COUNTER_COLUMNS,
    COUNTER_STARTS,
    replay_counters,
)
from tests.engine.kdiff.oracle_rows import longest_prefixes  # noqa: E402
from tests.engine.gap_cases import kdiff_expected  # noqa: E402
from tests.strategies import codes, examples, mutate, random_codes  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")

#: Every bitparallel flag set the cuda backend takes (neighbours needs word32).
FLAG_SETS = [frozenset(f) for f in ({"word32"}, {"word64"}, {"word32", "word64"},
                                    {"word32", "neighbours"}, {"word32", "word64", "neighbours"},
                                    set())]


@pytest.fixture(autouse=True)
def short_chunks(monkeypatch):
    monkeypatch.setattr(config, "KDIFF_CUDA_LANES_CHUNK_OVERLAP_RATIO", 1)


def _stage(texts, alpha, K, word):
    """c(r) of every start from one lanes stage alone, and its cells."""
    beta = np.concatenate(texts) if texts else np.zeros(0, np.uint8)
    offsets = np.cumsum([0] + [len(t) for t in texts]).astype(np.int64)
    dev = Device(beta, offsets, 8)
    counters = np.zeros(2, np.int64)
    stage = cuda_lanes.LanesStage(dev, K, word, cuda_lanes.TargetTables(dev))
    return stage.run(alpha, np.arange(len(alpha), dtype=np.int64), counters), counters[0]


def _check_stage(alpha, texts, K, word):
    out, cells = _stage(texts, alpha, K, word)
    wants = longest_prefixes(alpha, texts, K + 1)
    handed = 0
    for r in range(len(alpha)):
        want = wants[r]
        if out[r] >= word and len(alpha) - r > word:  # outgrew the word: handed on
            assert want >= word and out[r] == word, (word, r, want, out[r])
            handed += 1
        else:
            assert out[r] == want, (word, r, K, want, out[r])
    assert cells > 0 and cells % word == 0
    return handed


def _with_a_copy(rng, background, alpha, start, length, edits):
    return np.concatenate([background, mutate(rng, alpha[start:start + length], edits)])


@settings(max_examples=examples(6))
@given(alpha=codes(1, 90), texts=st.lists(codes(0, 50), min_size=1, max_size=2),
       K=st.integers(0, 5), word=st.sampled_from(cuda_lanes.WORDS), plant=st.integers(0, 10**6),
       both=st.booleans())
def test_lanes_stage_against_the_oracle(alpha, texts, K, word, plant, both):
    """One stage alone: exact below its word, and every start whose candidate reaches the word
    handed on, in batches where short and long candidates (a planted copy) sit together."""
    rng = np.random.default_rng(plant)
    a = plant % len(alpha)
    texts = [_with_a_copy(rng, texts[0], alpha, a, 20 + plant % 70, plant % 2)] + texts[1:]
    if both:
        texts = texts + [reverse_complement(t) for t in texts]
    _check_stage(alpha, texts, K, word)


@settings(max_examples=examples(6))
@given(alpha=codes(1, 80), text=codes(0, 60), K=st.integers(0, 5),
       word=st.sampled_from(cuda_lanes.WORDS), plant=st.integers(0, 10**6))
def test_lanes_stage_with_neighbour_bounds(alpha, text, K, word, plant):
    """Given proven bounds L <= c(r) <= U, a stage climbs from L and stops at U: the same c(r)
    as without them (lanes that start settled, finish early or run on, in one batch)."""
    rng = np.random.default_rng(plant)
    a = plant % len(alpha)
    texts = [_with_a_copy(rng, text, alpha, a, 10 + plant % 50, plant % 2)]
    texts = texts + [reverse_complement(t) for t in texts]
    plain, _ = _stage(texts, alpha, K, word)
    m = len(alpha)
    want = longest_prefixes(alpha, texts, K + 1)
    floor = np.minimum(K, m - np.arange(m))
    low = floor + (rng.random(m) * (want - floor + 1)).astype(np.int64)
    high = want + (rng.random(m) * (m - np.arange(m) - want + 1)).astype(np.int64)
    beta = np.concatenate(texts)
    offsets = np.cumsum([0] + [len(t) for t in texts]).astype(np.int64)
    dev = Device(beta, offsets, 8)
    stage = cuda_lanes.LanesStage(dev, K, word, cuda_lanes.TargetTables(dev))
    got = stage.run(alpha, np.arange(m, dtype=np.int64), np.zeros(2, np.int64), low, high)
    np.testing.assert_array_equal(got, plain)


@pytest.mark.parametrize("word,K", [(32, 6)])
def test_lanes_stage_levels_against_the_oracle(word, K):
    """kdiff --all-k in one lanes stage alone: every lower level is exact below the word, for
    every start, also those whose c at K outgrew it (their lanes run the levels on), and at
    the word where the level outgrew it too. Near-copies with K, K-1, 1 and 0 edits of
    pieces past the word make levels climb at every height, in chunks (their overlap is
    W + K + 1) that settle the counters mid-chunk."""
    rng = np.random.default_rng(word + K)
    alpha = random_codes(rng, word + 16, iupac_rate=0.03)
    pieces = [random_codes(rng, 5)]
    for start, edits in ((0, K), (3, K - 1), (9, 1), (14, 0)):
        pieces += [mutate(rng, alpha[start:start + word + 2], edits), random_codes(rng, 4)]
    texts = [np.concatenate(pieces)]
    beta = np.concatenate(texts)
    offsets = np.cumsum([0] + [len(t) for t in texts]).astype(np.int64)
    dev = Device(beta, offsets, 8)
    stage = cuda_lanes.LanesStage(dev, K, word, cuda_lanes.TargetTables(dev))
    m = len(alpha)
    lv = np.full((m, K), -1, np.int64)
    stage.run(alpha, np.arange(m, dtype=np.int64), np.zeros(2, np.int64), lv=lv)
    outgrew = 0
    levels = [longest_prefixes(alpha, texts, t + 1) for t in range(K)]
    for r in range(m):
        for t in range(K):
            want = levels[t][r]
            if want >= word and m - r > word:
                assert lv[r, t] == word, (r, t, want, lv[r, t])
                outgrew += 1
            else:
                assert lv[r, t] == want, (r, t, want, lv[r, t])
    assert outgrew and (lv < word).any()


def test_lanes_stage_levels_run_on_after_c_outgrew(monkeypatch):
    """Every lane of a block outgrows 32 at K on a near-copy early in one long chunk; an
    exact copy past the next liveness check (every 256 columns) raises level 0 of some of
    them, which the stage still finds: their levels run on whatever c at K did."""
    monkeypatch.setattr(config, "KDIFF_CUDA_LANES_MIN_CHUNK", 1000)  # one chunk
    rng = np.random.default_rng(8)
    alpha = random_codes(rng, 44)
    beta = np.concatenate([_substituted(alpha, (10, 20, 30)), random_codes(rng, 300),
                           alpha[5:30].copy(), random_codes(rng, 5)])
    K, rs = 3, np.arange(8, dtype=np.int64)  # one block of lanes (4 threads x 2)
    dev = Device(beta, np.array([0, len(beta)], np.int64), 8)
    stage = cuda_lanes.LanesStage(dev, K, 32, cuda_lanes.TargetTables(dev))
    lv = np.full((len(rs), K), -1, np.int64)
    c = stage.run(alpha, rs, np.zeros(2, np.int64), lv=lv)
    assert np.all(c == 32)  # every lane outgrew the word at K
    for r in rs:
        want = [longest_prefix_within(alpha[r:], [beta], t + 1) for t in range(K)]
        assert list(lv[r]) == [min(w, 32) for w in want], (r, want, lv[r])
    assert lv[5, 0] >= 25  # the exact copy, found after the check


@pytest.mark.parametrize("length", (31, 32, 33, 63, 64, 65))
@pytest.mark.parametrize("word", cuda_lanes.WORDS)
def test_lanes_stage_at_the_word_edges(length, word):
    """A near-copy of exactly 31/32/33 or 63/64/65 target symbols: each stage keeps what fits
    its word and hands on what does not."""
    rng = np.random.default_rng(length * 3 + word)
    K = 1 + length % 3
    alpha = random_codes(rng, length + 8, iupac_rate=0.05)
    texts = [np.concatenate([random_codes(rng, 12), mutate(rng, alpha[3:3 + length], K // 2),
                             random_codes(rng, 10)]), random_codes(rng, 15, iupac_rate=0.1)]
    texts = texts + [reverse_complement(t) for t in texts]
    handed = _check_stage(alpha, texts, K, word)
    if length - K >= word:  # the copy's own starts reach the word
        assert handed > 0, (length, word)
    elif length + 2 * K < word:  # nothing comes near it
        assert handed == 0, (length, word, handed)


@settings(max_examples=examples(8))
@given(target=codes(24, 70), background=codes(1, 40), k=st.integers(1, 5),
       flags=st.sampled_from(FLAG_SETS), plant=st.integers(0, 10**6),
       strands=st.sampled_from(("both", "forward")))
def test_every_flag_set_equals_the_oracle(target, background, k, flags, plant, strands):
    """The stages and the tiers together (lanes passes, neighbour rounds, sized scans, the
    ladder): one long planted copy and one of 32-64 symbols make c(r) short, in [32, 64) and
    beyond in one batch."""
    rng = np.random.default_rng(plant)
    m = len(target)
    long_copy = mutate(rng, target[plant % 4:], plant % 2)
    mid = plant % max(1, m - 40)
    background = np.concatenate([background, long_copy, random_codes(rng, 5),
                                 mutate(rng, target[mid:mid + 32 + plant % 33], 1)])
    targets, backgrounds = [Record("t", target)], [Record("b", background)]
    got, res = _solve(targets, backgrounds, k, ("bitparallel", flags), strands)
    assert got == _expected(targets, backgrounds, k, strands), sorted(flags)
    assert set(res.info.flags) == set(flags)


@pytest.mark.parametrize("length", (31, 32, 33, 63, 64, 65))
@pytest.mark.parametrize("flags", [{"word32", "word64"}, {"word32", "word64", "neighbours"}],
                         ids=lambda f: "+".join(sorted(f)))
def test_flag_sets_at_the_word_edges(length, flags):
    """Near-copies of 31/32/33 and 63/64/65 symbols, both strands: the 64-bit pass, and the
    defaults (neighbour rounds, the 64-bit stage for the starts whose bound fits 64)."""
    rng = np.random.default_rng(length)
    k = 1 + length % 4
    alpha = random_codes(rng, length + 10, iupac_rate=0.05)
    beta = np.concatenate([random_codes(rng, 15), mutate(rng, alpha[4:4 + length], (k - 1) // 2),
                           random_codes(rng, 12)])
    target, background = [Record("t", alpha)], [Record("b", beta)]
    got, _ = _solve(target, background, k, ("bitparallel", flags), "both")
    assert got == _expected(target, background, k, "both")


def _spy_stages(monkeypatch):
    """Record (word, starts given, c found) of every lanes-stage run but the warm-up's."""
    calls = []
    original = cuda_lanes.LanesStage.run

    def spy(self, alpha, rs, counters, low=None, high=None, lv=None):
        got = original(self, alpha, rs, counters, low, high, lv)
        if alpha.shape[0] > 8:  # not the warm-up's
            calls.append((self.word, np.array(rs), np.array(got)))
        return got

    monkeypatch.setattr(cuda_lanes.LanesStage, "run", spy)
    return calls


def test_the_64_bit_stage_receives_the_starts_that_outgrow_32(monkeypatch):
    """A planted copy of 50 symbols: its starts outgrow 32 and are settled by the 64-bit pass
    (c in [32, 64)); a longer one's starts go on to the tiers."""
    calls = _spy_stages(monkeypatch)
    rng = np.random.default_rng(64)
    alpha = random_codes(rng, 150, iupac_rate=0.02)
    beta = np.concatenate([random_codes(rng, 10), mutate(rng, alpha[10:60], 1), random_codes(rng, 8),
                           mutate(rng, alpha[80:150], 0)])
    target, background = [Record("t", alpha)], [Record("b", beta)]
    got, _ = _solve(target, background, 3, ("bitparallel", {"word32", "word64"}), "forward")
    assert got == _expected(target, background, 3, "forward")
    words = [w for w, rs, _ in calls if len(rs)]
    assert 32 in words and 64 in words
    sixty_four = [(rs, c) for w, rs, c in calls if w == 64]
    settled_there = sum(int(np.sum((c >= 32) & (c < 64))) for _, c in sixty_four)
    handed_on = sum(int(np.sum(c >= 64)) for _, c in sixty_four)
    assert settled_there > 0 and handed_on > 0, (settled_there, handed_on)
    given = {w: sum(len(rs) for v, rs, _ in calls if v == w) for w in (32, 64)}
    assert given[64] < given[32], given  # the 64-bit pass takes only what outgrew 32


def test_neighbours_settle_a_long_copy_with_few_scans(monkeypatch):
    """A long planted copy (one edit): the 32-bit pass skips the starts between two long ones,
    most of the long starts are settled by their neighbours' bounds, the few scanned are sized
    from their bound (one slice: no ladder; words in registers or, past the register tier, in
    global memory), the 64-bit stage takes those whose bound fits 64, and the answer is the
    oracle's."""
    monkeypatch.setattr(kcuda.CudaSliceRunner, "min_slice", lambda self: 1000)  # one slice
    calls = _spy_stages(monkeypatch)
    launches = []
    original = cuda_bitparallel.BitparallelDriver._launch

    def spy(self, rs, c0, m_end, words, overlap, counters, exact=False, lv=None):
        got, over, truncated = original(self, rs, c0, m_end, words, overlap, counters, exact, lv)
        launches.append((len(rs), words, exact, bool(over.any())))
        return got, over, truncated

    monkeypatch.setattr(cuda_bitparallel.BitparallelDriver, "_launch", spy)
    inferred = []
    infer = neighbours.SliceBounds.infer
    monkeypatch.setattr(neighbours.SliceBounds, "infer", lambda self: inferred.append(infer(self))
                        or inferred[-1])
    rng = np.random.default_rng(7)
    alpha = random_codes(rng, 250, iupac_rate=0.02)
    beta = np.concatenate([random_codes(rng, 12), mutate(rng, alpha[5:170], 1), random_codes(rng, 9),
                           mutate(rng, alpha[195:240], 0)])
    target, background = [Record("t", alpha)], [Record("b", beta)]
    # every CUDA flag (the default leaves word64 out: slower on W4)
    got, res = _solve(target, background, 4, ("bitparallel", {"word32", "word64", "neighbours"}),
                      "forward")
    assert got == _expected(target, background, 4, "forward")
    starts = len(res.profiles["t"])
    # The 32-bit pass leaves the starts between two long ones to the rounds.
    assert sum(len(rs) for w, rs, _ in calls if w == 32) < 0.8 * starts
    pending = sum(int(np.sum(c >= 32)) for w, _, c in calls if w == 32)
    scanned = sum(n for n, *_ in launches) + sum(len(rs) for w, rs, _ in calls if w == 64)
    assert sum(inferred) > 0 and scanned < pending / 2, (sum(inferred), scanned, pending)
    assert not any(over for *_, over in launches), "a sized scan overflowed"
    assert any(exact for _, _, exact, _ in launches), "no bound needed words in global memory"
    assert any(not exact for _, _, exact, _ in launches), "no bound fitted the register tier"
    assert any(w == 64 for w, _, _ in calls), "no start's bound fitted 64"


def test_neighbours_across_slices_and_the_ladder(monkeypatch):
    """Slices of three starts cut the runs of long candidates: the last start of a slice has no
    settled start to its right and climbs the tiers; the next slice takes the previous slice's
    last c(r) as a lower bound. No words in registers: every scan keeps them in global memory.
    Every flag set with neighbours agrees with the oracle."""
    monkeypatch.setattr(kcuda.CudaSliceRunner, "min_slice", lambda self: 3)
    monkeypatch.setattr(config, "SLICE_SECONDS", 1e-6)
    monkeypatch.setattr(config, "KDIFF_CUDA_BITPARALLEL_TIERS", ((2, 12), (2, 40), (3, 90)))
    monkeypatch.setattr(config, "KDIFF_CUDA_REGISTER_WORDS", 1)
    rungs = []
    original = cuda_bitparallel.BitparallelDriver._launch

    def spy(self, rs, c0, m_end, words, overlap, counters, exact=False, lv=None):
        rungs.append((words, overlap) in self.tiers)
        return original(self, rs, c0, m_end, words, overlap, counters, exact, lv)

    monkeypatch.setattr(cuda_bitparallel.BitparallelDriver, "_launch", spy)
    befores = []
    init = neighbours.SliceBounds.__init__

    def seen(self, rs, c, known, mps, before=None):
        befores.append(before)
        init(self, rs, c, known, mps, before)

    monkeypatch.setattr(neighbours.SliceBounds, "__init__", seen)
    rng = np.random.default_rng(3)
    alpha = random_codes(rng, 60, iupac_rate=0.03)
    beta = np.concatenate([random_codes(rng, 10), mutate(rng, alpha[2:58], 1), random_codes(rng, 6)])
    target, background = [Record("t", alpha)], [Record("b", beta)]
    want = _expected(target, background, 2, "both")
    for flags in ({"word32", "neighbours"}, {"word32", "word64", "neighbours"}):
        got, _ = _solve(target, background, 2, ("bitparallel", flags), "both")
        assert got == want, sorted(flags)
    assert any(rungs), "no slice's last start climbed the tiers"
    assert any(b is not None for b in befores), "no slice used the previous slice's last start"


def test_lanes_kernels_are_named_by_their_width():
    """ncu and the probe tell the stages apart by the kernels' names."""
    for word in cuda_lanes.WORDS:
        kernel = cuda_lanes.lanes_kernel(word, 2, 4)
        assert kernel.py_func.__name__ == f"lanes{word}"
        assert cuda_lanes.match_table_kernel(word).py_func.__name__ == f"match_table{word}"


# Each tier once with few and once with many edits: two words at K = 0 (k = 1, exact copies)
# and 63, three at 65, global memory at 100 (each case ~10 simulator s; (3, 2) and (40, 3) ran
# the same tiers again).
@pytest.mark.parametrize("K,words", [(0, 2), (63, 2), (65, 3), (100, 0)], ids=lambda v: str(v))
def test_tier_kernels_against_the_oracle(K, words):
    """The blocked tiers alone, every start of a target against near-copies of its pieces
    (c(r) crossing 63/64/65 and 127/128, the cut-off moving both ways, the probe row in and
    below the last live block), IUPAC codes, both strands: with an overlap past every
    occurrence each start not flagged as out of words is exact (a flagged one has c(r) >=
    64 x its words); with a short overlap each start the tier calls sure is exact. Words 0:
    the tier with its words in global memory (4 of them)."""
    rng = np.random.default_rng(K * 10 + words)
    alpha = random_codes(rng, 190, iupac_rate=0.04)
    pieces = [random_codes(rng, 30)]
    for start, length, gap in ((0, 70, 30), (20, 140, 170), (60, 128, 20), (100, 66, 9)):
        pieces += [mutate(rng, alpha[start:start + length], min(K // 2, length // 8)),
                   random_codes(rng, gap, iupac_rate=0.05)]
    # 170 columns after the second copy the cut-off moves up; the third climbs again.
    texts = [np.concatenate(pieces[:7]), np.concatenate(pieces[7:])]
    # The other strand of the short text only: to the tier kernel a strand is one more
    # record, and the long one's other strand (588 columns) would double each launch.
    texts = texts + [reverse_complement(texts[1])]
    m = len(alpha)
    want = longest_prefixes(alpha, texts, K + 1)
    beta = np.concatenate(texts)
    offsets = np.cumsum([0] + [len(t) for t in texts]).astype(np.int64)
    driver = cuda_bitparallel.BitparallelDriver(Device(beta, offsets, 8), K, False)
    driver._alpha = alpha
    rs = np.arange(m, dtype=np.int64)
    c0 = np.minimum(K, m - rs)
    size = words or 4
    for overlap in (m + K + 1, 2 * K + 40):
        got, over, truncated = driver._launch(rs, c0, m, size, overlap, np.zeros(2, np.int64),
                                              exact=not words)
        sure = ~over & ((got + K < overlap) | (got == m - rs) | (not truncated))
        np.testing.assert_array_equal(got[sure], want[sure])
        assert np.all(got <= want) and np.all(want[over] >= 64 * size), (K, words, overlap)
        if overlap > m + K:  # c(r) > 64 x words needs a word more: flagged
            assert np.all(over[want > 64 * size]), (K, words)
    assert want.max() > 128 and (want < 64).any(), want  # long and short in one launch



def _all_k_inputs(m, seed):
    """Targets: ``m`` symbols with IUPAC codes, one holding a gap run, one of 2 symbols (K
    past it). Backgrounds (both strands searched): a near-copy of the first m-1 target
    symbols (one edit: at one edit its first start's length nears m, past 64 rows for
    m = 65, at none it stays short) and a gap run; the target's tail reverse complemented
    with two edits."""
    rng = np.random.default_rng(seed)
    alpha = random_codes(rng, m, iupac_rate=0.04)
    first = np.concatenate([random_codes(rng, 3), mutate(rng, alpha[:m - 1], 1),
                            np.full(6, 15, np.uint8), random_codes(rng, 3)])
    second = reverse_complement(mutate(rng, alpha[m - 16:], 2))
    gapped = np.concatenate([random_codes(rng, 3), np.full(6, 15, np.uint8), alpha[10:13]])
    target = [Record("t", alpha), Record("gapped", gapped), Record("short", alpha[30:32].copy())]
    return target, [Record("b1", first), Record("b2", second)]


@pytest.mark.parametrize("flags,m,K", [({"word32", "word64"}, 65, 3), ({"word64"}, 64, 4),
                                       (set(), 63, 3), ({"word32"}, 64, 1)],
                         ids=lambda v: "+".join(sorted(v)) or "tiers" if isinstance(v, set)
                         else str(v))
def test_all_k_equals_the_oracle_at_every_k(flags, m, K):
    """kdiff --all-k on cuda: at every k <= K the landscape's candidates are the oracle's
    (a separate run's at that k), through the lanes stages (a length at the word's edge)
    and the tiers (levels near and past 64 rows, words in global memory, chunks that cut a
    level's occurrence so that its start runs again)."""
    target, background = _all_k_inputs(m, m * 10 + K)
    res = kdiff.solve(target, background, K, backend="cuda", flags=flags, all_k=True,
                      gap_min=6)
    assert res.info.backend == "cuda" and res.info.complete
    land = res.landscape
    assert len(land) == sum(len(t) for t in target)  # a row for every start
    for k in land.k:
        got = sorted((c.target_id, c.start, c.end) for c in land.candidates(k))
        assert got == kdiff_expected(target, background, k, 6), (sorted(flags), k)


def test_all_k_with_a_streamed_background():
    """A background streamed through the device in chunks (engine.streaming): every level
    merges as the max over the chunks, as on the CPU."""
    from engine.streaming import Background

    rng = np.random.default_rng(4)
    alpha = random_codes(rng, 16, iupac_rate=0.05)
    piece = mutate(rng, alpha[2:15], 1)
    background = [Record("b", np.concatenate([random_codes(rng, 40), piece, random_codes(rng, 30)])),
                  Record("s", piece[:5].copy())]
    target = [Record("t", alpha)]
    cpu = kdiff.solve(target, background, 3, backend="serial", all_k=True).landscape
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(config, "GPU_STREAM_BYTES", 90)
        mp.setattr(config, "STREAM_OVERLAP_RATIO", 1)
        assert not Background(background, "both", gpu=True).fits()
        got = kdiff.solve(target, background, 3, backend="cuda", flags={"word32"},
                          all_k=True).landscape
    np.testing.assert_array_equal(got.lengths, cpu.lengths)
    assert cpu.length_at(1).max() >= 8 and cpu.length_at(3).max() == 0  # the copy is found


@settings(max_examples=examples(3), deadline=None)
@given(alpha=codes(1, 40), texts=st.lists(codes(0, 30), min_size=1, max_size=2),
       K=st.integers(1, 5), flags=st.sampled_from([{"word32"}, {"word64"}, set()]),
       plant=st.integers(0, 10**6), strands=st.sampled_from(["both", "forward"]))
def test_all_k_on_hypothesis_inputs(alpha, texts, K, flags, plant, strands):
    """IUPAC codes, one or two background records with a planted near-copy of the target."""
    rng = np.random.default_rng(plant)
    a = plant % len(alpha)
    texts = [_with_a_copy(rng, texts[0], alpha, a, 10 + plant % 30, plant % 2)] + texts[1:]
    target = [Record("t", alpha)]
    background = [Record(f"b{i}", t) for i, t in enumerate(texts)]
    land = kdiff.solve(target, background, K, backend="cuda", flags=flags, strands=strands,
                       all_k=True).landscape
    for k in land.k:
        got = sorted((c.target_id, c.start, c.end) for c in land.candidates(k))
        assert got == kdiff_expected(target, background, k, 10**9, strands), (sorted(flags), k)


def test_all_k_on_a_dask_gpu_worker(monkeypatch):
    """A Dask job's --all-k tasks as a GPU worker runs them (engine.executors.dask.run_task
    on the job ScanProblem.worker_job hands GPU workers), merged and settled as the client
    does: on the CUDA bitparallel kernels, every k equal to the oracle, over background
    chunks that cut the planted copy."""
    from engine.executors.dask import Shared, run_task
    from engine.kdiff.problem import ScanProblem
    from engine.streaming import Background

    calls = []
    cuda_call = kcuda.CudaSliceRunner.__call__
    monkeypatch.setattr(kcuda.CudaSliceRunner, "__call__",
                        lambda self, *a, **kw: calls.append(self.levels) or cuda_call(self, *a, **kw))
    monkeypatch.setattr(config, "GPU_STREAM_BYTES", 90)
    monkeypatch.setattr(config, "STREAM_OVERLAP_RATIO", 1)
    rng = np.random.default_rng(5)
    alpha = random_codes(rng, 16, iupac_rate=0.05)
    piece = mutate(rng, alpha[2:15], 1)
    background = [Record("b", np.concatenate([random_codes(rng, 40), piece, random_codes(rng, 30)])),
                  Record("s", piece[:5].copy())]
    target, K = [Record("t", alpha), Record("u", alpha[9:].copy())], 3
    job = kdiff.make_job(target, background, K, backend="dask", all_k=True, gap_min=6)
    problem = ScanProblem(job)
    worker = problem.worker_job(gpu=True)
    chunks = Background(background, "both", gpu=True).chunks(problem.overlap, None,
                                                             problem.gap_reach)
    assert len(chunks) > 1
    shared = Shared("all-k on a gpu worker", ScanProblem, worker)
    for task in problem.tasks(chunks):
        if problem.wanted(task):
            problem.merge(task, run_task(shared, task)[0])
            problem.task_done(task)
            problem.settle()
    assert problem.scan.finished
    assert calls and set(calls) == {K - 1}  # the CUDA kernels, with every lower level
    land = problem.scan.landscape()
    assert len(land) == sum(len(t) for t in target)
    assert land.length_at(1).max() >= 8  # the copy is found
    for k in land.k:
        got = sorted((c.target_id, c.start, c.end) for c in land.candidates(k))
        assert got == kdiff_expected(target, background, k, 6), k


def _substituted(seq, positions):
    """``seq`` with the bases at ``positions`` swapped for others (one mismatch each)."""
    out = seq.copy()
    swap = {1: 2, 2: 4, 4: 8, 8: 1}
    for p in positions:
        out[p] = swap[int(out[p])]
    return out


def test_all_k_tier_routes_after_the_32_bit_lanes(monkeypatch):
    """kdiff --all-k with word32 at K = 3, the driver alone on a few starts of each kind: the
    starts that outgrow 32 reach the tiers by what the lanes left open. Near-copies with
    mismatches placed so that some starts outgrow 32 at K only (the register tiers without
    levels), some at K-1 and K-2 too but not at K-3 (the register tiers probing the top two
    levels), some whose level 2 passes 64 rows (they leave block 0 there and are re-run on
    the tiers that probe every level) and some with level 0 past 32 (those tiers directly).
    c and every level equal the oracle's."""
    # Register tiers whose chunks see each copy whole (the tiny ones' overlap, 12, would send
    # every long start to the exact tier).
    monkeypatch.setattr(config, "KDIFF_CUDA_BITPARALLEL_TIERS", ((2, 100), (3, 200)))
    calls = []
    original = cuda_bitparallel.BitparallelDriver._ladder

    def spy(self, rs, c, pending, m_end, mps, counters, levels, top=0, left=None):
        ok = original(self, rs, c, pending, m_end, mps, counters, levels, top, left)
        calls.append((levels is not None, top, len(pending),
                      sum(len(x) for x in left) if left is not None else 0))
        return ok

    monkeypatch.setattr(cuda_bitparallel.BitparallelDriver, "_ladder", spy)
    rng = np.random.default_rng(33)
    alpha = random_codes(rng, 150)
    pieces = [random_codes(rng, 3),
              _substituted(alpha[0:38], (9, 19, 29)),  # K only: c_2 < 32 <= c_3
              random_codes(rng, 2),
              _substituted(alpha[40:80], (12, 25)),  # level 2 past 32, levels 0, 1 short
              random_codes(rng, 2),
              _substituted(alpha[82:150], (4, 14)),  # level 2 past 64 rows
              random_codes(rng, 2),
              alpha[112:150].copy()]  # level 0 past 32
    beta = np.concatenate(pieces)
    K = 3
    rs = np.array([0, 3, 21, 40, 43, 60, 82, 85, 112, 114], dtype=np.int64)
    driver = cuda_bitparallel.BitparallelDriver(
        Device(beta, np.array([0, len(beta)], np.int64), 8), K, False, {"word32"}, levels=K)
    lv = np.empty((len(rs), K), np.int64)
    got = driver.run(alpha, rs, np.zeros(2, np.int64), lv)
    levels = [longest_prefixes(alpha, [beta], t + 1) for t in range(K + 1)]
    for i, r in enumerate(rs):
        want = [int(level[r]) for level in levels]
        assert list(lv[i]) + [got[i]] == want, (r, want, lv[i], got[i])
    plain = sum(n for lv, _, n, _ in calls if not lv)
    topped = sum(n for lv, top, n, _ in calls if lv and top)
    every = sum(n for lv, top, n, _ in calls if lv and not top)
    left = sum(x for *_, x in calls)
    assert plain and topped and every and left, calls


def test_all_k_every_level_starts_settled_from_samples(monkeypatch):
    """kdiff --all-k with word32 at K = 3: a 200-base stretch of the target shared with the
    background (two mismatches, exact runs of 59-75 bases, so every level outgrows 32)
    sends long runs of starts to the every-level tiers. Those run on samples of the run first and settle the
    starts between two samples from their bounds: c and every level still equal the oracle's
    start by start (within and across the mismatches, where the values jump), and the tiers
    scan fewer starts than the run holds."""
    monkeypatch.setattr(config, "KDIFF_CUDA_BITPARALLEL_TIERS", ((2, 100), (3, 200), (4, 400)))
    monkeypatch.setattr(config, "KDIFF_CUDA_LEVEL_STRIDES", (16, 4))
    scanned = []
    original = cuda_bitparallel.BitparallelDriver._ladder

    def spy(self, rs, c, pending, m_end, mps, counters, levels, top=0, left=None):
        if levels is not None and not top:
            scanned.extend(pending.tolist())
        return original(self, rs, c, pending, m_end, mps, counters, levels, top, left)

    monkeypatch.setattr(cuda_bitparallel.BitparallelDriver, "_ladder", spy)
    rng = np.random.default_rng(17)
    alpha = random_codes(rng, 220)
    beta = np.concatenate([random_codes(rng, 5), _substituted(alpha[10:210], (75, 140)),
                           random_codes(rng, 5)])
    K = 3
    rs = np.arange(len(alpha), dtype=np.int64)
    driver = cuda_bitparallel.BitparallelDriver(
        Device(beta, np.array([0, len(beta)], np.int64), 8), K, False, {"word32"}, levels=K)
    lv = np.empty((len(rs), K), np.int64)
    got = driver.run(alpha, rs, np.zeros(2, np.int64), lv)
    want = np.column_stack([longest_prefixes(alpha, [beta], t + 1) for t in range(K + 1)])
    np.testing.assert_array_equal(np.column_stack([lv, got]), want)
    long_run = int(np.sum(want[:, 0] >= 32))  # level 0 outgrew the word: the every-level tiers
    assert long_run > 90 and 0 < len(scanned) < long_run / 2, (long_run, len(scanned))


def _check_levels_on_one_record(alpha, beta, rs, K):
    """The driver's c and every level (kdiff --all-k up to K) for starts ``rs`` against
    the oracle's, on ``beta`` as one record; returns the oracle's (rs x K+1)."""
    driver = cuda_bitparallel.BitparallelDriver(
        Device(beta, np.array([0, len(beta)], np.int64), 8), K, False, {"word32"}, levels=K)
    lv = np.empty((len(rs), K), np.int64)
    got = driver.run(alpha, rs, np.zeros(2, np.int64), lv)
    want = np.column_stack([longest_prefixes(alpha, [beta], t + 1) for t in range(K + 1)])[rs]
    np.testing.assert_array_equal(np.column_stack([lv, got]), want)
    return want


def test_every_level_rows_below_the_band_and_back(monkeypatch):
    """The every-level tiers keep each level's row across columns where the band leaves its
    block and returns. K = 3, the driver on starts whose level 0 outgrew the lanes' word, one
    chunk: a near-copy of the target's tail with four edits first (every level's row is then
    past 64, below the band in the random stretches after it), one within K edits (c at K
    reaches the whole suffix there), then a long random stretch and a copy with one edit,
    where every lower level grows. c and every level equal the oracle's: the scan runs on
    past the copy that settles c."""
    monkeypatch.setattr(config, "KDIFF_CUDA_BITPARALLEL_TIERS", ((2, 100), (3, 200), (4, 400)))
    monkeypatch.setattr(config, "KDIFF_CUDA_MIN_CHUNK", 1024)
    rng = np.random.default_rng(64)
    alpha = random_codes(rng, 160)
    beta = np.concatenate([random_codes(rng, 4), _substituted(alpha[20:], (70, 80, 90, 100)),
                           random_codes(rng, 100), _substituted(alpha[20:], (30, 80, 120)),
                           random_codes(rng, 300), _substituted(alpha[20:], (100,)),
                           random_codes(rng, 7)])
    assert len(beta) < config.KDIFF_CUDA_MIN_CHUNK  # one chunk: no other sees the copies
    K = 3
    rs = np.arange(20, 56, 3, dtype=np.int64)
    want = _check_levels_on_one_record(alpha, beta, rs, K)
    assert (want[:, 0] > 64).all() and (want[:, 3] == len(alpha) - rs).all()


def test_every_level_rescored_in_a_block_grown_again(monkeypatch):
    """A level keeps its row's score from column to column (cuda_bitparallel.track_levels)
    only while the row's block carries its words over; a block dropped from the band and
    grown again the next column starts from fresh words, so its levels are scored afresh.
    K = 4, one chunk of random stretches and copies of the target's stretches with up to ten
    edits (found by a random search: start 4's level 1 came out 116 instead of 144 when the
    kept score went on there)."""
    monkeypatch.setattr(config, "KDIFF_CUDA_BITPARALLEL_TIERS", ((2, 100), (3, 200), (4, 400)))
    monkeypatch.setattr(config, "KDIFF_CUDA_MIN_CHUNK", 4096)
    rng = np.random.default_rng(504)
    alpha = random_codes(rng, 200)
    K = int(rng.integers(2, 5))
    parts = []
    for _ in range(int(rng.integers(3, 8))):
        parts.append(random_codes(rng, int(rng.integers(1, 120))))
        lo = int(rng.integers(0, 40))
        hi = int(rng.integers(lo + 50, 201))
        parts.append(mutate(rng, alpha[lo:hi], int(rng.integers(0, 2 * K + 3))))
    beta = np.concatenate(parts)
    assert K == 4 and len(beta) < config.KDIFF_CUDA_MIN_CHUNK  # one chunk
    rs = np.array([0, 2, 4, 6], np.int64)
    want = _check_levels_on_one_record(alpha, beta, rs, K)
    assert (want[:, 0] > 64).all()  # every level's row past block 0: the every-level tiers


def test_tier_plans_fill_a_wave_when_few_starts_run(monkeypatch):
    """BitparallelDriver.plan: with enough starts a chunk owns ratio x overlap columns (little
    work repeated); with few, chunks of that length would leave most of the GPU idle while
    each thread runs (ratio + 1) x overlap columns, so they shrink until one wave of
    threads runs (never below the minimum chunk)."""
    monkeypatch.setattr(config, "KDIFF_CUDA_MIN_CHUNK", 1024)
    monkeypatch.setattr(config, "KDIFF_CUDA_CHUNK_OVERLAP_RATIO", 4)
    monkeypatch.setattr(config, "KDIFF_CUDA_TIER_OCCUPANCY", 0.5)

    class Dev:  # 10 Mb of background; a wave is 50,000 threads, the target four
        offsets = np.array([0, 10_000_000], np.int64)
        target_threads = 200_000

        def resident_threads(self):
            return 100_000

    driver = cuda_bitparallel.BitparallelDriver.__new__(cuda_bitparallel.BitparallelDriver)
    driver.dev = Dev()

    def chunks(overlap, nr):
        lo, hi, _ = driver.plan(overlap, nr)
        return len(lo), int(np.max(hi - np.maximum(lo, 0)) - overlap)

    count, length = chunks(4096, 200)  # ratio x overlap: 122,200 threads, over a wave
    assert length == 4 * 4096 and count * 200 >= 50_000
    count, length = chunks(4096, 10)  # few starts: one wave, chunks of 2,000 columns
    assert length == 2000 and 50_000 <= count * 10 < 51_000
    count, length = chunks(4096, 1)  # never below the minimum chunk
    assert length == 1024
    count, length = chunks(100, 10_000)  # many: the target's four waves, chunks of 500,000
    assert length == 500_000 and count * 10_000 == 200_000


@given(start=COUNTER_STARTS, deltas=COUNTER_COLUMNS)
@settings(max_examples=40, deadline=None)
def test_level_counters_hold_at_their_top_and_flag_only_a_fall_at_zero(start, deltas):
    """cuda_lanes.count_deltas (the 64-row words' counters of e = D - M) against the plain
    model: held at 15 (a wrapped counter flagged its row at the next -1) and at 0,
    and a row flagged exactly when its counter is 0 and its delta -1."""
    def step(ph, mh, e0, e1, e2, e3):  # (count_deltas takes the counters first)
        return cuda_lanes.count_deltas.py_func(e0, e1, e2, e3, ph, mh, True)

    replay_counters(step, start, deltas)
