"""Pair design (issue 18): lambda[20000:25000] against all of E. coli 536, k = 5, both strands.

One case per backend run: the whole job (kdiff on the target and its reverse complement
in one job, Primer3's lists and pair checks, the in-silico PCR of the chosen pairs
against E. coli), its time split by phase (``kdiff_s``, ``primer3_s``, ``pcr_s``), and
the pairs found. Primer3's settings are its defaults; the PCR's are primerscope's
(3 edits, 3' rule 0 in 5). ``seconds`` is the job's own time (the ``--json`` seconds:
no loading, no first-time compilation); ``wall_s`` adds the building of the job.
"""

from __future__ import annotations

import time

from benchmarks import Case, data
from engine.primers import pairs

TARGET = (20_000, 25_000)
K = 5
RATIOS = ()


def _case(backend, threads):
    def run():
        target = [data.lambda_phage().slice(*TARGET)]
        background = [data.ecoli()]
        # Warm-up: compile (or load) every kernel the job calls, on a tiny input.
        pairs.solve([target[0].slice(0, 400)], [background[0].slice(0, 3000)], 2,
                    backend=backend, threads=threads)
        t0 = time.perf_counter()
        result = pairs.solve(target, background, K, backend=backend, threads=threads)
        wall = time.perf_counter() - t0
        phases = result.phase_seconds
        best = result.pairs[0] if result.pairs else None
        return {"seconds": result.info.seconds, "wall_s": wall, "kdiff_s": phases["kdiff"],
                "primer3_s": phases["primer3"], "pcr_s": phases["pcr"],
                "threads": result.info.threads, "pairs": len(result.pairs),
                "best_penalty": best.penalty if best else None,
                "offtarget_products": sum(p.offtarget_products for p in result.pairs)}

    name = f"pairs/{backend}"
    return Case("pairs", "L5K", name, run,
                describe="pair design, lambda[20000:25000] vs E. coli 536, k=5, both strands")


def cases(opts) -> list[Case]:
    threads = getattr(opts, "threads", None) or 2
    backend = getattr(opts, "backend", None) or "multicore"
    return [_case(backend, threads if backend == "multicore" else None)]
