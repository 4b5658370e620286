"""Time per Mb of non-gap sequence where a store's streamed background skips its gaps (issue
#28), against a gap-free store of the same size and against the same gapped store read whole.

    PYTHONPATH=. python scripts/probe/store_gaps.py [MB] [GAP_SHARE] [TARGET_BP]

Writes, in a temporary folder, a synthetic human-like genome of MB Mb (benchmarks.data, no N
runs; soft-masked repeats in lower case) and a copy with GAP_SHARE of it replaced by N runs
(long ones, like centromeres, and scaffold gaps of 100 N), indexes both, and runs kdiff
of a TARGET_BP human-like target (k = 3, both strands, multicore) against each, streamed
(``config.STREAM_MEMORY_BASES = 0``: a store of any size reads the way a 3 Gb one does).
Prints one JSON line per run: wall and CPU seconds (all threads; the fairer figure on a
shared machine), each per Mb of non-gap sequence.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time

import numpy as np

from benchmarks.data import synthetic_region, write_synthetic_fasta
from engine import config, kdiff, store, streaming
from engine.sequences import load


def _gapped_copy(src: str, dst: str, share: float, seed: int = 5) -> int:
    """``src`` with ``share`` of every record's bases made N (runs of 1/20 to 1/8 of the
    record, like centromeres and unplaced stretches, and scaffold gaps of 100); returns the
    gap bases written."""
    rng = np.random.default_rng(seed)
    gap_bases = 0
    with open(dst, "w") as out:
        for rec in load(src):
            text = bytearray(rec.text.encode())  # (upper case: the mask does not matter here)
            n = len(text)
            want = int(n * share)
            scaffold = [(int(p), 100) for p in rng.integers(0, n - 100, max(1, n // 200_000))]
            long_runs = []
            left = want - 100 * len(scaffold)
            while left > 0:
                size = min(left, int(rng.integers(n // 20, n // 8)))
                long_runs.append((int(rng.integers(0, n - size)), size))
                left -= size
            for at, size in scaffold + long_runs:
                text[at:at + size] = b"N" * size
            gap_bases += text.count(b"N")
            out.write(f">{rec.id}\n")
            for i in range(0, n, 60):
                out.write(text[i:i + 60].decode() + "\n")
    return gap_bases


def _run(label: str, genome: str, target, non_gap: int, skip: bool = True) -> None:
    background = load(genome)
    original = streaming.gap_skips
    if not skip:  # the plan of before: every column read
        streaming.gap_skips = lambda starts, ends, reach: (starts[:0], ends[:0])
    try:
        t0, c0 = time.perf_counter(), time.process_time()
        result = kdiff.solve(target, background, 3, backend="multicore", threads=2)
        seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
    finally:
        streaming.gap_skips = original
    print(json.dumps({"run": label, "bases": int(sum(len(r) for r in background)),
                      "non_gap_bases": non_gap, "seconds": round(seconds, 2),
                      "s_per_non_gap_mb": round(seconds / (non_gap / 1e6), 4),
                      "cpu_seconds": round(cpu, 2),
                      "cpu_s_per_non_gap_mb": round(cpu / (non_gap / 1e6), 4),
                      "candidates": len(result.candidates)}), flush=True)


def main() -> None:
    mb = int(sys.argv[1]) if len(sys.argv) > 1 else 30
    share = float(sys.argv[2]) if len(sys.argv) > 2 else 0.3
    target_bp = int(sys.argv[3]) if len(sys.argv) > 3 else 500
    config.STREAM_MEMORY_BASES = 0
    target = [synthetic_region(target_bp)]
    with tempfile.TemporaryDirectory() as tmp:
        clean_fa, gapped_fa = os.path.join(tmp, "clean.fa"), os.path.join(tmp, "gapped.fa")
        write_synthetic_fasta(clean_fa, mb * 1_000_000, n_runs=False)
        gap_bases = _gapped_copy(clean_fa, gapped_fa, share)
        clean, gapped = os.path.join(tmp, "clean.psg"), os.path.join(tmp, "gapped.psg")
        store.build(clean_fa, clean)
        store.build(gapped_fa, gapped)
        total = store.open_store(gapped).bases
        for genome in (clean, gapped):  # compile every kernel of the streamed path first
            kdiff.solve([target[0].slice(0, 40)], load(genome), 3, backend="multicore", threads=2)
        _run("gap-free store", clean, target, store.open_store(clean).bases)
        _run("gapped store, gaps skipped", gapped, target, total - gap_bases)
        _run("gapped store, every column read", gapped, target, total - gap_bases, skip=False)


if __name__ == "__main__":
    main()
