"""First-use waits of the window's jobs, cold (an empty numba cache) and warm.

``NUMBA_CACHE_DIR=$(mktemp -d) python benchmarks/first_use.py [--warmup]`` runs, as the window
runs them (the same adapters and generators, no Qt), the kdiff demo, an off-target search of
its best candidate and the pairs demo, and prints for each the wall seconds, the compiling
phase and the solve time (one JSON line each). With ``--warmup`` it first runs what the
window compiles ahead after start (``python -m app.warmup``) and reports that too.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import app
from app import demo, pairs, primers
from app.families import RunChoice, adapter
from app.warmup import CompileClock, plan
from engine import registry
from engine.jobs import CancelToken


def timed(label, gen):
    clock, started = CompileClock(), time.perf_counter()
    try:
        while True:
            clock.see(next(gen))
    except StopIteration as stop:
        value = stop.value
    wall = time.perf_counter() - started
    print(json.dumps({"job": label, "wall_s": round(wall, 2), "compiling_s": round(clock.total(), 2),
                      "rest_s": round(wall - clock.total(), 2)}), flush=True)
    return value


def main() -> None:
    from app.jobs import run_job

    fam = registry.family("kdiff")
    ad = adapter("kdiff")
    variant = fam.fastest_variant
    backend = registry.default_backend(fam, variant)
    sel = registry.resolve(fam, variant, backend, None, None)
    state = {"variant": sel.variant, "backend": sel.backend, "parallel": sel.parallel,
             "flags": sorted(sel.flags), "params": {"k": 5, "strands": "both"}, "threads": None}
    if "--warmup" in sys.argv:
        started = time.perf_counter()
        # The warm-up from the folder that holds the app measured here, as the window starts it
        # (run as a script from a checkout, this app may not be the installed one)
        root = os.path.dirname(os.path.dirname(os.path.abspath(app.__file__)))
        subprocess.run([sys.executable, "-m", "app.warmup", json.dumps(plan("kdiff", state))],
                       check=True, cwd=root)
        print(json.dumps({"job": "warm-up (python -m app.warmup)",
                          "wall_s": round(time.perf_counter() - started, 2)}), flush=True)
    inputs = {role: [r.region(*spec.region) if spec.region else r for r in spec.records]
              for role, spec in ad.demo_inputs("lambda-ecoli").items()}
    choice = RunChoice("kdiff", sel, {"k": 5, "strands": "both"}, None)
    result = timed(f"kdiff demo ({sel.variant}/{sel.backend})",
                   run_job(ad, inputs, choice, CancelToken()))
    best = ad.best_item(result)
    edit_b, edit_t, _ = primers.edit_backend(sel.backend, None)
    timed("off-target search (3 edits, E. coli 1-200,000)",
          primers.offtarget_run(best, inputs["background"], 3, backend=edit_b, threads=edit_t,
                                cancel=CancelToken()))
    lam, eco = demo.records("lambda"), demo.records("ecoli")
    target = [r.region(*demo.PAIRS_TARGET) for r in lam]
    # PAIRS_BACKGROUND None: the whole genome
    background = [r.region(*demo.PAIRS_BACKGROUND) if demo.PAIRS_BACKGROUND else r for r in eco]
    from app.views.pairs import DEFAULTS

    start, end = demo.PAIRS_TARGET
    where = ("the whole E. coli genome" if demo.PAIRS_BACKGROUND is None
             else "E. coli {:,}-{:,}".format(*demo.PAIRS_BACKGROUND))
    timed(f"pairs demo (lambda {start:,}-{end:,} vs {where})",
          pairs.design_run(target, background, 5, pairs.settings_from(DEFAULTS), sel, None,
                           CancelToken()))


if __name__ == "__main__":
    main()
