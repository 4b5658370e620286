"""lcs benchmark cases of the cuda backend (``primerscope bench lcs --backend cuda``).

G1  a = E. coli[0:1e6], b = E. coli[2e6:3e6], the length only (one score pass):
    bitparallel/cuda, its kernel alone (one launch over the whole pass, timed with CUDA
    events) and end to end (the job: uploads, match words, launches, last row); sweeps of
    tile columns and threads per block; the tiled wavefront on the same input, and the
    CPU bitparallel (multicore) as the check of the length. Goal: >= 5 TCUPS.
F7  the seed study's Fig. 7: the wavefront kernel against serial code by length, on
    a = lambda[0:L], b = E. coli[0:L], L = 2000, 8000, 20000 and 48502 (L = 100000:
    a = E. coli[1e6:1.1e6], lambda being shorter): rows/serial and wavefront/serial (CPU)
    against wavefront/cuda in both parallel forms (the seed's one launch per
    anti-diagonal, and the tiled form), and bitparallel/cuda.
H1  a = E. coli[0:100000], b = E. coli[1000000:1100000]: one LCS recovered on the GPU
    (Hirschberg: score passes on the GPU, small subproblems on the CPU; also with smaller
    leaves), against the CPU bitparallel (multicore) recovery.

Every CUDA row names the device and says whether its length agrees with the first run
of the same workload (``agrees``). Peers (CPU runs) have names without a '/', so that
``--backend cuda`` keeps them.
"""

from __future__ import annotations

import os
import time

import numpy as np

from engine import config, lcs
from benchmarks import Case, Ratio
from benchmarks import data
from engine.jobs import drive

G1 = ((0, 1_000_000), (2_000_000, 3_000_000))
F7_LENGTHS = (2_000, 8_000, 20_000, 48_502, 100_000)
H1 = ((0, 100_000), (1_000_000, 1_100_000))
#: Skip a CPU peer whose predicted time (from a smaller run) exceeds this.
LONG_RUN_SECONDS = 60.0

RATIOS = tuple(
    Ratio(f"F7-{n}", subject, baseline, None, f"{subject} vs {baseline}, {n} x {n}")
    for n in F7_LENGTHS
    for subject, baseline in (("wavefront/cuda/diagonal", "rows serial (peer)"),
                              ("wavefront/cuda/diagonal", "wavefront serial (peer)"),
                              ("wavefront/cuda/tiled", "rows serial (peer)"),
                              ("wavefront/cuda/tiled", "wavefront serial (peer)"))
) + (
    Ratio("G1", "bitparallel/cuda", "bitparallel multicore (peer)", None,
          "bitparallel cuda vs multicore, 1M x 1M"),
    Ratio("H1", "recover bitparallel/cuda", "recover bitparallel multicore (peer)", None,
          "LCS recovery (Hirschberg) cuda vs multicore, 100k x 100k"),
)

_lengths: dict = {}  # workload -> the first length measured (the reference)
_rates: dict = {}    # (workload, name) -> cells per second


def _pair(workload):
    eco = data.ecoli()
    if workload == "G1":
        (a0, a1), (b0, b1) = G1
        return eco.slice(a0, a1), eco.slice(b0, b1)
    if workload == "H1":
        (a0, a1), (b0, b1) = H1
        return eco.slice(a0, a1), eco.slice(b0, b1)
    n = int(workload.split("-")[1])
    lam = data.lambda_phage()
    if n > len(lam):  # longer than lambda: another stretch of E. coli
        return eco.slice(1_000_000, 1_000_000 + n), eco.slice(0, n)
    return lam.slice(0, n), eco.slice(0, n)


def _device() -> str:
    from engine.gpu import device_name

    return device_name()


def _agrees(workload, length):
    if workload not in _lengths:
        _lengths[workload] = length
        return "reference"
    return bool(_lengths[workload] == length)


def _options(variant, backend, parallel=None, tpb=None, threads=None):
    return dict(variant=variant, backend=backend, parallel=parallel,
                threads_per_block=tpb, threads=threads if backend == "multicore" else None)


def _kernel_seconds(job, repeat: int) -> float:
    """The score pass's kernel alone: one launch over every tile anti-diagonal (or, for the
    per-diagonal form, every launch), timed with CUDA events; best of ``repeat``."""
    from numba import cuda

    from engine.lcs.cpu_common import PLAIN
    from engine.lcs.cuda import CudaPasses

    a, b = job.inputs["a"][0].codes, job.inputs["b"][0].codes
    passes = CudaPasses(job)
    best = float("inf")
    for _ in range(repeat):
        p = passes.new_pass(a, b, PLAIN)
        start, stop = cuda.event(), cuda.event()
        start.record()
        p.run(p.total, np.zeros(1, dtype=np.uint8))
        stop.record()
        stop.synchronize()
        best = min(best, cuda.event_elapsed_time(start, stop) / 1e3)
        assert p.finished
    return best


def _length(workload, variant, backend, parallel=None, tpb=None, threads=None, repeat=3,
            kernel=True, tile=None):
    """Length only: end to end (the job, best of ``repeat``) and, on cuda, the kernel alone."""
    a, b = _pair(workload)
    options = _options(variant, backend, parallel, tpb, threads)
    saved = config.LCS_CUDA_TILE_COLUMNS
    if tile:
        config.LCS_CUDA_TILE_COLUMNS = dict(saved, **{variant: tile})
    try:
        t0 = time.perf_counter()
        lcs.solve(a.slice(0, 300), b.slice(0, 300), task="length", **options)  # compile or load
        warmup = time.perf_counter() - t0
        job = lcs.make_job(a, b, task="length", **options)
        best, res = None, None
        for _ in range(repeat):
            t0 = time.perf_counter()
            res = drive(lcs.iter_solve(job))
            wall = time.perf_counter() - t0
            best = wall if best is None else min(best, wall)
        cells = len(a) * len(b)
        metrics = {"seconds": best, "length": res.length, "agrees": _agrees(workload, res.length),
                   "cells": cells, "solve_seconds": res.info.seconds,
                   "tcups_end_to_end": cells / best / 1e12, "warmup_s": warmup}
        if backend == "cuda":
            metrics["device"] = _device()
            if kernel:
                ks = _kernel_seconds(job, repeat)
                metrics["kernel_seconds"] = ks
                metrics["tcups_kernel"] = cells / ks / 1e12
        _rates[(workload, variant, backend)] = cells / best
        return metrics
    finally:
        config.LCS_CUDA_TILE_COLUMNS = saved


