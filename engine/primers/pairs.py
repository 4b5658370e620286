"""Pair design: specific primer pairs that Primer3 chooses and ranks.

- **Specificity** (kdiff, one job over the target and its reverse complement): a
  forward primer ``target[s..e]`` is specific at level k when it contains the kdiff
  candidate starting at s (``e - s + 1 >=`` its length); a reverse primer, the
  reverse complement of ``target[s..e]``, when the same holds at its 5' end on the
  reverse complement. Superstrings of k-unique strings are k-unique, so this is
  exact: a specific primer is at least k edits from every background substring on
  both strands.
- **Primer3** (primer3-py) lists every primer it accepts (``pick_primer_list``, with
  its penalties); only the specific ones stay. Pairs are then taken best first by
  the sum of their primers' penalties (Primer3's pair penalty with its default
  weights, and a lower bound of it otherwise); each is checked by Primer3
  (``check_primers``: Tm difference, pair complementarity, product), which gives the
  pair penalty it is ranked by. As in Primer3, the product size ranges are tried in
  order: a later range only fills up what the earlier ones left of ``num_return``.
  Pairs may share a primer, as Primer3's do by default.
- **In-silico PCR** of each returned pair against the background
  (:mod:`engine.primers.pcr`, one edit search for all pairs' primers): its products
  and the closest one (fewest edits, then fewest 3' edits, then shortest).
"""

from __future__ import annotations

import dataclasses
import heapq
import warnings
from dataclasses import dataclass, field
from typing import Generator

import numpy as np

from engine import api, gaps, kdiff, softmask
from engine.columns import Tabular
from engine.jobs import CancelToken, Job, Progress, RunInfo, check_int, now
from engine.primers import pcr
from engine.primers.children import in_child
from engine.primers.primer3_design import (PRIMER3_MIN_TEMPLATE, DesignSettings, Oligo, Regions,
                                           check_pair, primer_lists, rejection_reason,
                                           template_text)
from engine.sequences import Record, SequenceWarning, decode, encode, reverse_complement
from engine.slices import Meter, numba_threads, run_info

__all__ = ["PairSettings", "PairsResult", "PrimerPair", "PrimerSite", "Rejection", "Specificity",
           "iter_solve", "make_job", "solve"]


@dataclass(frozen=True)
class PairSettings:
    design: DesignSettings = DesignSettings()
    pcr: pcr.PcrSettings = pcr.PcrSettings()
    explain: bool = False
    regions: Regions = Regions()
    #: drop primers whose 3'-most 5 bases touch a soft-masked base (engine.softmask)
    avoid_masked: bool = False


@dataclass(frozen=True)
class PrimerSite:
    """One primer of a pair: ``sequence`` as ordered (5'->3'); ``start``/``end`` are the
    target coordinates of its site (1-based, inclusive)."""

    sequence: str
    start: int
    end: int
    tm: float
    gc_percent: float
    penalty: float

    @property
    def length(self) -> int:
        return len(self.sequence)


@dataclass(frozen=True)
class PrimerPair:
    target_id: str
    rank: int
    penalty: float
    product_size: int
    left: PrimerSite
    right: PrimerSite
    compl_any_tm: float | None
    compl_end_tm: float | None
    product_tm: float | None
    #: the in-silico PCR products of this pair's two primers in the background
    products: tuple[pcr.Product, ...] = ()

    @property
    def offtarget_products(self) -> int:
        return len(self.products)

    @property
    def closest_offtarget(self) -> pcr.Product | None:
        return min(self.products, default=None,
                   key=lambda p: (p.edits, p.forward_3prime_edits + p.reverse_3prime_edits,
                                  p.length, p.start))


@dataclass(frozen=True)
class Rejection:
    """A primer position no returned pair could use, and why (``--explain``)."""

    target_id: str
    orientation: str   # "left" | "right"
    start: int         # target coordinates of the site, 1-based inclusive
    end: int
    sequence: str      # as ordered
    reason: str


