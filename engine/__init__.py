"""primerscope's computation engine. It never imports Qt.

The app talks to it through the family APIs (``engine.kdiff`` ...) and the job
generator :func:`iter_solve`.
"""

from __future__ import annotations


def iter_solve(job, cancel=None):
    """Run any family's job as a generator of Progress that returns the family's result."""
    from engine import registry

    return registry.family_api(job.family).iter_solve(job, cancel)
