"""kmismatch T3x20 end to end on the GPU against pmasm multicore, in one process (issue 16).

    python3 scripts/probe/kmismatch_e2e.py [VARIANT] [RUNS] [NAME=VALUE ...]

VARIANT: a CUDA method (default shared-mem); RUNS: timed runs of each (default 5, the best
counts); NAME=VALUE sets an ``engine.config`` tunable (e.g. GPU_UPLOAD_BYTES=33554432).
Prints one JSON object:

- ``cuda``: ``kmismatch.solve`` on the cuda backend, host text in, columnar hits out, a
  repeated search (the text still on the GPU from the run before, engine.gpu.DEVICE_TEXTS):
  the best ``solve_s`` (RunInfo.seconds, what ``--json`` reports) and ``wall_s`` (the whole
  call), GB/s of text; ``cuda_upload``: the same with the text uploaded every run (the
  device copy dropped before each; the packed host copy kept); ``pmasm``: the same for pmasm
  multicore on every CPU; ``speedup`` and ``speedup_upload``: pmasm / cuda (the goal: 10);
- ``kernel``: the search kernel and its ordering pass alone over the text already on the
  GPU (benchmarks/kmismatch_cuda.py's kernel row; the goal: 200 GB/s);
- ``split`` (text on the GPU) and ``split_upload`` (text uploaded): one more cuda run
  each with CUDA events between its phases (a few hundred
  microseconds slower): GPU time of ``upload`` (copy and unpack the packed text, on the
  copy stream: it overlaps the search), ``search``, ``order`` (ordering, merging),
  ``tally`` (counts), ``copy_back`` (the hit columns), and host time (perf_counter) of
  ``setup`` (the job, the kernels' check, the runner with its uploads started), ``slices``
  (queueing, waiting for the GPU) and ``host_table`` (the hit table and the counts);
- ``host`` (text on the GPU) and ``host_upload``: one more plain cuda solve each (no
  events), with the host time (perf_counter, ms) and calls of the steps of its set-up and
  slices (nested steps count in their callers too: ``wait`` is the time spent
  synchronising, inside ``run_batch`` and ``scan``), and ``solve_ms``, its RunInfo time;
- ``agrees``: the cuda hits equal pmasm's (position, code, mismatches, in order).

The text is one Record for every run, so the packed copy of it is kept between runs
(engine.gpu.PACKED_TEXTS), and the text on the GPU, as for a GUI user's background;
``first_run_s`` is the first solve of it (packing, page-locked memory and the upload
included, compilation not).
"""
import ast
import json
import os
import sys
import time

import numpy as np

from benchmarks import kmismatch_cuda as bench
from engine import config, kmismatch

for setting in sys.argv[3:]:
    name, value = setting.split("=", 1)
    if not hasattr(config, name):
        sys.exit(f"no engine.config.{name}")
    setattr(config, name, ast.literal_eval(value))
VARIANT = sys.argv[1] if len(sys.argv) > 1 else "shared-mem"
RUNS = int(sys.argv[2]) if len(sys.argv) > 2 else 5

text = [bench._text("T3x20")]
patterns = bench.patterns_from_lambda()
n = len(text[0])
cuda_opts = dict(variant=VARIANT, backend="cuda", strands=bench.STRANDS)
cpu_opts = dict(variant="pmasm", backend="multicore", strands=bench.STRANDS,
                threads=os.cpu_count())


def drop_device_text():
    from engine import gpu

    gpu.DEVICE_TEXTS.clear()


def best_of(options, upload=False):
    """(best solve seconds, best wall seconds, last result) of RUNS solves (``upload``: the
    text uploaded by each)."""
    solve = wall = float("inf")
    result = None
    for _ in range(RUNS):
        result = None  # (a cuda result's page-locked columns go back to the pool first)
        if upload:
            drop_device_text()
        t0 = time.perf_counter()
        result = kmismatch.solve(patterns, text, bench.K, **options)
        wall = min(wall, time.perf_counter() - t0)
        solve = min(solve, result.info.seconds)
    return solve, wall, result


def rates(solve, wall):
    return {"solve_s": solve, "wall_s": wall, "GB_per_s": n / solve / 1e9}


def split(upload=False):
    """One instrumented cuda run through the same objects as kmismatch.solve (``upload``:
    with the text uploaded)."""
    if upload:
        drop_device_text()
    from engine.jobs import CancelToken
    from engine.kmismatch import cuda as kcuda
    from engine.kmismatch.driver import Kernels, ScanRunner
    from engine.slices import Meter, run_slices

    searches = []
    original = kcuda.CudaSearch.__init__

    def timed(self, *args, **kwargs):
        original(self, *args, timing=True, **kwargs)
        searches.append(self)

    kcuda.CudaSearch.__init__ = timed
    try:
        t0 = time.perf_counter()
        job = kmismatch.make_job(patterns, text, bench.K, **cuda_opts)
        kernels = Kernels(job)
        assert kernels.compiled()
        cancel = CancelToken()
        runner = ScanRunner(job, kernels, cancel.flag)
        t1 = time.perf_counter()
        for _ in run_slices(runner, Meter(job), cancel):
            pass
        t2 = time.perf_counter()
        hits, density = runner.hits(), runner.density()
        t3 = time.perf_counter()
    finally:
        kcuda.CudaSearch.__init__ = original
    (search,) = searches
    out = {k.replace(" ", "_") + "_ms": 1e3 * v for k, v in search.phase_seconds.items()}
    out.update(setup_ms=1e3 * (t1 - t0), slices_ms=1e3 * (t2 - t1),
               host_table_ms=1e3 * (t3 - t2), total_ms=1e3 * (t3 - t0),
               launches=search.launches, reruns=search.reruns, hits=len(hits),
               density_hits=int(sum(d.counts.sum() for d in density)))
    return out


