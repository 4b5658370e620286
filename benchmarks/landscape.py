"""kdiff --all-k (issue #33) at scale: M1, a 1 Mb human-like target region
(benchmarks.data.synthetic_region) against all of E. coli 536, both strands, --all-k 5,
the default variant (bitparallel simd), 2 threads: the time. (The --all-k 8 vs -k 8 ratio
is the P8 workload of ``python -m benchmarks kdiff``.)

Run: ``python -m benchmarks.landscape [LENGTH]`` (one JSON line; LENGTH defaults to 1 Mb).
"""

from __future__ import annotations

import json
import sys
import time

import numba

from benchmarks import data
from engine import kdiff


def _run(target, background, k, all_k, threads=2):
    options = dict(variant="bitparallel", backend="multicore", parallel="coarse",
                   flags=frozenset({"simd"}), threads=threads, all_k=all_k)
    kdiff.solve(target, [background.slice(0, 2000)], k, **options)  # compile / load first
    t0 = time.perf_counter()
    result = kdiff.solve(target, [background], k, **options)
    return result, time.perf_counter() - t0


def vector_width() -> str:
    """The widest vector unit LLVM targets here (what numba compiles the lanes for)."""
    features = numba.config.CPU_FEATURES or ""
    try:
        import llvmlite.binding as llvm

        features = llvm.get_host_cpu_features().flatten()
    except Exception:  # (older llvmlite: the name alone)
        pass
    if "+avx512f" in features:
        return "AVX-512 (512-bit)"
    if "+avx2" in features:
        return "AVX2 (256-bit)"
    return "SSE (128-bit)"


def m1(length: int = 1_000_000) -> dict:
    target = [data.synthetic_region(length)]
    background = data.ecoli()
    every, seconds = _run(target, background, 5, True)
    land = every.landscape
    return {"workload": "M1", "all_k5_s": round(seconds, 1), "starts": len(land),
            "candidates": {k: int((land.length_at(k) > 0).sum()) for k in land.k},
            "solve_s": round(every.info.seconds, 1), "vector": vector_width()}


if __name__ == "__main__":
    print(json.dumps(m1(int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000)), flush=True)
