"""nw benchmark cases of the cuda backend (``python -m benchmarks nw --backend cuda``).

L1   A = lambda (48,502), B = E. coli[0:100000], score only (the issue's lambda x 100,000)
E1   A = E. coli[0:100000], B = E. coli[2000000:2100000], score only (100,000 x 100,000)
Sn   A = E. coli[0:n], B = E. coli[3000000:3000000+n], n = 2^8 .. 2^16: the study's
     comparison of diagonal against prefix by length (Dicker et al., Fig. 1), every form
     at its best threads per block
B14  S16384 again, by block count (the study's second experiment)
T20  A = lambda[0:20000], B = E. coli[0:20000] (the CPU benchmark's N1), full alignment

Scores are 1 / 0 / -1 (the study's). Every CUDA row names the device and says whether its
score equals the CPU solver's on the same input in the same run. Peers (CPU runs) have
names without a '/', so ``--backend cuda`` keeps them.
"""

from __future__ import annotations

import contextlib
import os
from unittest import mock

from engine import config, nw
from benchmarks import Case, Ratio, data

SCORES = {"match": 1, "mismatch": 0, "gap": -1}
STUDY_LENGTHS = tuple(2 ** k for k in range(8, 17))
BLOCK_LENGTH = 2 ** 14
#: The study's forms, each with the threads per block it is tried at (the best one counts).
STUDY_FORMS = {
    "diagonal one-block": ("diagonal", "one-block", None, (256, 1024)),
    "diagonal per-launch": ("diagonal", "multi-block", (), (128, 256)),
    "diagonal tiled": ("diagonal", "multi-block", ("tiled",), (32, 64)),
    "prefix one-block": ("prefix", "one-block", None, (256, 1024)),
    "prefix multi-block": ("prefix", "multi-block", None, (128, 256)),
}
#: Block counts of the by-block experiment (the study: 2^0 .. 2^12 blocks of prefix).
BLOCK_COUNTS = {"prefix multi-block": (1, 2, 4, 8, 16, 32, 64),
                "diagonal per-launch": (1, 16, 256),
                "diagonal tiled": (1, 2, 4, 8, 16, 32, 64)}
#: (threads per block, rows per lane, columns per step, tile columns) of the tiled kernel
#: tried on L1 and E1 (a band is a warp: 32 lanes x rows; threads per block / 32 bands
#: share a block).
TILED_CONFIGS = ((32, 12, 4, 32), (32, 12, 4, 64), (32, 8, 4, 32), (32, 16, 4, 32),
                 (32, 10, 4, 32), (32, 14, 4, 32), (32, 12, 2, 32), (32, 16, 2, 32),
                 (32, 16, 1, 32), (32, 4, 4, 32), (64, 12, 4, 32), (128, 8, 4, 32))
#: Skip a run whose predicted time (from the half-size run of the same form) exceeds this.
LONG_RUN_SECONDS = 10.0

RATIOS = (
    Ratio("L1", "score/cuda fastest", "score diagonal multicore (peer)", None,
          "fastest CUDA score-only vs multicore diagonal (lambda x 100k)"),
    Ratio("E1", "score/cuda fastest", "score diagonal multicore (peer)", None,
          "fastest CUDA score-only vs multicore diagonal (100k x 100k)"),
    Ratio("T20", "align tiled/cuda", "align diagonal multicore (peer)", None,
          "CUDA tiled alignment vs multicore diagonal alignment (20k x 20k)"),
)

_scores: dict = {}    # workload -> the CPU solver's score
_seconds: dict = {}   # (workload, case name) -> seconds
_study: dict = {}     # (n, form) -> (seconds, threads per block)
_blocks: dict = {}    # (form, blocks) -> seconds


def _case(workload: str, name: str, run, describe: str) -> Case:
    """A Case that also prints its metrics when it ends (a run cut short keeps them)."""
    def logged():
        metrics = run()
        print(f"# {workload} {name}: " + ", ".join(f"{k}={v}" for k, v in metrics.items()),
              flush=True)
        return metrics

    return Case("nw", workload, name, logged, describe=describe)


def _inputs(workload: str):
    lam, eco = data.lambda_phage(), data.ecoli()
    if workload == "L1":
        return lam, eco.slice(0, 100_000)
    if workload == "E1":
        return eco.slice(0, 100_000), eco.slice(2_000_000, 2_100_000)
    if workload == "T20":
        return lam.slice(0, 20_000), eco.slice(0, 20_000)
    n = BLOCK_LENGTH if workload == "B14" else int(workload[1:])
    return eco.slice(0, n), eco.slice(3_000_000, 3_000_000 + n)


def _device() -> str:
    from engine.gpu import device_name

    return device_name()


