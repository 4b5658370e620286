"""A/B CPU time of a streamed multicore kdiff (lambda[0:200] vs a background FASTA, k=5, both
strands, chunks of 4 Mb), runnable in an older tree too (it uses only the public API):

    PYTHONPATH=. python scripts/probe/kdiff_stream_ab.py BACKGROUND.fa

from a tree's root (copy the script for an old tree, `git archive REV engine benchmarks`).
AB_THREADS (2) sets the threads, AB_STREAM=0 keeps the background in memory. Prints one
JSON line: CPU and wall seconds of the solve, candidates, cells, the load.
docs/benchmarks.md used E. coli 536 x 8 (`data.write_fasta(path, data.ecoli_repeated(8,
records=True))`).
"""
import json
import os
import resource
import sys
import time

from benchmarks import data
from engine import config, kdiff
from engine.sequences import load

config.STREAM_MEMORY_BASES = 0 if os.environ.get("AB_STREAM", "1") == "1" else 1 << 40
config.STREAM_CHUNK_BASES = 4_000_000
def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime
target = [data.lambda_phage().slice(0, 200)]
bg = load(sys.argv[1])
kdiff.solve(target, [bg[0].slice(0, 2000)], 5, backend="multicore", threads=2)
load0 = os.getloadavg()[0]
c0, t0 = cpu(), time.perf_counter()
res = kdiff.solve(target, bg, 5, backend="multicore", threads=int(os.environ.get("AB_THREADS", "2")), strands="both")
print(json.dumps({"tree": os.getcwd(), "cpu_s": round(cpu() - c0, 2),
                  "wall_s": round(time.perf_counter() - t0, 2), "candidates": len(res.candidates), "cells": getattr(res.info, "cells", None),
                  "load": [load0, os.getloadavg()[0]]}), flush=True)