@dataclass(frozen=True)
class Specificity:
    """The shortest specific primer per 5' end (-1: none at any length), for the GUI's profile.

    ``left[p]``: a forward primer starting at target position p (0-based) reading right;
    ``right[p]``: a reverse primer whose 5' end pairs with target position p, reading left.
    """

    target_id: str
    left: np.ndarray = field(repr=False, compare=False)
    right: np.ndarray = field(repr=False, compare=False)


@dataclass(frozen=True)
class PairsResult(Tabular):
    info: RunInfo
    k: int
    settings: PairSettings
    pairs: tuple[PrimerPair, ...]
    rejected: tuple[Rejection, ...]
    specificity: tuple[Specificity, ...]
    #: target id -> Primer3's explain strings ("left", "right") of its primer lists
    primer3_explain: dict
    #: seconds per phase: "kdiff", "primer3", "pcr"
    phase_seconds: dict

    def table(self):
        """One row per pair, the CSV's columns (engine.primers.export_pairs; None where it
        writes an empty cell). In ``bed`` the interval is the amplicon on the target, and the
        primers' and the closest off-target product's starts are 0-based too."""
        from engine.primers.export_pairs import COLUMNS, rows

        cells = [[None if v == "" else v for v in row] for row in rows(self)]
        data = {name: [row[i] for row in cells] for i, name in enumerate(COLUMNS)}
        return (data, ("target", "left_start", "right_end"),
                (("left_start", "left_end"), ("right_start", "right_end"),
                 ("closest_start", "closest_end")))


def make_job(target, background, k: int, settings: PairSettings | None = None, *, variant=None,
             backend=None, parallel=None, flags=None, threads=None, scheduler=None,
             gap_min: int | None = None) -> Job:
    """Check everything and return the job (``Job.family`` ``"pairs"``).

    ``target`` (where the primers go), then ``background`` (where they must not bind): any
    form of :func:`engine.api.records`. ``k`` is a **minimum**: each primer is at least k
    edits from every background substring, on both strands (kdiff's k).

    ``variant``/``backend``/``parallel``/``flags`` are kdiff's (the specificity scan);
    the in-silico PCR runs on the same backend with the edit family's default variant.
    ``scheduler``: the dask backend's cluster address (engine.cluster), for both steps.
    Runs of at least ``gap_min`` N in the target and the background are assembly gaps
    (engine.gaps): no designed primer holds a gap base.
    """
    settings = settings or PairSettings()
    k = check_int("k", k, 1)
    target, background = api.records(target, "target"), api.records(background, "background")
    gap_min = gaps.resolve_gap_min(background, gap_min)  # (unset: a store background's own)
    target = tuple(gaps.as_background(target, gap_min))
    background = tuple(gaps.as_background(background, gap_min))
    if not target:
        raise ValueError("no target records")
    settings.regions.check(target)
    if settings.avoid_masked:
        for rec in target:
            softmask.known_mask(rec)  # refused before the run, not after it
    both = []
    for i, rec in enumerate(target):
        both += [Record(f"f{i}", rec.codes), Record(f"r{i}", reverse_complement(rec.codes))]
    kjob = kdiff.make_job(both, background, k, variant=variant, backend=backend,
                          parallel=parallel, flags=flags, strands="both", threads=threads,
                          scheduler=scheduler, gap_min=gap_min)
    return Job(family="pairs", inputs={"target": target, "background": background},
               variant=kjob.variant, backend=kjob.backend, parallel=kjob.parallel,
               flags=kjob.flags, params={"k": k, "settings": settings, "kdiff": kjob,
                                         "scheduler": scheduler, "gap_min": gap_min},
               threads=threads)


def solve(target, background, k: int, settings: PairSettings | None = None, *,
          progress: bool = False, backend=None, **options) -> PairsResult:
    """Primer pairs for ``target``, each primer **at least** ``k`` edits from every
    ``background`` substring (see :func:`make_job`). ``backend`` may be a
    ``distributed.Client``; ``progress=True`` shows a tqdm bar."""
    api.refuse_settings_fields(options, PairSettings, "pairs.solve")
    return api.solve(make_job, iter_solve, target, background, k, settings, progress=progress,
                     backend=backend, **options)


