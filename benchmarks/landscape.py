"""kdiff --all-k (issue #33) at scale: M1, a 1 Mb human-like target region
(benchmarks.data.synthetic_region) against all of E. coli 536, both strands, --all-k 5,
the default variant (bitparallel simd), 2 threads: the time. (The --all-k 8 vs -k 8 ratio
is the P8 workload of ``python -m benchmarks kdiff``.)

Run: ``python -m benchmarks.landscape [LENGTH]`` (one JSON line; LENGTH defaults to 1 Mb): the
solve's wall and CPU time (user+sys of every thread), the process's peak RSS and the load
average before and after, so that a run on a shared machine says what it had.
``python -m benchmarks.landscape ratio [TARGET BACKGROUND K [FORMS]]``: --all-k K against -k K
on lambda[20000:20000+TARGET] vs E. coli[0:BACKGROUND], both strands, 2 threads, FORMS
(``simd,blocked`` by default: the simd lanes and the blocked kernel), three alternating
repeats, wall and CPU time (a quick form of the P8 ratio on a busy machine).
"""

from __future__ import annotations

import json
import resource
import sys
import time

import numba

from benchmarks import data
from engine import kdiff


def _run(target, background, k, all_k, threads=2):
    """The solve (after a small one that compiles or loads the kernels): the result, its wall
    seconds and its CPU seconds (user+sys of the process, every thread)."""
    options = dict(variant="bitparallel", backend="multicore", parallel="coarse",
                   flags=frozenset({"simd"}), threads=threads, all_k=all_k)
    kdiff.solve(target, [background.slice(0, 2000)], k, **options)  # compile / load first
    c0, t0 = _cpu_seconds(), time.perf_counter()
    result = kdiff.solve(target, [background], k, **options)
    return result, time.perf_counter() - t0, _cpu_seconds() - c0


def _cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _peak_rss_mb() -> float:
    """The process's peak resident set (Linux reports ru_maxrss in KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


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
    load_before = _load()
    every, seconds, cpu = _run(target, background, 5, True)
    land = every.landscape
    return {"workload": "M1", "target_bases": length, "all_k5_s": round(seconds, 1),
            "solve_s": round(every.info.seconds, 1), "cpu_s": round(cpu, 1),
            "peak_rss_mb": round(_peak_rss_mb()), "starts": len(land),
            "candidates": {k: int((land.length_at(k) > 0).sum()) for k in land.k},
            "load_before": load_before, "load_after": _load(), "vector": vector_width()}


def ratio(target_len: int = 300, background_len: int = 300_000, k: int = 8,
          forms: str = "simd,blocked") -> dict:
    """Wall and CPU time (user+sys of this process, every thread: the load of a shared
    machine moves it less) of each solve, -k K and --all-k K alternating, and the load
    average around them."""
    target = [data.lambda_phage().slice(20_000, 20_000 + target_len)]
    background = [data.ecoli().slice(0, background_len)]
    out = {"workload": f"lambda {target_len} vs E. coli {background_len}, k={k}",
           "vector": vector_width(), "load_before": _load()}
    for name in forms.split(","):
        flags = frozenset({"simd"}) if name == "simd" else frozenset()
        options = dict(variant="bitparallel", backend="multicore", parallel="coarse",
                       flags=flags, threads=2)
        for all_k in (False, True):
            kdiff.solve(target, [background[0].slice(0, 300)], k, all_k=all_k, **options)
        seconds = {False: [], True: []}
        cpu = {False: [], True: []}
        for _ in range(3):
            for all_k in (False, True):
                c0 = time.process_time()
                res = kdiff.solve(target, background, k, all_k=all_k, **options)
                cpu[all_k].append(round(time.process_time() - c0, 3))
                seconds[all_k].append(round(res.info.seconds, 3))
        out[name] = {"single_s": seconds[False], "all_k_s": seconds[True],
                     "ratio": round(min(seconds[True]) / min(seconds[False]), 2),
                     "single_cpu_s": cpu[False], "all_k_cpu_s": cpu[True],
                     "cpu_ratio": round(min(cpu[True]) / min(cpu[False]), 2)}
    out["load_after"] = _load()
    return out


def _load() -> str:
    with open("/proc/loadavg") as fh:
        return " ".join(fh.read().split()[:3])


if __name__ == "__main__":
    if sys.argv[1:2] == ["ratio"]:
        args = sys.argv[2:]
        print(json.dumps(ratio(*map(int, args[:3]), *args[3:4])), flush=True)
    else:
        print(json.dumps(m1(int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000)), flush=True)
