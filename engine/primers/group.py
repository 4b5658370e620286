"""Group-specific primers: pairs that amplify every strain of a group and nothing outside it.

A **group pair** (issue #30) is a primer pair for which both hold:

- **Inclusivity.** In at least ``min_coverage`` of the inclusion genomes the pair gives an
  in-silico PCR product (:mod:`engine.primers.pcr`) in the product size range: the primers
  face each other on one record (a product never spans two contigs), each binds with at most
  ``include_edits`` (J) edits and with its 3'-most ``include_3prime_exact`` bases exact.
- **Exclusivity.** Each primer is at least k edits from every substring of every exclusion
  background, on both strands (kdiff's rule; assembly gaps per engine.gaps).

Pairs are ranked by Primer3's pair penalty on the reference inclusion genome, under the
settings of ``primerscope pairs``.

Every reported pair is verified exactly (pcr over every inclusion genome, reading only the
windows where seeds put a site; exclusivity at
k-1 edits over every exclusion background, both strands, batched: one pass for all the
primers of a round, by a pigeonhole seed filter whose seeds are verified by Myers' scan,
engine.primers.group_exclusion, or by the edit search where that filter does not apply). What is *not* exhaustive is which primers Primer3 is asked about (the
shortlist), so a valid pair can be missing when:

- a primer lies where fewer than ``min_coverage`` of the inclusion genomes share an exact
  16-mer with the reference within 24 bases (:data:`SUPPORT_RADIUS`): a stretch with a
  difference every 16 bases in some strain is not a conserved window. At J = 0 (the
  exact-k-mer-only shortlist, as RUCS and primerForge) the conserved windows are made of
  shortest-primer stretches whose every 16-mer occurs in enough inclusion genomes (the
  same genomes for the whole stretch): a primer binding exactly holds only 16-mers of the
  genome, so this drops no primer, except one that binds only through an ambiguity code
  of the genome (a seed holding one is never found);
- a primer holds an exact 17-mer of an exclusion genome (two consecutive shared 16-mer
  seeds, either strand): such a primer is almost always within k-1 edits of it, but with
  k <= L - 17 it need not be (a random 17-mer occurs by chance in a 5 Mb background with
  probability ~0.06 %: two seeds in a row make chance hits from 40 backgrounds rare);
- **tile ranking** (the heuristic that bounds the work): conserved windows are cut into
  tiles (:data:`TILE`, overlapping by the longest product) ranked by exclusion 16-mers per
  conserved base (fewest first: a relative's homologous stretch shares 16-mers, so a tile
  full of them is full of primers within k-1 edits of it), then by conservation. Primer3
  reads :data:`ROUND_BASES` bases of tiles a round, best first, and the next round runs
  only while fewer than ``num_return`` pairs are verified. A valid pair in a tile of a
  later round is not proposed, even if its penalty is better than the last reported pair's;
  the reported pairs are the best of the tiles read. When the tiles read hold every
  conserved base (small groups, as in the tests) nothing is dropped this way;
- with ``min_three_prime_distance`` on, a pair that fails coverage still keeps Primer3's
  diversity rule from returning a pair whose primers' 3' ends lie within that distance of
  its own (pairs are drawn by :func:`engine.primers.pairs.best_pairs`).

The test suite's oracle (tests/engine/test_group.py) judges every Primer3 pair of a window
by the definition with edlib and finds no better pair missing on its planted groups.
"""

from __future__ import annotations

import csv
import os
import sys
from dataclasses import asdict, dataclass, field

import numpy as np

from engine.jobs import RunInfo
from engine.primers.export_pairs import amplicon_bed12, side_dict
from engine.primers.pairs import PairSettings, PrimerSite
from engine.sequences import Record, SequenceError, load
from engine.spreadsheet import spreadsheet_cell

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
    while True:   # (at most one suffix ends a name: none is the end of another)
        suffix = next((s for s in _SUFFIXES if name.lower().endswith(s) and len(name) > len(s)),
                      None)
        if suffix is None:
            return name
        name = name[:-len(suffix)]


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
        then ``<genome>_record/_start/_end/_size`` per inclusion genome (missing: empty).
        ``coords="bed"``: the amplicon first as ``chrom, start, end`` and every start
        0-based (engine.columns.with_coords, as every result's ``to_pandas``)."""
        import pandas as pd

        from engine.columns import with_coords

        pairs = self.pairs
        data = {"rank": list(range(1, len(pairs) + 1)), "record": [p.record for p in pairs],
                "penalty": [p.penalty for p in pairs], "coverage": [p.coverage for p in pairs],
                "product_size": [p.product_size for p in pairs]}
        for side in ("left", "right"):
            for f in ("sequence", "start", "end", "tm"):
                data[f"{side}_{f}"] = [getattr(getattr(p, side), f) for p in pairs]
        others = [("left_start", "left_end"), ("right_start", "right_end")]
        for gi, name in enumerate(self.genomes):
            prods = [p.products[gi] for p in pairs]
            for f in ("record", "start", "end", "size"):
                data[f"{name}_{f}"] = [None if q is None else getattr(q, f) for q in prods]
            others.append((f"{name}_start", f"{name}_end"))
        out = with_coords(data, coords, ("record", "left_start", "right_end"), others,
                          "a group result")
        return pd.DataFrame({k: pd.array(v, dtype="Int64") if k.endswith(
            ("_start", "_end", "_size")) or k in ("start", "end") else v
            for k, v in out.items()})

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
            "pairs": [{"rank": rank, "record": p.record, "penalty": p.penalty,
                       "product_size": p.product_size, "coverage": p.coverage,
                       "left": side_dict(p.left), "right": side_dict(p.right),
                       "products": [None if q is None else asdict(q) for q in p.products]}
                      for rank, p in enumerate(self.pairs, start=1)],
            "diagnosis": list(self.diagnosis), "stage_seconds": dict(self.stage_seconds),
            "complete": self.complete,
        }


def to_json(result: GroupResult) -> dict:
    """The command line's answer (engine.cli adds the run's metadata)."""
    return result.to_json()


CSV_COLUMNS = ("rank", "record", "penalty", "coverage", "product_size", "left_sequence",
               "left_start", "left_end", "left_tm", "right_sequence", "right_start", "right_end",
               "right_tm", "products")


