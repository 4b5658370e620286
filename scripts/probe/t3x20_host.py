"""Host CPU time of a resident kmismatch T3x20 cuda solve, without a GPU (issue #29).

    NUMBA_ENABLE_CUDASIM=1 python3 scripts/probe/t3x20_host.py [RUNS] [profile]

Runs under the CUDA simulator with every kernel launch made a no-op (engine.gpu.Device.launch)
and ``CudaSearch.scan`` handing back the workload's real hits (E. coli once, by pmasm serial,
repeated 20 times at the copies' offsets: the hits the GPU would find but those across the
joins) as the GPU's copy-back would, so that what is left is the host's own work of a solve:
the job, the runner, the hit table, the counts. The text stays "on the GPU" between solves
(engine.gpu.DEVICE_TEXTS), as in the benchmark's ``shared-mem/cuda resident`` row.

Prints per solve the CPU seconds (time.process_time) and wall (also less the CPU time of the
stand-in copy-back of the hits, which on a GPU is a DMA into page-locked columns), the best and the median of
RUNS (default 5), whether the text was found resident, the hits; with ``profile`` a cProfile
of one more solve (top 25 by cumulative time). Works on any tree that has
engine.kmismatch.cuda.CudaSearch.scan(lo, hi, out) (run it with PYTHONPATH set to that tree).
"""
import os

os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")

import cProfile  # noqa: E402
import io  # noqa: E402
import pstats  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import inspect  # noqa: E402

import numpy as np  # noqa: E402

from benchmarks import kmismatch_cuda as bench  # noqa: E402
from engine import gpu, kmismatch  # noqa: E402
from engine.kmismatch import cuda as kcuda  # noqa: E402

_solve = kmismatch.solve
if next(iter(inspect.signature(_solve).parameters)) == "text":  # (the old order: e12d34a)
    kmismatch.solve = lambda patterns, text, k, **kw: _solve(text, patterns, k, **kw)
RUNS = int(sys.argv[1]) if len(sys.argv) > 1 else 5
PROFILE = "profile" in sys.argv[2:]

patterns = bench.patterns_from_lambda()
text = [bench._text("T3x20")]
once = bench._text("T3x1")
ref = kmismatch.solve(patterns, [once], bench.K, variant="pmasm", backend="serial",
                      strands=bench.STRANDS).hits
copies = len(text[0]) // len(once)
POS = np.concatenate([np.asarray(ref.pos, dtype=np.int64) + i * len(once)
                      for i in range(copies)])
CODE = np.tile(np.asarray(ref.code), copies)
MIS = np.tile(np.asarray(ref.mismatches), copies)

gpu.Device.launch = lambda self, *args, **kwargs: None
_scan = kcuda.CudaSearch.scan
uploads = []
landing = [0.0]  # CPU s of the stand-in copy-back (the GPU's DMA, not host work in a real run)


def scan(self, lo, hi, out):
    """The real scan (no kernel runs: no hits), then the workload's hits of [lo, hi) landed
    in ``out`` as the copy-back lands them (room made, columns written, kept)."""
    uploads.append(getattr(self, "_text_owners", None) is not None)
    added = _scan(self, lo, hi, out)
    c0 = time.process_time()
    a, z = np.searchsorted(POS, [lo, hi])
    n = int(z - a)
    if n:
        if len(out) + n > out.columns[0].shape[0]:
            out.reserve(len(out) + n)
        at = out.room(n)
        for col, values in zip(out.columns, (POS, CODE, MIS)):
            col[at:at + n] = values[a:z]
        out.keep([(at, n)])
    landing[0] += time.process_time() - c0
    return added + n


kcuda.CudaSearch.scan = scan
options = dict(variant="shared-mem", backend="cuda", strands=bench.STRANDS)
kmismatch.solve(patterns, [text[0].slice(0, 5000)], bench.K, **options)  # (compiles)
kmismatch.solve(patterns, text, bench.K, **options)  # leaves the text "on the GPU"
cpu, wall, own, hits = [], [], [], 0
uploads.clear()
for _ in range(RUNS):
    result = None
    landing[0] = 0.0
    c0, w0 = time.process_time(), time.perf_counter()
    result = kmismatch.solve(patterns, text, bench.K, **options)
    cpu.append(time.process_time() - c0)
    own.append(cpu[-1] - landing[0])
    wall.append(time.perf_counter() - w0)
    hits = len(result.hits)
print(f"tree {os.path.dirname(os.path.dirname(kmismatch.__file__))}")
print(f"solve host CPU s: best {min(cpu):.4f} median {statistics.median(cpu):.4f} "
      f"(runs {', '.join(f'{c:.4f}' for c in cpu)})")
print(f"solve host CPU s less the stand-in copy-back: best {min(own):.4f} "
      f"median {statistics.median(own):.4f}")
print(f"solve wall s: best {min(wall):.4f} median {statistics.median(wall):.4f}")
print(f"hits {hits}; scans that uploaded (not resident): {sum(uploads)} of {len(uploads)}; "
      f"load {os.getloadavg()[0]:.2f}")
if PROFILE:
    result = None
    pr = cProfile.Profile()
    pr.enable()
    result = kmismatch.solve(patterns, text, bench.K, **options)
    pr.disable()
    s = io.StringIO()
    pstats.Stats(pr, stream=s).sort_stats("cumulative").print_stats(25)
    print(s.getvalue())
    s = io.StringIO()
    pstats.Stats(pr, stream=s).sort_stats("tottime").print_stats(15)
    print(s.getvalue())
