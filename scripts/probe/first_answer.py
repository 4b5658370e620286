"""Time from ``import engine`` to a first answer in a fresh process (issue #31's figure).

A 20-nt kmismatch (k=2, both strands) against phage lambda, default backend, in N fresh
interpreters; the kernels' caches are warmed by one run first. Each child times its own
import-to-answer span with perf_counter (interpreter start-up is outside it, and reported
apart as the parent's wall time per child)."""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CHILD = """
import time
t0 = time.perf_counter()
import engine
t1 = time.perf_counter()
hits = engine.kmismatch.solve("TCCAGGTCACCAGTGCAGTG", "resources/demo/lambda_NC_001416.fa", 2)
t2 = time.perf_counter()
assert [(h.start, h.strand) for h in hits.hits] == [(30001, "+")], hits.to_records()
print(f"{t1 - t0:.4f} {t2 - t0:.4f}")
"""


def main(runs: int = 7) -> None:
    subprocess.run([sys.executable, "-c", CHILD], cwd=ROOT, check=True, capture_output=True)
    imports, answers, walls = [], [], []
    for _ in range(runs):
        t0 = time.perf_counter()
        out = subprocess.run([sys.executable, "-c", CHILD], cwd=ROOT, check=True,
                             capture_output=True, text=True).stdout.split()
        walls.append(time.perf_counter() - t0)
        imports.append(float(out[0]))
        answers.append(float(out[1]))
    print(f"runs {runs}: import engine {statistics.median(imports) * 1e3:.1f} ms median; "
          f"import to first answer {statistics.median(answers):.3f} s median "
          f"(min {min(answers):.3f}, max {max(answers):.3f}); "
          f"whole process {statistics.median(walls):.3f} s median")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 7)
