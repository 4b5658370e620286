"""From candidate regions to usable primers: thermodynamics, filters, merging, off-targets.

Thermodynamics come from primer3-py (Primer3's own nearest-neighbour code), never
from hand-written tables.
"""

from engine.primers.annotate import Annotation, Conditions, annotate, annotate_many
from engine.primers.filters import Filters, passes
from engine.primers.merge import Region, merge_candidates, write_bed, write_regions_csv

__all__ = ["Annotation", "Conditions", "Filters", "Region", "annotate", "annotate_many",
           "merge_candidates", "passes", "write_bed", "write_regions_csv"]
