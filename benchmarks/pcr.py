"""In-silico PCR against its peers (issue 18): ipcress (Debian ``exonerate``) and primersearch
(Debian ``emboss``), in the same run on the same files (benchmarks/pcr_workload.py).
``--backend cuda`` runs the GPU workload of benchmarks/pcr_cuda.py instead.

PCR20: 20 pairs (40 primers of 20 nt) taken from E. coli 536, products of 250-800 bp,
       half of them from the reverse strand, some primers with 1-3 substitutions away
       from their 3' window; searched in all of E. coli 536 (4.9 Mb, both strands)
       with at most 3 mismatches per primer (ipcress ``--mismatch 3``, primersearch
       ``-mismatchpercent 15``, ours ``--max-edits 3`` with the 3' rule off).

Every case is a command run in a subprocess on the same files, timed by its wall
clock (start-up and file reading included on every side): ``primerscope pcr`` on 2
threads (edits, then mismatch-only ``--no-indels``), ipcress and primersearch. A
peer that is not installed gives a row that says so. ``solve_s`` is our run's own
``seconds`` (the search and pairing, without loading and start-up).

Checks, reported as metrics: ours (3' rule off, same product range) is a superset of
ipcress's products (``superset_of_ipcress``: the same primers on the same amplicon,
whose ends may shift by up to 3 where an alignment with indels needs fewer edits than
the mismatches ipcress counts), and equal to them in mismatch-only mode
(``equal_to_ipcress``: the same coordinates) on the products within a pair (ipcress
pairs the primers of one experiment only; ours pairs the whole set, ``cross_pair``
counts the rest).
"""

from __future__ import annotations

from functools import lru_cache

from benchmarks import Case, Ratio
from benchmarks import pcr_cuda as cuda_bench  # the cuda backend's cases; imports no numba.cuda
from benchmarks import pcr_workload as pw

PCR20 = pw.Workload("PCR20", pairs=20, lengths=(20, 20))

RATIOS = (
    Ratio("PCR20", "primerscope pcr multicore (CLI)", "ipcress (CLI)", 1.0,
          "in-silico PCR, 40 primers in E. coli: primerscope vs ipcress, wall"),
    Ratio("PCR20", "primerscope pcr multicore --no-indels (CLI)", "ipcress (CLI)", 1.0,
          "  the same, mismatch-only"),
    Ratio("PCR20", "primerscope pcr multicore (CLI)", "primersearch (CLI)", None,
          "  primerscope vs primersearch, wall"),
) + cuda_bench.RATIOS


@lru_cache(maxsize=None)
def primerscope(indels: bool, threads: int):
    cmd = pw.pcr_command(PCR20, "multicore", threads=threads, indels=indels)
    pw.run(cmd)  # the first run may compile kernels into numba's cache: not timed
    return pw.primerscope(cmd)


def _ours_case(name, indels, threads):
    def run():
        seconds, solve_s, found = primerscope(indels, threads)
        same_pair = {p for p in found if p[2].split(".")[0] == p[3].split(".")[0]}
        metrics = {"seconds": seconds, "solve_s": solve_s, "products": len(found),
                   "cross_pair": len(found) - len(same_pair)}
        try:
            _, theirs = pw.ipcress(PCR20)
        except ImportError:
            return metrics
        metrics.update(pw.compare(theirs, found, indels, PCR20.mismatches))
        return metrics

    return Case("pcr", "PCR20", name, run, describe="in-silico PCR of 40 primers in E. coli 536")


def cases(opts) -> list[Case]:
    if getattr(opts, "backend", None) == "cuda":  # the GPU figure of issue 18
        return cuda_bench.cases(opts)
    threads = getattr(opts, "threads", None) or 2

    def run_ipcress():
        seconds, found = pw.ipcress(PCR20)
        return {"seconds": seconds, "products": len(found)}

    def run_primersearch():
        seconds, count = pw.primersearch(PCR20)
        return {"seconds": seconds, "products": count}

    return [
        Case("pcr", "PCR20", "ipcress (CLI)", run_ipcress, describe="ipcress --mismatch 3"),
        Case("pcr", "PCR20", "primersearch (CLI)", run_primersearch,
             describe="primersearch -mismatchpercent 15"),
        _ours_case("primerscope pcr multicore (CLI)", True, threads),
        _ours_case("primerscope pcr multicore --no-indels (CLI)", False, threads),
    ]
