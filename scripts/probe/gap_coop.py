"""Which background makes edit's cooperative CUDA search fault with assembly gaps? Prints the
job table's ranges at each cooperative launch (a fault poisons the context: one case a run).

The fault came with streaming (``stream`` on the command line: config.GPU_STREAM_BYTES at
1 MiB, as tests/cuda_support.whole_and_streamed sets it): the piece after the 10 kb leading
gap owned the skipped gap, so its first tasks had negative lengths (fixed in
engine/edit/plan.py; tests/engine/gaps_cuda_cases.py reproduces it in the simulator).

    PYTHONPATH=. python scripts/probe/gap_coop.py 10 3 bd stream"""
import sys

import numpy as np

from engine import config, edit
if "pcr" in sys.argv:  # the gpu test module imports these too
    from engine import kdiff, kmismatch  # noqa: F401
    from engine.primers import pcr  # noqa: F401
from engine.edit import cuda as ec
from engine.edit import cuda_myers as ck
from engine.sequences import Record, load

orig = ec.GpuPairs._timed


def timed(self, kernel, blocks, tpb, shared, *a):
    if len(a) > 5:
        from numba import cuda
        cuda.synchronize()
        h, part = a[3].copy_to_host(), a[4].copy_to_host()
        print("jobs", h.shape, "n", h[ck.J_N].min(), h[ck.J_N].max(), "scan", h[ck.J_SCAN].min(),
              h[ck.J_SCAN].max(), "own", h[ck.J_OWN].min(), h[ck.J_OWN].max(), "part", part.shape,
              part.min(), part.max(), "text", a[0].shape, a[1].shape, flush=True)
    return orig(self, kernel, blocks, tpb, shared, *a)


if len(sys.argv) < 4:
    ec.GpuPairs._timed = timed
if "stream" in sys.argv:
    config.GPU_STREAM_BYTES = 1 << 20
N = 15
if "bd" in sys.argv:  # the gpu tests' fixtures
    from benchmarks.data import ecoli as ecoli_record, lambda_phage
    lam, ecoli = lambda_phage().codes, ecoli_record().codes
else:
    lam = load("resources/demo/lambda_NC_001416.fa")[0].codes
    ecoli = load("resources/demo/ecoli536_NC_008253.fna.gz")[0].codes
rng = np.random.default_rng(28)
x = ecoli.copy()
for s in np.sort(rng.choice(len(x) - 100, 23, replace=False)):
    x[s:s + 100] = N
e = np.full(10_000, N, dtype=np.uint8)
lg = lam[19_000:23_000].copy()
lg[1_200:1_300] = N
bg = [Record("ecoli_gapped", np.concatenate([e, x, e])), Record("lam_gap", lg),
      Record("all_gap", np.full(500, N, dtype=np.uint8))]
bg = bg[:int(sys.argv[2])] if len(sys.argv) > 2 else bg
pats = [Record(f"p{s}", lam[s:s + 20].copy()) for s in range(20_150, 20_400, 25)]
r = edit.solve(pats, bg, mode="search", k=3, report="hits", strands="both", backend="cuda",
               variant="cooperative", gap_min=int(sys.argv[1]))
c = edit.solve(pats, bg, mode="search", k=3, report="hits", strands="both", backend="multicore",
               gap_min=int(sys.argv[1]))
key = lambda r: [(h.pattern_id, h.record_id, h.strand, h.start, h.end, h.distance) for h in r.hits]
print("ok", len(r.hits), "same as CPU:", key(r) == key(c))
