"""S1 with and without assembly gaps (issue #28), on this machine: kdiff of the 5 kb target
against the synthetic human-like store made with its N runs and the same genome without
them, on multicore, the two runs interleaved so that a shared machine's load falls on both
alike (rounds alternate which goes first: A B, B A, ..., so that a load that rises or falls
through the run does not favour one). Prints one JSON line per run (benchmarks.scale's
child: wall ``ns_per_non_gap_base`` and CPU ``cpu_ns_per_non_gap_base`` of every thread,
with the 1-minute load average before and after, and the streamed plan's work: chunks,
pieces, text bases read per strand with the pieces' leads), then the ratios of the medians,
with gaps vs without, per base of non-gap sequence, in wall and in CPU time.

    PYTHONPATH=. python scripts/probe/s1_gaps.py [MB] [rounds] [threads] [chunks]

(default 10 Mb, 1 round, 2 threads; data kept in PRIMERSCOPE_BENCH_DATA; the target's
length from PRIMERSCOPE_SCALE_TARGET, default 5000). S1 at 200 Mb streams (400 M text
bases with both strands, over config.STREAM_MEMORY_BASES) in chunks of
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
chunk_bases = -(-total // max(1, chunks))


def plan_work(path: str) -> dict:
    """The streamed plan's work for the store (what the job reads, engine.streaming)."""
    from engine.gaps import as_background
    from engine.store import load_store
    from engine.streaming import Background

    background = Background(as_background(load_store(path)), "both")
    work = background.plan_work(target + scale.K - 1, chunk_bases, scale.K - 1)  # (kdiff's)
    return {"plan_" + key: value for key, value in work.items()}


plans = {flag: plan_work(path) for flag, path in stores.items()} if chunks else {}
wall = {"1": [], "0": []}
cpu = {"1": [], "0": []}
for round_ in range(rounds):
    for flag in ("1", "0") if round_ % 2 == 0 else ("0", "1"):
        before = os.getloadavg()[0]
        child = ("import sys; from engine import config; from benchmarks import scale; "
                 f"config.STREAM_MEMORY_BASES = 0 if {chunks} else config.STREAM_MEMORY_BASES; "
                 f"config.STREAM_CHUNK_BASES = {chunk_bases}; "
                 "scale._child(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4])")
        out = subprocess.run([sys.executable, "-c", child, stores[flag], str(target), threads,
                              "multicore"], capture_output=True, text=True, check=True).stdout
        row = json.loads(out.strip().splitlines()[-1])
        row.update(n_runs=flag == "1", load_before=before, load_after=os.getloadavg()[0],
                   store_MB=float(mb), target=target, chunks_per_strand=chunks,
                   **plans.get(flag, {}))
        wall[flag].append(row["ns_per_non_gap_base"])
        cpu[flag].append(row["cpu_ns_per_non_gap_base"])
        print(json.dumps(row), flush=True)
print(json.dumps({
    "with_gaps_vs_without_per_non_gap_base":
        statistics.median(wall["1"]) / statistics.median(wall["0"]),
    "cpu_with_gaps_vs_without_per_non_gap_base":
        statistics.median(cpu["1"]) / statistics.median(cpu["0"])}))
