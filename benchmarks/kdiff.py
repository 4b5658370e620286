"""kdiff benchmark workloads (issue 2) and the edlib baseline script.

W1: alpha = lambda[0:500],   beta = E. coli[0:241494], k = 100, forward
W2: alpha = lambda[0:43606], beta = E. coli[0:241494], k = 100, forward (the seed study's scale)
W3: alpha = lambda[0:300],   beta = E. coli[0:300000], k = 5,   forward
P5: alpha = lambda[20000:25000], beta = all of E. coli 536, k = 5, both strands (issue 10's
    2-core job: bitparallel's simd lanes against the blocked kernel in the same run)
P8: P5's inputs at k = 8: ``--all-k 8`` (every k in one scan) against one run at k = 8
    (issue 33; goal: at most 1.3x). The 1 Mb --all-k 5 run is benchmarks/landscape.py.
"""

from __future__ import annotations

import numpy as np

from engine import kdiff
from benchmarks import Case, Ratio, timed
from benchmarks import data
from engine.jobs import drive
from benchmarks import kdiff_cuda as cuda_bench  # the cuda backend's cases (issue 5); imports no numba.cuda
from engine.sequences import decode

WORKLOADS = {  # (target start, target end, background length or None for all, k, strands)
    "W1": (0, 500, 241_494, 100, "forward"),
    "W2": (0, 43_606, 241_494, 100, "forward"),
    "W3": (0, 300, 300_000, 5, "forward"),
    "P5": (20_000, 25_000, None, 5, "both"),
    "P8": (20_000, 25_000, None, 8, "both"),
}

RATIOS = (
    Ratio("W1", "bitparallel/serial", "conventional/serial+opt1", 15.0,
          "bitparallel serial vs conventional+opt1 serial"),
    Ratio("W1", "bitparallel/multicore/coarse", "bitparallel/serial", 1.8,
          "bitparallel coarse multicore vs serial"),
    Ratio("W1", "alternative/multicore/coarse+opt2", "alternative/serial+opt2", 1.8,
          "alternative coarse multicore vs serial"),
    Ratio("W3", "bitparallel/serial", "edlib binary search (script)", 3.0,
          "bitparallel serial vs edlib HW binary search per r"),
    Ratio("W1", "bitparallel/serial+simd", "bitparallel/serial", None,
          "bitparallel simd vs blocked, serial (k=100: simd hands over to blocked)"),
    Ratio("W3", "bitparallel/serial+simd", "bitparallel/serial", None,
          "bitparallel simd vs blocked, serial"),
    Ratio("P5", "bitparallel/multicore/coarse+simd", "bitparallel/multicore/coarse", 8.0,
          "bitparallel simd vs blocked, 2 cores (goal: <= 30 s)"),
    # speed-up >= 1/1.3: --all-k 8 costs at most 1.3x the one run at k = 8
    Ratio("P8", "bitparallel/multicore/coarse+simd all-k", "bitparallel/multicore/coarse+simd",
          round(1 / 1.3, 3), "--all-k 8 vs -k 8, 2 cores (goal: cost <= 1.3x)"),
) + cuda_bench.RATIOS


def _inputs(workload):
    a, b, n, k, _ = WORKLOADS[workload]
    ecoli = data.ecoli()
    return [data.lambda_phage().slice(a, b)], [ecoli.slice(0, n or len(ecoli))], k


