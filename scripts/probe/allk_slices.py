"""kdiff --all-k on CUDA against one k, at several slice durations (config.SLICE_SECONDS):
the every-level ladder runs per slice, so short slices give it few starts a launch.

    python3 scripts/probe/allk_slices.py WORKLOAD SECONDS...   (e.g. W4k8 0.1 1 4)

Prints, per slice duration, the solve time of ``-k K`` and of ``--all-k K`` (word32, the
second solve of each) and their ratio, and checks that the candidates at K agree.
"""
import sys

from benchmarks import data
from benchmarks.kdiff_cuda import WORKLOADS
from engine import config, kdiff

work, durations = sys.argv[1], [float(s) for s in sys.argv[2:]]
starts, length, k, strands = WORKLOADS[work]
lam, eco = data.lambda_phage(), data.ecoli()
target = lam.slice(0, starts) if starts else lam
background = eco.slice(0, length) if length else eco


def solve(all_k):
    return kdiff.solve([target], [background], k, variant="bitparallel", backend="cuda",
                       flags={"word32"}, strands=strands, all_k=all_k)


solve(False), solve(True)  # compile or load the kernels
for seconds in durations:
    config.SLICE_SECONDS = seconds
    one, every = [], []
    for _ in range(2):
        one.append(solve(False))
        every.append(solve(True))
    a, b = min(r.info.seconds for r in one), min(r.info.seconds for r in every)
    agree = every[-1].landscape.candidates(k) == one[-1].candidates
    print(f"{work} SLICE_SECONDS={seconds}: -k {k} {a:.3f} s, --all-k {k} {b:.3f} s, "
          f"ratio {b / a:.2f}x, candidates {len(one[-1].candidates)}, agree={agree}", flush=True)
