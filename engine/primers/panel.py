"""Multiplex panel check: every primer against every other, and what the set amplifies.

- **Dimers** (primer3-py, the reaction conditions given): for each pair of primers
  (a primer with itself included) the heterodimer ΔG (kcal/mol) and Tm, and the
  3'-end ΔG of each primer's 3' end on the other (Primer3's end stability). A pair
  is a *3'-end dimer* when either 3' end binds the other at or below
  ``end_dimer_dg``: an extendable dimer, the usual cause of primer-dimer artefacts.
  Primers with ambiguity codes have no thermodynamic values (None), nor has the
  heterodimer of two primers both over 60 nt (Primer3's limit): those primers are
  listed in ``too_long`` ("too long for Primer3 thermodynamics") and the run goes on.
- **Cross-products** (with a background): the in-silico PCR of the whole set
  (:mod:`engine.primers.pcr`); products between primers of different pairs are what
  make multiplex panels fail.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Generator

import numpy as np

from engine import api, gaps
from engine.columns import Tabular, frame, plain_records, with_coords
from engine.jobs import CancelToken, Job, Progress, RunInfo
from engine.primers import pcr
from engine.primers.annotate import THERMO_MAX_LENGTH, TOO_LONG, Conditions
from engine.primers.primer_sets import check_primers
from engine.sequences import SequenceWarning
from engine.slices import Meter, numba_threads, run_info

__all__ = ["PanelResult", "PanelSettings", "iter_solve", "make_job", "solve"]


@dataclass(frozen=True)
class PanelSettings:
    conditions: Conditions = Conditions()
    end_dimer_dg: float = -5.0  # kcal/mol
    pcr: pcr.PcrSettings = pcr.PcrSettings()


@dataclass(frozen=True)
class PanelResult(Tabular):
    """Matrices are n x n in primer order; NaN where Primer3 cannot score (IUPAC codes)."""

    info: RunInfo
    settings: PanelSettings
    primers: tuple[tuple[str, str], ...]   # (name, sequence)
    dimer_dg: np.ndarray      # heterodimer ΔG, kcal/mol (symmetric)
    dimer_tm: np.ndarray      # heterodimer Tm, °C (symmetric)
    end_dg: np.ndarray        # [i, j]: ΔG of primer i's 3' end on primer j, kcal/mol
    end_dimer: np.ndarray     # bool, symmetric: either 3' end at or below end_dimer_dg
    products: tuple[pcr.Product, ...] = ()   # with a background: every product of the set
    has_background: bool = False
    #: primers over Primer3's thermodynamic limit (their heterodimers with each other: NaN)
    too_long: tuple[str, ...] = ()
    #: with a background: every site a primer can prime from (pcr.PcrSites; ``check`` lists them)
    sites: object = None

    def products_between(self, a: str, b: str) -> list[pcr.Product]:
        return [p for p in self.products if {p.forward, p.reverse} == {a, b}]

    def table(self):
        """One row per pair of primers (a primer with itself included), the CSV's columns
        (engine.primers.export_panel): primer pairs have no interval."""
        from engine.primers.export_panel import COLUMNS, pair_rows

        found = list(pair_rows(self))
        return {name: [r[name] for r in found] for name in COLUMNS}, None, ()

    def products_table(self, coords: str = "one-based") -> dict:
        """The cross-products (with a background) as columns in ``coords``."""
        names = ("forward", "reverse", "record_id", "start", "end", "forward_edits",
                 "reverse_edits", "forward_3prime_edits", "reverse_3prime_edits", "sequence",
                 "spans_gap")
        data = {name: [getattr(p, name) for p in self.products] for name in names}
        return with_coords(data, coords, ("record_id", "start", "end"), what="the products")

    def _in(self, coords: str, table: str = "pairs") -> dict:
        if table == "products":
            return self.products_table(coords)
        if table != "pairs":
            raise ValueError(f"table must be 'pairs' or 'products', got {table!r}")
        return Tabular._in(self, coords)

    def to_pandas(self, coords: str = "one-based", table: str = "pairs"):
        """``table="pairs"``: the dimer table (one-based only: pairs of primers are not
        intervals); ``"products"``: the cross-products, 1-based or ``bed``."""
        return frame(self._in(coords, table))

    def to_records(self, coords: str = "one-based", table: str = "pairs") -> list[dict]:
        """The rows of :meth:`to_pandas` as plain dicts (no pandas needed)."""
        return plain_records(self._in(coords, table))


def make_job(primers, background=(), settings: PanelSettings | None = None, *, variant=None,
             backend=None, parallel=None, threads=None, scheduler=None,
             gap_min: int | None = None) -> Job:
    """The panel check's job; with a background, its cross-product search (``variant`` ...
    ``scheduler``: the edit family's, as for :func:`engine.primers.pcr.search_job`; runs of
    at least ``gap_min`` N in the background are assembly gaps, engine.gaps)."""
    settings = settings or PanelSettings()
    primers = check_primers(primers)
    background = api.records(background, "background") if background is not None else ()
    gap_min = gaps.resolve_gap_min(background, gap_min)  # (unset: a store background's own)
    background = tuple(gaps.as_background(background, gap_min))
    search = None
    if background:
        search = pcr.search_job(primers, background, settings.pcr.max_edits, variant=variant,
                                backend=backend, parallel=parallel, threads=threads,
                                scheduler=scheduler, gap_min=gap_min)
    elif scheduler:
        raise ValueError("--scheduler needs a background (the cross-product search is what runs "
                         "on the cluster)")
    return Job(family="panel", inputs={"primers": primers, "background": background},
               variant=search.variant if search else None,
               backend=search.backend if search else "serial",
               parallel=search.parallel if search else None,
               params={"settings": settings, "search": search}, threads=threads)


def solve(primers, background=(), settings: PanelSettings | None = None, *,
          progress: bool = False, backend=None, **options) -> PanelResult:
    """Dimers of every pair of ``primers`` and, with a ``background``, the set's
    cross-products (see :func:`make_job`). ``backend`` may be a ``distributed.Client``;
    ``progress=True`` shows a tqdm bar."""
    api.refuse_settings_fields(options, PanelSettings, "panel.solve")
    return api.solve(make_job, iter_solve, primers, background, settings, progress=progress,
                     backend=backend, **options)


def iter_solve(job: Job, cancel: CancelToken | None = None) -> Generator[Progress, None, PanelResult]:
    """Yield Progress per row of the matrix, then the PCR's; return a :class:`PanelResult`."""
    import primer3

    cancel = cancel or CancelToken()
    settings: PanelSettings = job.params["settings"]
    primers = job.inputs["primers"]
    n = len(primers)
    seqs = [p.text for p in primers]
    plain = [set(s) <= set("ACGT") for s in seqs]
    long_ = [len(s) > THERMO_MAX_LENGTH for s in seqs]
    too_long = tuple(p.id for p, is_long in zip(primers, long_) if is_long)
    if too_long:
        shown = ", ".join(too_long[:3]) + (f" and {len(too_long) - 3} more" if len(too_long) > 3
                                           else "")
        warnings.warn(SequenceWarning(
            f"{shown}: {TOO_LONG} (over {THERMO_MAX_LENGTH} nt): no dimer values between "
            f"two such primers (each with itself included)"), stacklevel=2)
    salts = settings.conditions.salts()
    temp = settings.conditions.temp_c
    dg = np.full((n, n), np.nan)
    tm = np.full((n, n), np.nan)
    end = np.full((n, n), np.nan)
    meter = Meter(job, threads=numba_threads(job) if job.params["search"] else None)
    for i in range(n):
        if cancel.cancelled:
            meter.complete = False
            break

        def row(i=i):
            for j in range(i, n):
                # (Primer3 aligns two oligos only when one has at most 60 nt)
                if not (plain[i] and plain[j]) or (long_[i] and long_[j]):
                    continue
                het = primer3.calc_heterodimer(seqs[i], seqs[j], temp_c=temp, **salts)
                dg[i, j] = dg[j, i] = het.dg / 1000.0
                tm[i, j] = tm[j, i] = het.tm
                end[i, j] = primer3.calc_end_stability(seqs[i], seqs[j], temp_c=temp, **salts).dg / 1000.0
                end[j, i] = primer3.calc_end_stability(seqs[j], seqs[i], temp_c=temp, **salts).dg / 1000.0

        meter.timed(row)
        yield meter.progress(i + 1, n, message="heterodimers")
    flagged = np.nan_to_num(end, nan=np.inf) <= settings.end_dimer_dg
    flagged = flagged | flagged.T
    products, sites = (), None
    search = job.params["search"]
    if search is not None and meter.complete:
        background = job.inputs["background"]
        sites = yield from pcr.iter_sites(pcr.sites_job(primers, background, settings.pcr, search),
                                          meter, cancel, "cross-products")
        products = tuple(meter.timed(lambda: pcr.pair_sites(sites, background, settings.pcr)))
    return PanelResult(run_info(job, meter), settings, tuple((p.id, p.text) for p in primers),
                       dg, tm, end, flagged, products, search is not None,
                       too_long, sites)
