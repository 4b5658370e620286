"""In-silico PCR on the GPU against ipcress (issue 18): ``python -m benchmarks pcr --backend cuda``.

PCR1000x20: 500 pairs (1,000 primers of 18-25 nt) taken from E. coli 536 as PCR20's are
            (benchmarks/pcr_workload.py: products of 250-800 bp, half on the reverse
            strand, forward primers with 0-3 substitutions away from their 3' window),
            searched in E. coli 536 x 20 (20 records of 4.94 Mb, 98.8 Mb: products never
            cross copies, so each copy amplifies the same), both strands, at most 3
            mismatches (ipcress ``--mismatch 3``; ours ``--max-edits 3`` with the 3'
            rule off).

Rows, every one a command in a subprocess timed by its wall clock (start-up, file
reading and writing the products included):

- ``ipcress (CLI)``: ipcress is single-threaded and linear in the text (on a loaded 2-core
  EPYC: 24.5, 47.3 and 95.0 s of CPU on x1, x2 and x4). By default it runs on the first 1
  and 4 copies and its x20 time is read off the line through them
  (pcr_workload.extrapolate; both runs are in the row); with PCR_IPCRESS_COPIES=20 it runs
  on all of x20 (the device script does that, in a process beside the others).
- ``primerscope pcr multicore (CLI)``: on all of x20 and all CPUs, for scale (after a
  run on x1 that compiles the kernels into numba's cache).
- ``primerscope pcr cuda (CLI)``: on all of x20, the best of two runs (the default
  output: the products' CSV) after a warm-up run on x1 that compiles the kernels;
  ``primerscope pcr cuda (solve)``: the run's own ``seconds`` (search, refinement and
  pairing, without start-up, loading and writing), from one more run with ``--json``
  (which also writes every site: ``json_cli_s``). ``--no-indels`` (mismatch-only) runs
  once.

Checks (metrics of the cuda rows): on the copies ipcress ran on (x4), ours is a superset of
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
#: Copies that ipcress runs on: by default x1 and x4, its x20 time read off the line through
#: them; PCR_IPCRESS_COPIES=20 runs it on all of x20 instead (about 8 minutes: the device
#: script runs that row in its own process beside the others, scripts/probe/pcr_gpu.sh).
MEASURED = tuple(int(c) for c in os.environ.get("PCR_IPCRESS_COPIES", "1,4").split(","))
#: Timed runs of the cuda case (the best counts).
CUDA_RUNS = 2

IPCRESS = "ipcress (CLI)"
MULTICORE = "primerscope pcr multicore (CLI)"
CUDA = "primerscope pcr cuda (CLI)"
CUDA_SOLVE = "primerscope pcr cuda (solve)"
CUDA_NO_INDELS = "primerscope pcr cuda --no-indels (CLI)"

RATIOS = (
    Ratio("PCR1000x20", CUDA, IPCRESS, 50.0,
          "in-silico PCR, 1,000 primers in E. coli x20: cuda vs ipcress, wall"),
    Ratio("PCR1000x20", CUDA_SOLVE, IPCRESS, None, "  cuda solve time vs ipcress wall"),
    Ratio("PCR1000x20", CUDA, MULTICORE, None, "  cuda vs primerscope multicore, wall"),
)


@lru_cache(maxsize=None)
def _ipcress() -> tuple[dict, set]:
    """(the row, the products on the last measured copies): measured on x20 when MEASURED
    holds it, else read off the line through two measured counts of copies."""
    copies = PCR1000X20.copies
    out, products = {"extrapolated": copies not in MEASURED}, set()
    for c in MEASURED:
        out[f"x{c}_s"], products = pw.ipcress(PCR1000X20, c)
        out[f"x{c}_products"] = len(products)
    if copies in MEASURED:
        out["seconds"] = out[f"x{copies}_s"]
    elif len(MEASURED) >= 2:
        out["seconds"] = pw.extrapolate({c: out[f"x{c}_s"] for c in MEASURED[-2:]}, copies)
    else:  # one count of copies, not x20: its products check ours, no x20 time
        out["seconds"] = None
    return out, products


def _multicore(threads: int) -> dict:
    w = PCR1000X20
    pw.run(pw.pcr_command(w, "multicore", threads=threads, copies=1))  # compiles: not timed
    seconds, _, found = pw.primerscope(pw.pcr_command(w, "multicore", threads=threads,
                                                      as_json=False))
    return {"seconds": seconds, "products": len(found), "threads": threads}


@lru_cache(maxsize=None)
def _cuda(indels: bool) -> dict:
    w = PCR1000X20
    pw.run(pw.pcr_command(w, "cuda", copies=1, indels=indels))  # compiles: not timed
    runs = []
    for _ in range(CUDA_RUNS if indels else 1):  # the default output: CSV of the products
        runs.append(pw.primerscope(pw.pcr_command(w, "cuda", indels=indels, as_json=False)))
    seconds, _, found = min(runs, key=lambda r: r[0])
    # --json adds every site (about 163,000 here) and the run's own seconds
    json_s, solve_s, _ = pw.primerscope(pw.pcr_command(w, "cuda", indels=indels))
    same_pair = {p for p in found if p[2].split(".")[0] == p[3].split(".")[0]}
    per_record: dict = {}
    for p in found:
        per_record.setdefault(p[0], set()).add(p[1:])
    out = {"seconds": seconds, "solve_s": solve_s, "runs_s": [round(r[0], 3) for r in runs],
           "json_cli_s": json_s,
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

    return [  # multicore last: a run that hits its time limit keeps the GPU's rows
        Case("pcr", "PCR1000x20", IPCRESS, lambda: dict(_ipcress()[0]),
             describe=f"ipcress --mismatch 3 on x{' and x'.join(map(str, MEASURED))}"
                      f"{'' if PCR1000X20.copies in MEASURED else ', extrapolated to x20'} ({where})"),
        Case("pcr", "PCR1000x20", CUDA, lambda: dict(_cuda(True)), describe=where),
        Case("pcr", "PCR1000x20", CUDA_SOLVE, solve_row,
             describe="the cuda run's own seconds: search, refinement and pairing"),
        Case("pcr", "PCR1000x20", CUDA_NO_INDELS, lambda: dict(_cuda(False)),
             describe=f"mismatch-only ({where})"),
        Case("pcr", "PCR1000x20", MULTICORE, lambda: _multicore(threads),
             describe=f"{threads} threads ({where})"),
    ]
