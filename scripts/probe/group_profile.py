"""Where G1's group search spends its time (issue #30): the bench's warm-up, then the J=1
search once or more (benchmarks.group.warm_up first), each with its stage seconds, and a cProfile of the last one.

    python3 scripts/probe/group_profile.py BACKEND RUNS [MB] [PROFILE_FILE]

Prints each run's wall, CPU seconds (this process and its finished children), stage seconds
and pairs; the split of inclusivity and exclusivity into their seeded scans
(engine.primers.group_exclusion) and the pcr over the windows; every numba kernel compiled
(or loaded from the disk cache) inside a run, which the warm-up did not cover; then the 40
functions with the most cumulative time in the last run (the profile is saved to
PROFILE_FILE when given; threads other than the main one are not in it: a seeded scan shows
as its wait).
"""
import cProfile
import collections
import os
import pstats
import resource
import sys
import time

from benchmarks import data
from benchmarks.group import warm_up
from engine.primers import group

SPLIT = collections.defaultdict(float)
COMPILED = []
MEASURING = [False]


def _cpu_s() -> float:
    return sum(getattr(resource.getrusage(who), f) for who in
               (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN) for f in ("ru_utime", "ru_stime"))


def _timed(module, name):
    """Sum the seconds of the generator ``module.name`` into SPLIT."""
    real = getattr(module, name)

    def timed(*args, **kwargs):
        t0 = time.perf_counter()
        out = yield from real(*args, **kwargs)
        SPLIT[name] += time.perf_counter() - t0
        return out

    setattr(module, name, timed)


def _watch_compiles():
    """Record every kernel numba compiles (or loads) while MEASURING, with its seconds."""
    from numba.core import dispatcher

    real = dispatcher.Dispatcher.compile

    def compile(self, sig):
        t0 = time.perf_counter()
        out = real(self, sig)
        took = time.perf_counter() - t0
        if MEASURING[0] and took > 1e-3:
            COMPILED.append((took, f"{self.py_func.__module__}.{self.py_func.__qualname__}",
                             str(sig)[:120]))
        return out

    dispatcher.Dispatcher.compile = compile


def main():
    """Spawned children (Primer3's) import this module again: run only as a script."""
    from engine.primers import group_exclusion, pcr

    backend, runs = sys.argv[1], int(sys.argv[2])
    mb = float(sys.argv[3]) if len(sys.argv) > 3 else 5.0
    save = sys.argv[4] if len(sys.argv) > 4 else None
    threads = 2 if backend == "multicore" else None
    for module, name in ((group_exclusion, "iter_windows"), (group_exclusion, "iter_hits"),
                         (pcr, "iter_sites")):
        _timed(module, name)
    _watch_compiles()
    t0 = time.perf_counter()
    sg = data.synthetic_group(12, 20, 20, int(mb * 1_000_000))
    print(f"made the group in {time.perf_counter() - t0:.1f} s", flush=True)
    t0 = time.perf_counter()
    warm_up(backend, threads)
    print(f"warm-up {time.perf_counter() - t0:.1f} s", flush=True)
    profiler = cProfile.Profile()
    for run in range(runs):
        last = run == runs - 1
        SPLIT.clear()
        COMPILED.clear()
        if last:
            profiler.enable()
        load = os.getloadavg()[0]
        t0, c0 = time.perf_counter(), _cpu_s()
        MEASURING[0] = True
        result = group.group(sg.include, sg.exclude, 3, group.GroupSettings(num_return=20),
                             backend=backend, threads=threads)
        MEASURING[0] = False
        wall, cpu = time.perf_counter() - t0, _cpu_s() - c0
        if last:
            profiler.disable()
        stages = " ".join(f"{s}={v:.1f}" for s, v in result.stage_seconds.items())
        print(f"run {run + 1}: wall {wall:.1f} s, CPU {cpu:.1f} s, load {load:.1f} -> "
              f"{os.getloadavg()[0]:.1f}, seconds {result.info.seconds:.1f}, "
              f"pairs {len(result.pairs)}; {stages}", flush=True)
        print("  inclusivity: seeded scan {iter_windows:.1f} s, pcr over its windows "
              "{iter_sites:.1f} s; exclusivity: seeded scan {iter_hits:.1f} s".format(
                  **{k: SPLIT[k] for k in ("iter_windows", "iter_sites", "iter_hits")}))
        print(f"  kernels compiled or loaded inside the run: {len(COMPILED)}, "
              f"{sum(c[0] for c in COMPILED):.1f} s")
        for took, name, sig in sorted(COMPILED, reverse=True)[:20]:
            print(f"    {took:6.2f} s  {name} {sig}")
    if save:
        profiler.dump_stats(save)
    pstats.Stats(profiler).sort_stats("cumulative").print_stats(40)


if __name__ == "__main__":
    main()
