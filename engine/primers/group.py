"""Group-specific primers: pairs that amplify every strain of a group and nothing outside it.

A **group pair** (issue #30) is a primer pair for which both hold:

- **Inclusivity.** In at least ``min_coverage`` of the inclusion genomes the pair gives an
  in-silico PCR product (:mod:`engine.primers.pcr`) in the product size range: the primers
  face each other on one record (a product never spans two contigs), each binds with at most
  ``include_edits`` (J) edits and with its 3'-most ``include_3prime_exact`` bases exact.
- **Exclusivity.** Each primer is at least k edits from every substring of every exclusion
  background, on both strands (kdiff's rule; assembly gaps per engine.gaps).

Pairs are ranked by Primer3's pair penalty on the reference inclusion genome, under the
settings of ``primerscope pairs``. The search itself lives in :mod:`engine.primers.group_search`.
"""

from __future__ import annotations

import csv
import os
from dataclasses import dataclass, field

import numpy as np

from engine.jobs import RunInfo
from engine.primers.pairs import PairSettings, PrimerSite
from engine.sequences import Record, SequenceError, load

__all__ = ["Genome", "GroupPair", "GroupProduct", "GroupResult", "GroupSettings", "load_genome",
           "write_bed", "write_csv"]

#: File suffixes dropped from a genome's file name to make its name (``strain1.fa.gz`` ->
#: ``strain1``).
_SUFFIXES = (".gz", ".fa", ".fasta", ".fna", ".fas", ".ffn", ".gb", ".gbk", ".genbank",
             ".embl", ".2bit", ".psg")


@dataclass(frozen=True)
class Genome:
    """One genome of a group: a complete genome or a draft of many contigs (records)."""

    name: str
    records: tuple[Record, ...] = field(repr=False)
    path: str | None = None

    def __post_init__(self):
        if not self.name:
            raise ValueError("a genome needs a name")
        if not self.records:
            raise SequenceError(f"genome {self.name!r} has no records")

    @property
    def length(self) -> int:
        return sum(len(r) for r in self.records)


def genome_name(path) -> str:
    """A genome's name from its file: the base name without sequence suffixes."""
    name = os.path.basename(os.fspath(path))
    lowered = name.lower()
    changed = True
    while changed:
        changed = False
        for suffix in _SUFFIXES:
            if lowered.endswith(suffix) and len(lowered) > len(suffix):
                name, lowered = name[:-len(suffix)], lowered[:-len(suffix)]
                changed = True
    return name


def load_genome(path, name: str | None = None) -> Genome:
    """A genome from a FASTA(.gz)/GenBank/EMBL/.2bit file or a ``.psg`` store (a store's
    records stay mapped). ``name``: the file's stem when not given. SequenceError when the
    file is missing or not a sequence file (a literal sequence is not a genome)."""
    source = os.fspath(path)
    if not os.path.exists(source):
        raise SequenceError(f"{source}: no such file")
    return Genome(name or genome_name(source), tuple(load(source)), source)


@dataclass(frozen=True)
class GroupSettings:
    """What a group pair must satisfy besides the exclusion margin k (see the module)."""

    include_edits: int = 1
    include_3prime_exact: int = 3
    min_coverage: float = 1.0
    product_size: tuple[int, int] = (100, 300)
    num_return: int = 10
    reference: str | None = None
    #: Primer3's conditions and design settings, as ``primerscope pairs`` (its product
    #: ranges and num_return are replaced by ``product_size`` and ``num_return``).
    pairs: PairSettings = PairSettings()

    def __post_init__(self):
        from engine.jobs import check_int

        check_int("include_edits", self.include_edits, 0)
        check_int("include_3prime_exact", self.include_3prime_exact, 0)
        check_int("num_return", self.num_return, 1)
        cov = self.min_coverage
        if isinstance(cov, bool) or not isinstance(cov, (int, float)) or not 0 < cov <= 1:
            raise ValueError(f"min_coverage must be a fraction in (0, 1], got {cov!r}")
        lo, hi = self.product_size
        if not (isinstance(lo, int) and isinstance(hi, int)) or lo < 1 or lo > hi:
            raise ValueError(f"product_size must be (A, B) with 1 <= A <= B, got {(lo, hi)!r}")


@dataclass(frozen=True)
class GroupProduct:
    """A pair's product in one inclusion genome: 1-based inclusive, forward strand of
    ``record``; the edits of each primer's binding site."""

    genome: str
    record: str
    start: int
    end: int
    size: int
    left_edits: int
    right_edits: int


@dataclass(frozen=True)
class GroupPair:
    left: PrimerSite
    right: PrimerSite
    record: str
    penalty: float
    products: tuple[GroupProduct | None, ...]

    @property
    def coverage(self) -> float:
        return sum(p is not None for p in self.products) / len(self.products) if self.products else 0.0

    @property
    def product_size(self) -> int:
        """The product's size on the reference."""
        return self.right.end - self.left.start + 1