def _cuda_case(workload, variant, parallel=None, label="", **kw):
    name = f"{variant}/cuda" + (f"/{parallel}" if parallel else "") + label
    return Case("lcs", workload, name, lambda: _length(workload, variant, "cuda", parallel, **kw),
                describe=f"LCS length on CUDA, {workload}")


def _peer(workload, variant, form, threads=None, predict_from=None):
    name = f"{variant} {form} (peer)"

    def run():
        if predict_from is not None:
            rate = _rates.get(predict_from)
            a, b = _pair(workload)
            if rate and len(a) * len(b) / rate > LONG_RUN_SECONDS:
                return {"seconds": None,
                        "skipped": f"predicted {len(a) * len(b) / rate:.0f} s from {predict_from}"}
        return _length(workload, variant, form, threads=threads, repeat=1)

    return Case("lcs", workload, name, run, describe=f"CPU peer, {workload}")


def _recover(workload, variant, backend, parallel=None, threads=None, leaf_words=None):
    a, b = _pair(workload)
    options = _options(variant, backend, parallel, None, threads)
    lcs.solve(a.slice(0, 300), b.slice(0, 300), **options)  # compile or load the kernels
    saved = config.LCS_CUDA_TRACEBACK_WORDS
    config.LCS_CUDA_TRACEBACK_WORDS = leaf_words or saved
    try:
        t0 = time.perf_counter()
        res = lcs.solve(a, b, **options)
        wall = time.perf_counter() - t0
    finally:
        config.LCS_CUDA_TRACEBACK_WORDS = saved
    metrics = {"seconds": wall, "solve_seconds": res.info.seconds, "length": res.length,
               "agrees": _agrees(workload, res.length), "pairs_valid": _valid(a, b, res),
               "cells": res.info.cells}
    if backend == "cuda":
        metrics["device"] = _device()
        metrics["leaf_words"] = int(leaf_words or config.LCS_CUDA_TRACEBACK_WORDS)
    return metrics


def _valid(a, b, res) -> bool:
    """The pairs are increasing in both, match, and are as many as the length."""
    pairs = np.asarray(res.pairs) - 1
    if pairs.shape[0] != res.length:
        return False
    if pairs.shape[0] == 0:
        return True
    i, j = pairs[:, 0], pairs[:, 1]
    return bool(np.all(np.diff(i) > 0) and np.all(np.diff(j) > 0)
                and np.all((a.codes[i] & b.codes[j]) != 0))


def cases(opts) -> list[Case]:
    threads = getattr(opts, "threads", None) or os.cpu_count()
    out = []
    # F7: the seed study's Fig. 7, speed-up over serial code by length.
    for n in F7_LENGTHS:
        w = f"F7-{n}"
        out += [
            _peer(w, "rows", "serial"),
            _peer(w, "wavefront", "serial"),
            _cuda_case(w, "wavefront", "diagonal", repeat=1 if n > 10_000 else 2),
            _cuda_case(w, "wavefront", "tiled"),
            _cuda_case(w, "bitparallel"),
        ]
    for tile in (32, 128):  # the tiled wavefront's bands lag each other by about a tile
        out.append(_cuda_case("F7-48502", "wavefront", "tiled", label=f" tile={tile}", tile=tile))
    out.append(_peer("F7-48502", "bitparallel", "multicore", threads))
    # G1: the 5 TCUPS goal, sweeps, the tiled wavefront and the CPU check of the length.
    out.append(_cuda_case("G1", "bitparallel", repeat=3))
    for tile in (128, 512):
        out.append(_cuda_case("G1", "bitparallel", label=f" tile={tile}", tile=tile, repeat=2))
    for tpb in (32, 128):
        out.append(_cuda_case("G1", "bitparallel", label=f" tpb={tpb}", tpb=tpb, repeat=2))
    out += [
        _cuda_case("G1", "wavefront", "tiled", repeat=1),
        _peer("G1", "bitparallel", "multicore", threads,
              predict_from=("F7-48502", "bitparallel", "multicore")),
    ]
    # H1: one LCS of 100 kb x 100 kb recovered with the score passes on the GPU.
    out += [
        Case("lcs", "H1", "recover bitparallel/cuda", lambda: _recover("H1", "bitparallel", "cuda"),
             describe="Hirschberg on the GPU, E. coli 100k x 100k"),
        Case("lcs", "H1", "recover bitparallel/cuda leaf=65536",
             lambda: _recover("H1", "bitparallel", "cuda", leaf_words=1 << 16),
             describe="the same with smaller leaves: more, smaller passes on the GPU"),
        Case("lcs", "H1", "recover wavefront/cuda/tiled",
             lambda: _recover("H1", "wavefront", "cuda", "tiled"),
             describe="Hirschberg on the GPU (tiled wavefront), E. coli 100k x 100k"),
        Case("lcs", "H1", "recover bitparallel multicore (peer)",
             lambda: _recover("H1", "bitparallel", "multicore", threads=threads),
             describe="CPU peer of the recovery"),
    ]
    return out
