"""Profile target for ncu: kdiff bitparallel/cuda on lambda[0:NSTARTS] vs E. coli, k=5, both.

    python3 scripts/probe/kdiff_profile.py FLAGS NSTARTS [NAME=VALUE ...]
    python3 scripts/probe/kdiff_profile.py FLAGS W2 [NAME=VALUE ...]

NSTARTS may instead name a workload of benchmarks/kdiff_cuda.py (W2, W2s, W4): its target
length, background length, k and strands.
FLAGS: comma-separated flags, ``none``, or ``default`` (the registry's defaults); NSTARTS
48502 is all of lambda (W4); NAME=VALUE sets an ``engine.config`` tunable (an int or a
Python literal), e.g. KDIFF_CUDA_NEIGHBOUR_SPLIT=2. PROBE_ALL_K=1 runs ``--all-k`` (every k up
to the workload's). Prints one line: the flags run,
candidates, solve seconds (compiling excluded), cells and a digest of the c(r) profile
(equal digests: equal answers). With PROBE_CPROFILE=FILE a cProfile of the measured solve is
saved there.
"""
import ast
import hashlib
import os
import sys

import numpy as np

from benchmarks import data
from engine import config, kdiff

for setting in sys.argv[3:]:
    name, value = setting.split("=", 1)
    if not hasattr(config, name):
        sys.exit(f"no engine.config.{name}")
    setattr(config, name, ast.literal_eval(value))
arg = sys.argv[1]
flags = None if arg == "default" else frozenset() if arg == "none" else frozenset(arg.split(","))
lam, eco = data.lambda_phage(), data.ecoli()
if sys.argv[2].isdigit():
    starts, length, k, strands = int(sys.argv[2]), None, 5, "both"
else:
    from benchmarks.kdiff_cuda import WORKLOADS

    starts, length, k, strands = WORKLOADS[sys.argv[2]]
target = lam.slice(0, starts) if starts else lam
background = eco.slice(0, length) if length else eco
kdiff.solve([lam.slice(0, 64)], [background], k, variant="bitparallel", backend="cuda",
            flags=flags, strands=strands)  # compile or load the kernels
profiler = None
if os.environ.get("PROBE_CPROFILE"):  # a cProfile of the measured solve, saved there
    import cProfile

    profiler = cProfile.Profile()
    profiler.enable()
res = kdiff.solve([target], [background], k, variant="bitparallel", backend="cuda",
                  flags=flags, strands=strands, all_k=os.environ.get("PROBE_ALL_K") == "1")
if profiler:
    profiler.disable()
    profiler.dump_stats(os.environ["PROBE_CPROFILE"])
profile = np.concatenate([np.asarray(p, dtype=np.int64) for p in res.profiles.values()])
digest = hashlib.sha1(profile.tobytes()).hexdigest()[:12]
print(f"flags={','.join(res.info.flags) or 'none'} candidates={len(res.candidates)} "
      f"seconds={res.info.seconds:.3f} cells={res.info.cells} digest={digest}")
