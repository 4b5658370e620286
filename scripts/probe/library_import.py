"""Time a primer-library import of N rows (issue #34: a 1 M-row import must finish).

    python scripts/probe/library_import.py [ROWS]      # default 1,000,000

Writes a CSV of ROWS distinct 20-mers (name, sequence, tm, notes) in a temporary folder,
imports it with ``primerscope library import`` and prints the wall time, the rate the
command reports and the peak memory of the command.
"""

from __future__ import annotations

import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def main() -> None:
    rows = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
    with tempfile.TemporaryDirectory() as folder:
        csv_path = Path(folder) / "primers.csv"
        with open(csv_path, "w") as fh:
            fh.write("name,sequence,tm,notes\n")
            for i in range(rows):
                # Distinct (the library keeps a sequence once): i times an odd number is
                # one-to-one modulo 4**20, and scatters the bases.
                code = i * 0x9E3779B1 % 4 ** 20
                seq = "".join("ACGT"[(code >> 2 * j) & 3] for j in range(20))
                fh.write(f"p{i},{seq},{55 + i % 10},n{i}\n")
        t0 = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "engine.cli", "library", "--library",
                               str(Path(folder) / "lib.sqlite"), "import", str(csv_path)],
                              cwd=ROOT, capture_output=True, text=True)
        wall = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(done.stderr.strip())
    print(f"{rows:,} rows: {wall:.1f} s wall, peak RSS {peak:.0f} MB, exit {done.returncode}")


if __name__ == "__main__":
    main()
