"""From candidate regions to usable primers: thermodynamics, filters, merging, off-targets.

The kdiff files built on them (annotated CSV, regions CSV, BED) are written by
:mod:`engine.kdiff.export`.

Thermodynamics come from primer3-py (Primer3's own nearest-neighbour code), never
from hand-written tables.
"""

from engine.primers.annotate import Annotation, Conditions, annotate, annotate_many
from engine.primers.filters import Filters, passes, select_candidates
from engine.primers.merge import Region, merge_candidates

__all__ = ["Annotation", "Conditions", "Filters", "Region", "annotate", "annotate_many",
           "merge_candidates", "passes", "select_candidates"]