@contextlib.contextmanager
def _tiled_config(rows=None, cols=None, chunk=None):
    values = {}
    if rows is not None:
        values["NW_CUDA_TILED_ROWS"] = rows
    if cols is not None:
        values["NW_CUDA_TILED_COLUMNS"] = cols
    if chunk is not None:
        values["NW_CUDA_TILED_CHUNK"] = chunk
    with mock.patch.multiple(config, **values) if values else contextlib.nullcontext():
        yield


def _solve(a, b, repeat: int, **options):
    """Best solve time of ``repeat`` runs after a warm-up on a small piece (compiles)."""
    nw.solve(a.slice(0, min(len(a), 300)), b.slice(0, min(len(b), 400)), **SCORES, **options)
    best, res = None, None
    for _ in range(repeat):
        res = nw.solve(a, b, **SCORES, **options)
        best = res.info.seconds if best is None else min(best, res.info.seconds)
    return best, res


def _cpu_score(workload: str, threads=None) -> int:
    if workload not in _scores:
        a, b = _inputs(workload)
        _scores[workload] = nw.solve(a, b, **SCORES, variant="diagonal", backend="multicore",
                                     threads=threads, traceback=False).score
    return _scores[workload]


def _peer(workload: str, threads):
    def run():
        a, b = _inputs(workload)
        seconds, res = _solve(a, b, 1, variant="diagonal", backend="multicore", threads=threads,
                              traceback=False)
        _scores[workload] = res.score
        return {"seconds": seconds, "score": res.score, "gcups": len(a) * len(b) / seconds / 1e9}

    return _case(workload, "score diagonal multicore (peer)", run,
                describe="CPU peer (score check and speed-up)")


def _score_case(workload: str, name: str, options: dict, tiled=(None, None, None), threads=None):
    def run():
        a, b = _inputs(workload)
        with _tiled_config(*tiled):
            seconds, res = _solve(a, b, 3, backend="cuda", traceback=False, **options)
        _seconds[(workload, name)] = seconds
        return {"seconds": seconds, "gcups": len(a) * len(b) / seconds / 1e9, "score": res.score,
                "agrees": res.score == _cpu_score(workload, threads), "device": _device()}

    return _case(workload, name, run, describe=f"score only on CUDA, {workload}")


def _fastest(workload: str):
    def run():
        mine = {name: s for (w, name), s in _seconds.items() if w == workload}
        if not mine:
            raise RuntimeError("no CUDA score case of this workload ran")
        name = min(mine, key=mine.get)
        a, b = _inputs(workload)
        gcups = len(a) * len(b) / mine[name] / 1e9
        return {"seconds": mine[name], "of": name, "gcups": gcups, "goal_300_gcups": gcups >= 300,
                "device": _device()}

    return _case(workload, "score/cuda fastest", run,
                describe="the fastest CUDA form above (issue goal: >= 300 GCUPS)")