def specificity_from(candidates, target) -> tuple[Specificity, ...]:
    """Per target record, the shortest specific primer at each 5' end (from kdiff candidates
    of the records ``f{i}`` (forward) and ``r{i}`` (reverse complement))."""
    target = tuple(target)
    fwd = [np.full(len(t), -1, dtype=np.int64) for t in target]
    rev = [np.full(len(t), -1, dtype=np.int64) for t in target]
    for c in candidates:
        i = int(c.target_id[1:])
        if c.target_id[0] == "f":
            fwd[i][c.start - 1] = c.length
        else:  # start s' on the reverse complement: the 5' end pairs with position L-1-s'
            rev[i][len(target[i]) - c.start] = c.length
    return tuple(Specificity(t.id, f, r) for t, f, r in zip(target, fwd, rev))


def _site(o: Oligo, offset: int = 0) -> PrimerSite:
    """``offset``: the target record's (``Record.offset``), so sites are in its numbering."""
    lo, hi = o.span
    return PrimerSite(o.sequence, offset + lo + 1, offset + hi, o.tm, o.gc_percent, o.penalty)


class _Taken:
    """The primers of kept pairs, one orientation, against which a primer conflicts
    (Primer3's PRIMER_MIN_THREE_PRIME_DISTANCE: at ``distance`` 0 the same primer, at 1 or
    more a 3' end under ``distance`` away; below 0 none), in O(1) a query instead of a scan
    of every kept pair (that scan made ``--num-return 1000`` run for over 20 minutes on a
    3 kb target): :meth:`lowest` is the lowest penalty of a kept pair whose primer
    conflicts with a given one (inf: none does)."""

    def __init__(self, distance: int):
        self.distance = distance
        self.near: dict[int, float] = {}  # 3' end -> lowest penalty within reach (distance >= 1)
        self.same: dict[tuple[int, int], float] = {}  # (pos, length) -> lowest (distance 0)

    def add(self, oligo: Oligo, penalty: float) -> None:
        if self.distance < 0:
            return
        if self.distance == 0:
            key = (oligo.pos, oligo.length)
            self.same[key] = min(self.same.get(key, np.inf), penalty)
            return
        near, end = self.near, oligo.three_prime
        for x in range(end - self.distance + 1, end + self.distance):
            if penalty < near.get(x, np.inf):
                near[x] = penalty

    def lowest(self, oligo: Oligo) -> float:
        if self.distance < 0:
            return np.inf
        if self.distance == 0:
            return self.same.get((oligo.pos, oligo.length), np.inf)
        return self.near.get(oligo.three_prime, np.inf)


def _taken(distance: int, settled=(), kept=()) -> tuple[_Taken, _Taken]:
    """The left and right :class:`_Taken` of pairs (tuples: the penalty at 0, the left
    primer at 4, the right at 5): earlier ranges' ``settled`` pairs conflict at any key
    (-inf), ``kept`` ones at their penalty."""
    lefts, rights = _Taken(distance), _Taken(distance)
    for pair, penalty in [(p, -np.inf) for p in settled] + [(p, p[0]) for p in kept]:
        lefts.add(pair[4], penalty)
        rights.add(pair[5], penalty)
    return lefts, rights


def _diverse(accepted: list, distance: int) -> list:
    """Greedy, best first, as Primer3 returns pairs: each pair that conflicts with none kept
    before it (:class:`_Taken`)."""
    kept = []
    lefts, rights = _taken(distance)
    for a in sorted(accepted, key=lambda a: a[:3]):
        if lefts.lowest(a[4]) == np.inf and rights.lowest(a[5]) == np.inf:
            kept.append(a)
            lefts.add(a[4], 0.0)
            rights.add(a[5], 0.0)
    return kept


