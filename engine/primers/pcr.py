"""In-silico PCR: which products would a primer set amplify from a background?

Semantics (the README's, tested against a brute-force finder):

- A *site* is a place where a primer matches the background within ``max_edits``
  edits, on either strand. The edit family's search (``engine.edit``, any variant and
  backend) finds every end position within ``max_edits``; for each,
  :mod:`engine.primers.pcr_kernels` settles its ungapped alignment (the primer's length
  ending there: mismatches only) and its best alignment: the distance, the fewest edits
  in the primer's 3' window (the last ``three_prime_window`` bases, 5'->3') among the
  alignments that realise that distance, and the smallest start that realises both. An
  edit counts in the window when it touches a window base: a mismatch or an unpaired
  primer base there, or a background base that follows a window base (5'->3').
- The *3' rule*: a site needs at most ``max_3prime_edits`` edits in the window.
- Every ungapped alignment within ``max_edits`` that passes is a site, as ipcress and
  primersearch count (``indels=False``: only those). With indels (the default), an end's
  best alignment is a site too where it beats the ungapped one (fewer edits, or as many
  and fewer 3' edits) and no overlapping alignment of the same primer, record and strand
  beats it: one with fewer edits, or an ungapped one with as many (a tie goes to the
  ungapped alignment). So each distinct binding position is reported, with its best
  alignment (one site per start and end), the products are a superset of ipcress's at
  the same coordinates, and the alignments a site also has with an indel or two at its
  edges, each an edit worse, are not sites of their own. Along a microsatellite,
  ``(CA)x10`` binds ``(CA)x20`` at 11 places, as with ipcress.
- A product whose sites lie on both sides of an assembly gap (engine.gaps: its bases
  match nothing, so no site holds one) is reported with ``spans_gap`` set: its size is
  unknown, and it counts against a pair's specificity as any other product does.
- A *product* pairs a ``+`` site (the primer reads along the forward strand) with a
  ``-`` site of any primer of the set (itself included) on the same record, facing
  it: the ``+`` site starts at or before the ``-`` site and ends at or before it. It
  spans from the ``+`` site's start to the ``-`` site's end, 1-based inclusive, and
  its length is within [``min_product``, ``max_product``]. Products never cross
  records.

Sites are a chunked problem (:class:`SitesProblem`): each background chunk is
searched and its own hits refined, in this process or as a Dask task, inside the job's
slices (progress and cancel); sites and products are then made over whole records.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from functools import cached_property
from typing import Generator

import numpy as np

from engine import api, edit, gaps, registry
from engine.edit.spec import SPEC as EDIT_SPEC
from engine.executors import ChunkedProblem, Task
from engine.executors.protocol import InnerRunnerRun
from engine.jobs import CancelToken, Job, Progress, RunInfo
from engine.primers.pcr_columns import PcrProducts, PcrSites, Product, Site
from engine.primers.primer_sets import MAX_PRIMER_LENGTH, check_primers
from engine.sequences import Record, reverse_complement
from engine.slices import Meter, numba_threads, run_info

__all__ = ["PcrProducts", "PcrResult", "PcrSettings", "PcrSites", "Product", "Site", "iter_sites",
           "iter_solve", "make_job", "pair_sites", "solve"]


#: The longest product (1 Gb: longer than any chromosome). Coordinates are packed below
#: 2^40 (pair_sites); an unbounded size overflowed there and silently gave no products.
MAX_PRODUCT = 1_000_000_000

#: The numbers of :class:`PcrSettings` as the registry's parameters: their one check
#: (ParamSpec.check, issue #29) for the API, the command line's options (engine.primers.
#: cli_pcr; off-target's --max-edits) and the GUI, so a bad value reads the same everywhere.
MAX_EDITS = registry.ParamSpec("max_edits", "Max edits", "int", 3, "a site matches within D edits",
                               minimum=0, maximum=MAX_PRIMER_LENGTH, metavar="D")
SETTINGS_PARAMS = (
    MAX_EDITS,
    registry.ParamSpec("max_3prime_edits", "Max 3' edits", "int", 0,
                       "at most E edits in the primer's 3' window", minimum=0,
                       maximum=MAX_PRIMER_LENGTH, metavar="E"),
    registry.ParamSpec("three_prime_window", "3' window", "int", 5,
                       "the 3' window: the primer's last W bases (all of a shorter primer)", minimum=1,
                       maximum=MAX_PRIMER_LENGTH, option="--3prime-window", metavar="W"),
    registry.ParamSpec("min_product", "Min product", "int", 1, "shortest product reported",
                       minimum=1, maximum=MAX_PRODUCT, metavar="N"),
    registry.ParamSpec("max_product", "Max product", "int", 3000,
                       f"longest product reported (at most {MAX_PRODUCT:,})", minimum=1,
                       maximum=MAX_PRODUCT, metavar="N"),
)


@dataclass(frozen=True)
class PcrSettings:
    """What counts as a site and as a product (see the module docstring)."""

    max_edits: int = 3
    max_3prime_edits: int = 0
    three_prime_window: int = 5
    max_product: int = 3000
    min_product: int = 1
    indels: bool = True
    with_sequence: bool = False

    def __post_init__(self):
        for param in SETTINGS_PARAMS:
            param.check(getattr(self, param.name))
        if self.max_product < self.min_product:
            raise ValueError(f"max_product ({self.max_product}) is smaller than min_product "
                             f"({self.min_product})")
        for name in ("indels", "with_sequence"):
            if not isinstance(getattr(self, name), bool):
                raise ValueError(f"{name} must be True or False")


@dataclass(frozen=True)
class PcrResult:
    info: RunInfo
    settings: PcrSettings
    primers: tuple[tuple[str, str], ...]   # (name, sequence 5'->3')
    sites: PcrSites        # a sequence of Site over columns
    products: PcrProducts  # a sequence of Product over columns

    def to_pandas(self, coords: str = "one-based"):
        """The products as a pandas DataFrame in the CSV's columns (``sites.to_pandas()``
        for the sites): 1-based inclusive, or ``chrom, start, end`` half-open first (``"bed"``)."""
        return self.products.to_pandas(coords)

    def to_records(self, coords: str = "one-based") -> list[dict]:
        """The products as plain dicts (no pandas needed), columns as :meth:`to_pandas`."""
        return self.products.to_records(coords)


def search_job(primers, background, max_edits: int, *, variant=None, backend=None,
               parallel=None, flags=None, threads=None, scheduler=None,
               gap_min: int | None = None) -> Job:
    """The edit-family job that finds every end within ``max_edits`` (both strands).

    Primers are renamed to their indices; the background's records are passed as they are
    (a genome store's stay mapped; the hits' record column is their index, so names may
    repeat). A background too large to hold whole is streamed by the search
    (engine.executors). Without a variant: ``myers`` for primers of up to 64 nt (with its ``simd`` flag, by
    default: all primers and strands read the background once), else ``myers-blocked``;
    ``task`` on cuda. ``scheduler``: the dask backend's (engine.cluster).
    """
    primers = check_primers(primers)
    background = api.records(background, "background")
    if not background:
        raise ValueError("no background records")
    shortest = min(len(p) for p in primers)
    if max_edits >= shortest:
        raise ValueError(f"max_edits ({max_edits}) must be smaller than the shortest primer "
                         f"({shortest} nt): every position would be a site")
    if variant is None:
        if registry.on_gpu(backend):
            variant = "task"
        else:
            variant = "myers" if max(len(p) for p in primers) <= 64 else "myers-blocked"
    return edit.make_job([Record(str(i), p.codes) for i, p in enumerate(primers)], background,
                         mode="search", k=max_edits, strands="both", report="hits", align=False,
                         profile=False, variant=variant, backend=backend, parallel=parallel,
                         flags=flags, threads=threads, scheduler=scheduler, gap_min=gap_min)


def make_job(primers, background, settings: PcrSettings | None = None, *, variant=None,
             backend=None, parallel=None, flags=None, threads=None, scheduler=None,
             gap_min: int | None = None) -> Job:
    """Check everything and return the job (``Job.family`` ``"pcr"``; ``iter_solve`` runs it).

    Parameters
    ----------
    primers : str, list of str, path, SeqRecord(s) or Record(s)
        The primer set, 5'->3', ids as names (unique; 1-100 nt; IUPAC codes allowed); any
        form of :func:`engine.api.records` (a list of str: ``seq1``, ``seq2``...).
    background : the same forms
    settings : PcrSettings
    variant, backend, parallel, flags, threads
        The edit family's, for the site search (flags None: the variant's defaults).
    scheduler : str, optional
        dask only: a scheduler's address (None: a local cluster). The site search and the
        refinement run chunk by chunk on the cluster (:class:`SitesProblem`).
    gap_min : int
        Runs of at least this many N in the background are assembly gaps (engine.gaps).
    """
    settings = settings or PcrSettings()
    primers = check_primers(primers)
    background = api.records(background, "background")
    gap_min = gaps.resolve_gap_min(background, gap_min)  # (unset: a store background's own)
    background = tuple(gaps.as_background(background, gap_min))
    search = search_job(primers, background, settings.max_edits, variant=variant, backend=backend,
                        parallel=parallel, flags=flags, threads=threads, scheduler=scheduler,
                        gap_min=gap_min)
    return sites_job(primers, background, settings, search)


def sites_job(primers, background, settings: PcrSettings, search: Job) -> Job:
    """The pcr job of a primer set whose site search (:func:`search_job`) is made."""
    return Job(family="pcr", inputs={"primers": tuple(primers), "background": tuple(background)},
               variant=search.variant, backend=search.backend, parallel=search.parallel,
               flags=search.flags, params={"settings": settings, "search": search},
               threads=search.threads)


def solve(primers, background, settings: PcrSettings | None = None, *, progress: bool = False,
          backend=None, **options) -> PcrResult:
    """The products ``primers`` would amplify from ``background`` (sites within **at most**
    ``settings.max_edits`` edits). ``backend`` may be a ``distributed.Client``;
    ``progress=True`` shows a tqdm bar. The options are :func:`make_job`'s.

    >>> res = solve(["GGCATTACGA", "TTGACCGTAA"], "GGCATTACGACCCCCCCCCCTTACGGTCAA",
    ...             backend="serial")
    >>> res.to_records(coords="bed")[0]["start"], res.to_records()[0]["end"]
    (0, 30)

    The settings come as one :class:`PcrSettings`, as pairs', panel's and group's do:
    ``max_edits=2`` is refused naming it.
    """
    api.refuse_settings_fields(options, PcrSettings, "pcr.solve")
    return api.solve(make_job, iter_solve, primers, background, settings, progress=progress,
                     backend=backend, **options)


def relabel(gen, message: str):
    """Re-yield a sub-job's Progress with ``message`` (the phase a tool is in); return its value.
    Closed early (the consumer stopped), it closes the sub-job too, which runs its cleanup."""
    try:
        while True:
            try:
                p = next(gen)
            except StopIteration as stop:
                return stop.value
            yield dataclasses.replace(p, message=f"{message}: {p.message}" if p.message else message)
    finally:
        gen.close()


def iter_solve(job: Job, cancel: CancelToken | None = None) -> Generator[Progress, None, PcrResult]:
    """Yield Progress (the sites' search and refinement, a compile first if needed); return
    a :class:`PcrResult`. After a cancel: the sites and products of the hits refined so far,
    ``info.complete`` False."""
    cancel = cancel or CancelToken()
    settings: PcrSettings = job.params["settings"]
    primers, background = job.inputs["primers"], job.inputs["background"]
    meter = Meter(job, threads=numba_threads(job))
    sites = yield from iter_sites(job, meter, cancel, "primer sites")
    products = meter.timed(lambda: pair_sites(sites, background, settings))
    return PcrResult(run_info(job, meter), settings, tuple((p.id, p.text) for p in primers),
                     sites, products)


#: Search groups (primer x record x strand) one edit search plans at once. The search
#: keeps a task row and several columns per group (about 200 bytes): 40 primers against
#: 100,000 tiny records made 8 M groups and 2 GB, so many records are searched a batch of
#: records at a time.
SEARCH_GROUPS = 1 << 20


def iter_sites(job: Job, meter: Meter, cancel: CancelToken, message: str):
    """Yield Progress (labelled ``message``); return the sites of a :func:`sites_job`:
    each background chunk searched and its hits refined where their end is owned
    (:class:`SitesProblem`), on the search's backend (engine.executors). Over many
    records, a batch of records at a time (:data:`SEARCH_GROUPS`), so memory stays
    bounded whatever the number of records x primers."""
    search: Job = job.params["search"]
    primers, background = job.inputs["primers"], job.inputs["background"]
    settings: PcrSettings = job.params["settings"]
    executor = registry.executor(search)
    batch = max(1, SEARCH_GROUPS // max(1, len(primers) * 2))  # (both strands)
    if len(background) <= batch or registry.on_cluster(search.backend):
        answer = yield from relabel(executor.run(SitesProblem(job), meter, cancel), message)
        return meter.timed(answer.sites)
    parts = []
    for at in range(0, len(background), batch):
        records = background[at:at + batch]
        part = sites_job(primers, records, settings, search_job(
            primers, records, search.params["k"], variant=search.variant,
            backend=search.backend, parallel=search.parallel, flags=search.flags,
            threads=search.threads, gap_min=search.params.get("gap_min", gaps.GAP_MIN)))
        label = f"{message} (records {at + 1:,}-{at + len(records):,} of {len(background):,})"
        answer = yield from relabel(executor.run(SitesProblem(part), meter, cancel), label)
        refined = answer.refined()
        if refined is not None:
            parts.append(refined[:1] + (refined[1] + at,) + refined[2:])
        if cancel.cancelled:
            break
    refined = tuple(np.concatenate(cols) for cols in zip(*parts)) if parts else None
    return meter.timed(lambda: site_table(primers, background, settings, refined))


def absorb(meter: Meter, info: RunInfo) -> None:
    """Add a sub-job's time, cells and comparisons (and incompleteness) to a tool's meter."""
    meter.elapsed += info.seconds
    meter.cells += info.cells
    meter.comparisons += info.comparisons
    meter.complete = meter.complete and info.complete


def record_shifts(background) -> np.ndarray:
    """Per record, the bases of its loaded record before its first (Record.offset)."""
    return np.array([r.offset for r in background], dtype=np.int64)


def passing(settings: PcrSettings, lengths, pat, rec, minus, dist, end, d, e3, start, ungapped,
            ungapped_3) -> tuple:
    """The candidate sites of refined hits (:class:`Refinement`) that pass ``max_edits`` and
    the 3' rule: (primer, record, strand, edits, 3' edits, start column, end column, gapped)
    arrays. ``lengths``: the primers' lengths.

    At each end: its ungapped alignment, where it has at most ``max_edits`` mismatches (every
    one is a site, as for ipcress); with indels, also its best alignment where that is better
    (fewer edits, or as many and fewer 3' edits), a gapped candidate that
    :func:`site_table` keeps only where no overlapping alignment beats it.
    """
    if settings.indels and not np.array_equal(d, dist):
        bad = int(np.flatnonzero(d != dist)[0])
        raise RuntimeError(f"pcr: site refinement disagrees with the edit search at hit {bad}")
    k, k3 = settings.max_edits, settings.max_3prime_edits
    plain = np.flatnonzero((ungapped >= 0) & (ungapped <= k) & (ungapped_3 <= k3))
    cols = [pat[plain], rec[plain], minus[plain], ungapped[plain], ungapped_3[plain],
            end[plain] - np.asarray(lengths, dtype=np.int64)[pat[plain]] + 1, end[plain],
            np.zeros(len(plain), dtype=bool)]
    if settings.indels:
        better = (ungapped < 0) | (d < ungapped) | ((d == ungapped) & (e3 < ungapped_3))
        gap = np.flatnonzero(better & (d <= k) & (e3 <= k3))
        for i, col in enumerate((pat, rec, minus, d, e3, start, end)):
            cols[i] = np.concatenate((cols[i], col[gap]))
        cols[7] = np.concatenate((cols[7], np.ones(len(gap), dtype=bool)))
    return tuple(cols)


def site_table(primers, background, settings: PcrSettings, refined) -> PcrSites:
    """The sites of the candidates that pass (:func:`passing`, or None for none), found in
    one piece or many: gapped candidates that an overlapping alignment beats are dropped
    here, over whole records (:func:`_standing`)."""
    names, ids = [p.id for p in primers], [r.id for r in background]
    if refined is None or not len(refined[0]):
        return PcrSites.empty(names, ids)
    pat, rec, minus, d, e3, start, end, gapped = refined
    if gapped.any():
        keep = _standing(pat, rec, minus, d, e3, start, end, gapped)
        pat, rec, minus, d, e3, start, end = (a[keep] for a in (pat, rec, minus, d, e3, start, end))
    order = np.lexsort((pat, minus, start, rec))
    pat, rec, minus, d, e3, start, end = (a[order] for a in (pat, rec, minus, d, e3, start, end))
    shift = record_shifts(background)
    return PcrSites({"primer": pat, "record": rec, "strand": minus.astype(np.int8),
                     "start": start + shift[rec] + 1, "end": end + shift[rec] + 1, "edits": d,
                     "edits_3prime": e3},
                    primer_ids=names, record_ids=ids)


def _standing(pat, rec, minus, d, e3, start, end, gapped) -> np.ndarray:
    """Indices of the candidates that are sites: every ungapped one, and each gapped one that
    no overlapping candidate of its primer, record and strand beats (fewer edits, or an
    ungapped one with as many). A primer that binds once also aligns with an indel or two
    at either edge of that site, each an edit worse: those alignments are the same site,
    not others. One site per span: the fewest edits, then 3' edits."""
    from engine.primers import pcr_kernels

    key = (pat * (int(rec.max()) + 1) + rec) * 2 + minus
    order = np.lexsort((e3, d, end, start, key))
    k, s, e = key[order], start[order], end[order]
    beaten = pcr_kernels.dominated(k, s, e, d[order], gapped[order], int((e - s).max()) + 1)
    order, k, s, e = order[~beaten], k[~beaten], s[~beaten], e[~beaten]
    first = np.ones(len(order), dtype=bool)  # the best of the candidates of one span
    first[1:] = (k[1:] != k[:-1]) | (s[1:] != s[:-1]) | (e[1:] != e[:-1])
    return order[first]


class Refinement:
    """The site refinement kernel (pcr_kernels.refine_sites) for a primer set (their codes
    in both orientations) and the settings."""

    def __init__(self, primers, settings: PcrSettings):
        self.settings = settings
        self.pats = np.concatenate([p.codes for p in primers]).astype(np.uint8)
        self.p_offs = np.zeros(len(primers) + 1, dtype=np.int64)
        np.cumsum([len(p) for p in primers], out=self.p_offs[1:])
        self.rc_pats = np.concatenate([reverse_complement(p.codes) for p in primers]
                                      ).astype(np.uint8)

    def __call__(self, text, lo, at, pat, minus, end) -> np.ndarray:
        """(distance, 3' edits, start column, ungapped mismatches, their 3' mismatches) rows
        (pcr_kernels.refine_sites) of the hits of primers ``pat`` on strands
        ``minus`` ending at columns ``end`` of records (pieces) of ``text``, whose column 0
        lies at ``at`` and whose first column at ``lo`` (the kernel looks no further back)."""
        from engine.primers import pcr_kernels

        s = self.settings
        out = np.zeros((pat.shape[0], 5), dtype=np.int64)
        pcr_kernels.refine_sites(self.pats, self.p_offs, self.rc_pats, text, lo, pat, minus,
                                 at + end, s.max_edits, s.three_prime_window, s.indels, out)
        out[:, 2] -= at
        return out


def pair_sites(sites, background, settings: PcrSettings, primers=None) -> PcrProducts:
    """Every product of facing sites (see the module docstring), by record, start, end,
    then the primers' names, as columns.

    ``sites``: a :class:`PcrSites` (or Site objects); ``primers``: only sites of these
    primer names take part (a pair's own PCR).
    """
    background = tuple(background)
    if not isinstance(sites, PcrSites):
        sites = PcrSites.from_rows(sites, background)
    use = np.ones(len(sites), dtype=bool)
    if primers is not None:
        wanted = [i for i, name in enumerate(sites.primer_ids) if name in primers]
        use = np.isin(sites.primer, np.asarray(wanted, dtype=np.int64))
    plus = np.flatnonzero(use & (sites.strand == 0))
    minus = np.flatnonzero(use & (sites.strand == 1))
    rec, start, end = sites.record, sites.start, sites.end
    # Minus sites by (record, end): each plus site's partners end within its product range.
    minus = minus[np.lexsort((start[minus], end[minus], rec[minus]))]
    key = (rec[minus] << 41) + end[minus]  # record above every coordinate (< 2^40)
    base = (rec[plus] << 41) + start[plus]
    first = np.searchsorted(key, base + settings.min_product - 1, side="left")
    last = np.searchsorted(key, base + settings.max_product - 1, side="right")
    count = np.maximum(last - first, 0)
    a = np.repeat(plus, count)
    b = minus[np.repeat(first - np.cumsum(count) + count, count) + np.arange(int(count.sum()))]
    facing = (start[b] >= start[a]) & (end[b] >= end[a])
    a, b = a[facing], b[facing]
    rank = np.empty(len(sites.primer_ids), dtype=np.int64)
    rank[sorted(range(len(sites.primer_ids)), key=sites.primer_ids.__getitem__)] = \
        np.arange(len(sites.primer_ids))
    fwd, rev = sites.primer[a], sites.primer[b]
    edits, e3 = sites.edits, sites.edits_3prime
    row = (e3[b], e3[a], edits[b], edits[a], rank[rev], rank[fwd], end[b], start[a], rec[a])
    order = np.lexsort(row)
    # One row per product: two alignments of one binding site can share the end that makes
    # the product (a plus site's start, a minus site's end) and its edits, differing only at
    # the other end (an indel at the primer's 3' end), which would list the product twice.
    row = np.stack(row)[:, order]
    keep = np.ones(len(order), dtype=bool)
    keep[1:] = (row[:, 1:] != row[:, :-1]).any(axis=0)
    a, b = a[order[keep]], b[order[keep]]
    return PcrProducts({"forward": sites.primer[a], "reverse": sites.primer[b], "record": rec[a],
                        "start": start[a], "end": end[b], "forward_edits": edits[a],
                        "reverse_edits": edits[b], "forward_3prime_edits": e3[a],
                        "reverse_3prime_edits": e3[b],
                        "spans_gap": spans_gap(background, rec[a], start[a], end[b])},
                       primer_ids=sites.primer_ids, background=background,
                       with_sequence=settings.with_sequence)


def spans_gap(background, rec, start, end) -> np.ndarray:
    """Per product (record index, 1-based inclusive start and end): does it hold a base of
    an assembly gap (engine.gaps), so that its sites lie on both sides of one and its size
    is unknown? Only the records with products are read (a genome store's in blocks)."""
    out = np.zeros(len(rec), dtype=bool)
    for r in np.unique(rec).tolist():
        record = background[r]
        rows = np.flatnonzero(rec == r)
        out[rows] = gaps.touches_gap(gaps.record_runs(record, gaps.GAP_CODE),
                                     start[rows] - 1 - record.offset, end[rows] - record.offset)
    return out


# -- sites as a chunked problem ---------------------------------------------------------------
#
# One task per background chunk, the whole primer set: the edit search of the chunk
# (engine.edit.problem: every end within ``max_edits`` that a piece owns), and the
# refinement of those hits in that piece, whose overlap (longest primer + max_edits)
# holds every alignment the refinement looks at (:class:`~engine.primers.pcr.Refinement`).
# A task's answer is the hits that pass (:func:`~engine.primers.pcr.passing`), taken after
# every slice, so a cancel keeps them. Merged in any order; candidates become
# sites over whole records (:func:`~engine.primers.pcr.site_table`) once, at the end. In
# this process and on Dask alike, the refinement runs inside the slices: progress and
# cancel reach it however large the background.

class ChunkSites(InnerRunnerRun):
    """One chunk's search (engine.edit.problem.ChunkSearch, whose slices it runs) and the
    refinement of its hits (an engine.executors.ChunkRun)."""

    def __init__(self, search, problem: "SitesProblem"):
        self.search = self.runner = search
        self.problem = problem
        self.first_slice = search.first_slice

    def take(self) -> tuple:
        """The passing refined hits found since the last call (the chunk's text still read)."""
        problem = self.problem
        rows, piece, _ = self.search.new_hits()
        pat, rec = rows["pattern"].astype(np.int64), rows["record"].astype(np.int64)
        minus, dist = rows["strand"].astype(np.int64), rows["distance"].astype(np.int64)
        end = rows["end"] - 1 - problem.shifts[rec]
        text = self.search.text  # (an engine.streaming.ChunkText: its pieces own their ends)
        lo = text.offsets[piece]
        p_start = np.array([p.start for p in text.pieces], dtype=np.int64)
        refined = problem.refine(text.codes, lo, lo - p_start[piece], pat, minus, end).T
        return passing(problem.settings, np.diff(problem.refine.p_offs), pat, rec, minus, dist,
                       end, *refined)


class SitesProblem(ChunkedProblem):
    """A pcr job's sites (``job.params``: ``settings`` and the edit ``search`` job);
    :meth:`sites` once run (after a cancel: those of the hits merged)."""

    spec = EDIT_SPEC

    def __init__(self, job: Job):
        from engine.edit.problem import SearchProblem  # (numba: when a job runs)

        super().__init__(job)
        self.settings = job.params["settings"]
        self.search = SearchProblem(job.params["search"])
        self.overlap = self.search.overlap
        self._parts: list[tuple] = []

    @cached_property
    def refine(self) -> Refinement:
        return Refinement(self.job.inputs["primers"], self.settings)

    @cached_property
    def shifts(self) -> np.ndarray:
        return record_shifts(self.records)

    def total_units(self) -> int:
        return self.search.total_units()

    def weight(self, task: Task) -> int:
        return self.search.weight(task)

    def open(self, task: Task, text, abort: np.ndarray, threads: int | None) -> ChunkSites:
        return ChunkSites(self.search.open(task, text, abort, threads), self)

    def merge(self, task: Task, answer) -> None:
        if len(answer[0]):
            self._parts.append(answer)

    def worker_job(self, gpu: bool) -> Job:
        """The search as the workers run it (GPU workers: the cuda default variant)."""
        search = self.search.worker_job(gpu)
        return dataclasses.replace(self.job, backend=search.backend, variant=search.variant,
                                   parallel=search.parallel, flags=search.flags,
                                   threads=search.threads,
                                   params={**self.job.params, "search": search})

    def refined(self) -> tuple | None:
        """The passing refined hits merged (:func:`passing`'s columns), or None."""
        return tuple(np.concatenate(cols) for cols in zip(*self._parts)) if self._parts else None

    def sites(self):
        """The sites of the hits merged (:func:`site_table`)."""
        return site_table(self.job.inputs["primers"], self.records, self.settings,
                          self.refined())
