"""primerscope's computation engine. It never imports Qt.

The app talks to it through the family APIs (``engine.kdiff`` ...) and the job
generator :func:`iter_solve`.
"""

from __future__ import annotations

import os

# Idle OpenMP threads (numba's threading layer) should sleep, not spin: on a desktop the
# GUI thread and other programs share the cores, and a spinning pool makes every
# fork/join of the fine-grained forms cost milliseconds when cores are busy. Set before
# numba loads its threading layer; an explicit setting in the environment wins.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


def iter_solve(job, cancel=None):
    """Run any family's job as a generator of Progress that returns the family's result."""
    from engine import registry

    return registry.family_api(job.family).iter_solve(job, cancel)
