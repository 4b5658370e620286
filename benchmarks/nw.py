"""nw benchmark (issue 3): A = lambda[0:20000], B = E. coli[0:20000], scores 1 / 0 / -1.
(``--backend cuda`` runs the GPU cases of benchmarks/nw_cuda.py instead.)

- score only: every variant x backend, parasail ``nw_striped_16`` (the goal's
  baseline) and ``nw_scan_32``; "score/fastest" is the fastest of our
  variants as measured above in the same run;
- full traceback: our variants (Hirschberg) and parasail ``nw_trace_scan_16``,
  in time; and the peak memory of the fastest of ours and of parasail, each in a
  fresh subprocess (VmHWM after the run minus VmRSS once inputs are loaded and
  kernels compiled; the peak is reset through /proc/self/clear_refs first).
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

from engine import nw
from benchmarks import Case, Ratio, timed
from benchmarks import data
from benchmarks import nw_cuda as cuda_bench  # the cuda backend's cases (issue 6); imports no numba.cuda
from engine.sequences import decode

WORKLOAD = "N1"
LENGTH = 20_000
SCORES = {"match": 1, "mismatch": 0, "gap": -1}
VARIANTS = ("rows", "diagonal", "prefix")
BACKENDS = ("serial", "multicore")

RATIOS = (
    Ratio(WORKLOAD, "score/fastest", "parasail nw_striped_16", 0.5,
          "fastest CPU score-only vs parasail nw_striped_16"),
    Ratio(WORKLOAD, "traceback/fastest", "parasail nw_trace_scan_16", 1.0,
          "fastest full traceback vs parasail nw_trace_scan_16"),
    *(Ratio(WORKLOAD, f"score/{v}/{b}", "parasail nw_striped_16", None,
            f"score {v}/{b} vs parasail nw_striped_16") for v in VARIANTS for b in BACKENDS),
    *(Ratio(WORKLOAD, f"score/{v}/multicore", f"score/{v}/serial", None,
            f"score {v} multicore vs serial") for v in VARIANTS),
) + cuda_bench.RATIOS

# Seconds of the cases already run in this process: the "fastest" cases choose from these.
_SECONDS: dict[str, float] = {}


def _pair():
    return data.lambda_phage().slice(0, LENGTH), data.ecoli().slice(0, LENGTH)


def _ours(variant, backend, traceback, threads):
    def run():
        a, b = _pair()
        options = dict(SCORES, variant=variant, backend=backend, threads=threads,
                       traceback=traceback)
        nw.solve(a.slice(0, 64), b.slice(0, 80), **options)   # compile or load the kernels
        best, res, spent = None, None, 0.0
        for _ in range(2 if traceback else 3):   # best of a few, unless one run is slow
            res = nw.solve(a, b, **options)
            best = res.info.seconds if best is None else min(best, res.info.seconds)
            spent += res.info.seconds
            if spent > 5.0:
                break
        name = f"{'traceback' if traceback else 'score'}/{variant}/{backend}"
        _SECONDS[name] = best
        metrics = {"seconds": best, "score": res.score, "gcells_per_s": LENGTH ** 2 / best / 1e9}
        if traceback:
            metrics["identity"] = round(res.alignment.identity, 4)
        return metrics

    kind = "traceback" if traceback else "score"
    return Case("nw", WORKLOAD, f"{kind}/{variant}/{backend}", run,
                describe=f"{kind}, lambda[0:20000] vs E. coli[0:20000], 1/0/-1")


def _parasail(function: str):
    def run():
        import parasail

        a, b = (decode(r.codes) for r in _pair())
        matrix = parasail.matrix_create("ACGT", SCORES["match"], SCORES["mismatch"])
        fn = getattr(parasail, function)
        gap = -SCORES["gap"]   # parasail: a gap of length L costs open + (L-1)*extend
        fn(a[:64], b[:80], gap, gap, matrix)
        seconds, res = timed(lambda: fn(a, b, gap, gap, matrix), repeat=1 if "trace" in function else 3)
        metrics = {"seconds": seconds, "score": res.score, "gcells_per_s": LENGTH ** 2 / seconds / 1e9}
        if "trace" in function:
            cigar = res.get_cigar()   # the traceback is part of what the user pays for
            metrics["cigar_ops"] = len(cigar.seq)
        _SECONDS[f"parasail {function}"] = seconds
        return metrics

    return Case("nw", WORKLOAD, f"parasail {function}", run, describe="peer, same input")


def _fastest(kind: str, threads):
    def run():
        mine = {k: v for k, v in _SECONDS.items() if k.startswith(kind + "/")}
        if not mine:   # run alone (--case): measure the candidates here
            for v in VARIANTS:
                for b in BACKENDS:
                    _ours(v, b, kind == "traceback", threads).run()
            mine = {k: v for k, v in _SECONDS.items() if k.startswith(kind + "/")}
        name = min(mine, key=mine.get)
        metrics = {"seconds": mine[name], "of": name}
        if kind == "traceback":
            _, variant, backend = name.split("/")
            ours = peak_memory("ours", variant, backend, threads)
            theirs = peak_memory("parasail", "", "", threads)
            metrics.update(peak_mb=round(ours / 2 ** 20, 1),
                           parasail_trace_scan_16_peak_mb=round(theirs / 2 ** 20, 1),
                           less_memory=ours < theirs)
        return metrics

    return Case("nw", WORKLOAD, f"{kind}/fastest", run,
                describe=f"fastest {kind} of the cases above (same run)")


_MEMORY_SCRIPT = textwrap.dedent("""
    import json, sys
    from benchmarks import data
    from engine.sequences import decode
    which, variant, backend, threads = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
    threads = int(threads) if threads != "None" else None
    a, b = data.lambda_phage().slice(0, {n}), data.ecoli().slice(0, {n})
    if which == "ours":
        from engine import nw
        opts = dict(match=1, mismatch=0, gap=-1, variant=variant, backend=backend, threads=threads)
        nw.solve(a.slice(0, 64), b.slice(0, 80), **opts)
        run = lambda: nw.solve(a, b, **opts).score
    else:
        import parasail
        sa, sb = decode(a.codes), decode(b.codes)
        matrix = parasail.matrix_create("ACGT", 1, 0)
        parasail.nw_trace_scan_16(sa[:64], sb[:80], 1, 1, matrix).get_cigar()
        def run():
            res = parasail.nw_trace_scan_16(sa, sb, 1, 1, matrix)
            res.get_cigar()
            return res.score
    def status(key):
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith(key + ":"):
                    return int(line.split()[1]) * 1024
    with open("/proc/self/clear_refs", "w") as fh:
        fh.write("5")   # reset the peak (VmHWM) to the current RSS
    base = status("VmRSS")
    score = run()
    print(json.dumps({{"peak": status("VmHWM") - base, "score": score}}))
""")


def peak_memory(which: str, variant: str, backend: str, threads) -> int:
    """Peak resident memory (bytes) that one traceback adds, measured in a fresh process."""
    script = _MEMORY_SCRIPT.format(n=LENGTH)
    out = subprocess.run([sys.executable, "-c", script, which, variant or "-", backend or "-",
                          str(threads)], capture_output=True, text=True, check=True)
    return int(json.loads(out.stdout.strip().splitlines()[-1])["peak"])


def cases(opts) -> list[Case]:
    threads = getattr(opts, "threads", None)
    if getattr(opts, "backend", None) == "cuda":   # the GPU figures of issue 6
        return cuda_bench.cases(opts)
    out = [_parasail("nw_striped_16"), _parasail("nw_scan_32")]
    out += [_ours(v, b, False, threads) for v in VARIANTS for b in BACKENDS]
    out.append(_fastest("score", threads))
    out.append(_parasail("nw_trace_scan_16"))
    out += [_ours(v, b, True, threads) for v in VARIANTS for b in BACKENDS]
    out.append(_fastest("traceback", threads))
    return out