def best_pairs(template: str, lefts, rights, design: DesignSettings,
               cancel: CancelToken, regions: dict | None = None, check=check_pair) -> list[tuple]:
    """The ``design.num_return`` best pairs of these primers, ranges in order (see the
    module docstring), pairs distinct by ``design.min_three_prime_distance`` over all
    ranges: ``(check, left, right, range)`` tuples, best first. ``regions``: Primer3's
    sequence arguments (:meth:`Regions.sequence_args`), for its pair checks. ``check``:
    :func:`check_pair` or a caller's memo of it (the group search ranks one template's
    primers again after each verification round)."""
    lefts, rights = list(lefts), list(rights)  # in Primer3's order (best first), its tie-break
    out: list[tuple] = []
    if not lefts or not rights:
        return out
    distance = design.min_three_prime_distance
    r_pos = np.array([o.pos for o in rights], dtype=np.int64)
    r_pen = np.array([o.penalty for o in rights], dtype=np.float64)
    by_pos = np.argsort(r_pos, kind="stable")
    sorted_pos = r_pos[by_pos]
    l_pos = np.array([o.pos for o in lefts], dtype=np.int64)
    l_pen = [o.penalty for o in lefts]
    # (each range's min by one reduceat: a trailing inf keeps every index in bounds)
    pen_by_pos = np.append(r_pen[by_pos], np.inf)
    for product_range in design.product_ranges:
        need = design.num_return - len(out)
        if need <= 0:
            break
        lo, hi = product_range
        windows: dict[int, np.ndarray] = {}
        starts = np.searchsorted(sorted_pos, l_pos + lo - 1, side="left")
        ends = np.searchsorted(sorted_pos, l_pos + hi - 1, side="right")
        lowest = np.minimum.reduceat(pen_by_pos, np.stack([starts, ends], 1).ravel())[::2]
        heap = [(l_pen[i] + float(lowest[i]), i, 0) for i in np.flatnonzero(starts < ends).tolist()]
        heapq.heapify(heap)
        accepted: list[tuple] = []
        last = None  # the highest (penalty, i, -w) accepted so far
        kept: list[tuple] = []
        settled = [(0.0, 0, 0, None, o[1], o[2]) for o in out]  # earlier ranges' pairs
        taken = _taken(distance, settled)
        worst = float("inf")
        while heap and not cancel.cancelled:
            key, i, t = heapq.heappop(heap)
            if len(kept) >= need and key > worst + 1e-9:
                break
            if i not in windows:  # this left's partners, best penalty first
                w = by_pos[starts[i]:ends[i]]
                windows[i] = w[np.lexsort((-w, r_pen[w]))]
            w = windows[i]
            left, right = lefts[i], rights[int(w[t])]
            # A kept pair at or below this key stays kept (no later pair ranks before it),
            # so a pair that conflicts with one can never be returned: no need to check it;
            # and when its left primer conflicts, neither can any later partner of it (keys
            # only grow): the left is done. (Popping every partner of every left made a
            # num_return above the pairs there are take minutes.)
            if taken[0].lowest(left) <= key:
                continue
            if t + 1 < len(w):
                heapq.heappush(heap, (left.penalty + float(r_pen[w[t + 1]]), i, t + 1))
            if abs(left.tm - right.tm) > design.max_tm_diff:
                continue  # Primer3's own rule on its own Tms: no need to ask it
            if taken[1].lowest(right) <= key:
                continue
            verdict = check(template, left, right, product_range, design, regions)
            if not verdict.ok:
                continue
            # Equal penalties: left in list order, right in reverse list order (as Primer3's
            # own pair search returns them).
            pair = (verdict.penalty, i, -int(w[t]), verdict, left, right)
            if last is None or pair[:3] > last:
                last = pair[:3]
                accepted.append(pair)
                if min(taken[0].lowest(left), taken[1].lowest(right)) == np.inf:
                    # last in order and conflicting with no kept pair: kept
                    kept.append(pair)
                    taken[0].add(left, pair[0])
                    taken[1].add(right, pair[0])
            else:  # it ranks before an accepted one: the greedy choice again
                accepted.append(pair)
                kept = _diverse(settled + accepted, distance)[len(settled):]
                taken = _taken(distance, settled, kept)
            if len(kept) >= need:
                worst = kept[need - 1][0]
        out += [(a[3], a[4], a[5], product_range) for a in kept[:need]]
    return out


