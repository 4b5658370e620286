"""Where G1's group search spends its time (issue #30): the bench's warm-up, then the J=1
search once or more, each with its stage seconds, and a cProfile of the last one.

    python3 scripts/probe/group_profile.py BACKEND RUNS [MB] [PROFILE_FILE]

Prints each run's wall, stage seconds and pairs, then the 40 functions with the most
cumulative time in the last run (the profile is saved to PROFILE_FILE when given).
"""
import cProfile
import pstats
import sys
import time

from benchmarks import data
from engine.primers import group

def main():
    """Spawned children (Primer3's) import this module again: run only as a script."""
    backend, runs = sys.argv[1], int(sys.argv[2])
    mb = float(sys.argv[3]) if len(sys.argv) > 3 else 5.0
    save = sys.argv[4] if len(sys.argv) > 4 else None
    threads = 2 if backend == "multicore" else None
    t0 = time.perf_counter()
    sg = data.synthetic_group(12, 20, 20, int(mb * 1_000_000))
    print(f"made the group in {time.perf_counter() - t0:.1f} s", flush=True)
    tiny = data.synthetic_group(2, 1, 0, 600, islands=1, island_length=200, seed=1)
    t0 = time.perf_counter()
    group.group(tiny.include, tiny.exclude, 3, backend=backend, threads=threads)
    print(f"warm-up {time.perf_counter() - t0:.1f} s", flush=True)
    profiler = cProfile.Profile()
    for run in range(runs):
        last = run == runs - 1
        if last:
            profiler.enable()
        t0 = time.perf_counter()
        result = group.group(sg.include, sg.exclude, 3, group.GroupSettings(num_return=20),
                             backend=backend, threads=threads)
        wall = time.perf_counter() - t0
        if last:
            profiler.disable()
        stages = " ".join(f"{s}={v:.1f}" for s, v in result.stage_seconds.items())
        print(f"run {run + 1}: wall {wall:.1f} s, seconds {result.info.seconds:.1f}, "
              f"pairs {len(result.pairs)}; {stages}", flush=True)
    if save:
        profiler.dump_stats(save)
    pstats.Stats(profiler).sort_stats("cumulative").print_stats(40)


if __name__ == "__main__":
    main()
