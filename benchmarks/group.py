"""Group-specific primers (issue 30), G1: 12 inclusion strains and 40 exclusion genomes (20
relatives at 10-20 %, 20 unrelated) of about 5 Mb each, synthetic (benchmarks.data).

One case runs the whole search (seeds, Primer3 in the conserved windows, verification by
pcr and the edit search) and reports the pairs found, the time per stage, the peak RSS
(this process, and Primer3's children) and the Primer3 children the J=1 search started
(one pool a search: ``threads`` of them, every core on cuda). The comparison with an
exact-k-mer-only shortlist (RUCS, primerForge: a primer must occur exactly in every
strain) is the same search at
J = 0, 3' rule unchanged (at J = 0 the shortlist keeps only stretches whose 16-mers occur
in every strain): ``exact_pairs``; ``tolerant_only``: pairs of the J = 1 run with a
mismatch in some strain, which an exact shortlist cannot propose.
``PRIMERSCOPE_GROUP_MB`` sets the genome size in Mb (default 5). On a backend other than
multicore (cuda) ``threads`` is None: the CPU stages then use every core.
"""

from __future__ import annotations

import os
import resource
import time

from benchmarks import Case, data
from engine import registry
from engine.primers import group, pcr
from engine.primers.children import ChildPool

K = 3
RATIOS = ()


def _mb() -> float:
    return float(os.environ.get("PRIMERSCOPE_GROUP_MB", "5"))


def _peak_mb(who) -> float:
    return resource.getrusage(who).ru_maxrss / 1024


def _cpu_s() -> float:
    """User + system seconds of this process and its finished children (Primer3's)."""
    return sum(getattr(resource.getrusage(who), f) for who in
               (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN) for f in ("ru_utime", "ru_stime"))


def warm_up(backend, threads) -> None:
    """Compile (or load) every kernel the timed search reaches: the whole search on a tiny
    group, then pcr as inclusivity runs it over its windows (on the serial backend or the
    CPU one; engine.primers.group) with one primer and with several: a round of one primer
    takes the edit search's lanes scan, not simd (engine.edit.driver.simd_applies), which
    the tiny group never reaches. On a fresh machine that compile (~12 s on the H200's
    host) otherwise lands inside the timed run's inclusivity stage."""
    tiny = data.synthetic_group(2, 1, 0, 600, islands=1, island_length=200, seed=1)
    group.group(tiny.include, tiny.exclude, K, backend=backend, threads=threads)
    text = tiny.include[0].records[0]
    primers = [text.text[i:i + 20] for i in (0, 100, 200, 300)]
    cpu = backend if registry.on_cpu(backend) else "multicore"
    for where in dict.fromkeys(("serial", cpu)):
        for some in (primers[:1], primers):
            pcr.solve(some, [text], pcr.PcrSettings(max_edits=1), backend=where,
                      threads=threads if where == "multicore" else None)


def _case(backend, threads):
    def run():
        t0, c0 = time.perf_counter(), _cpu_s()
        sg = data.synthetic_group(12, 20, 20, int(_mb() * 1_000_000))
        made, made_cpu = time.perf_counter() - t0, _cpu_s() - c0
        warm_up(backend, threads)
        load = os.getloadavg()[0]
        children = ChildPool.started
        t0, c0 = time.perf_counter(), _cpu_s()
        settings = group.GroupSettings(num_return=20)
        result = group.group(sg.include, sg.exclude, K, settings, backend=backend,
                             threads=threads)
        wall, cpu = time.perf_counter() - t0, _cpu_s() - c0
        children = ChildPool.started - children
        t1, c1 = time.perf_counter(), _cpu_s()
        exact = group.group(sg.include, sg.exclude, K,
                            group.GroupSettings(num_return=20, include_edits=0),
                            backend=backend, threads=threads)
        exact_wall, exact_cpu = time.perf_counter() - t1, _cpu_s() - c1
        tolerant = sum(any(q is not None and q.left_edits + q.right_edits > 0
                           for q in p.products) for p in result.pairs)
        out = {"seconds": result.info.seconds, "wall_s": round(wall, 1),
               "cpu_s": round(cpu, 1), "generate_s": round(made, 1),
               "generate_cpu_s": round(made_cpu, 1), "pairs": len(result.pairs),
               "tolerant_only": tolerant, "exact_pairs": len(exact.pairs),
               "exact_wall_s": round(exact_wall, 1), "exact_cpu_s": round(exact_cpu, 1),
               "load_average_at_start": round(load, 1),
               "load_average_at_end": round(os.getloadavg()[0], 1),
               "peak_rss_mb": round(_peak_mb(resource.RUSAGE_SELF)),
               "peak_rss_primer3_mb": round(_peak_mb(resource.RUSAGE_CHILDREN)),
               "primer3_children": children,
               "genome_mb": _mb(), "diagnosis": list(result.diagnosis)}
        out.update({f"{stage}_s": round(s, 1) for stage, s in result.stage_seconds.items()})
        out.update({f"exact_{stage}_s": round(s, 1) for stage, s in exact.stage_seconds.items()})
        out["exact_diagnosis"] = list(exact.diagnosis)
        return out

    return Case("group", "G1", f"group/{backend}", run,
                describe="12 strains + 40 exclusion genomes of ~5 Mb, k=3, J=1, 3' 3 exact")


def cases(opts) -> list[Case]:
    threads = getattr(opts, "threads", None) or 2
    backend = getattr(opts, "backend", None) or "multicore"
    return [_case(backend, threads if backend == "multicore" else None)]
