"""edit benchmark workloads and their peers (edlib, RapidFuzz), measured in the same run.

V100: read verification, the seed study's workload: 2,000 reads of 100 bp taken
      from E. coli and mutated (up to 10 edits, at most 100 bp kept), 5 candidate regions each
      (the true one and 4 decoys) of m + 2k symbols, k = 20 (error rate 0.2):
      10,000 (query, region) pairs, one best hit each (start and CIGAR).
V64:  the same with 64 bp reads and k = 12, so the one-word ``myers`` applies.
V1000: 200 reads of 1,000 bp, k = 200, 5 candidates each (1,000 pairs).
P20:  primer search: 8 primers of 20-25 nt from E. coli (some mutated), every
      hit within k = 3 on both strands of the whole 4.9 Mb genome.
G48:  global distance of lambda (48,502 bp) to a copy with 1% random edits.
S64, S1000: the issue's search figures. Text = E. coli[0:2,000,000], one
      pattern = lambda[10000:10000+m], m = 64 with k = 6 and m = 1000 with
      k = 100 (k ~ m/10). Both sides compute the same thing: the best
      semi-global distance over the text within k. edlib: ``edlib.align(pattern,
      text, mode="HW", task="distance", k=k)``; ours: ``solve(mode="search",
      report="best", align=False, profile=False)`` (the best distance and its
      first end; no start, CIGAR or profile). The pattern occurs in E. coli 536
      (a lambdoid prophage) at distance 3 (m = 64) and 27 (m = 1000), so both
      sides lower k to the best found, as edlib does. "+profile" cases also
      keep the GUI's score profile (banded then cannot cut below k). Timing:
      best of 15 calls of ``solve`` (make_job, plan, kernels, result) and of
      ``edlib.align`` (with its own encoding of the sequences), all cases of
      the workload taking turns in the same process on the same input.

``seconds`` is the wall time of the whole solve after warm-up (planning,
kernels, alignments, result objects), so it compares with a peer's loop;
``kernel_s`` is the run's own ``info.seconds``. ``gcups`` is DP cells
(m x columns scanned) per second of wall time.
"""

from __future__ import annotations

import time
from functools import lru_cache

import numpy as np

from engine import edit
from benchmarks import Case, Ratio, data, timed
from benchmarks import edit_cuda as cuda_bench  # the cuda backend's cases (issue 5); imports no numba.cuda
from engine.jobs import drive
from engine.sequences import Record, decode, reverse_complement

WORKLOADS = ("V64", "V100", "V1000", "P20", "G48", "S64", "S1000")

#: (m, k) of the search figures; the pattern is lambda[10000:10000+m].
SEARCH = {"S64": (64, 6), "S1000": (1000, 100)}
SEARCH_TEXT = 2_000_000
SEARCH_REPEAT = 15

RATIOS = (
    Ratio("V100", "myers-blocked/serial", "dp/serial", None, "myers-blocked vs dp (serial), m=100"),
    Ratio("V100", "banded/serial", "dp/serial", None, "banded vs dp (serial), m=100"),
    Ratio("V100", "myers-blocked/multicore/coarse", "myers-blocked/serial", None,
          "myers-blocked multicore vs serial, m=100"),
    Ratio("V100", "myers-blocked/serial", "edlib HW path (loop)", None,
          "myers-blocked serial vs edlib, m=100"),
    Ratio("V64", "myers/serial", "myers-blocked/serial", None, "myers one word vs blocked, m=64"),
    Ratio("V64", "myers/serial", "edlib HW path (loop)", None, "myers serial vs edlib, m=64"),
    Ratio("V1000", "myers-blocked/serial", "dp/serial", None, "myers-blocked vs dp (serial), m=1000"),
    Ratio("V1000", "myers-blocked/serial", "edlib HW path (loop)", None,
          "myers-blocked serial vs edlib, m=1000"),
    Ratio("P20", "myers/serial", "dp/serial", None, "myers vs dp (serial), primers in 4.9 Mb"),
    Ratio("P20", "banded/serial", "dp/serial", None, "banded vs dp (serial), primers in 4.9 Mb"),
    Ratio("P20", "myers/multicore/coarse", "myers/serial", None, "myers multicore vs serial, primers"),
    Ratio("P20", "myers/serial", "edlib HW locations (loop)", None, "myers serial vs edlib, primers"),
    Ratio("G48", "myers-blocked/serial", "dp/serial", None, "myers-blocked vs dp, global 48.5 kb"),
    Ratio("G48", "banded/serial", "myers-blocked/serial", None, "banded vs myers-blocked, global"),
    Ratio("G48", "myers-blocked/serial", "edlib NW distance", None, "myers-blocked vs edlib NW"),
    Ratio("G48", "banded/serial", "edlib NW distance", None, "banded (band of blocks) vs edlib NW"),
    Ratio("G48", "myers-blocked/serial", "rapidfuzz Levenshtein", None,
          "myers-blocked vs RapidFuzz Levenshtein.distance"),
    Ratio("S64", "myers/serial", "edlib HW distance", 1.5,
          "search m=64 k=6 in E. coli 2 Mb: myers serial vs edlib HW"),
    Ratio("S64", "myers/serial+profile", "edlib HW distance", None,
          "  the same with the GUI's score profile"),
    Ratio("S1000", "banded/serial", "edlib HW distance", 1.0,
          "search m=1000 k=100 in E. coli 2 Mb: banded serial vs edlib HW"),
    Ratio("S1000", "banded/serial+profile", "edlib HW distance", None,
          "  the same with the GUI's score profile"),
    Ratio("S1000", "banded/serial", "myers-blocked/serial", None,
          "  banded (cut-off) vs myers-blocked (every block), serial"),
    Ratio("S1000", "banded/multicore/coarse", "edlib HW distance", None,
          "  banded multicore vs edlib HW"),
) + cuda_bench.RATIOS

