"""lcs benchmark workloads (issue 3).

L1: a = lambda[0:48502], b = E. coli[0:48502], the length only (score pass), every
    variant x backend and RapidFuzz ``LCSseq.similarity`` on the same strings; and
    the parallel ceiling of the machine at that moment (the serial kernel, which
    releases the GIL, run twice side by side), to read the multicore ratios by.
L2: a = E. coli[0:100000], b = E. coli[1000000:1100000], full recovery of one LCS
    (Hirschberg), time and peak memory, each case in a fresh process.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time

from engine import lcs
from benchmarks import Case, Ratio, timed
from benchmarks import data
from engine.jobs import drive
from benchmarks import lcs_cuda as cuda_bench  # the cuda backend's cases (issue 6); imports no numba.cuda

RATIOS = (
    Ratio("L1", "bitparallel/serial", "rapidfuzz LCSseq.similarity", 0.8,
          "bitparallel serial vs RapidFuzz LCSseq.similarity"),
    Ratio("L1", "bitparallel/multicore", "bitparallel/serial", 1.5,
          "bitparallel multicore vs its serial"),
    Ratio("L1", "wavefront/multicore", "wavefront/serial", None, "wavefront multicore vs its serial"),
    Ratio("L1", "rows/multicore", "rows/serial", None, "rows multicore vs its serial"),
    Ratio("L1", "wavefront/serial", "rows/serial", None, "wavefront serial vs rows serial"),
) + cuda_bench.RATIOS

L1_LENGTH = 48_502
L2_SLICES = ((0, 100_000), (1_000_000, 1_100_000))


def _l1():
    return data.lambda_phage().slice(0, L1_LENGTH), data.ecoli().slice(0, L1_LENGTH)


def _length_case(variant: str, backend: str, threads: int, repeat: int) -> Case:
    def run():
        a, b = _l1()
        options = dict(variant=variant, backend=backend, task="length",
                       threads=threads if backend == "multicore" else None)
        lcs.solve(a.slice(0, 300), b.slice(0, 300), **options)  # compile or load the kernels
        job = lcs.make_job(a, b, **options)
        best = None
        for _ in range(repeat):
            # Wall time of the whole generator, set-up and progress reports included.
            c0, t0 = time.process_time(), time.perf_counter()
            res = drive(lcs.iter_solve(job))
            wall, cpu = time.perf_counter() - t0, time.process_time() - c0
            if best is None or wall < best[0]:
                best = wall, cpu, res
        wall, cpu, res = best
        # CPU time of all threads: on a busy machine it shows what the threads did
        # when the wall clock cannot (it includes the compiled code's waits).
        return {"seconds": wall, "solve_seconds": res.info.seconds, "length": res.length,
                "cells": res.info.cells, "gcells_per_s": res.info.cells / wall / 1e9,
                "cpu_seconds": cpu, "threads": res.info.threads}

    return Case("lcs", "L1", f"{variant}/{backend}", run,
                describe="LCS length, lambda[0:48502] vs E. coli[0:48502]")


def _rapidfuzz_case(repeat: int) -> Case:
    def run():
        from rapidfuzz.distance import LCSseq

        a, b = _l1()
        text_a, text_b = a.text, b.text
        LCSseq.similarity(text_a[:300], text_b[:300])
        seconds, value = timed(lambda: LCSseq.similarity(text_a, text_b), repeat=repeat)
        return {"seconds": seconds, "length": value,
                "gcells_per_s": len(text_a) * len(text_b) / seconds / 1e9}

    return Case("lcs", "L1", "rapidfuzz LCSseq.similarity", run,
                describe="the peer, same strings, same run")


def _ceiling_case(threads: int) -> Case:
    """The parallel ceiling of this machine at this moment: the serial kernel (it
    releases the GIL) run ``threads`` times, one after another or side by side."""
    def run():
        from concurrent.futures import ThreadPoolExecutor

        a, b = _l1()
        job = lcs.make_job(a, b, variant="bitparallel", backend="serial", task="length")
        once = lambda _=None: drive(lcs.iter_solve(job))  # noqa: E731
        length = once().length  # compiles or loads the kernels
        in_turn, _ = timed(lambda: [once() for _ in range(threads)], repeat=3)
        with ThreadPoolExecutor(threads) as pool:
            side_by_side, _ = timed(lambda: list(pool.map(once, range(threads))), repeat=3)
        return {"seconds": side_by_side, "in_turn_seconds": in_turn,
                "ceiling": in_turn / side_by_side, "length": length}

    return Case("lcs", "L1", f"ceiling: {threads} serial passes side by side", run,
                describe="how much parallel speed-up this machine allows right now")


_RECOVERY_SCRIPT = textwrap.dedent("""
    import json, resource, sys, threading, time
    from engine import lcs
    from benchmarks import data
    variant, backend, threads = sys.argv[1], sys.argv[2], int(sys.argv[3])
    (a0, a1), (b0, b1) = json.loads(sys.argv[4])
    a, b = data.ecoli().slice(a0, a1), data.ecoli().slice(b0, b1)
    options = dict(variant=variant, backend=backend, threads=threads if backend == "multicore" else None)
    lcs.solve(a.slice(0, 300), b.slice(0, 300), **options)
    def rss():
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[1]) * resource.getpagesize()
    base, peak, stop = rss(), [0], []
    def watch():
        while not stop:
            peak[0] = max(peak[0], rss())
            time.sleep(0.001)
    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    res = lcs.solve(a, b, **options)
    stop.append(1)
    watcher.join()
    print(json.dumps({"seconds": res.info.seconds, "length": res.length, "cells": res.info.cells,
                      "rss_before_mib": base / 2**20,
                      "peak_growth_mib": (max(peak[0], rss()) - base) / 2**20,
                      "max_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
""")


def _recovery_case(variant: str, backend: str, threads: int) -> Case:
    def run():
        out = subprocess.run([sys.executable, "-c", _RECOVERY_SCRIPT, variant, backend, str(threads),
                              json.dumps(L2_SLICES)], capture_output=True, text=True, check=True)
        got = json.loads(out.stdout.strip().splitlines()[-1])
        m = L2_SLICES[0][1] - L2_SLICES[0][0]
        n = L2_SLICES[1][1] - L2_SLICES[1][0]
        got["full_int32_matrix_mib"] = m * n * 4 / 2**20
        return got

    return Case("lcs", "L2", f"recover {variant}/{backend}", run,
                describe="one LCS of E. coli[0:100k] and E. coli[1M:1.1M] in linear space")


def cases(opts) -> list[Case]:
    if getattr(opts, "backend", None) == "cuda":  # the GPU figures of issue 6
        return cuda_bench.cases(opts)
    threads = getattr(opts, "threads", None) or 2
    out = [_rapidfuzz_case(repeat=5), _ceiling_case(threads)]
    for variant, repeat in (("bitparallel", 5), ("wavefront", 1), ("rows", 1)):
        for backend in ("serial", "multicore"):
            out.append(_length_case(variant, backend, threads, repeat))
    out += [_recovery_case("bitparallel", "serial", threads),
            _recovery_case("bitparallel", "multicore", threads),
            _recovery_case("wavefront", "multicore", threads)]
    return out