def _study_length(n: int, threads):
    def run():
        a, b = _inputs(f"S{n}")
        want = _cpu_score(f"S{n}", threads)
        metrics, agrees = {}, True
        for form, (variant, parallel, flags, tpbs) in STUDY_FORMS.items():
            half = _study.get((n // 2, form))
            factor = 2 if form == "diagonal per-launch" else 4   # launches grow with n, cells n^2
            if half and half[0] * factor > LONG_RUN_SECONDS:
                metrics[form + " ms"] = None
                continue
            best = None
            for tpb in tpbs:
                seconds, res = _solve(a, b, 3 if n <= 4096 else 1, variant=variant, backend="cuda",
                                      parallel=parallel, flags=flags, traceback=False,
                                      threads_per_block=tpb)
                agrees = agrees and res.score == want
                if best is None or seconds < best[0]:
                    best = (seconds, tpb)
            _study[(n, form)] = best
            metrics[form + " ms"] = round(1e3 * best[0], 3)
            metrics[form + " tpb"] = best[1]
        times = {f: s for (m, f), (s, _) in _study.items() if m == n}
        winner = min(times, key=times.get)
        metrics.update(winner=winner, agrees=agrees, device=_device())
        return {"seconds": times[winner], **metrics}

    return _case(f"S{n}", "study by length", run,
                describe=f"diagonal vs prefix, {n} x {n}, every form at its best tpb")


def _crossover(names_a, names_b):
    """Smallest n from which the best of ``names_a`` beats the best of ``names_b`` at every
    larger n measured (None if never)."""
    out = None
    for n in sorted({m for m, _ in _study}, reverse=True):
        a = [_study[(n, f)][0] for f in names_a if (n, f) in _study]
        b = [_study[(n, f)][0] for f in names_b if (n, f) in _study]
        if not a or not b:
            continue
        if min(a) < min(b):
            out = n
        else:
            break
    return out


def _study_table():
    def run():
        forms = list(STUDY_FORMS)
        lengths = sorted({n for n, _ in _study})
        if not lengths:
            raise RuntimeError("the study cases did not run")
        print(f"\n# nw on {_device()}: diagonal vs prefix by length (ms, best tpb; n x n, 1/0/-1)")
        print(f"{'n':>7} " + " ".join(f"{f:>20}" for f in forms) + "  fastest")
        for n in lengths:
            cells = []
            for f in forms:
                got = _study.get((n, f))
                cells.append(f"{1e3 * got[0]:14.3f} ({got[1]:4d})" if got else f"{'-':>20}")
            times = {f: _study[(n, f)][0] for f in forms if (n, f) in _study}
            print(f"{n:7d} " + " ".join(cells) + f"  {min(times, key=times.get)}")
        study = _crossover(["diagonal per-launch"], ["prefix one-block", "prefix multi-block"])
        ours = _crossover(["diagonal per-launch", "diagonal tiled", "diagonal one-block"],
                          ["prefix one-block", "prefix multi-block"])
        one_block = _crossover(["diagonal per-launch"], ["prefix one-block"])
        print(f"# crossover (the study's forms: per-launch diagonal faster than both prefix forms "
              f"from n = {study}; the study: 8192 on a GTX 460, i.e. prefix up to 4096)")
        print(f"# crossover (any diagonal form faster than any prefix form from n = {ours})")
        return {"seconds": 0.0, "crossover_study_forms": study, "crossover_any_form": ours,
                "crossover_per_launch_vs_one_block_prefix": one_block, "device": _device()}

    return _case("S*", "study crossover", run, describe="the table and where diagonal wins")


def _by_blocks(form: str, threads):
    def run():
        variant, parallel, flags, tpbs = STUDY_FORMS[form]
        tpb = tpbs[-1]
        a, b = _inputs("B14")
        want = _cpu_score("B14", threads)
        metrics, agrees, best = {}, True, None
        for count in BLOCK_COUNTS[form]:
            seconds, res = _solve(a, b, 1, variant=variant, backend="cuda", parallel=parallel,
                                  flags=flags, traceback=False, threads_per_block=tpb,
                                  blocks=count)
            agrees = agrees and res.score == want
            _blocks[(form, count)] = seconds
            metrics[f"b{count} ms"] = round(1e3 * seconds, 3)
            best = seconds if best is None else min(best, seconds)
        return {"seconds": best, "tpb": tpb, "agrees": agrees, "device": _device(), **metrics}

    return _case("B14", f"by blocks {form}/cuda", run,
                describe=f"{BLOCK_LENGTH} x {BLOCK_LENGTH} by block count ({form})")


def _align(name: str, options: dict, threads, peer=False):
    def run():
        a, b = _inputs("T20")
        seconds, res = _solve(a, b, 1, threads=threads, **options)
        metrics = {"seconds": seconds, "score": res.score,
                   "identity": round(res.alignment.identity, 4),
                   "gcups_of_m_x_n": len(a) * len(b) / seconds / 1e9,
                   "cells_incl_hirschberg": res.info.cells}
        if peer:
            _scores["T20"] = res.score
        else:
            metrics.update(agrees=res.score == _scores.get("T20"), device=_device())
        return metrics

    return _case("T20", name, run, describe="full alignment (Hirschberg), 20k x 20k")


def cases(opts) -> list[Case]:
    threads = getattr(opts, "threads", None) or os.cpu_count()
    out = []
    for workload in ("L1", "E1"):
        out.append(_peer(workload, threads))
        for tpb, rows, cols, chunk in TILED_CONFIGS:
            out.append(_score_case(workload, f"score tiled/cuda tpb={tpb} R={rows} K={cols} "
                                             f"T={chunk}",
                                   {"variant": "diagonal", "parallel": "multi-block",
                                    "flags": ("tiled",), "threads_per_block": tpb},
                                   (rows, cols, chunk), threads))
        out.append(_score_case(workload, "score prefix multi-block/cuda",
                               {"variant": "prefix", "parallel": "multi-block"}, threads=threads))
        out.append(_fastest(workload))
    out += [_study_length(n, threads) for n in STUDY_LENGTHS]
    out.append(_study_table())
    out += [_by_blocks(form, threads) for form in BLOCK_COUNTS]
    out += [_align("align diagonal multicore (peer)",
                   {"variant": "diagonal", "backend": "multicore"}, threads, peer=True),
            _align("align tiled/cuda", {"variant": "diagonal", "backend": "cuda",
                                        "parallel": "multi-block", "flags": ("tiled",)}, threads),
            _align("align prefix multi-block/cuda", {"variant": "prefix", "backend": "cuda",
                                                     "parallel": "multi-block"}, threads)]
    return out
