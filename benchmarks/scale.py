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

S2 (one GPU; the issue's figures at 3,100 Mb): commands through the CLI end to end, each
in a fresh process after a warm-up run against 20 kb that compiles (or loads) its
kernels. Rows: the process's wall seconds (start-up and opening the store included), the
run's own ``solve_s`` (its JSON's ``seconds``), the peak RSS of its largest process
(os.wait4) and the warm-up's seconds. Each row is skipped, with the reason, where there
is no CUDA GPU (the CUDA simulator counts as none).

- ``kdiff/cuda``: S1's job, ``--backend cuda`` (goal 60 s wall);
- ``kdiff/dask-cuda``: the same with ``--backend dask``, which engine.cluster runs on a
  ``LocalCUDACluster`` (one worker per GPU) where dask_cuda is installed (else the row is
  skipped), cluster start included; ``same_as_cuda``: its candidates are those of the
  ``kdiff/cuda`` row. The ratio "dask-cuda vs cuda" (goal 0.9);
- ``pcr/cuda``: ``primerscope pcr`` of PCR1000's 1,000 primers (benchmarks.pcr_cuda, 18-25
  nt) against the store, ``--max-edits 3 --max-3prime-edits 3``, products of 250-800 bp
  (goal 120 s wall): sites and products.

scripts/probe/scale_gpu.sh makes and indexes the 3,100 Mb genome on the GPU machine and
runs S2 on it (its step ``bench``).

The genome has its N runs, as a real assembly (benchmarks.data: contig gaps, a
centromere-like run and 10 kb at each chromosome end; assembly gaps under engine.gaps);
``PRIMERSCOPE_SCALE_N_RUNS=0`` makes it without them, to compare (the rows' ``non_gap_bases``
give the time per base of non-gap sequence). Sizes come from the environment, so a
shared 2-core machine can run a smaller store: ``PRIMERSCOPE_SCALE_MB`` (store size,
default 200), ``PRIMERSCOPE_SCALE_TARGET`` (target length, default 5000),
``PRIMERSCOPE_BENCH_DATA`` (where the FASTA, store, target, primers and the S2 runs' JSON
are kept and reused; default a folder in the temporary directory).
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

from benchmarks import Case, Ratio, Skip

FAMILY = "scale"
RATIOS = (
    Ratio("S1", "kdiff/dask", "kdiff/multicore", 0.85,
          "dask LocalCluster (a worker per core) vs multicore, same job"),
    Ratio("S2", "kdiff/dask-cuda", "kdiff/cuda", 0.9,
          "dask LocalCUDACluster vs cuda, same job, CLI wall"),
)
ROOT = Path(__file__).resolve().parents[1]
SEED = 17
K = 5


def sizes() -> tuple[int, int]:
    """(store size in bases, target length) from the environment."""
    mb = float(os.environ.get("PRIMERSCOPE_SCALE_MB", "200"))
    target = int(os.environ.get("PRIMERSCOPE_SCALE_TARGET", "5000"))
    return int(mb * 1_000_000), target


def _data_dir() -> Path:
    path = Path(os.environ.get("PRIMERSCOPE_BENCH_DATA")
                or Path(tempfile.gettempdir()) / "primerscope-bench")
    path.mkdir(parents=True, exist_ok=True)
    return path


def n_runs() -> bool:
    """Whether the genome has its N runs (``PRIMERSCOPE_SCALE_N_RUNS``, default 1: yes)."""
    return os.environ.get("PRIMERSCOPE_SCALE_N_RUNS", "1") != "0"


def fasta_path(total: int) -> Path:
    """Where the synthetic genome's FASTA is kept (scripts/probe/scale_gpu.sh reads this)."""
    return _data_dir() / f"synthetic-{total}-seed{SEED}-{'N' if n_runs() else 'noN'}.fa"


def synthetic_fasta(total: int) -> Path:
    """The synthetic genome's FASTA (made once per size and seed, then reused)."""
    from benchmarks import data

    path = fasta_path(total)
    if not path.exists():
        data.write_synthetic_fasta(path, total, seed=SEED, n_runs=n_runs())
    return path


def store_path(total: int) -> Path:
    return fasta_path(total).with_suffix(".psg")


def synthetic_store(total: int) -> Path:
    """The synthetic genome's store (indexed once from its FASTA, then reused)."""
    from engine import store

    path = store_path(total)
    if not path.exists():
        store.build(synthetic_fasta(total), path)
    return path


