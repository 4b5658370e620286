"""The 32-bit lanes stage of kdiff bitparallel/cuda on W4k8 (lambda vs E. coli 536, k=8,
word32) for several starts-a-thread (R) and threads-a-block choices, with and without the
all-k levels: the stage's seconds in the second solve of each (a device sync around each
launch), the solve's seconds and its candidates (which must not change).

    python3 scripts/probe/lanes_sweep.py [R:TPB ...]      # default: 4:128 2:128 1:256

Each choice compiles its own lanes kernels (numba caches them on disk); only the first
also runs at one k (-k 8)."""
import sys
import time

from numba import cuda

from benchmarks import data
from benchmarks.kdiff_cuda import WORKLOADS
from engine import config, kdiff
from engine.kdiff import cuda_bitparallel as cbp

starts, length, k, strands = WORKLOADS["W4k8"]
lam, eco = data.lambda_phage(), data.ecoli()
target = lam.slice(0, starts) if starts else lam
background = eco.slice(0, length) if length else eco
spent = [0.0]
lanes_run = cbp.BitparallelDriver._lanes


def timed_lanes(self, stage, alpha, rs, counters, low=None, high=None, lv=None):
    cuda.synchronize()
    t0 = time.perf_counter()
    got = lanes_run(self, stage, alpha, rs, counters, low, high, lv)
    cuda.synchronize()
    spent[0] += time.perf_counter() - t0
    return got


cbp.BitparallelDriver._lanes = timed_lanes
for choice in sys.argv[1:] or ["4:128", "2:128", "1:256"]:
    R, tpb = (int(x) for x in choice.split(":"))
    config.KDIFF_CUDA_LANES_PER_THREAD = {32: R, 64: max(1, R // 2)}
    config.KDIFF_CUDA_LANES_THREADS_PER_BLOCK = tpb
    for all_k in ((False, True) if choice == (sys.argv[1:] or ["4:128"])[0] else (True,)):
        for _ in range(2):  # the first compiles (or loads) the kernels
            spent[0] = 0.0
            res = kdiff.solve([target], [background], k, variant="bitparallel", backend="cuda",
                              flags={"word32"}, strands=strands, all_k=all_k)
        print(f"R={R} tpb={tpb} all_k={all_k}: lanes {spent[0]:.3f} s, solve "
              f"{res.info.seconds:.3f} s, candidates {len(res.candidates)}", flush=True)