_ACGT = np.array([1, 2, 4, 8], dtype=np.uint8)


def _mutate(rng, seq: np.ndarray, edits: int) -> np.ndarray:
    s = list(seq)
    for _ in range(edits):
        op, pos = rng.integers(3), int(rng.integers(0, len(s)))
        if op == 0:
            s[pos] = int(rng.choice(_ACGT))
        elif op == 1:
            s.insert(pos, int(rng.choice(_ACGT)))
        elif len(s) > 1:
            del s[pos]
    return np.array(s, dtype=np.uint8)


@lru_cache(maxsize=None)
def _verification(m: int, k: int, reads: int, per_read: int = 5):
    """(queries, regions): each read paired with its true region and decoys."""
    rng = np.random.default_rng(m)
    genome = data.ecoli().codes
    width = m + 2 * k
    queries, regions = [], []
    for q in range(reads):
        at = int(rng.integers(k, len(genome) - width))
        read = _mutate(rng, genome[at:at + m], int(rng.integers(0, k // 2 + 1)))[:m]
        starts = [at - k] + [int(x) for x in rng.integers(0, len(genome) - width, per_read - 1)]
        for c, s in enumerate(starts):
            queries.append(Record(f"read{q}", read))
            regions.append(Record(f"read{q}.cand{c}", genome[s:s + width]))
    return tuple(queries), tuple(regions), k


@lru_cache(maxsize=None)
def _primers():
    rng = np.random.default_rng(20)
    genome = data.ecoli()
    out = []
    for p in range(8):
        length = int(rng.integers(20, 26))
        at = int(rng.integers(0, len(genome) - length))
        codes = genome.codes[at:at + length]
        out.append(Record(f"primer{p}", _mutate(rng, codes, p % 3)))
    return tuple(out), (genome,), 3


@lru_cache(maxsize=None)
def _global_pair():
    rng = np.random.default_rng(48)
    lam = data.lambda_phage()
    return (Record("lambda_mut", _mutate(rng, lam.codes, len(lam) // 100)),), (lam,), None


@lru_cache(maxsize=None)
def _search(workload):
    m, k = SEARCH[workload]
    return (data.lambda_phage().slice(10000, 10000 + m),), \
        (data.ecoli().slice(0, SEARCH_TEXT),), k


def _inputs(workload):
    if workload in SEARCH:
        return _search(workload)
    if workload == "V64":
        return _verification(64, 12, 2000)
    if workload == "V100":
        return _verification(100, 20, 2000)
    if workload == "V1000":
        return _verification(1000, 200, 200)
    if workload == "P20":
        return _primers()
    return _global_pair()


def _options(workload):
    if workload in SEARCH:
        return {"mode": "search", "report": "best", "align": False, "profile": False,
                "strands": "forward"}  # (as edlib HW: the forward strand)
    if workload.startswith("V"):
        return {"mode": "search", "pairing": "zip", "report": "best"}
    if workload == "P20":
        return {"mode": "search", "strands": "both"}
    return {"mode": "global"}


def _checksum(result) -> dict:
    if result.mode == "global":
        return {"distance": result.best}
    if result.report == "best" and result.pairing == "all":
        return {"best": result.best, "end": result.hits[0].end if result.hits else None}
    return {"hits": len(result.hits), "sum_dist": int(sum(h.distance for h in result.hits))}


def _edit_case(workload, variant, backend, parallel=None, threads=None):
    def run():
        patterns, texts, k = _inputs(workload)
        options = dict(_options(workload), k=k, variant=variant, backend=backend,
                       parallel=parallel, threads=threads)
        # Warm-up compiles (or loads) the kernels; the timing excludes it, as --json does.
        edit.solve(patterns[:1], texts[:1], **options)
        seconds, result = timed(lambda: drive(edit.iter_solve(edit.make_job(patterns, texts,
                                                                             **options))))
        return {"seconds": seconds, "kernel_s": result.info.seconds, "cells": result.info.cells,
                "gcups": result.info.cells / seconds / 1e9, **_checksum(result)}

    name = f"{variant}/{backend}" + (f"/{parallel}" if parallel else "")
    return Case("edit", workload, name, run, describe=f"edit {workload}")


EDLIB_SEARCH = "edlib HW distance"


def _search_cases(workload, threads):
    """(name, variant, backend, parallel, threads, profile) of a search workload's own cases."""
    if workload == "S64":
        out = [("myers", "serial", None, None, False),
               ("myers-blocked", "serial", None, None, False),
               ("banded", "serial", None, None, False),
               ("myers", "serial", None, None, True)]
    else:
        out = [("myers-blocked", "serial", None, None, False),
               ("banded", "serial", None, None, False),
               ("banded", "serial", None, None, True),
               ("banded", "multicore", "coarse", threads, False)]
    return [(f"{v}/{b}" + (f"/{par}" if par else "") + ("+profile" if prof else ""), v, b, par, t,
             prof) for v, b, par, t, prof in out]


@lru_cache(maxsize=None)
def _search_timings(workload, threads):
    """Every case of a search workload timed in turns, round after round: the best time of each.

    Taking turns gives each side the same share of a busy machine's quiet and
    loaded moments, so the ratios are like for like. Returns {name: (seconds,
    metrics)}; edlib is left out when it is not installed.
    """
    patterns, texts, k = _inputs(workload)
    calls = {}
    for name, variant, backend, parallel, nthreads, profile in _search_cases(workload, threads):
        options = dict(_options(workload), k=k, variant=variant, backend=backend,
                       parallel=parallel, threads=nthreads, profile=profile)
        edit.solve(patterns, [texts[0].slice(0, 2000)], **options)  # compile or load the kernels
        calls[name] = (lambda o: lambda: edit.solve(patterns, texts, **o))(options)
    try:
        import edlib
    except ImportError:
        edlib = None
    if edlib is not None:
        pattern, text = decode(patterns[0].codes), decode(texts[0].codes)
        calls[EDLIB_SEARCH] = lambda: edlib.align(pattern, text, mode="HW", task="distance", k=k)
    best = {name: float("inf") for name in calls}
    last = {}
    for _ in range(SEARCH_REPEAT):
        for name, call in calls.items():
            t0 = time.perf_counter()
            last[name] = call()
            best[name] = min(best[name], time.perf_counter() - t0)
    out = {}
    for name, value in last.items():
        if name == EDLIB_SEARCH:
            d = value["editDistance"]
            ours = last[next(iter(last))].best
            out[name] = (best[name], {"best": d, "best_agrees": ours == (d if d >= 0 else None)})
        else:
            out[name] = (best[name], {"kernel_s": value.info.seconds, "cells": value.info.cells,
                                      "gcups": value.info.cells / best[name] / 1e9,
                                      **_checksum(value)})
    return out


def _search_case(workload, name, threads, describe):
    def run():
        found = _search_timings(workload, threads)
        if name not in found:
            raise ImportError("edlib is not installed")
        seconds, metrics = found[name]
        return {"seconds": seconds, **metrics}

    return Case("edit", workload, name, run, describe=describe)


def _search_workload(workload, threads):
    m, k = SEARCH[workload]
    out = []
    for name, *_, profile in _search_cases(workload, threads):
        what = "best distance and its end, no alignment" + (", score profile" if profile else "")
        out.append(_search_case(workload, name, threads, f"edit {workload} (m={m}, k={k}): {what}"))
    out.append(_search_case(workload, EDLIB_SEARCH, threads,
                            f"edlib.align(mode=HW, task=distance, k={k}), m={m}"))
    return out


def _edlib_verification(workload):
    def run():
        import edlib

        queries, regions, k = _inputs(workload)
        pairs = [(decode(q.codes), decode(r.codes)) for q, r in zip(queries, regions)]

        def loop():
            return [edlib.align(q, r, mode="HW", task="path", k=k) for q, r in pairs]

        seconds, found = timed(loop)
        ours = edit.verify(queries, regions, k, backend="serial")
        best = {(h.pattern_id, h.record_id): h.distance for h in ours.hits}
        agree = all(f["editDistance"] == best.get((q.id, r.id), -1)
                    for f, q, r in zip(found, queries, regions))
        hits = [f for f in found if f["editDistance"] >= 0]
        return {"seconds": seconds, "hits": len(hits),
                "sum_dist": int(sum(f["editDistance"] for f in hits)), "distances_agree": agree}

    return Case("edit", workload, "edlib HW path (loop)", run,
                describe="edlib.align(mode=HW, task=path, k) per pair")


def _edlib_primers():
    def run():
        import edlib

        primers, texts, k = _inputs("P20")
        genome = decode(texts[0].codes)
        queries = [decode(p.codes) for p in primers]
        rcs = [decode(reverse_complement(p.codes)) for p in primers]

        def loop():
            return [edlib.align(q, genome, mode="HW", task="locations", k=k) for q in queries + rcs]

        seconds, found = timed(loop)
        # edlib reports only the ends at each query's best distance: compare those.
        ours = edit.solve(primers, texts, mode="search", k=k, strands="both", backend="multicore",
                          align=False)
        agree = True
        for idx, f in enumerate(found):
            primer, strand = primers[idx % len(primers)], "+" if idx < len(primers) else "-"
            mine = [h for h in ours.hits if h.pattern_id == primer.id and h.strand == strand]
            if f["editDistance"] < 0:
                agree &= not mine
                continue
            best = min(h.distance for h in mine)
            ends = sorted(h.end for h in mine if h.distance == best)
            agree &= best == f["editDistance"] and ends == sorted(e + 1 for _, e in f["locations"])
        return {"seconds": seconds, "best_ends_agree": bool(agree)}

    return Case("edit", "P20", "edlib HW locations (loop)", run,
                describe="edlib.align(mode=HW, task=locations, k) per primer and strand (best ends only)")


def _global_peers():
    def edlib_run():
        import edlib

        a, b, _ = _inputs("G48")
        qa, qb = decode(a[0].codes), decode(b[0].codes)
        seconds, found = timed(lambda: edlib.align(qa, qb, mode="NW", task="distance"))
        return {"seconds": seconds, "distance": found["editDistance"]}

    def rapidfuzz_run():
        from rapidfuzz.distance import Levenshtein

        a, b, _ = _inputs("G48")
        qa, qb = decode(a[0].codes), decode(b[0].codes)
        seconds, found = timed(lambda: Levenshtein.distance(qa, qb))
        return {"seconds": seconds, "distance": int(found)}

    return [Case("edit", "G48", "edlib NW distance", edlib_run, describe="edlib.align(mode=NW)"),
            Case("edit", "G48", "rapidfuzz Levenshtein", rapidfuzz_run,
                 describe="rapidfuzz.distance.Levenshtein.distance")]


def cases(opts) -> list[Case]:
    if getattr(opts, "backend", None) == "cuda":  # the GPU figures of issue 5
        return cuda_bench.cases(opts)
    threads = getattr(opts, "threads", None) or 2
    out = []
    for w in ("V64", "V100", "V1000"):
        variants = ("dp", "myers", "myers-blocked", "banded") if w == "V64" else \
            ("dp", "myers-blocked", "banded")
        out += [_edit_case(w, v, "serial") for v in variants]
        out.append(_edit_case(w, "myers-blocked", "multicore", "coarse", threads))
        out.append(_edlib_verification(w))
    out += [_edit_case("P20", v, "serial") for v in ("dp", "myers", "myers-blocked", "banded")]
    out.append(_edit_case("P20", "myers", "multicore", "coarse", threads))
    out.append(_edlib_primers())
    out += [_edit_case("G48", v, "serial") for v in ("dp", "myers-blocked", "banded")]
    out += _global_peers()
    out += _search_workload("S64", threads)
    out += _search_workload("S1000", threads)
    return out