def _written(path: Path, records) -> Path:
    """``path`` as FASTA of ``records``, written once (whole or not at all) and reused."""
    from benchmarks import data

    if not path.exists():
        part = path.with_name(path.name + ".part")
        data.write_fasta(part, records)
        os.replace(part, path)
    return path


def target_fasta(length: int) -> Path:
    """The target: a human-like region in no synthetic store (data.synthetic_region)."""
    from benchmarks import data

    return _written(_data_dir() / f"target-{length}-seed{SEED}.fa",
                    [data.synthetic_region(length, seed=SEED)])


def warmup_fasta() -> Path:
    """A 20 kb human-like region (not the target) for the CLI runs' warm-up."""
    from benchmarks import data

    return _written(_data_dir() / f"warmup-20000-seed{SEED}.fa",
                    [data.synthetic_region(20_000, seed=SEED, at=0)])


def pcr_primers() -> Path:
    """PCR1000's 1,000 primers (benchmarks.pcr_cuda) as ``primerscope pcr`` reads them."""
    path = _data_dir() / "PCR1000-primers.csv"
    if not path.exists():
        from benchmarks import pcr_workload as pw
        from benchmarks.pcr_cuda import PCR1000X20

        part = path.with_name(path.name + ".part")
        shutil.copy(pw.folder(PCR1000X20) / "primers.csv", part)
        os.replace(part, path)
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