def _rejections(target_id: str, text: str, template: str, spec: Specificity, lefts, rights,
                design: DesignSettings, k: int, cancel: CancelToken,
                offset: int = 0, regions: dict | None = None,
                hull: tuple[int, int] | None = None) -> list[Rejection]:
    """Per orientation and 5' end: why no accepted specific primer starts there (sites in
    the record's numbering: ``offset`` is its ``Record.offset``; ``regions``, ``hull``:
    Primer3's sequence arguments and the span every product must contain)."""
    L = len(text)
    out = []
    for orient, need_at, oligos in (("left", spec.left, lefts), ("right", spec.right, rights)):
        accepted = {(o.pos, o.length) for o in oligos}
        for p in range(L):
            if cancel.cancelled:
                return out
            room = L - p if orient == "left" else p + 1
            if room < design.len_min:
                continue
            longest = min(design.len_max, room)
            need = int(need_at[p])

            def oligo(length):
                if orient == "left":
                    return offset + p + 1, offset + p + length, text[p:p + length]
                return offset + p - length + 2, offset + p + 1, decode(reverse_complement(
                    encode(text[p - length + 1:p + 1])))

            if need < 0 or need > longest:
                start, end, seq = oligo(longest)
                why = (f"not specific: within {k - 1} edits of the background at every length "
                       f"up to {longest}" + (f" (needs {need} nt)" if need > 0 else ""))
                out.append(Rejection(target_id, orient, start, end, seq, why))
                continue
            lengths = range(max(design.len_min, need), longest + 1)
            if any((p, n) in accepted for n in lengths):
                continue
            start, end, seq = oligo(lengths[0])
            if hull and (end - offset > hull[0] if orient == "left" else start - offset <= hull[1]):
                why = (f"{'right' if orient == 'left' else 'left'} of the amplify region "
                       f"{offset + hull[0] + 1}-{offset + hull[1]}: no product would contain it")
            else:
                why = rejection_reason(template, seq, orient == "left", p, design, regions)
            out.append(Rejection(target_id, orient, start, end, seq, why))
    return out


def design_record(record: Record, spec: Specificity, settings: PairSettings, k: int,
                  cancel: CancelToken | None = None):
    """Primer3's part for one target record: its best specific pairs (:func:`best_pairs`),
    the rejections (with ``settings.explain``) and Primer3's explain strings. Runs in a
    child process (:func:`in_child`): Primer3 holds Python's lock for whole seconds. No
    designed primer holds an assembly gap base, nor (``settings.avoid_masked``) a
    soft-masked base among its 3'-most five (the record's ``soft_mask``)."""
    record_id, text, offset = record.id, record.text, record.offset
    cancel = cancel or CancelToken()
    design = settings.design
    template = template_text(text)
    regions = settings.regions.sequence_args(offset, len(text))
    hull = settings.regions.amplify_hull(offset, len(text))
    lefts, rights, explain = primer_lists(template, design, record_id, regions)
    # (specific: at least as long as the shortest specific primer at its 5' end)
    lefts = [o for o in lefts if 0 < spec.left[o.pos] <= o.length]
    rights = [o for o in rights if 0 < spec.right[o.pos] <= o.length]
    gap_stretches = gaps.gap_runs(record.codes)

    def clear(side, reverse):
        starts, ends = [o.span[0] for o in side], [o.span[1] for o in side]
        bad = gaps.touches_gap(gap_stretches, starts, ends)
        if settings.avoid_masked:
            bad |= softmask.three_prime_masked(record, starts, ends, reverse=reverse)
        return [o for o, b in zip(side, bad) if not b]

    lefts, rights = clear(lefts, False), clear(rights, True)
    if hull:  # Primer3 keeps primers on either side of its target: only flanking ones pair
        lefts = [o for o in lefts if o.span[1] <= hull[0]]
        rights = [o for o in rights if o.span[0] >= hull[1]]
    best = best_pairs(template, lefts, rights, design, cancel, regions)
    why = (_rejections(record_id, text, template, spec, lefts, rights, design, k, cancel,
                       offset, regions, hull) if settings.explain else [])
    return best, why, explain


