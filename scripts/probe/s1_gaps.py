"""S1 with and without assembly gaps (issue #28), on this machine: kdiff of the 5 kb target
against the synthetic human-like store made with its N runs and the same genome without
them, on multicore, the two runs alternated (``rounds`` times each) so that a shared
machine's load falls on both alike. Prints one JSON line per run (benchmarks.scale's child:
``ns_per_non_gap_base``, with the 1-minute load average before and after) and the ratio
of the medians, with gaps vs without, per base of non-gap sequence.

    PYTHONPATH=. python scripts/probe/s1_gaps.py [MB] [rounds] [threads]

(default 10 Mb, 1 round, 2 threads; data kept in PRIMERSCOPE_BENCH_DATA)."""
import json
import os
import statistics
import subprocess
import sys

from benchmarks import scale

mb = sys.argv[1] if len(sys.argv) > 1 else "10"
rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 1
threads = sys.argv[3] if len(sys.argv) > 3 else "2"
os.environ["PRIMERSCOPE_SCALE_MB"] = mb
total, target = scale.sizes()
stores = {}
for flag in ("1", "0"):  # (made before any timed run)
    os.environ["PRIMERSCOPE_SCALE_N_RUNS"] = flag
    stores[flag] = str(scale.synthetic_store(total))
scale.target_fasta(target)
per_base = {"1": [], "0": []}
for _ in range(rounds):
    for flag in ("1", "0"):
        before = os.getloadavg()[0]
        out = subprocess.run([sys.executable, "-m", "benchmarks.scale", stores[flag],
                              str(target), threads, "multicore"], capture_output=True,
                             text=True, check=True).stdout
        row = json.loads(out.strip().splitlines()[-1])
        row.update(n_runs=flag == "1", load_before=before, load_after=os.getloadavg()[0],
                   store_MB=float(mb))
        per_base[flag].append(row["ns_per_non_gap_base"])
        print(json.dumps(row), flush=True)
print(json.dumps({"with_gaps_vs_without_per_non_gap_base":
                  statistics.median(per_base["1"]) / statistics.median(per_base["0"])}))