def _run(cmd: list[str]) -> tuple[float, float, str]:
    """(wall seconds, peak RSS in MB, stdout) of a command run from the repository root; a
    failure raises with the last line of its stderr. The peak RSS is the command's own
    (os.wait4): its largest process, waited-for children such as Dask workers included."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT)] + sys.path))
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, cwd=ROOT, env=env)
        try:
            _, status, usage = os.wait4(proc.pid, 0)
        except BaseException:  # interrupted: leave no orphan behind
            proc.kill()
            proc.wait()
            raise
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode(errors="replace"), err.read().decode(errors="replace")
    if proc.returncode != 0:
        lines = stderr.strip().splitlines()
        raise RuntimeError(lines[-1] if lines else f"exit status {proc.returncode}")
    return wall, usage.ru_maxrss / 1024, stdout


def _kdiff_case(total: int, target: int, threads: int | None, backend: str = "multicore") -> dict:
    path = synthetic_store(total)
    _, _, stdout = _run([sys.executable, "-m", "benchmarks.scale", str(path), str(target),
                         str(threads or 0), backend])
    return json.loads(stdout.strip().splitlines()[-1])


def _need_gpu(dask: bool = False) -> None:
    """Skip a GPU case (its row says why) where no CUDA GPU is, or, for ``dask``, where the
    local cluster would not be a LocalCUDACluster (engine.cluster: dask_cuda missing)."""
    from engine import registry

    if os.environ.get("NUMBA_ENABLE_CUDASIM") == "1":
        raise Skip("the CUDA simulator is no GPU to time (NUMBA_ENABLE_CUDASIM=1)")
    ok, reason = registry.backend_status("cuda")
    if not ok:
        raise Skip(reason)
    if dask:
        ok, reason = registry.backend_status("dask")
        if not ok:
            raise Skip(reason)
        if importlib.util.find_spec("dask_cuda") is None:
            raise Skip("dask_cuda is not installed (the local cluster would be a CPU LocalCluster)")


def _cli(name: str, total: int, args: Callable[[str], list[str]]) -> tuple[dict, dict]:
    """``primerscope ARGS(store) --json -o DATA/NAME.json`` in a fresh process, after one
    run of ``ARGS(warm-up FASTA)`` (20 kb) that compiles (or loads) its kernels: (metrics,
    the JSON). Metrics: the wall seconds (start-up, opening the store and writing
    included), the run's own ``solve_s``, the peak RSS and the warm-up's wall seconds."""
    out = ["--json", "--no-progress", "-o", str(_data_dir() / f"{name}.json")]
    cli = [sys.executable, "-m", "engine.cli"]
    warmup_s, _, _ = _run(cli + args(str(warmup_fasta())) + out)
    background = str(synthetic_store(total))  # made (not timed) before the timed run
    wall, peak, _ = _run(cli + args(background) + out)
    with open(out[-1]) as fh:
        payload = json.load(fh)
    return {"seconds": wall, "solve_s": payload["seconds"], "peak_rss_MB": peak,
            "backend": payload["backend"], "warmup_s": warmup_s}, payload


#: The CLI kdiff candidates of this run's S2 rows, by backend (the dask row checks its own).
_candidates: dict[str, list] = {}


def _cli_kdiff(total: int, target: int, backend: str) -> dict:
    """The S2 kdiff job through the CLI on ``backend`` (the tests run it on multicore)."""
    row, payload = _cli(f"kdiff-{backend}", total, lambda background: [
        "kdiff", str(target_fasta(target)), background, "-k", str(K), "--strands", "both",
        "--backend", backend])
    _candidates[backend] = payload["candidates"]
    row["candidates"] = len(payload["candidates"])
    row["flags"] = "+".join(payload["flags"])
    return row


def _kdiff_cuda_case(total: int, target: int) -> dict:
    _need_gpu()
    return dict(_cli_kdiff(total, target, "cuda"), device=_device())


def _kdiff_dask_cuda_case(total: int, target: int) -> dict:
    _need_gpu(dask=True)
    row = _cli_kdiff(total, target, "dask")
    theirs = _candidates.get("cuda")
    row["same_as_cuda"] = "no kdiff/cuda row" if theirs is None else _candidates["dask"] == theirs
    return dict(row, device=_device())


def _pcr_cuda_case(total: int) -> dict:
    _need_gpu()
    row, payload = _cli("pcr-cuda", total, lambda background: [
        "pcr", str(pcr_primers()), background, "--max-edits", "3", "--max-3prime-edits", "3",
        "--min-product", "250", "--max-product", "800", "--backend", "cuda"])
    return dict(row, sites=len(payload["sites"]), products=len(payload["products"]),
                device=_device())


def _device() -> str:
    from benchmarks.pcr_cuda import _device as name  # a label; never fails

    return name()


def cases(opts) -> list[Case]:
    from engine.cluster import local_cores

    total, target = sizes()
    mb = f"{total / 1e6:g} Mb"
    job = f"kdiff {target} bp target vs {mb} store, k={K}, both strands"
    return [
        Case(FAMILY, "S1", "index", lambda: _index_case(total),
             f"primerscope index of a {mb} synthetic FASTA"),
        Case(FAMILY, "S1", "open", lambda: _open_case(total), f"open the {mb} store"),
        Case(FAMILY, "S1", "kdiff/multicore", lambda: _kdiff_case(total, target, opts.threads),
             f"{job} (peak RSS)"),
        Case(FAMILY, "S1", "kdiff/dask", lambda: _kdiff_case(total, target, None, "dask"),
             f"the same on a Dask LocalCluster of {local_cores()} workers (start included)"),
        Case(FAMILY, "S2", "kdiff/cuda", lambda: _kdiff_cuda_case(total, target),
             f"{job}, CLI end to end (goal <= 60 s wall at 3,100 Mb)"),
        Case(FAMILY, "S2", "kdiff/dask-cuda", lambda: _kdiff_dask_cuda_case(total, target),
             "the same with --backend dask: a LocalCUDACluster, one worker per GPU (start "
             "included)"),
        Case(FAMILY, "S2", "pcr/cuda", lambda: _pcr_cuda_case(total),
             f"pcr of PCR1000's 1,000 primers vs the {mb} store, --max-edits 3, products "
             "250-800 bp, CLI end to end (goal <= 120 s wall at 3,100 Mb)"),
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
    t0, c0 = time.perf_counter(), time.process_time()
    result = kdiff.solve(target, background, K, **options)
    seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    lengths = [c.length for c in result.candidates]
    # (CPU time of every thread: on a shared machine the load moves it far less than wall time)
    out = {"seconds": seconds, "cpu_s": cpu, "open_s": open_seconds, "rss_before_MB": before,
           "peak_rss_MB": peak, "candidates": len(lengths),
           "mean_length": sum(lengths) / len(lengths) if lengths else 0.0,
           "threads": result.info.threads, "Gcells": result.info.cells / 1e9}
    # Assembly gaps (engine.gaps): the time per base of non-gap sequence compares a genome
    # with N runs to one without.
    summary = result.background_summary
    non_gap = sum(len(r) for r in background) - summary.gap_bases
    out.update(solve_s=result.info.seconds, gaps=summary.gaps, gap_bases=summary.gap_bases,
               non_gap_bases=non_gap, ns_per_non_gap_base=seconds / non_gap * 1e9,
               cpu_ns_per_non_gap_base=cpu / non_gap * 1e9)
    if backend == "dask":
        out["start_s"] = seconds - result.info.seconds
        out["worker_peak_rss_MB"] = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(json.dumps(out))


if __name__ == "__main__":
    _child(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4])