def iter_solve(job: Job, cancel: CancelToken | None = None) -> Generator[Progress, None, PairsResult]:
    """Yield Progress through the phases (kdiff on both orientations, Primer3, in-silico
    PCR); return a :class:`PairsResult`. After a cancel: the pairs finished so far (none
    if the cancel came during kdiff), ``info.complete`` False."""
    cancel = cancel or CancelToken()
    settings: PairSettings = job.params["settings"]
    target, background = job.inputs["target"], job.inputs["background"]
    meter = Meter(job, threads=numba_threads(job))
    phases = {"kdiff": 0.0, "primer3": 0.0, "pcr": 0.0}
    found = yield from pcr.relabel(kdiff.iter_solve(job.params["kdiff"], cancel),
                                   "specificity (kdiff, both orientations)")
    pcr.absorb(meter, found.info)
    phases["kdiff"] = found.info.seconds
    specs = specificity_from(found.candidates, target)
    chosen, rejected, explains = [], [], {}

    def result():
        return PairsResult(run_info(job, meter), job.params["k"], settings, tuple(chosen),
                           tuple(rejected), specs, explains, phases)

    if not found.info.complete:
        return result()
    for n, (rec, spec) in enumerate(zip(target, specs)):
        if cancel.cancelled:
            meter.complete = False
            return result()
        message = f"Primer3: pairs in {rec.id}"
        yield meter.progress(n, len(target), message=message)
        if len(rec) < PRIMER3_MIN_TEMPLATE:  # (Primer3's C code would abort the process)
            warnings.warn(SequenceWarning(
                f"target record {rec.id!r} has {len(rec)} nt, fewer than the "
                f"{PRIMER3_MIN_TEMPLATE} Primer3 needs: skipped"), stacklevel=2)
            continue
        t0 = now()
        mask = softmask.known_mask(rec) if settings.avoid_masked else None
        plain = Record(rec.id, np.asarray(rec.codes), "", rec.source, rec.offset, mask)
        done = yield from in_child(
            design_record, (plain, spec, settings, job.params["k"]),
            cancel, lambda: meter.progress(n, len(target), message=message))
        meter.elapsed += now() - t0
        phases["primer3"] += now() - t0
        if done is None:  # cancelled
            meter.complete = False
            return result()
        best, why, explain = done
        explains[rec.id] = explain
        rejected.extend(why)
        for rank, (verdict, left, right, _) in enumerate(best, start=1):
            chosen.append(PrimerPair(rec.id, rank, verdict.penalty, right.pos - left.pos + 1,
                                     _site(left, rec.offset), _site(right, rec.offset),
                                     verdict.compl_any_tm,
                                     verdict.compl_end_tm, verdict.product_tm))
    if cancel.cancelled:
        meter.complete = False
        return result()
    if chosen:
        chosen[:] = yield from _with_pcr(chosen, background, settings.pcr, job, cancel, meter,
                                         phases)
    return result()


def _with_pcr(chosen, background, settings: pcr.PcrSettings, job: Job, cancel, meter, phases):
    """Each pair with its in-silico PCR products (one site search for all pairs' primers)."""
    names, primers = [], {}
    for p in chosen:
        pair_names = []
        for side, site in (("left", p.left), ("right", p.right)):
            name = f"{p.target_id}#{p.rank}.{side}"
            primers[name] = Record(name, encode(site.sequence))
            pair_names.append(name)
        names.append(pair_names)
    records = tuple(primers.values())
    search = pcr.search_job(records, background, settings.max_edits, backend=job.backend,
                            threads=job.threads, scheduler=job.params.get("scheduler"),
                            gap_min=job.params.get("gap_min", gaps.GAP_MIN))
    t0 = meter.elapsed
    sites = yield from pcr.iter_sites(pcr.sites_job(records, background, settings, search), meter,
                                      cancel, "in-silico PCR")
    out = []
    for p, pair_names in zip(chosen, names):
        products = pcr.pair_sites(sites, background, settings, primers=set(pair_names))
        out.append(dataclasses.replace(p, products=tuple(products)))
    phases["pcr"] = meter.elapsed - t0
    return out
