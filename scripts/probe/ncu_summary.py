"""Sum an ncu CSV (``--metrics gpu__time_duration.sum --csv``) per kernel name.

    python3 scripts/probe/ncu_summary.py NCU.csv

Reads the columns 'Kernel Name', 'Metric Unit' (ns/us/ms/s or nsecond/usecond/...) and
'Metric Value' (thousands separated by commas); prints launches, total and mean time of each
kernel (its short name: numba's lanes32, tier4, ...), the longest first, and the sum.
"""
import csv
import re
import sys
from collections import defaultdict

SCALE = {"ns": 1e-9, "nsecond": 1e-9, "us": 1e-6, "usecond": 1e-6, "ms": 1e-3, "msecond": 1e-3,
         "s": 1.0, "second": 1.0}


def short(name: str) -> str:
    name = re.sub(r"^void\s+", "", name.strip())
    name = re.split(r"[(\[]", name, maxsplit=1)[0]  # drop the arguments and numba's [abi:...]
    name = re.sub(r"<.*>$", "", name)
    return name.split("::")[-1] or name


def main(path: str) -> None:
    with open(path, newline="") as fh:
        lines = fh.read().splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith('"ID"')), None)
    if start is None:
        sys.exit(f"{path}: no ncu CSV header (\"ID\",...) found")
    totals, counts = defaultdict(float), defaultdict(int)
    for row in csv.DictReader(lines[start:]):
        if not row.get("Metric Value"):
            continue
        unit = row.get("Metric Unit", "ns").strip()
        seconds = float(row["Metric Value"].replace(",", "")) * SCALE.get(unit, 1e-9)
        name = short(row["Kernel Name"])
        totals[name] += seconds
        counts[name] += 1
    print(f"{'kernel':<24}{'launches':>10}{'total ms':>12}{'mean us':>12}")
    for name in sorted(totals, key=totals.get, reverse=True):
        print(f"{name:<24}{counts[name]:>10}{1e3 * totals[name]:>12.2f}"
              f"{1e6 * totals[name] / counts[name]:>12.1f}")
    print(f"{'all kernels':<24}{sum(counts.values()):>10}{1e3 * sum(totals.values()):>12.2f}")


if __name__ == "__main__":
    main(sys.argv[1])
