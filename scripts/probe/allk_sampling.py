"""Replay kdiff --all-k's every-level sampling on CUDA (BitparallelDriver._every_level) on a
saved landscape, without a GPU: which starts the 32-bit lanes would send to the tiers that
probe every level, and how many of them each choice of strides scans before the neighbours'
bounds (engine.kdiff.neighbours.SliceBounds) settle the rest; every settled value is
checked against the landscape.

    SAVE_LANDSCAPE=w4k8.npy python3 scripts/probe/kdiff_stages.py W4k8 word32 all-k  # GPU
    python3 scripts/probe/allk_sampling.py w4k8.npy [SLICE_STARTS]

The landscape (starts x k candidate lengths, 0 where none) must be of one target record;
SLICE_STARTS (default 1000) is about a CUDA slice's starts on W4k8 (the samples never
cross a slice). The last line counts the runs of starts whose c and levels all fall by one
a start (a start settles from samples only where it lies between two of its run's, or
where a level the lanes settled already pins it).
"""
import sys

import numpy as np

from engine.kdiff.cuda_bitparallel import TIER_TOP_LEVELS
from engine.kdiff.neighbours import SliceBounds

WORD = 32


def every_level_starts(C, mp, K, lo, hi):
    """The starts of [lo, hi) the lanes hand to the every-level tiers (_tiers: a lower level
    past the word below the top ones, or a top level past 64 rows)."""
    r = np.arange(lo, hi)
    pend = r[(C[r, K] >= WORD) & (mp[r] > WORD)]
    open_ = C[pend, :K] >= WORD
    some = open_.any(1)
    below = open_[:, :K - TIER_TOP_LEVELS].any(1)
    topped = pend[some & ~below]
    tops = C[topped, K - TIER_TOP_LEVELS:K]
    left = topped[np.any((tops >= 64) & (tops < mp[topped, None]), axis=1)]
    return np.sort(np.concatenate([pend[some & below], left]))


def scans(C, mp, K, pending, strides):
    """Starts scanned (and ladder calls) to settle ``pending`` with these strides."""
    if not len(pending):
        return 0, 0
    cols = []
    for t in range(K + 1):
        exact = C[pending, t]
        known = (np.zeros(len(pending), bool) if t == K
                 else (exact < WORD) | (exact >= mp[pending]))
        cols.append(SliceBounds(pending, np.where(known, exact, np.minimum(exact, WORD)), known,
                                mp[pending]))
    total = calls = 0
    for stride in tuple(strides) + (1,):
        todo = np.flatnonzero(~np.logical_and.reduce([b.known for b in cols]))
        if not len(todo):
            break
        pick = todo if stride == 1 else np.unique(np.append(todo[::stride], todo[-1]))
        total, calls = total + len(pick), calls + 1
        for t, bounds in enumerate(cols):
            bounds.settle(pick, C[pending[pick], t])
            bounds.infer()
    for t, bounds in enumerate(cols):
        assert np.array_equal(bounds.c, C[pending, t]), f"column {t} settled wrongly"
    return total, calls


def main():
    lengths = np.load(sys.argv[1]).astype(np.int64)
    per_slice = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
    n, K = lengths.shape[0], lengths.shape[1] - 1
    mp = n - np.arange(n)
    C = np.where(lengths > 0, lengths - 1, mp[:, None])  # c at 0..K edits (none: the suffix)
    slices = [every_level_starts(C, mp, K, lo, min(n, lo + per_slice))
              for lo in range(0, n, per_slice)]
    print(f"starts {n}, K {K}, every-level starts {sum(len(p) for p in slices)}")
    for strides in [(), (16, 4), (16, 4, 2), (32, 8, 2), (64, 16, 4), (64, 16, 4, 2)]:
        got = [scans(C, mp, K, p, strides) for p in slices]
        print(f"strides {strides!s:16s} scans {sum(g[0] for g in got):7d} "
              f"ladder calls {sum(g[1] for g in got):5d}")
    segments = singles = 0
    for p in slices:
        if len(p):
            same = np.all(C[p[:-1]] - C[p[1:]] == (p[1:] - p[:-1])[:, None], axis=1)
            runs = np.diff(np.concatenate([[0], np.flatnonzero(~same) + 1, [len(p)]]))
            segments += len(runs)
            singles += int((runs == 1).sum())
    print(f"runs of equal fall {segments} ({singles} single starts)")


if __name__ == "__main__":
    main()
