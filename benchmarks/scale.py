"""Genome-scale workloads (issue 17): a synthetic human-like genome in a store.

S1 (CPU): kdiff of a 5 kb human-like target (benchmarks.data.synthetic_region, in
no store) against a 200 Mb synthetic store, k = 5, both strands, on the multicore
backend: the background streams in chunks (engine.streaming). Cases:

- ``index``: ``primerscope index`` of the synthetic FASTA (MB/s of FASTA per core);
- ``open``: opening the store (maps it, reads only the header and record table);
- ``kdiff/multicore``: the job, in a child process that reports its peak RSS and
  its RSS before the job (the difference is what streaming holds);
- ``kdiff/dask``: the same job on a Dask ``LocalCluster`` (one single-threaded worker
  process per core: 2 on the 2-core machine), timed from the call, cluster start and
  worker warm-up included (``start_s`` of them); the peak RSS of the largest worker is
  reported besides the child's. The ratio "dask vs multicore" (goal 0.85) is the
  cluster's overhead.

The genome has no N runs (an N run as long as a candidate matches every candidate,
see benchmarks.data.write_synthetic_fasta). Sizes come from the environment, so a
shared 2-core machine can run a smaller store: ``PRIMERSCOPE_SCALE_MB`` (store size,
default 200), ``PRIMERSCOPE_SCALE_TARGET`` (target length, default 5000),
``PRIMERSCOPE_BENCH_DATA`` (where the FASTA and store are kept and reused; default
a folder in the temporary directory).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks import Case, Ratio

FAMILY = "scale"
RATIOS = (
    Ratio("S1", "kdiff/dask", "kdiff/multicore", 0.85,
          "dask LocalCluster (a worker per core) vs multicore, same job"),
)
SEED = 17
K = 5


def _sizes() -> tuple[int, int]:
    mb = float(os.environ.get("PRIMERSCOPE_SCALE_MB", "200"))
    target = int(os.environ.get("PRIMERSCOPE_SCALE_TARGET", "5000"))
    return int(mb * 1_000_000), target


def _data_dir() -> Path:
    path = Path(os.environ.get("PRIMERSCOPE_BENCH_DATA")
                or Path(tempfile.gettempdir()) / "primerscope-bench")
    path.mkdir(parents=True, exist_ok=True)
    return path


def synthetic_fasta(total: int) -> Path:
    """The synthetic genome's FASTA (made once per size and seed, then reused)."""
    from benchmarks import data

    path = _data_dir() / f"synthetic-{total}-seed{SEED}-noN.fa"
    if not path.exists():
        data.write_synthetic_fasta(path, total, seed=SEED, n_runs=False)
    return path


def synthetic_store(total: int) -> Path:
    from engine import store

    path = synthetic_fasta(total).with_suffix(".psg")
    if not path.exists():
        store.build(synthetic_fasta(total), path)
    return path


def _index_case(total: int) -> dict:
    from engine import store

    fasta = synthetic_fasta(total)
    out = fasta.with_name(fasta.stem + "-bench.psg")
    store.build(fasta, out)  # a first build loads the kernels and warms the page cache
    t0 = time.perf_counter()
    info = store.build(fasta, out)
    seconds = time.perf_counter() - t0
    size = fasta.stat().st_size
    os.unlink(out)
    return {"seconds": seconds, "MB_per_s": size / seconds / 1e6, "fasta_MB": size / 1e6,
            "store_MB": info.file_bytes / 1e6}


def _open_case(total: int) -> dict:
    from engine import store

    path = synthetic_store(total)
    store.open_store(path)  # imports
    t0 = time.perf_counter()
    records = store.load_store(path)
    seconds = time.perf_counter() - t0
    return {"seconds": seconds, "records": len(records), "bases": sum(len(r) for r in records)}


def _kdiff_case(total: int, target: int, threads: int | None, backend: str = "multicore") -> dict:
    path = synthetic_store(total)
    root = Path(__file__).resolve().parents[1]
    cmd = [sys.executable, "-m", "benchmarks.scale", str(path), str(target), str(threads or 0),
           backend]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(root)] + sys.path))
    out = subprocess.run(cmd, capture_output=True, text=True, cwd=root, env=env, check=False)
    if out.returncode != 0:
        raise RuntimeError(out.stderr.strip().splitlines()[-1] if out.stderr else "child failed")
    return json.loads(out.stdout.strip().splitlines()[-1])


def cases(opts) -> list[Case]:
    from engine.cluster import local_cores

    total, target = _sizes()
    mb = f"{total / 1e6:g} Mb"
    return [
        Case(FAMILY, "S1", "index", lambda: _index_case(total),
             f"primerscope index of a {mb} synthetic FASTA"),
        Case(FAMILY, "S1", "open", lambda: _open_case(total), f"open the {mb} store"),
        Case(FAMILY, "S1", "kdiff/multicore", lambda: _kdiff_case(total, target, opts.threads),
             f"kdiff {target} bp target vs {mb} store, k={K}, both strands (peak RSS)"),
        Case(FAMILY, "S1", "kdiff/dask", lambda: _kdiff_case(total, target, None, "dask"),
             f"the same on a Dask LocalCluster of {local_cores()} workers (start included)"),
    ]


def _child(path: str, target_len: int, threads: int, backend: str) -> None:
    """The kdiff job in this process: time, candidates and RSS (before and peak), as JSON;
    on dask also the largest worker's peak RSS (workers are this process's children)."""
    import resource

    from benchmarks import data
    from engine import kdiff
    from engine.sequences import load

    def rss_mb() -> float:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
        return 0.0

    target = [data.synthetic_region(target_len, seed=SEED)]
    options = {"backend": backend}
    if backend == "multicore":
        options["threads"] = threads or None
    t0 = time.perf_counter()
    background = load(path)
    open_seconds = time.perf_counter() - t0
    # compile / load the kernels here (dask: the workers load theirs; that is timed)
    kdiff.solve(target, [background[0].slice(0, 2000)], K, backend="multicore")
    before = rss_mb()
    t0 = time.perf_counter()
    result = kdiff.solve(target, background, K, **options)
    seconds = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    lengths = [c.length for c in result.candidates]
    out = {"seconds": seconds, "open_s": open_seconds, "rss_before_MB": before,
           "peak_rss_MB": peak, "candidates": len(lengths),
           "mean_length": sum(lengths) / len(lengths) if lengths else 0.0,
           "threads": result.info.threads, "Gcells": result.info.cells / 1e9}
    if backend == "dask":
        out["start_s"] = seconds - result.info.seconds
        out["worker_peak_rss_MB"] = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(json.dumps(out))


if __name__ == "__main__":
    _child(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4])