def write_csv(result: GroupResult, fh) -> None:
    """One row per pair; ``products`` lists ``genome:record:start-end`` per inclusion genome
    (``genome:-`` where there is none), separated by ``;``. ``record`` and ``products`` (it
    starts with a genome's name) get a leading ``'`` where a spreadsheet would run them."""
    w = csv.writer(fh, lineterminator="\n")
    w.writerow(CSV_COLUMNS)
    for rank, p in enumerate(result.pairs, start=1):
        products = ";".join(f"{g}:-" if q is None else f"{g}:{q.record}:{q.start}-{q.end}"
                            for g, q in zip(result.genomes, p.products))
        w.writerow((rank, spreadsheet_cell(p.record), f"{p.penalty:.4f}", f"{p.coverage:.4f}",
                    p.product_size, p.left.sequence, p.left.start, p.left.end,
                    f"{p.left.tm:.2f}", p.right.sequence, p.right.start, p.right.end,
                    f"{p.right.tm:.2f}", spreadsheet_cell(products)))


def write_bed(result: GroupResult, fh) -> None:
    """BED12 in the reference's coordinates: one amplicon per pair, its primers as blocks
    (:func:`~engine.primers.export_pairs.amplicon_bed12`), scored by its coverage."""
    for rank, p in enumerate(result.pairs, start=1):
        fh.write(amplicon_bed12(p.record, p.left, p.right, f"group_pair_{rank}",
                                int(round(1000 * p.coverage))))


# -- the search ------------------------------------------------------------------------------
#
# Speed by design, exact by verification:
#   1. seeds: the reference's 16-mers looked up in every inclusion and exclusion genome
#      (engine.primers.group_seeds) -> the conservation track and the conserved windows;
#   2. Primer3 proposes primers in the conserved windows (as ``primerscope pairs`` does);
#      a primer holding an exact 17-mer of an exclusion genome is left out (it is almost
#      surely within k-1 edits of it: see the module docstring's heuristics);
#   3. pairs best penalty first (engine.primers.pairs.best_pairs); the primers of the best
#      pairs are verified a batch at a time: inclusivity by in-silico PCR (engine.primers.pcr)
#      over every inclusion genome, exclusivity at k-1 edits, both strands, over every
#      exclusion background (engine.primers.group_exclusion: exact, seeded); a pair counts
#      once its primers pass and its products cover ``min_coverage`` of the inclusion
#      genomes. A round runs one inclusivity pass and one exclusivity pass (the primers of
#      pairs known to cover enough genomes, and of those its inclusivity pass shows so);
#      rounds repeat until the best ``num_return`` pairs are all verified. No primer is
#      verified twice, no pair's products worked out twice, no pair checked by Primer3
#      twice.

#: Primers verified together at least. A seeded pass reads every genome once whatever the
#: number of primers (~0.2 CPU-s per 200 Mb), and each primer adds its seed hits (~10 ms at
#: 2 edits over 200 Mb): a round verifies the primers of the best unverified pairs and some
#: beyond, so that few rounds (each also ranks the pairs anew) are needed.
VERIFY_BATCH = 48

#: A round's new primers are all verified at once when there are at most this many (small
#: groups: one search instead of rounds).
VERIFY_ALL = 64

#: Inclusivity's pcr over the seeded windows runs on one thread up to this many cells
#: (primers x 2 strands x window bases): a round's windows are small (G1: ~350 windows,
#: ~25 kb, 2.4 M cells, 28 ms on one thread, 57 ms on two, 50-190 ms with 16 threads
#: on 2 cores), and a parallel kernel launched over them costs more than it shares out.
WINDOWS_SERIAL_CELLS = 1 << 26

#: A cluster's pairs are ranked this many at first, then twice as many each time the walk
#: over every cluster's pairs could reach past them: the walk reads a few pairs of each
#: cluster a round (2-13 of 44 on G1), and each pair ranked is a Primer3 check.
RANK_FIRST = 8

#: Tile length: conserved windows are cut into tiles this long (at least the longest
#: product), overlapping by the longest product so every product lies whole in one.
TILE = 1_000

#: Primer3 reads the ranked tiles this many bases a round; the next round only when fewer
#: than num_return pairs survive verification.
ROUND_BASES = 10_000

#: A conserved base has an exact shared seed within this many bases in enough genomes: a
#: primer with a mismatch in one strain still lies between the seeds on either side of it.
SUPPORT_RADIUS = 24


def _genomes(items, role: str) -> tuple[Genome, ...]:
    out = tuple(item if isinstance(item, Genome) else load_genome(item) for item in items)
    names = [g.name for g in out]
    for name in names:
        if names.count(name) > 1:
            raise ValueError(f"{role} genome name {name!r} appears twice (names must be unique)")
    return out


def make_job(include, exclude, k: int, settings: GroupSettings | None = None, *, backend=None,
             threads=None, scheduler=None, gap_min: int | None = None):
    """Check everything and return the job (``Job.family`` ``"group"``).

    ``include``/``exclude``: Genomes or paths (:func:`load_genome`). ``backend``: the
    edit family's (the in-silico PCR and the exclusivity search run there);
    ``scheduler``: the dask backend's address. Runs of at least ``gap_min`` N are
    assembly gaps (engine.gaps): they match nothing.
    """
    from engine import gaps, registry
    from engine.jobs import Job, check_int, check_threads

    settings = settings or GroupSettings()
    k = check_int("k", k, 1)
    include, exclude = _genomes(include, "inclusion"), _genomes(exclude, "exclusion")
    if len(include) < 2:
        raise ValueError(f"group needs at least two inclusion genomes, got {len(include)}")
    if not exclude:
        raise ValueError("group needs at least one exclusion genome")
    clash = {g.name for g in include} & {g.name for g in exclude}
    if clash:
        raise ValueError(f"genome {sorted(clash)[0]!r} is both an inclusion and an exclusion genome")
    names = [g.name for g in include]
    if settings.reference is not None and settings.reference not in names:
        raise ValueError(f"--reference {settings.reference!r} is not an inclusion genome "
                         f"(choose from {', '.join(names)})")
    design = settings.pairs.design
    if k - 1 >= design.len_min:
        raise ValueError(f"k ({k}) must be at most the shortest primer length ({design.len_min})")
    if settings.include_edits >= design.len_min:
        raise ValueError(f"include_edits ({settings.include_edits}) must be smaller than the "
                         f"shortest primer length ({design.len_min})")
    if settings.include_3prime_exact > design.len_min:
        raise ValueError(f"include_3prime_exact ({settings.include_3prime_exact}) must be at most "
                         f"the shortest primer length ({design.len_min})")
    threads = check_threads(threads)
    edit_spec = registry.family("edit")
    chosen = registry.resolve(edit_spec, None, backend, None, None)
    every = [r for g in include + exclude for r in g.records]
    gap_min = gaps.resolve_gap_min(every, gap_min)
    return Job(family="group", inputs={"include": include, "exclude": exclude},
               variant=chosen.variant, backend=chosen.backend, threads=threads,
               params={"k": k, "settings": settings, "scheduler": scheduler, "gap_min": gap_min})


