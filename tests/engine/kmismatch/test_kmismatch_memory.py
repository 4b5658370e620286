"""Issue #16: a kmismatch run with ten million hits completes on the CPU with a peak RSS under
1.5 GB, CSV included (the hits stay columns; the writer streams them to the file)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
DEMO = ROOT / "resources" / "demo"

#: 48 lambda 10-mers with k = 4 on both strands of E. coli 536: 10,116,215 hits.
CHILD = """
import resource, sys
from engine.cli import main
from engine.sequences import decode, load
lam = load(sys.argv[1])[0]
with open(sys.argv[2], "w") as fh:
    fh.write("".join(f">l{i}\\n{decode(lam.codes[i * 900 + 50:i * 900 + 60])}\\n" for i in range(48)))
status = main(["kmismatch", sys.argv[3], sys.argv[2], "-k", "4", "--backend", "multicore",
               "-o", sys.argv[4], "--no-progress"])
print(status, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


@pytest.mark.slow
def test_ten_million_hits_under_1_5_gb(tmp_path):
    out = tmp_path / "hits.csv"
    proc = subprocess.run([sys.executable, "-c", CHILD, str(DEMO / "lambda_NC_001416.fa"),
                           str(tmp_path / "patterns.fa"), str(DEMO / "ecoli536_NC_008253.fna.gz"),
                           str(out)], cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr
    status, maxrss_kib = map(int, proc.stdout.split()[-2:])
    assert status == 0
    with open(out, "rb") as fh:
        rows = sum(1 for _ in fh) - 1
    assert rows == 10_116_215
    assert maxrss_kib < 1.5 * 1024 * 1024, f"peak RSS {maxrss_kib / 1024:.0f} MiB"
