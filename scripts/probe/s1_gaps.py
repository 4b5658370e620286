"""S1 with and without assembly gaps (issue #28), on this machine: kdiff of the 5 kb target
against the synthetic human-like store made with its N runs and the same genome without
them, on multicore, the two runs alternated (``rounds`` times each) so that a shared
machine's load falls on both alike. Prints one JSON line per run (benchmarks.scale's child:
``ns_per_non_gap_base``, with the 1-minute load average before and after) and the ratio
of the medians, with gaps vs without, per base of non-gap sequence.

    PYTHONPATH=. python scripts/probe/s1_gaps.py [MB] [rounds] [threads] [chunks]

(default 10 Mb, 1 round, 2 threads; data kept in PRIMERSCOPE_BENCH_DATA). S1 at 200 Mb
streams (400 M text bases with both strands, over config.STREAM_MEMORY_BASES) in chunks of
config.STREAM_CHUNK_BASES, and streaming is what skips the inside of long gaps
(engine.streaming.gap_skips); a smaller store fits in memory and would scan its gaps. So
``chunks`` > 0 (default 3) streams it in that many chunks a strand, as S1 does at 200 Mb;
0 keeps the in-memory path."""
import json
import os
import statistics
import subprocess
import sys

from benchmarks import scale

mb = sys.argv[1] if len(sys.argv) > 1 else "10"
rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 1
threads = sys.argv[3] if len(sys.argv) > 3 else "2"
chunks = int(sys.argv[4]) if len(sys.argv) > 4 else 3
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
        child = ("import sys; from engine import config; from benchmarks import scale; "
                 f"config.STREAM_MEMORY_BASES = 0 if {chunks} else config.STREAM_MEMORY_BASES; "
                 f"config.STREAM_CHUNK_BASES = -(-{total} // max(1, {chunks})); "
                 "scale._child(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4])")
        out = subprocess.run([sys.executable, "-c", child, stores[flag], str(target), threads,
                              "multicore"], capture_output=True, text=True, check=True).stdout
        row = json.loads(out.strip().splitlines()[-1])
        row.update(n_runs=flag == "1", load_before=before, load_after=os.getloadavg()[0],
                   store_MB=float(mb), chunks_per_strand=chunks)
        per_base[flag].append(row["ns_per_non_gap_base"])
        print(json.dumps(row), flush=True)
print(json.dumps({"with_gaps_vs_without_per_non_gap_base":
                  statistics.median(per_base["1"]) / statistics.median(per_base["0"])}))