def host_steps(upload=False):
    """One plain cuda solve with its host steps timed (``upload``: with the text uploaded)."""
    if upload:
        drop_device_text()
    from engine import gpu
    from engine.kmismatch import cuda as kcuda
    from engine.kmismatch.hits import HitBuffer

    steps = {"Device": (gpu.Device, "__init__"), "free_bytes": (gpu.Device, "free_bytes"),
             "streams": (gpu.StreamPool, "take"), "constants": (gpu.Device, "upload_many"),
             "launch": (gpu.Device, "launch"), "text": (kcuda.CudaSearch, "_upload"),
             "search_init": (kcuda.CudaSearch, "__init__"),
             "run_batch": (kcuda.CudaSearch, "run_batch"), "wait": (kcuda.CudaSearch, "_sync"),
             "deliver": (kcuda.CudaSearch, "_deliver"), "reserve": (HitBuffer, "reserve"),
             "scan": (kcuda.CudaSearch, "scan"), "fetch_counts": (kcuda.CudaSearch, "fetch_counts"),
             "close": (kcuda.CudaSearch, "close")}
    spent = {name: [0.0, 0] for name in steps}
    originals = {name: getattr(owner, attr) for name, (owner, attr) in steps.items()}

    def timer(name, fn):
        def timed(*args, **kwargs):
            t0 = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                spent[name][0] += time.perf_counter() - t0
                spent[name][1] += 1
        return timed

    for name, (owner, attr) in steps.items():
        setattr(owner, attr, timer(name, originals[name]))
    try:
        t0 = time.perf_counter()
        result = kmismatch.solve(patterns, text, bench.K, **cuda_opts)
        wall = time.perf_counter() - t0
    finally:
        for name, (owner, attr) in steps.items():
            setattr(owner, attr, originals[name])
    out = {name: {"ms": round(1e3 * t, 4), "calls": c} for name, (t, c) in spent.items()}
    out.update(solve_ms=1e3 * result.info.seconds, wall_ms=1e3 * wall)
    return out


# Compile, then a first run of the whole text (packing, page-locked memory).
kmismatch.solve(patterns, [text[0].slice(0, 5000)], bench.K, **cuda_opts)
t0 = time.perf_counter()
first = kmismatch.solve(patterns, text, bench.K, **cuda_opts)
first_wall = time.perf_counter() - t0
first_seconds = first.info.seconds
del first
kmismatch.solve(patterns, [text[0].slice(0, 5000)], bench.K, **cpu_opts)

upload_solve, upload_wall, _ = best_of(cuda_opts, upload=True)
cuda_solve, cuda_wall, gpu_result = best_of(cuda_opts)
cpu_solve, cpu_wall, cpu_result = best_of(cpu_opts)
g, c = gpu_result.hits, cpu_result.hits
agrees = (len(g) == len(c) and all(np.array_equal(a, b) for a, b in (
    (g.pos, c.pos), (g.code, c.code), (g.mismatches, c.mismatches)))
    and np.array_equal(gpu_result.pattern_hits, cpu_result.pattern_hits)
    and all(np.array_equal(a.counts, b.counts)
            for a, b in zip(gpu_result.density, cpu_result.density)))
del gpu_result
kernel = bench._kernel("T3x20", VARIANT, RUNS)
print(json.dumps({
    "device": bench._device(), "variant": VARIANT, "text_bytes": n, "hits": len(c),
    "runs": RUNS, "cpus": os.cpu_count(),
    "cuda": {**rates(cuda_solve, cuda_wall), "first_run_s": first_seconds,
             "first_run_wall_s": first_wall},
    "cuda_upload": rates(upload_solve, upload_wall),
    "pmasm": rates(cpu_solve, cpu_wall),
    "speedup": cpu_solve / cuda_solve, "speedup_wall": cpu_wall / cuda_wall,
    "speedup_upload": cpu_solve / upload_solve,
    "kernel": {k: kernel[k] for k in ("kernel_ms", "search_ms", "order_ms", "GB_per_s")},
    "split": split(), "split_upload": split(upload=True),
    "host": host_steps(), "host_upload": host_steps(upload=True), "agrees": agrees,
    "hit_bytes": sum(col.dtype.itemsize for col in (g.pos, g.code, g.mismatches)),
}, indent=1))
