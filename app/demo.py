"""The demo data sets shipped in resources/demo (public records; see PROVENANCE.md there)."""

from __future__ import annotations

from functools import lru_cache

from app.paths import RESOURCES
from engine.sequences import Record, load

DEMO_DIR = RESOURCES / "demo"

#: Demo menu entries: key -> (menu title, one-line description).
DATASETS = {
    "lambda-ecoli": ("Lambda phage vs E. coli 536",
                     "Phage lambda (48.5 kb) as target, E. coli 536 (4.9 Mb) as background"),
    "msx2": ("msx2 mRNA homologs", "Eight msx2 mRNAs from human, mouse, rat, dog, chicken..."),
    "yeast": ("Yeast ORFs", "Seven S. cerevisiae ORFs with flanking sequence"),
    "lambda-pairs": ("Primer pairs: lambda vs E. coli 536",
                     "Specific primer pairs for lambda 20,001-21,000 against the whole of "
                     "E. coli 536 (kdiff's Pairs tab)"),
}

#: Demos that belong to one family (the window switches to it first).
FAMILY = {"lambda-pairs": "kdiff"}
#: The pairs demo's target region, against the whole E. coli genome: specificity checked
#: against less than the whole background would call primers "specific" that are a few
#: edits from the rest of it. 1 kb keeps the design to about a minute on two busy cores.
PAIRS_TARGET = (20_001, 21_000)
PAIRS_BACKGROUND = None  # the whole record

FILES = {
    "lambda": "lambda_NC_001416.fa",
    "ecoli": "ecoli536_NC_008253.fna.gz",
    "msx2": "msx2_mrna_homologs.fa",
    "yeast": "yeast_someORF.fa",
}


@lru_cache(maxsize=None)
def records(name: str) -> tuple[Record, ...]:
    """Records of one demo file (loaded once; E. coli takes most of a second)."""
    return tuple(load(DEMO_DIR / FILES[name]))


def path(name: str) -> str:
    return str(DEMO_DIR / FILES[name])
