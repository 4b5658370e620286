"""Where a kdiff bitparallel/cuda solve spends its GPU time, stage by stage (the device has
no nsys): every lanes stage and tier launch of :class:`BitparallelDriver` is timed with a
device synchronisation before and after it, keyed by what ran.

    python3 scripts/probe/kdiff_stages.py WORKLOAD FLAGS [all-k]

WORKLOAD names one of benchmarks/kdiff_cuda.py (W4k8: lambda vs E. coli 536, k=8, both
strands); FLAGS is comma-separated (word32). Prints, per key (lanes word / tier kernel words,
levels, top, exact), the launches, starts, seconds and cells, then the solve's total,
and the starts entering each kind of tier ladder (none, the top levels, every level).
The synchronisations add a little to each launch; compare the shares, not the total.

LAUNCH_LOG=1 also prints each tier launch of the timed solve that probes levels (words,
starts, threads, chunk columns, overlap, seconds, cells). REPLAY=1 re-runs each every-level
ladder's starts right after it through the ladder without levels (register tiers; its
result is discarded), keyed "replay ...": what those starts cost at one k.
"""
import collections
import os
import sys
import time

import numpy as np
from numba import cuda

from benchmarks import data
from benchmarks.kdiff_cuda import WORKLOADS
from engine import config, kdiff
from engine.kdiff import cuda_bitparallel as cbp

work, flag_arg = sys.argv[1], sys.argv[2]
all_k = len(sys.argv) > 3 and sys.argv[3] == "all-k"
flags = frozenset(flag_arg.split(","))
starts, length, k, strands = WORKLOADS[work]
lam, eco = data.lambda_phage(), data.ecoli()
target = lam.slice(0, starts) if starts else lam
background = eco.slice(0, length) if length else eco

table = collections.defaultdict(lambda: [0, 0, 0.0, 0])  # launches, starts, seconds, cells
lanes_run, launch = cbp.BitparallelDriver._lanes, cbp.BitparallelDriver._launch


def timed_lanes(self, stage, alpha, rs, counters, low=None, high=None, lv=None):
    cuda.synchronize()
    t0, c0 = time.perf_counter(), int(counters[0])
    got = lanes_run(self, stage, alpha, rs, counters, low, high, lv)
    cuda.synchronize()
    row = table[f"lanes word{stage.word}" + (" levels" if lv is not None else "")]
    row[0] += 1
    row[1] += len(rs)
    row[2] += time.perf_counter() - t0
    row[3] += int(counters[0]) - c0
    return got


def timed_launch(self, rs, c0, m_end, words, overlap, counters, exact=False, lv=None, top=0):
    cuda.synchronize()
    t0, cells0 = time.perf_counter(), int(counters[0])
    out = launch(self, rs, c0, m_end, words, overlap, counters, exact, lv, top)
    cuda.synchronize()
    kw = self.kernel_words(words, exact, lv is not None and not top)
    key = (f"tier words={words} {'registers' if kw else 'global'}"
           + (f" levels top={top}" if lv is not None else "") + (" exact" if exact else ""))
    if REPLAYING:
        key = "replay " + key
    row = table[key]
    row[0] += 1
    row[1] += len(rs)
    row[2] += time.perf_counter() - t0
    row[3] += int(counters[0]) - cells0
    if LOG and TIMED and lv is not None:
        lo, hi, _ = self.plan(overlap, len(rs))
        print(f"    launch words={words} kw={kw} top={top} exact={exact} starts={len(rs)} "
              f"threads={len(rs) * len(lo)} cols={int((hi - lo).max())} overlap={overlap} "
              f"seconds={time.perf_counter() - t0:.4f} cells={int(counters[0]) - cells0:.3e} "
              f"maxc={int(out[0].max())}")
    return out


LOG, REPLAY = os.environ.get("LAUNCH_LOG"), os.environ.get("REPLAY")
REPLAYING = TIMED = False
ladders = collections.defaultdict(lambda: [0, 0])  # (levels?, top) -> ladders, starts
ladder = cbp.BitparallelDriver._ladder


def counted_ladder(self, rs, c, pending, m_end, mps, counters, levels, top=0, left=None):
    global REPLAYING
    every = levels is not None and not top
    if every and REPLAY and not REPLAYING:
        REPLAYING = True
        ladder(self, rs, c.copy(), np.array(pending), m_end, mps, np.zeros(2, np.int64), None)
        REPLAYING = False
    row = ladders[("every level" if every else f"top {top} levels" if top else "no levels")]
    row[0] += 1
    row[1] += len(pending)
    return ladder(self, rs, c, pending, m_end, mps, counters, levels, top, left)


cbp.BitparallelDriver._lanes = timed_lanes
cbp.BitparallelDriver._ladder = counted_ladder
cbp.BitparallelDriver._launch = timed_launch


def solve():
    return kdiff.solve([target], [background], k, variant="bitparallel", backend="cuda",
                       flags=flags, strands=strands, all_k=all_k)


solve()  # compile or load the kernels on the real shapes
table.clear()
ladders.clear()
TIMED = True
t0 = time.perf_counter()
res = solve()
wall = time.perf_counter() - t0
print(f"{work} flags={flag_arg} all_k={all_k} register_words={config.KDIFF_CUDA_REGISTER_WORDS}"
      f" top_levels={cbp.TIER_TOP_LEVELS}: candidates={len(res.candidates)} "
      f"solve={res.info.seconds:.3f}s wall={wall:.3f}s cells={res.info.cells:.3e}")
total = sum(r[2] for r in table.values())
for key, (n, s, sec, cells) in sorted(table.items(), key=lambda kv: -kv[1][2]):
    print(f"  {key:48s} launches={n:5d} starts={s:9d} seconds={sec:8.3f} "
          f"({100 * sec / max(total, 1e-9):5.1f} %) cells={cells:.3e}")
for key, (n, s) in ladders.items():
    print(f"  ladder {key:14s} calls={n:4d} starts entering={s:9d}")
if all_k:  # how long the candidates are at each k (lengths past a word need the tiers)
    if os.environ.get("SAVE_LANDSCAPE"):  # starts x k candidate lengths (0: none), for replays
        np.save(os.environ["SAVE_LANDSCAPE"], np.asarray(res.landscape.lengths))

    for kk in res.landscape.k:
        n = np.asarray(res.landscape.length_at(kk), dtype=np.float64)
        n = n[np.isfinite(n) & (n > 0)]
        print(f"  k={kk}: starts={len(n)} mean={n.mean():.1f} "
              + " ".join(f">{w}:{int((n > w).sum())}" for w in (32, 64, 128, 256, 1024)))