def group(include, exclude, k: int, settings: GroupSettings | None = None, **options) -> GroupResult:
    """Group-specific pairs (see the module docstring); options as :func:`make_job`."""
    from engine.jobs import drive

    return drive(iter_solve(make_job(include, exclude, k, settings, **options)))


solve = group


class _CallableModule(type(os)):
    """This module, callable: ``engine.primers.group(include, exclude, k)`` is the issue's
    Python API, while ``engine.primers.group.GroupSettings`` and the rest stay reachable."""

    __call__ = staticmethod(group)


sys.modules[__name__].__class__ = _CallableModule


@dataclass
class _Cluster:
    """Primer3's candidates near each other on one reference record: their template (a
    stretch of the record) and the oligos in its coordinates."""

    record: int
    offset: int          # the template's first base in the record (0-based)
    template: str
    lefts: list
    rights: list
    left_keys: list = field(default_factory=list)    # _key of each oligo, in order
    right_keys: list = field(default_factory=list)

    def __post_init__(self):
        self.left_keys = [_key(self.record, self.offset, o) for o in self.lefts]
        self.right_keys = [_key(self.record, self.offset, o) for o in self.rights]


def _key(record: int, offset: int, o) -> tuple:
    lo, hi = o.span
    return ("L" if o.left else "R", record, offset + lo, offset + hi)


def _propose(texts: list[str], design) -> list[tuple[list, list]]:
    """Primer3's primer lists on each text (run in a child process: Primer3 holds Python's
    lock for whole seconds)."""
    from engine.primers.primer3_design import primer_lists

    return [primer_lists(t, design)[:2] for t in texts]


#: The clusters this process ranks, as a child of the search's ChildPool: cluster -> its
#: template, its left and right primers, and Primer3's pair checks asked so far.
_RANKINGS: dict = {}


def _rank(ci: int, cluster, lefts, rights, design) -> list[tuple]:
    """Cluster ``ci``'s best ``design.num_return`` pairs (engine.primers.pairs.best_pairs)
    of its primers at the indices ``lefts`` and ``rights``, as (check, left index, right
    index). ``cluster``: its (template, lefts, rights) on its first call in this process,
    kept here with its pair checks (each pair is asked of Primer3 once); None after."""
    from engine.jobs import CancelToken
    from engine.primers.pairs import best_pairs
    from engine.primers.primer3_design import check_pair

    if cluster is not None:
        _RANKINGS[ci] = (*cluster, {})
    template, all_lefts, all_rights, checks = _RANKINGS[ci]

    def check(template, left, right, product_range, d, regions):
        key = (left.pos, left.length, right.pos, right.length, product_range)
        if key not in checks:
            checks[key] = check_pair(template, left, right, product_range, d, regions)
        return checks[key]

    ls, rs = [all_lefts[i] for i in lefts], [all_rights[i] for i in rights]
    where_left = {id(o): i for o, i in zip(ls, lefts)}
    where_right = {id(o): i for o, i in zip(rs, rights)}
    return [(verdict, where_left[id(left)], where_right[id(right)]) for verdict, left, right, _
            in best_pairs(template, ls, rs, design, CancelToken(), check=check)]


def iter_solve(job, cancel=None):
    """Yield Progress through the stages (seeds, Primer3, verification rounds); return a
    :class:`GroupResult`. Progress.partial: the pairs verified so far. After a cancel:
    those pairs, ``complete`` False. Primer3 (its primer lists and pair checks) runs in
    child processes kept for the whole search, ended when it ends, however it ends."""
    from engine.primers.children import ChildPool

    children = ChildPool()
    try:
        return (yield from _search(job, cancel, children))
    finally:
        children.close()


