"""Profile target for ncu: kdiff bitparallel/cuda on lambda[0:STARTS] vs E. coli, k=5, both."""
import sys
from engine import kdiff
from benchmarks import data
flags = frozenset(sys.argv[1].split(",")) if sys.argv[1] != "none" else frozenset()
lam, eco = data.lambda_phage(), data.ecoli()
res = kdiff.solve([lam.slice(0, int(sys.argv[2]))], [eco], 5, variant="bitparallel", backend="cuda",
                  flags=flags, strands="both")
print("candidates", len(res.candidates), "seconds", res.info.seconds)
