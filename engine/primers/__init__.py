"""From candidate regions to usable primers: thermodynamics, filters, merging, off-targets,
and the tools built on the families (none of them a family itself):

- :mod:`engine.primers.pcr`: in-silico PCR of a primer set (sites by the edit family;
  on dask, :mod:`engine.primers.cluster`);
- :mod:`engine.primers.pairs`: pair design (specificity by kdiff, choice and ranking by
  Primer3 through :mod:`engine.primers.primer3_design`);
- :mod:`engine.primers.panel`: multiplex panel check (dimers, cross-products);
- :mod:`engine.primers.library`: the primer library (SQLite).

Each tool has a job generator (``make_job``/``iter_solve``/``solve``, as the families),
its writers (``export_<tool>.py``) and its command-line plug-in (``cli_<tool>.py``).
The kdiff files built on the annotations (annotated CSV, regions CSV, BED) are written
by :mod:`engine.primers.export_kdiff`.

Thermodynamics come from primer3-py (Primer3's own nearest-neighbour code), never
from hand-written tables.
"""

from engine.primers.annotate import Annotation, Conditions, annotate, annotate_many
from engine.primers.filters import Filters, passes, select_candidates
from engine.primers.merge import Region, merge_candidates

__all__ = ["Annotation", "Conditions", "Filters", "Region", "annotate", "annotate_many",
           "merge_candidates", "passes", "select_candidates"]


def __getattr__(name):
    """``engine.primers.group`` (issue 30's callable API) loads on first use: it imports the
    numba families, which ``import engine.primers`` alone must not."""
    if name == "group":
        import importlib

        return importlib.import_module("engine.primers.group")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
