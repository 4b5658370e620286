"""How long the GUI's candidate annotations and their annotated CSV take, by child count.

Annotates N distinct synthetic 20-30-mers (random DNA, seed 7) with
``engine.primers.annotate_children.annotate_in_children`` for each child count given (the
window uses ``children()``: every core but one), then writes the annotated CSV of N
candidates from those annotations (``annotated_csv`` with ``known``: what the window's
export does) and, for comparison, the command line's writer on the first EXPORT_SAMPLE of
them, which annotates every candidate again (the export's old way, and its way when some
annotation is missing; it costs what annotating costs).

Run: ``python scripts/probe/annotate_export.py [N [CHILDREN ...]]`` (defaults 20000 1 2);
one JSON line: seconds per child count, the export's seconds, the machine's cores and load.
"""

import json
import os
import sys
import time
from types import SimpleNamespace

import numpy as np

from engine.cluster import local_cores
from engine.jobs import CancelToken, drive
from engine.kdiff import Candidate
from engine.primers import Conditions
from engine.primers import annotate_children as ac
from engine.primers.export_kdiff import csv_text

def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 20_000
    counts = [int(x) for x in sys.argv[2:]] or [1, 2]
    rng = np.random.default_rng(7)
    seqs = sorted({"".join(rng.choice(list("ACGT"), int(rng.integers(20, 31)))) for _ in range(n)})
    cands = [Candidate("t", i + 1, i + len(s), s) for i, s in enumerate(seqs)]
    conditions = Conditions()
    out = {"n": len(seqs), "cores": local_cores(), "load": os.getloadavg()[0], "annotate_s": {}}
    notes = None
    for count in counts:
        ac.children = lambda count=count: count
        t0 = time.perf_counter()
        notes = drive(ac.annotate_in_children(cands, conditions, CancelToken()))
        out["annotate_s"][count] = round(time.perf_counter() - t0, 2)
    result = SimpleNamespace(candidates=cands)  # (what the writers read of a kdiff result)
    t0 = time.perf_counter()
    text = drive(ac.annotated_csv(result, conditions, None, CancelToken(), notes))
    out["export_known_s"] = round(time.perf_counter() - t0, 2)
    sample = min(len(cands), int(os.environ.get("EXPORT_SAMPLE", "2000")))
    t0 = time.perf_counter()
    again = csv_text(SimpleNamespace(candidates=cands[:sample]), annotate=True, conditions=conditions)
    out["export_annotating_again_s_per_1000"] = round(1000 * (time.perf_counter() - t0) / sample, 3)
    out["same_text"] = text.splitlines()[:sample + 1] == again.splitlines()
    out["load_after"] = os.getloadavg()[0]
    print(json.dumps(out), flush=True)


if __name__ == "__main__":  # (the children are spawned: they import this file)
    main()