@dataclass(frozen=True)
class GroupResult:
    info: RunInfo
    k: int
    settings: GroupSettings
    genomes: tuple[str, ...]
    exclusions: tuple[str, ...]
    reference: str
    pairs: tuple[GroupPair, ...]
    conservation: dict = field(repr=False)
    diagnosis: tuple[str, ...]
    stage_seconds: dict
    complete: bool

    def to_pandas(self, coords: str = "one-based"):
        """One row per pair: rank, penalty, coverage, the primers (reference coordinates),
        then ``<genome>_start/_end/_size`` per inclusion genome (missing: NA).
        ``coords="zero-based"``: starts 0-based, ends exclusive (as BED)."""
        import pandas as pd

        if coords not in ("one-based", "zero-based"):
            raise ValueError(f"coords must be 'one-based' or 'zero-based', got {coords!r}")
        shift = 1 if coords == "zero-based" else 0
        rows = []
        for rank, p in enumerate(self.pairs, start=1):
            row = {"rank": rank, "record": p.record, "penalty": p.penalty,
                   "coverage": p.coverage, "product_size": p.product_size,
                   "left_sequence": p.left.sequence, "left_start": p.left.start - shift,
                   "left_end": p.left.end, "left_tm": p.left.tm,
                   "right_sequence": p.right.sequence, "right_start": p.right.start - shift,
                   "right_end": p.right.end, "right_tm": p.right.tm}
            for name, prod in zip(self.genomes, p.products):
                row[f"{name}_record"] = None if prod is None else prod.record
                row[f"{name}_start"] = pd.NA if prod is None else prod.start - shift
                row[f"{name}_end"] = pd.NA if prod is None else prod.end
                row[f"{name}_size"] = pd.NA if prod is None else prod.size
            rows.append(row)
        columns = (["rank", "record", "penalty", "coverage", "product_size", "left_sequence",
                    "left_start", "left_end", "left_tm", "right_sequence", "right_start",
                    "right_end", "right_tm"]
                   + [f"{g}_{c}" for g in self.genomes for c in ("record", "start", "end", "size")])
        return pd.DataFrame(rows, columns=columns)

    def to_json(self) -> dict:
        """SPEC.md's group answer: ``pairs`` (reference coordinates), each with ``coverage``
        and ``products`` (one per inclusion genome, or null); and the run's context."""
        s = self.settings
        return {
            "k": self.k, "reference": self.reference, "genomes": list(self.genomes),
            "exclusions": list(self.exclusions),
            "settings": {"include_edits": s.include_edits,
                         "include_3prime_exact": s.include_3prime_exact,
                         "min_coverage": s.min_coverage, "product_size": list(s.product_size),
                         "num_return": s.num_return},
            "pairs": [pair_dict(p, rank) for rank, p in enumerate(self.pairs, start=1)],
            "diagnosis": list(self.diagnosis), "stage_seconds": dict(self.stage_seconds),
            "complete": self.complete,
        }


def _side(site: PrimerSite) -> dict:
    return {"sequence": site.sequence, "start": site.start, "end": site.end, "tm": site.tm,
            "gc_percent": site.gc_percent, "penalty": site.penalty}


def pair_dict(p: GroupPair, rank: int) -> dict:
    return {"rank": rank, "record": p.record, "penalty": p.penalty,
            "product_size": p.product_size, "coverage": p.coverage,
            "left": _side(p.left), "right": _side(p.right),
            "products": [None if q is None else {
                "genome": q.genome, "record": q.record, "start": q.start, "end": q.end,
                "size": q.size, "left_edits": q.left_edits, "right_edits": q.right_edits}
                for q in p.products]}


CSV_COLUMNS = ("rank", "record", "penalty", "coverage", "product_size", "left_sequence",
               "left_start", "left_end", "left_tm", "right_sequence", "right_start", "right_end",
               "right_tm", "products")


def write_csv(result: GroupResult, fh) -> None:
    """One row per pair; ``products`` lists ``genome:record:start-end`` per inclusion genome
    (``genome:-`` where there is none), separated by ``;``."""
    w = csv.writer(fh, lineterminator="\n")
    w.writerow(CSV_COLUMNS)
    for rank, p in enumerate(result.pairs, start=1):
        products = ";".join(f"{g}:-" if q is None else f"{g}:{q.record}:{q.start}-{q.end}"
                            for g, q in zip(result.genomes, p.products))
        w.writerow((rank, p.record, f"{p.penalty:.4f}", f"{p.coverage:.4f}", p.product_size,
                    p.left.sequence, p.left.start, p.left.end, f"{p.left.tm:.2f}",
                    p.right.sequence, p.right.start, p.right.end, f"{p.right.tm:.2f}", products))


def write_bed(result: GroupResult, fh) -> None:
    """BED12 in the reference's coordinates: one amplicon per pair, its primers as blocks."""
    for rank, p in enumerate(result.pairs, start=1):
        start, end = p.left.start - 1, p.right.end
        sizes = f"{p.left.length},{p.right.length}"
        starts = f"0,{p.right.start - 1 - start}"
        score = int(round(1000 * p.coverage))
        fh.write(f"{p.record}\t{start}\t{end}\tgroup_pair_{rank}\t{score}\t+\t{start}\t{end}\t"
                 f"0\t2\t{sizes}\t{starts}\n")