def _kdiff_case(workload, variant, backend, parallel=None, flags=(), threads=None, counting=False,
                all_k=False):
    def run():
        target, background, k = _inputs(workload)
        strands = WORKLOADS[workload][4]
        job = kdiff.make_job(target, background, k, variant=variant, backend=backend,
                             parallel=parallel, flags=frozenset(flags), strands=strands,
                             threads=threads, count_comparisons=counting, all_k=all_k)
        # Warm-up compiles (or loads) the kernels; solve time excludes it, as --json does.
        kdiff.solve(target[:1], [background[0].slice(0, 200)], k, variant=variant,
                    backend=backend, parallel=parallel, flags=frozenset(flags), strands=strands,
                    threads=threads, count_comparisons=counting, all_k=all_k)
        result = drive(kdiff.iter_solve(job))
        info = result.info
        lengths = [c.length for c in result.candidates]
        metrics = {"seconds": info.seconds, "candidates": len(lengths),
                   "mean_len": float(np.mean(lengths)) if lengths else 0.0,
                   "cells": info.cells}
        if variant == "bitparallel":  # one 64-bit Myers step per (r, background position)
            steps = len(lengths) * sum(2 * len(b) if strands == "both" else len(b)
                                       for b in background)
            metrics["word_steps_per_s"] = steps / info.seconds if info.seconds else 0.0
        if counting:
            metrics["comparisons"] = info.comparisons
            metrics["cmp_per_s"] = info.comparisons / info.seconds if info.seconds else 0.0
        return metrics

    name = f"{variant}/{backend}" + (f"/{parallel}" if parallel else "")
    name += "".join("+" + f for f in sorted(flags)) + (" all-k" if all_k else "")
    return Case("kdiff", workload, name, run, describe=f"k-difference primers, {workload}")


def edlib_longest_prefix(pattern: str, beta: str, k: int) -> int:
    """Binary search for the longest prefix of ``pattern`` that edlib finds in ``beta``
    within k-1 edits (HW, infix mode). Prefix occurrence is monotone, so this is exact."""
    import edlib

    K = k - 1
    lo, hi = min(K, len(pattern)), len(pattern)  # prefixes of length <= K always occur
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if edlib.align(pattern[:mid], beta, mode="HW", task="distance", k=K)["editDistance"] != -1:
            lo = mid
        else:
            hi = mid - 1
    return lo


def edlib_binary_search(alpha: str, beta: str, k: int) -> list[int]:
    """The script a user would otherwise write: :func:`edlib_longest_prefix` for each r,
    until the first r whose whole suffix occurs. Returns c(r)."""
    out = []
    for r in range(len(alpha)):
        c = edlib_longest_prefix(alpha[r:], beta, k)
        out.append(c)
        if c == len(alpha) - r:
            break
    return out


def _edlib_case(workload):
    def run():
        target, background, k = _inputs(workload)
        alpha, beta = decode(target[0].codes), decode(background[0].codes)
        seconds, cs = timed(lambda: edlib_binary_search(alpha, beta, k))
        ours = kdiff.solve(target, background, k, variant="bitparallel", backend="serial",
                           strands="forward")
        agree = np.array_equal(np.array(cs), ours.profiles[target[0].id])
        return {"seconds": seconds, "positions": len(cs), "agrees_with_bitparallel": bool(agree)}

    return Case("kdiff", workload, "edlib binary search (script)", run,
                describe="edlib.align HW per probe, binary search per r")


def cases(opts) -> list[Case]:
    threads = getattr(opts, "threads", None) or 2
    if getattr(opts, "backend", None) == "cuda":  # the GPU figures of issue 5
        return cuda_bench.cases(opts)
    return [
        _kdiff_case("W1", "conventional", "serial", flags=("opt1",), counting=True),
        _kdiff_case("W1", "alternative", "serial", flags=("opt2",), counting=True),
        _kdiff_case("W1", "bitparallel", "serial"),
        _kdiff_case("W1", "bitparallel", "multicore", "coarse", threads=threads),
        _kdiff_case("W1", "alternative", "multicore", "coarse", flags=("opt2",), threads=threads),
        _kdiff_case("W2", "bitparallel", "multicore", "coarse", threads=threads),
        _kdiff_case("W3", "bitparallel", "serial"),
        _edlib_case("W3"),
        _kdiff_case("W1", "bitparallel", "serial", flags=("simd",)),
        _kdiff_case("W3", "bitparallel", "serial", flags=("simd",)),
        _kdiff_case("P5", "bitparallel", "multicore", "coarse", flags=("simd",), threads=threads),
        _kdiff_case("P5", "bitparallel", "multicore", "coarse", threads=threads),
        _kdiff_case("P8", "bitparallel", "multicore", "coarse", flags=("simd",), threads=threads),
        _kdiff_case("P8", "bitparallel", "multicore", "coarse", flags=("simd",), threads=threads,
                    all_k=True),
    ]