def _search(job, cancel, children):
    import dataclasses
    import functools
    import math

    from engine import edit, gaps, registry
    from engine.cluster import local_cores
    from engine.jobs import CancelToken, Progress, now
    from engine.primers import group_exclusion as gx
    from engine.primers import group_seeds as gs
    from engine.primers import pcr
    from engine.primers.pcr_columns import SITE_DTYPES, PcrSites
    from engine.primers.primer3_design import template_text
    from engine.sequences import encode
    from engine.slices import Meter, compile_time, numba_threads, run_info

    cancel = cancel or CancelToken()
    started, compiled = now(), compile_time()
    settings: GroupSettings = job.params["settings"]
    k, gap_min = job.params["k"], job.params["gap_min"]
    include, exclude = job.inputs["include"], job.inputs["exclude"]
    names = tuple(g.name for g in include)
    n = len(include)
    need = max(1, math.ceil(settings.min_coverage * n - 1e-9))
    ref_index = names.index(settings.reference) if settings.reference else 0
    ref = include[ref_index]
    meter = Meter(job, threads=numba_threads(job))
    # The stages with no GPU kernel (seeds, Primer3, the seeded filters, pcr over their
    # windows) run on this process's CPU: with every core when the backend is not a CPU
    # one (cuda, dask: ``threads`` is theirs, or None).
    cpu_threads = meter.threads or (1 if registry.serial(job.backend) else local_cores())
    if not registry.on_cpu(job.backend):
        from engine import numba_setup

        numba_setup.ready("cpu")   # (numba_threads does it for the CPU backends)
    cpu_backend = (job.backend if registry.on_cpu(job.backend)
                   else "multicore" if cpu_threads > 1 else "serial")
    stages = {"seeds": 0.0, "shortlist": 0.0, "primer3": 0.0, "inclusivity": 0.0,
              "exclusivity": 0.0, "pairs": 0.0}
    diagnosis: list[str] = []
    accepted: list[GroupPair] = []
    conservation: dict = {}
    ref_records = tuple(gaps.as_background(ref.records, gap_min))
    design = dataclasses.replace(settings.pairs.design, product_ranges=(settings.product_size,),
                                 num_return=settings.num_return)
    lo_size, hi_size = settings.product_size
    total = 100

    def solve_seconds() -> float:
        """The search's wall time so far less kernel compilation (SPEC: ``seconds``): every
        stage and the Python between them (the pair walk, products), not only the timed
        kernels."""
        return now() - started - (compile_time() - compiled)

    def result(complete: bool) -> GroupResult:
        meter.complete = complete
        meter.elapsed = solve_seconds()
        info = run_info(job, meter)
        return GroupResult(info, k, settings, names, tuple(g.name for g in exclude), ref.name,
                           tuple(accepted), conservation, tuple(diagnosis), dict(stages), complete)

    def progress(done, message, of=None):
        """A Progress of the group's own stages: no DP cells counted (the bar shows no rate;
        the searches' own Progress, relabelled, shows theirs)."""
        return Progress(done, of or total, 0, 0, solve_seconds(), message=message,
                        partial=result(False))

    # 1. seeds ---------------------------------------------------------------------------
    t0 = now()
    table = gs.SeedTable(ref_records)
    count = table.valid.astype(np.int32)          # the reference shares its own seeds
    own = table.per_record(table.valid)
    support = [gs.dilate(f, SUPPORT_RADIUS).astype(np.int32) for f in own]
    # J = 0, the exact-k-mer-only shortlist: a primer that binds exactly in a genome holds
    # only 16-mers of that genome, so each of its shortest-primer stretches has every seed
    # found there. Per stretch start: in how many inclusion genomes that holds.
    exact = settings.include_edits == 0 and design.len_min >= gs.SEED
    span = design.len_min - gs.SEED + 1           # seed starts in a shortest primer
    ref_exact = [gs.all_of(f, span) for f in own] if exact else []
    exact_count = [f.astype(np.int32) for f in ref_exact]
    exact_in = {}                                 # genome -> per record, its exact stretches
    others = [g for i, g in enumerate(include) if i != ref_index]
    excluded_seed = np.zeros(len(table.valid), dtype=bool)   # (a 17-mer starts there)
    excl_any = np.zeros(len(table.valid), dtype=bool)        # (a 16-mer of some exclusion)
    seed_hits = {}
    everyone = others + list(exclude)
    lookups = table.lookups((gaps.as_background(g.records, gap_min) for g in everyone),
                            cpu_threads)
    try:
        for j, (g, found) in enumerate(zip(everyone, lookups)):
            if cancel.cancelled:
                return result(False)
            if j < len(others):
                yield progress(20 * j // len(everyone), f"seeds: {g.name}")
                count += found
                rows = table.per_record(found)
                for row, flags in zip(support, rows):
                    row += gs.dilate(flags, SUPPORT_RADIUS)
                if exact:
                    exact_in[g.name] = [gs.all_of(f, span) for f in rows]
                    for row, flags in zip(exact_count, exact_in[g.name]):
                        row += flags
                continue
            yield progress(20 * j // len(everyone), f"exclusion seeds: {g.name}")
            seed_hits[g.name] = int(found.sum())
            pair = found[:-1] & found[1:]
            pair[table.starts[1:-1] - 1] = False   # (no 17-mer from one record into the next)
            excluded_seed[:-1] |= pair
            excl_any |= found
    finally:
        lookups.close()
    conservation.update({r.id: (c / n).astype(np.float32) for r, c in
                         zip(ref_records, table.per_record(count))})
    excluded_rows = table.per_record(excluded_seed)
    conserved = ([gs.covered(c >= need, design.len_min) for c in exact_count] if exact
                 else [np.asarray(s) >= need for s in support])   # a shared seed within the radius
    windows = [(ri, a, b) for ri, row in enumerate(conserved) for a, b in gs.runs(row)
               if b - a >= design.len_min]
    stages["seeds"] = now() - t0
    bases = sum(b - a for _, a, b in windows)
    if exact:
        # the stretches one genome short of `need`: which genomes lack them
        short = [ok & (c == need - 1) for ok, c in zip(ref_exact, exact_count)]
        lacking = ", ".join(f"{name} {c:,}" for name, c in (
            (name, sum(int((s & ~e).sum()) for s, e in zip(short, rows)))
            for name, rows in exact_in.items()) if c)
        diagnosis.append(f"conserved windows: {len(windows)} ({bases:,} bases of {ref.name}) of "
                         f"{design.len_min}-nt stretches whose every 16-mer is in at least "
                         f"{need} of {n} inclusion genomes (J=0: exact k-mers only)")
        diagnosis.append(f"J=0: {sum(int(s.sum()) for s in short):,} {design.len_min}-nt "
                         f"stretches have every 16-mer in {need - 1} inclusion genomes, one "
                         f"short; the genomes lacking them: {lacking or 'none'}")
    else:
        diagnosis.append(f"conserved windows: {len(windows)} ({bases:,} bases of {ref.name}) "
                         f"with exact 16-mer seeds in at least {need} of {n} inclusion genomes")
    diagnosis.append("reference seeds found in an exclusion genome: " + (", ".join(
        f"{name} {c:,}" for name, c in seed_hits.items() if c) or "none"))

    # 2. the shortlist: tiles of the conserved windows, ranked -----------------------------
    t0 = now()
    tile_length = max(TILE, 2 * hi_size)
    # Windows closer than the longest product join one region (a pair's primers may lie in
    # two windows); regions are cut into tiles overlapping by the longest product, so every
    # product of a region lies whole in one tile.
    tiles = []   # (record, start, end)
    regions = []
    for ri, a, b in windows:
        if regions and regions[-1][0] == ri and a - regions[-1][2] < hi_size:
            regions[-1][2] = b
        else:
            regions.append([ri, a, b])
    for ri, a, b in regions:
        for s in range(a, b, tile_length - hi_size):
            e = min(s + tile_length, b)
            tiles.append((ri, s, e))
            if e == b:
                break
    hits_sum = [np.concatenate(([0], np.cumsum(row & keep, dtype=np.int64)))
                for row, keep in zip(table.per_record(excl_any), conserved)]
    kept_sum = [np.concatenate(([0], np.cumsum(keep, dtype=np.int64))) for keep in conserved]
    cons_sum = [np.concatenate(([0.0], np.cumsum(conservation[r.id], dtype=np.float64)))
                for r in ref_records]

    def rank(tile):
        """Fewest exclusion 16-mers per conserved base first, then the best conserved."""
        ri, a, b = tile
        bases = max(1, kept_sum[ri][b] - kept_sum[ri][a])
        return ((hits_sum[ri][b] - hits_sum[ri][a]) / bases,
                -(cons_sum[ri][b] - cons_sum[ri][a]) / (b - a), ri, a)

    tiles.sort(key=rank)
    batches, batch, size = [], [], 0   # rounds of at least ROUND_BASES bases, best first
    for tile in tiles:
        batch.append(tile)
        size += tile[2] - tile[1]
        if size >= ROUND_BASES:
            batches.append(batch)
            batch, size = [], 0
    if batch:
        batches.append(batch)
    clean = sum(1 for t in tiles if rank(t)[0] == 0)
    stages["shortlist"] = now() - t0
    diagnosis.append(f"shortlist: {len(tiles):,} tiles of the conserved windows, {clean:,} with "
                     f"no exclusion 16-mer; Primer3 reads them best first, {ROUND_BASES:,} "
                     f"bases a round")
    ref_texts = [r.text for r in ref_records]   # (decoded once: .text decodes the record)

    def in_children(texts):
        """Primer3's lists for the texts, one child process per thread at once (Primer3 is
        single-threaded), the texts shared out by length; None after a cancel."""
        workers = max(1, min(cpu_threads, len(texts)))
        sizes = np.cumsum([len(t) for t in texts])
        cuts = [0] + [int(np.searchsorted(sizes, sizes[-1] * w / workers)) + 1
                      for w in range(1, workers)] + [len(texts)]
        parts = [texts[a:b] for a, b in zip(cuts[:-1], cuts[1:]) if b > a]
        answers = yield from children.run(
            [(w, _propose, (part, design)) for w, part in enumerate(parts)], cancel,
            lambda: progress(20, "Primer3: primers in the tiles"))
        if answers is None:
            return None
        return [lists for answer in answers for lists in answer]

    def propose(batch):
        """Primer3 in these tiles, cut where a primer would hold an exclusion genome's
        17-mer: one cluster (template, oligos in its coordinates) per tile."""
        pieces = []   # (tile, start, end) of the texts Primer3 reads
        for ti, (ri, ta, tb) in enumerate(batch):
            for a, b in gs.runs(conserved[ri][ta:tb]):
                a, b = a + ta, b + ta
                hits = np.flatnonzero(excluded_rows[ri][a:b]) + a
                # A primer holding no excluded 17-mer lies between two excluded 17-mer
                # starts s1 < s2: in [s1 + 1, s2 + 17 - 1).
                bounds = [a - 1] + hits.tolist() + [b]
                for s1, s2 in zip(bounds[:-1], bounds[1:]):
                    lo, hi = max(a, s1 + 1), min(b, s2 + gs.SEED)
                    if hi - lo >= design.len_min:
                        pieces.append((ti, lo, hi))
        texts = [template_text(ref_texts[batch[ti][0]][lo:hi]) for ti, lo, hi in pieces]
        if not texts:
            return []
        lists = yield from in_children(texts)
        if lists is None:
            return None
        mine = [({}, {}) for _ in batch]
        for (ti, lo, _hi), (lefts, rights) in zip(pieces, lists):
            a = batch[ti][1]
            for o in list(lefts) + list(rights):
                moved = dataclasses.replace(o, pos=o.pos + lo - a)
                mine[ti][0 if o.left else 1].setdefault(moved.span, moved)
        return [_Cluster(ri, a, template_text(ref_texts[ri][a:b]),
                         sorted(ls.values(), key=lambda o: o.penalty),
                         sorted(rs.values(), key=lambda o: o.penalty))
                for (ri, a, b), (ls, rs) in zip(batch, mine) if ls and rs]

    clusters: list[_Cluster] = []
    n_left = n_right = 0

    # 3. verification rounds ---------------------------------------------------------------
    def backgrounds(genomes):
        """The genomes' records as backgrounds (gaps.as_background), and each one's genome."""
        pairs = [(r, gi) for gi, g in enumerate(genomes)
                 for r in gaps.as_background(g.records, gap_min)]
        return tuple(r for r, _ in pairs), [gi for _, gi in pairs]

    incl_records, genome_of = backgrounds(include)
    genome_of = np.asarray(genome_of, dtype=np.int64)
    excl_records, excl_genome = backgrounds(exclude)
    three = settings.include_3prime_exact
    pset = pcr.PcrSettings(max_edits=settings.include_edits,
                           max_3prime_edits=0 if three else 1,
                           three_prime_window=max(1, three), min_product=lo_size,
                           max_product=hi_size)
    verdict: dict = {}      # primer key -> True, or why it failed
    sites_of: dict = {}     # primer key -> its inclusion sites (columns)
    bad_pairs: dict = {}    # (left key, right key) -> coverage
    bad_in: dict = {}       # cluster -> its pairs below the coverage
    # cluster -> (its state, pairs asked, its best pairs so far, a penalty no pair after
    # them ranks below: inf once they are all its pairs, -inf before its first ranking)
    cluster_pairs: dict = {}
    homed: set = set()          # the clusters whose child holds them
    fail_excl = {g.name: 0 for g in exclude}
    fail_incl = {g: 0 for g in names}
    missing_products = {g: 0 for g in names}
    rounds = 0

    @functools.cache
    def products_of(lk, rk) -> tuple:
        """Per inclusion genome, the pair's best product (fewest edits, then leftmost): the
        two primers facing each other on one record, in the size range, across no gap.
        (A primer's sites never change: each pair's products are worked out once.)"""
        cols = {c: np.concatenate([sites_of[lk][c], sites_of[rk][c]]) for c in SITE_DTYPES}
        cols["primer"] = np.repeat(np.array([0, 1], dtype=np.int64),
                                   [len(sites_of[lk]["primer"]), len(sites_of[rk]["primer"])])
        sites = PcrSites(cols, primer_ids=("left", "right"),
                         record_ids=[r.id for r in incl_records])
        prods = pcr.pair_sites(sites, incl_records, pset)
        # one primer alone (left with left) or across an assembly gap: not this pair's product
        use = np.flatnonzero((prods.forward != prods.reverse) & ~prods.spans_gap)
        best: list = [None] * n
        for i in use.tolist():
            ri = int(prods.record[i])
            gi = int(genome_of[ri])
            fe, re_ = int(prods.forward_edits[i]), int(prods.reverse_edits[i])
            le, rgt = (fe, re_) if int(prods.forward[i]) == 0 else (re_, fe)
            start, end = int(prods.start[i]), int(prods.end[i])
            old = best[gi]
            if old is None or (le + rgt, start) < (old.left_edits + old.right_edits, old.start):
                best[gi] = GroupProduct(names[gi], incl_records[ri].id, start, end,
                                        end - start + 1, le, rgt)
        return tuple(best)

    def verify(incl, excl, lookup, followers=()):
        """One round's passes: inclusivity of the primers ``incl`` not checked yet; then
        exclusivity of ``excl`` and of the primers of ``followers`` (pairs whose inclusivity
        this round decides) whose pair covers enough genomes, those with no verdict yet.
        (Exclusivity reads every exclusion background once whatever the number of
        primers: it takes only primers whose pairs passed the coverage.)"""
        incl = [key for key in incl if key not in sites_of]
        if incl:
            ok = yield from _inclusivity(incl, lookup)
            if not ok:
                return False
        excl = list(excl)
        for (lk, left), (rk, right) in followers:
            passed = all(key in sites_of and verdict.get(key, True) is True for key in (lk, rk))
            if passed and sum(p is not None for p in products_of(lk, rk)) >= need:
                excl += [lk, rk]
                lookup.setdefault(lk, left)
                lookup.setdefault(rk, right)
        keys = [key for key in dict.fromkeys(excl) if key not in verdict]
        if not keys:
            return True
        return (yield from _exclusivity(keys, lookup))

    def seeded(gen, label):
        """Progress (a line at the start, then every half second) of a group_exclusion pass
        that yields (bases read, bases in all); return its value."""
        yield progress(0, label, 1)
        t2 = now()
        while True:
            try:
                done, all_bases = next(gen)
            except StopIteration as stop:
                return stop.value
            if now() - t2 > 0.5:
                t2 = now()
                yield progress(done, label, all_bases)

    def _inclusivity(keys, lookup):
        """Each primer's sites in the inclusion genomes (pcr at J edits, the 3' rule). pcr
        reads only the windows where the pigeonhole seeds of engine.primers.group_exclusion
        put a site (every site lies whole in one, with context): the same sites as over the
        whole genomes. The seeds and that small pcr run on this process's CPU whatever the
        backend; the job's backend searches the whole genomes when the filter cannot judge
        a primer."""
        prims = [Record(str(i), encode(lookup[key].sequence)) for i, key in enumerate(keys)]
        t1 = now()
        label = f"inclusivity: {len(keys)} primers in {n} genomes (round {rounds})"
        where, owner = incl_records, None   # the records pcr reads, and their full records
        backend, threads, scheduler = job.backend, job.threads, job.params["scheduler"]
        if all(gx.usable(p.codes, settings.include_edits) for p in prims):
            windows = yield from seeded(gx.iter_windows(
                [p.codes for p in prims], incl_records, settings.include_edits,
                cpu_threads, cancel), label + ", seeded")
            if windows is None:
                stages["inclusivity"] += now() - t1
                return False
            where, owner = gx.regions(incl_records, windows)
            cells = 2 * len(prims) * sum(len(r) for r in where)
            if cells <= WINDOWS_SERIAL_CELLS:
                backend, threads, scheduler = "serial", None, None
            elif cpu_backend != backend:
                backend, threads, scheduler = cpu_backend, cpu_threads, None
        if where:
            search = pcr.search_job(prims, where, settings.include_edits, backend=backend,
                                    threads=threads, scheduler=scheduler, gap_min=gap_min)
            # (on the CPU for a cuda job: a meter of the CPU's, whose threads the search uses)
            sub = meter if backend == job.backend else Meter(search, threads=cpu_threads)
            sites = yield from pcr.iter_sites(pcr.sites_job(prims, where, pset, search),
                                              sub, cancel, label)
            if sub is not meter:
                pcr.absorb(meter, run_info(search, sub))
        else:
            sites = PcrSites.empty([str(i) for i in range(len(prims))],
                                   [r.id for r in incl_records])
        stages["inclusivity"] += now() - t1
        if cancel.cancelled:
            return False
        if owner is not None and len(owner):   # window -> its full inclusion record
            sites = PcrSites({c: (owner[np.asarray(sites.record, dtype=np.int64)]
                                  if c == "record" else np.asarray(getattr(sites, c)))
                              for c in SITE_DTYPES},
                             primer_ids=[str(i) for i in range(len(prims))],
                             record_ids=[r.id for r in incl_records])
        for i, key in enumerate(keys):
            rows = np.flatnonzero(sites.primer == i)
            sites_of[key] = {c: np.asarray(getattr(sites, c))[rows] for c in SITE_DTYPES}
            present = np.unique(genome_of[sites_of[key]["record"]])
            if len(present) < need:
                verdict[key] = f"binds in {len(present)} of {n} inclusion genomes"
                for gi in set(range(n)) - set(present.tolist()):
                    fail_incl[names[gi]] += 1
        return True

    def _exclusivity(keys, lookup):
        """Which of these primers lie within k-1 edits of an exclusion background: by the
        pigeonhole filter (engine.primers.group_exclusion), exact, on this process's CPU
        whatever the backend (it reads each background once for all primers, ~56x less
        work than the edit search: a full search a round would cost the GPU more in
        transfers than the filter costs the CPU); the edit search, on the job's backend,
        for the primers the filter cannot judge."""
        codes = [encode(lookup[key].sequence) for key in keys]
        t1 = now()
        hit_pattern, hit_record = [], []
        quick = [j for j, c in enumerate(codes) if gx.usable(c, k - 1)]
        if quick:
            label = (f"exclusivity: {len(quick)} primers at {k - 1} edits in {len(exclude)} "
                     f"backgrounds, seeded (round {rounds})")
            found = yield from seeded(gx.iter_hits([codes[j] for j in quick], excl_records,
                                                   k - 1, cpu_threads, cancel), label)
            if found is None:
                stages["exclusivity"] += now() - t1
                return False
            rec, pat = np.nonzero(found)
            hit_pattern.append(np.asarray(quick, dtype=np.int64)[pat])
            hit_record.append(rec.astype(np.int64))
        rest = sorted(set(range(len(keys))) - set(quick))
        if rest:
            prims = [Record(str(i), codes[j]) for i, j in enumerate(rest)]
            ejob = edit.make_job(prims, excl_records, mode="search", k=k - 1,
                                 strands="both", report="hits", align=False, profile=False,
                                 backend=job.backend, threads=job.threads,
                                 scheduler=job.params["scheduler"], gap_min=gap_min)
            found = yield from pcr.relabel(edit.iter_solve(ejob, cancel),
                                           f"exclusivity: {len(rest)} primers at {k - 1} edits "
                                           f"in {len(exclude)} backgrounds (round {rounds})")
            pcr.absorb(meter, found.info)
            if not found.info.complete:
                stages["exclusivity"] += now() - t1
                return False
            hit_pattern.append(np.asarray(rest, dtype=np.int64)[
                np.asarray(found.hits.pattern, dtype=np.int64)])
            hit_record.append(np.asarray(found.hits.record, dtype=np.int64))
        stages["exclusivity"] += now() - t1
        hit_pattern = np.concatenate(hit_pattern) if hit_pattern else np.zeros(0, np.int64)
        hit_record = np.concatenate(hit_record) if hit_record else np.zeros(0, np.int64)
        for j, key in enumerate(keys):
            where = hit_record[hit_pattern == j]
            if len(where):
                first = exclude[excl_genome[int(where.min())]].name
                verdict[key] = f"within {k - 1} edits of {first}"
                for gi in np.unique(np.asarray(excl_genome)[where]).tolist():
                    fail_excl[exclude[gi].name] += 1
            else:
                verdict[key] = True
        return True

    def pair_rounds(fresh):
        """Verification rounds over every cluster so far, until the best num_return pairs
        of them are verified; False after a cancel."""
        nonlocal rounds
        new = {}
        for c in fresh:
            for key, o in zip(c.left_keys + c.right_keys, c.lefts + c.rights):
                if key not in verdict:
                    new.setdefault(key, o)
        if 0 < len(new) <= VERIFY_ALL:   # few enough for one search: no rounds needed
            rounds += 1
            ok = yield from verify(list(new), list(new), new)
            if not ok:
                return False
        # Each cluster's best pairs, enough of them that a round finds a batch to verify
        # (those past num_return are verified only when the walk reaches them).
        pool = settings.num_return + VERIFY_BATCH // 2

        def rank(grow, alive):
            """Rank these clusters further (twice the pairs asked before, at least
            RANK_FIRST, at most the cluster's share), each in the child that holds it, the
            children at once; False after a cancel."""
            calls, asked = [], []
            for ci in grow:
                state, m, _, _ = cluster_pairs[ci]
                share = min(1000, pool + state[2])
                m = min(share, max(RANK_FIRST, 2 * m))
                c = clusters[ci]
                cluster = None if ci in homed else (c.template, c.lefts, c.rights)
                homed.add(ci)
                calls.append((ci % cpu_threads, _rank, (ci, cluster, *alive[ci],
                                                        dataclasses.replace(design, num_return=m))))
                asked.append((ci, state, m, share))
            answers = yield from children.run(calls, cancel,
                                              lambda: progress(40, f"pairs, round {rounds}"))
            if answers is None:
                return False
            for (ci, state, m, share), answer in zip(asked, answers):
                c = clusters[ci]
                pairs = [(check.penalty, ci, check, c.lefts[li], c.rights[ri], c.left_keys[li],
                          c.right_keys[ri]) for check, li, ri in answer]
                end = len(pairs) < m or m >= share
                cluster_pairs[ci] = (state, m, pairs, math.inf if end else pairs[-1][0])
            return True

        def walk(ranked, dry=False) -> tuple:
            """Walk the pairs best first: a pair is known good, known bad, or unknown (a
            primer not verified yet). Once the good and the unknown reach num_return,
            nothing ranked after them can be returned unless an unknown one fails: verify
            those, and repeat. Overlapping tiles propose a pair twice: it counts once.
            Returns the penalty it stopped at (None: the end), the good pairs, the primers
            to verify (inclusivity, exclusivity, their oligos), the unknown pairs whose
            inclusivity this round decides, and whether a pair fell short of the coverage.
            ``dry``: only where it stops (nothing recorded)."""
            pending, pending_excl, lookup, good = [], [], {}, []

            def ask(primers, known, queue) -> bool:
                """Queue the primers (key, oligo) that ``known`` has no verdict for, once
                each; whether any had none (the pair is then unknown)."""
                todo = [(key, o) for key, o in primers if key not in known]
                for key, o in todo:
                    if key not in lookup:
                        lookup[key] = o
                        queue.append(key)
                return bool(todo)

            unknown = 0
            new_bad = False
            walked = set()
            followers = []   # unknown pairs whose inclusivity this round decides
            for pen, ci, _check, left, right, lk, rk in ranked:
                if len(good) >= settings.num_return or (
                        len(good) + unknown >= settings.num_return
                        and len(pending) + len(pending_excl) >= VERIFY_BATCH):
                    return pen, good, pending, pending_excl, lookup, followers, new_bad
                if (lk, rk) in walked:
                    continue
                walked.add((lk, rk))
                if (lk, rk) in bad_pairs or any(verdict.get(key, True) is not True
                                                for key in (lk, rk)):
                    continue
                if ask(((lk, left), (rk, right)), sites_of, pending):  # inclusivity unknown
                    unknown += 1
                    followers.append(((lk, left), (rk, right)))
                    continue
                products = products_of(lk, rk)
                covered = sum(p is not None for p in products)
                if covered < need:
                    if not dry:
                        bad_pairs[(lk, rk)] = covered
                        bad_in[ci] = bad_in.get(ci, 0) + 1
                        new_bad = True
                        for gi, p in enumerate(products):
                            if p is None:
                                missing_products[names[gi]] += 1
                    continue
                # covers enough genomes; exclusivity unknown
                if ask(((lk, left), (rk, right)), verdict, pending_excl):
                    unknown += 1
                    continue
                if dry:
                    good.append(None)
                    continue
                rec = ref_records[clusters[ci].record]
                good.append(GroupPair(
                    PrimerSite(left.sequence, rec.offset + lk[2] + 1, rec.offset + lk[3],
                               left.tm, left.gc_percent, left.penalty),
                    PrimerSite(right.sequence, rec.offset + rk[2] + 1, rec.offset + rk[3],
                               right.tm, right.gc_percent, right.penalty),
                    rec.id, float(pen), products))
            return None, good, pending, pending_excl, lookup, followers, new_bad

        while True:
            rounds += 1
            if cancel.cancelled:
                return False
            yield progress(40, f"pairs, round {rounds}")
            t1 = now()
            alive = {}   # cluster -> the indices of its primers still in the running
            for ci, c in enumerate(clusters):
                lefts = [i for i, key in enumerate(c.left_keys) if verdict.get(key, True) is True]
                rights = [i for i, key in enumerate(c.right_keys)
                          if verdict.get(key, True) is True]
                state = (len(lefts), len(rights), bad_in.get(ci, 0))
                alive[ci] = (lefts, rights)
                before = cluster_pairs.get(ci)
                if before is None:
                    cluster_pairs[ci] = (state, 0, [], -math.inf)
                elif before[0] != state:
                    # Its primers failed or its pairs fell short: ranked anew. Its best penalty
                    # can only have grown (fewer primers, or more pairs asked of the same ones).
                    _, _, pairs, bound = before
                    cluster_pairs[ci] = (state, 0, [], pairs[0][0] if pairs else bound)
            # Each cluster's best pairs only as far as the walk can reach: a walk over fewer
            # pairs stops no sooner (its counts only lag), so once it stops below the bound
            # of every cluster not ranked to its end, the pairs left out cannot change it.
            while True:
                ranked = sorted((t for e in cluster_pairs.values() for t in e[2]),
                                key=lambda t: (t[0], t[5], t[6], t[1]))
                bounds = {ci: e[3] for ci, e in cluster_pairs.items() if e[3] < math.inf}
                if not bounds:
                    break
                low = min(bounds.values())
                if low == -math.inf:   # never ranked: no walk tells anything before that
                    grow = [ci for ci, b in bounds.items() if b == low]
                else:
                    stop = walk(ranked, dry=True)[0]
                    if stop is not None and stop < low:
                        break
                    grow = [ci for ci, b in bounds.items() if stop is None or b <= stop]
                ok = yield from rank(grow, alive)
                if not ok:
                    return False
            if cancel.cancelled:   # the ranking stopped part-way: keep the pairs verified so far
                return False
            stages["pairs"] += now() - t1
            stop, good, pending, pending_excl, lookup, followers, new_bad = walk(ranked)
            accepted[:] = good[:settings.num_return]
            if not pending and not pending_excl:
                if not new_bad:
                    return True
                continue
            # The pairs ranked before the ones still unverified stay (the partial result).
            # Inclusivity first; exclusivity of the pairs that cover enough genomes, those
            # known before this round and those this round's inclusivity shows.
            ok = yield from verify(pending, pending_excl, lookup, followers)
            if not ok:
                return False

    # Widen the shortlist a round of tiles at a time until num_return pairs are verified.
    read = 0
    for bi, batch in enumerate(batches):
        if cancel.cancelled:
            return result(False)
        t0 = now()
        yield progress(20, f"Primer3: primers in {len(batch):,} tiles (round {bi + 1} of "
                           f"{len(batches)})")
        fresh = yield from propose(batch)
        stages["primer3"] += now() - t0
        if fresh is None:
            return result(False)
        read = bi + 1
        clusters.extend(fresh)
        n_left += sum(len(c.lefts) for c in fresh)
        n_right += sum(len(c.rights) for c in fresh)
        ok = yield from pair_rounds(fresh)
        if not ok:
            return result(False)
        if len(accepted) >= settings.num_return:
            break
    diagnosis.append(f"Primer3: {n_left:,} left and {n_right:,} right primers in "
                     f"{sum(len(b) for b in batches[:read]):,} of {len(tiles):,} tiles "
                     f"({read} of {len(batches)} rounds), none holding an exclusion genome's "
                     f"17-mer")

    excl_line = ", ".join(f"{name} {c:,}" for name, c in fail_excl.items() if c)
    incl_line = ", ".join(f"{name} {c:,}" for name, c in fail_incl.items() if c)
    miss_line = ", ".join(f"{name} {c:,}" for name, c in missing_products.items() if c)
    checked = len(sites_of)
    diagnosis.append(f"verified {checked:,} primers in {rounds} rounds: "
                     f"{sum(1 for v in verdict.values() if v is not True and 'binds' in v):,} bind "
                     f"in fewer than {need} inclusion genomes (missing in: {incl_line or 'none'}); "
                     f"{sum(1 for v in verdict.values() if v is not True and 'within' in v):,} "
                     f"within {k - 1} edits of an exclusion genome ({excl_line or 'none'})")
    diagnosis.append(f"pairs below min coverage {need}/{n}: {len(bad_pairs):,} (no product in: "
                     f"{miss_line or 'none'})")
    diagnosis.append(f"group pairs: {len(accepted)}")
    return result(True)
