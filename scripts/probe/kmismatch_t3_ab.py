"""A/B CPU time of kmismatch T3's pmasm solves, runnable in an older tree too (public API only):

    PYTHONPATH=. python scripts/probe/kmismatch_t3_ab.py [SOLVES] [BACKEND...] [profile]

from a tree's root (copy the script into the old tree). T3 as ``primerscope bench kmismatch
--workload T3`` builds it: E. coli 536, 8 lambda 12-mers, k=4, both strands, pmasm, multicore
with 2 threads. Each backend (default: multicore serial) is warmed up as the bench case does,
then its job is made and solved SOLVES times (default 8) in this process; prints one JSON line
a backend with the best and median CPU time (process time for multicore, which sums the
threads; thread time for serial, as the bench), the best wall, the hits and a digest of the
hit columns (equal digests: byte-identical hits), the OpenMP wait policy. ``profile`` adds a
cProfile of one more multicore solve. The process gets the programs' settings first
(``engine.configure_process``, as ``primerscope bench``; e12d34a set them on import);
AB_CONFIGURE=0 leaves them out (a library caller's process: idle OpenMP threads spin).
Written for the seam regression of docs/benchmarks.md (issue #29).
"""
import cProfile
import hashlib
import inspect
import io
import json
import os
import pstats
import statistics
import sys
import time

import numpy as np

import engine

if os.environ.get("AB_CONFIGURE", "1") == "1" and hasattr(engine, "configure_process"):
    engine.configure_process()

from benchmarks import data  # noqa: E402
from benchmarks.kmismatch_cuda import K, patterns_from_lambda  # noqa: E402
from engine import kmismatch  # noqa: E402
from engine.jobs import drive  # noqa: E402

SOLVES = int(sys.argv[1]) if len(sys.argv) > 1 and sys.argv[1].isdigit() else 8
BACKENDS = [a for a in sys.argv[1:] if a in ("serial", "multicore")] or ["multicore", "serial"]
PROFILE = "profile" in sys.argv[1:]
OLD_ORDER = next(iter(inspect.signature(kmismatch.make_job).parameters)) == "text"  # e12d34a


def make(patterns, text, backend):
    options = dict(variant="pmasm", backend=backend, strands="both",
                   threads=2 if backend == "multicore" else None)
    if OLD_ORDER:
        return kmismatch.make_job(text, patterns, K, **options)
    return kmismatch.make_job(patterns, text, K, **options)


def digest(hits) -> str:
    h = hashlib.sha256()
    for col in (hits.pos, hits.code, hits.mismatches):
        h.update(np.ascontiguousarray(col).tobytes())
    return h.hexdigest()[:12]


text = [data.ecoli()]
patterns = patterns_from_lambda()
for backend in BACKENDS:
    drive(kmismatch.iter_solve(make(patterns, [text[0].slice(0, 5000)], backend)))
    clock = time.thread_time if backend == "serial" else time.process_time
    cpu, wall, result = [], [], None
    load0 = os.getloadavg()[0]
    for _ in range(SOLVES):
        job = make(patterns, text, backend)
        c0, w0 = clock(), time.perf_counter()
        result = drive(kmismatch.iter_solve(job))
        cpu.append(clock() - c0)
        wall.append(time.perf_counter() - w0)
    print(json.dumps({"tree": os.getcwd(), "backend": backend, "best_cpu_s": round(min(cpu), 4),
                      "median_cpu_s": round(statistics.median(cpu), 4),
                      "best_wall_s": round(min(wall), 4), "hits": len(result.hits),
                      "digest": digest(result.hits),
                      "omp_wait_policy": os.environ.get("OMP_WAIT_POLICY"),
                      "load": [load0, os.getloadavg()[0]]}), flush=True)
if PROFILE:
    job = make(patterns, text, "multicore")
    pr = cProfile.Profile()
    pr.enable()
    drive(kmismatch.iter_solve(job))
    pr.disable()
    for key in ("cumulative", "tottime"):
        s = io.StringIO()
        pstats.Stats(pr, stream=s).sort_stats(key).print_stats(25)
        print(s.getvalue())
