"""In-silico PCR on the GPU against ipcress (issue 18): ``python -m benchmarks pcr --backend cuda``.

PCR1000x20: 500 pairs (1,000 primers of 18-25 nt) taken from E. coli 536 as PCR20's are
            (benchmarks/pcr_workload.py: products of 250-800 bp, half on the reverse
            strand, forward primers with 0-3 substitutions away from their 3' window),
            searched in E. coli 536 x 20 (20 records of 4.94 Mb, 98.8 Mb: products never
            cross copies, so each copy amplifies the same), both strands, at most 3
            mismatches (ipcress ``--mismatch 3``; ours ``--max-edits 3`` with the 3'
            rule off).

Rows, every one a command in a subprocess timed by its wall clock (start-up and file
reading included):

- ``ipcress (CLI, x20 from x1 and x2)``: ipcress is single-threaded and linear in the
  text; on x20 it would take about 7 minutes of a 2-core machine's core, so it runs on
  the first 1 and 2 copies and its x20 time is extrapolated (the fixed part once, the
  per-copy part 20 times; pcr_workload.extrapolate). Both measured runs are in the row.
- ``primerscope pcr multicore (CLI, x20 from x1 and x2)``: the same way, on all CPUs,
  for scale.
- ``primerscope pcr cuda (CLI)``: on all of x20, the best of two runs after a warm-up
  run on x1 that compiles the kernels into numba's cache; ``primerscope pcr cuda
  (solve)`` is that run's own ``seconds`` (search, refinement and pairing, without
  start-up, loading and writing). ``--no-indels`` (mismatch-only) runs once.

Checks (metrics of the cuda rows): on the first two copies, ours is a superset of
ipcress's products (``superset_of_ipcress``, amplicon ends within 3 where indels save
edits) and, mismatch-only, equal to them (``equal_to_ipcress``), as in PCR20;
``records_alike``: every copy has the same products.
"""

from __future__ import annotations

import os
from functools import lru_cache

from benchmarks import Case, Ratio
from benchmarks import pcr_workload as pw

PCR1000X20 = pw.Workload("PCR1000x20", pairs=500, lengths=(18, 25), copies=20)
#: Copies that the peers' measured runs use (their x20 time is extrapolated from them).
MEASURED = (1, 2)
#: Timed runs of the cuda case (the best counts).
CUDA_RUNS = 2

IPCRESS = "ipcress (CLI, x20 from x1 and x2)"
MULTICORE = "primerscope pcr multicore (CLI, x20 from x1 and x2)"
CUDA = "primerscope pcr cuda (CLI)"
CUDA_SOLVE = "primerscope pcr cuda (solve)"
CUDA_NO_INDELS = "primerscope pcr cuda --no-indels (CLI)"

RATIOS = (
    Ratio("PCR1000x20", CUDA, IPCRESS, 50.0,
          "in-silico PCR, 1,000 primers in E. coli x20: cuda vs ipcress, wall"),
    Ratio("PCR1000x20", CUDA_SOLVE, IPCRESS, None, "  cuda solve time vs ipcress wall"),
    Ratio("PCR1000x20", CUDA, MULTICORE, None, "  cuda vs primerscope multicore, wall"),
)


def _extrapolated(times: dict, runs: dict) -> dict:
    """The row of a tool measured on MEASURED copies: x20 seconds and the runs behind them."""
    t1, t2 = (times[c] for c in MEASURED)
    out = {"seconds": pw.extrapolate(t1, t2, PCR1000X20.copies), "extrapolated": True}
    out.update({f"x{c}_s": times[c] for c in MEASURED})
    out.update(runs)
    return out


@lru_cache(maxsize=None)
def _ipcress() -> tuple[dict, set]:
    times, products = {}, set()
    for c in MEASURED:
        times[c], products = pw.ipcress(PCR1000X20, c)
    return _extrapolated(times, {f"x{MEASURED[-1]}_products": len(products)}), products


def _multicore(threads: int) -> dict:
    w = PCR1000X20
    pw.run(pw.pcr_command(w, "multicore", threads=threads, copies=1))  # compiles: not timed
    times, solve = {}, {}
    for c in MEASURED:
        times[c], solve[c], _ = pw.primerscope(pw.pcr_command(w, "multicore", threads=threads,
                                                              copies=c))
    return _extrapolated(times, {f"solve_x{c}_s": solve[c] for c in MEASURED}
                         | {"threads": threads})


@lru_cache(maxsize=None)
def _cuda(indels: bool) -> dict:
    w = PCR1000X20
    pw.run(pw.pcr_command(w, "cuda", copies=1, indels=indels))  # compiles: not timed
    runs = []
    for _ in range(CUDA_RUNS if indels else 1):
        runs.append(pw.primerscope(pw.pcr_command(w, "cuda", indels=indels)))
    seconds, solve_s, found = min(runs, key=lambda r: r[0])
    same_pair = {p for p in found if p[2].split(".")[0] == p[3].split(".")[0]}
    per_record: dict = {}
    for p in found:
        per_record.setdefault(p[0], set()).add(p[1:])
    out = {"seconds": seconds, "solve_s": solve_s, "runs_s": [round(r[0], 3) for r in runs],
           "products": len(found), "cross_pair": len(found) - len(same_pair),
           "records_alike": len(per_record) == w.copies
           and len({frozenset(v) for v in per_record.values()}) == 1}
    try:
        _, theirs = _ipcress()
    except (ImportError, RuntimeError):  # the ipcress row says why
        pass
    else:
        ids = {rec.id for rec in pw.data.ecoli_repeated(w.copies, records=True)[:MEASURED[-1]]}
        out.update(pw.compare(theirs, found, indels, w.mismatches, records=ids))
    out["device"] = _device()
    return out


def _device() -> str:
    try:
        from engine.gpu import device_name

        return device_name()
    except Exception as exc:  # noqa: BLE001 -- a label only; the run itself says what failed
        return f"unknown ({type(exc).__name__})"


def cases(opts) -> list[Case]:
    threads = getattr(opts, "threads", None) or os.cpu_count()
    where = "1,000 primers in E. coli 536 x20"

    def solve_row():
        row = dict(_cuda(True))
        row["cli_s"] = row["seconds"]
        row["seconds"] = row.pop("solve_s")
        return {k: row[k] for k in ("seconds", "cli_s", "products", "device")}

    return [
        Case("pcr", "PCR1000x20", IPCRESS, lambda: _ipcress()[0],
             describe=f"ipcress --mismatch 3 on x1 and x2, extrapolated to x20 ({where})"),
        Case("pcr", "PCR1000x20", MULTICORE, lambda: _multicore(threads),
             describe=f"{threads} threads on x1 and x2, extrapolated to x20"),
        Case("pcr", "PCR1000x20", CUDA, lambda: _cuda(True), describe=where),
        Case("pcr", "PCR1000x20", CUDA_SOLVE, solve_row,
             describe="the cuda run's own seconds: search, refinement and pairing"),
        Case("pcr", "PCR1000x20", CUDA_NO_INDELS, lambda: _cuda(False),
             describe=f"mismatch-only ({where})"),
    ]
