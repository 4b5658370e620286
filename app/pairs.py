"""Pair design in the GUI, without Qt: the job the Pairs view runs and what its tables show.

The job is :mod:`engine.primers.pairs` (kdiff on both orientations of the target, Primer3's
choice and ranking, the in-silico PCR of each pair), run as its own ``iter_solve`` on the
worker thread; the pair table's rows are the CSV's (:func:`engine.primers.export_pairs.rows`)
and the products table's are :mod:`engine.primers.export_pcr`'s, so the GUI shows and
writes what ``primerscope pairs`` writes.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Generator, Sequence

from engine.jobs import CancelToken, Job
from engine.primers.library import LibraryEntry
from engine.sequences import Record

from app.families import Column
from app.primer3_guard import steps
from app.primers import friendly, short_id

#: The pair table, in the order of ``engine.primers.export_pairs.COLUMNS`` (the CSV's).
PAIR_COLUMNS = (
    Column("target", "str", "", "Target record"),
    Column("rank", "int", "", "Rank by Primer3's pair penalty (1: best)"),
    Column("penalty", "float", "", "Primer3's pair penalty (lower is better)"),
    Column("product (bp)", "int", "length", "Product size in the target (bp)"),
    Column("forward", "str", "", "Forward (left) primer, 5′→3′"),
    Column("F start", "int", "start", "First base of the forward primer's site (1-based)"),
    Column("F end", "int", "", "Last base of the forward primer's site"),
    Column("F Tm (°C)", "float", "", "Forward primer Tm (°C, Primer3)"),
    Column("F GC %", "float", "", "Forward primer GC content (%)"),
    Column("reverse", "str", "", "Reverse (right) primer as ordered, 5′→3′"),
    Column("R start", "int", "", "First base of the reverse primer's site (target coordinates)"),
    Column("R end", "int", "end", "Last base of the reverse primer's site: its 5′ end"),
    Column("R Tm (°C)", "float", "", "Reverse primer Tm (°C, Primer3)"),
    Column("R GC %", "float", "", "Reverse primer GC content (%)"),
    Column("compl. any Tm (°C)", "float", "", "Primer3: Tm of the most stable dimer of the two primers"),
    Column("compl. 3′ Tm (°C)", "float", "", "Primer3: Tm of the most stable 3′-anchored dimer"),
    Column("product Tm (°C)", "float", "", "Primer3: Tm of the product"),
    Column("off-target", "int", "", "Products of this pair in the background (in-silico PCR)"),
    Column("closest record", "str", "", "The closest off-target product (fewest edits, then "
                                        "fewest 3′ edits, then shortest): its record"),
    Column("closest start", "int", "", "Closest off-target product: first base"),
    Column("closest end", "int", "", "Closest off-target product: last base"),
    Column("closest length (bp)", "int", "", "Closest off-target product: length (bp)"),
    Column("closest F", "str", "", "Closest off-target product: the primer at its start"),
    Column("closest R", "str", "", "Closest off-target product: the primer at its end"),
    Column("closest F edits", "int", "", "Edits of the forward primer's site"),
    Column("closest R edits", "int", "", "Edits of the reverse primer's site"),
    Column("closest spans gap", "str", "", "Closest off-target product: True where it holds an "
                                           "assembly gap (its true length is unknown)"),
)

#: The products table, in the order of ``engine.primers.export_pcr.COLUMNS``.
PRODUCT_COLUMNS = (
    Column("forward", "str", "", "The primer at the product's start (binds the + strand)"),
    Column("reverse", "str", "", "The primer at the product's end (binds the − strand)"),
    Column("record", "str", "", "Background record"),
    Column("start", "int", "start", "First base of the product (1-based)"),
    Column("end", "int", "end", "Last base of the product (1-based, inclusive)"),
    Column("length (bp)", "int", "length", "Product length (bp)"),
    Column("F edits", "int", "", "Edits of the forward site"),
    Column("R edits", "int", "", "Edits of the reverse site"),
    Column("F 3′ edits", "int", "", "Edits in the forward primer's 3′ window"),
    Column("R 3′ edits", "int", "", "Edits in the reverse primer's 3′ window"),
    Column("spans gap", "str", "", "The product holds an assembly gap (a run of N): its sites "
                                   "lie on both sides of it, so its true length is unknown"),
)


@dataclass(frozen=True)
class PairsStarted:
    """First item of a pair design: the job as the engine validated it."""

    job: Job


def design_run(target: Sequence[Record], background: Sequence[Record], k: int, settings,
               selection, threads: int | None, cancel: CancelToken,
               scheduler: str | None = None, gap_min: int | None = None) -> Generator:
    """Build the pair design job (on the worker thread: it imports numba), yield
    :class:`PairsStarted`, then the job's Progress; return its :class:`PairsResult`.
    ``scheduler``: the run panel's Dask scheduler (dask only; None: a local cluster);
    ``gap_min``: the run panel's gap rule (None: the store's, else 10)."""
    from engine.primers import pairs

    job = pairs.make_job(target, background, k, settings, variant=selection.variant,
                         backend=selection.backend, parallel=selection.parallel,
                         flags=selection.flags, threads=threads,
                         scheduler=scheduler if selection.backend == "dask" else None,
                         gap_min=gap_min)
    yield PairsStarted(job)
    return (yield from steps(pairs.iter_solve(job, cancel)))


def settings_from(values: dict, conditions=None, bounds=None):
    """:class:`engine.primers.pairs.PairSettings` from the view's fields, the reaction
    conditions and the primer filters' bounds (an :class:`engine.primers.Filters`, a bound
    switched off is None; None: Primer3's defaults), as ``primerscope pairs`` builds them
    from its options. ValueError naming the first bad field in the window's words."""
    from engine.primers import Conditions, pairs, pcr
    from engine.primers.cli_options import design_keywords
    from engine.primers.primer3_design import DesignSettings, Regions, parse_product_ranges

    given = {}
    if bounds is not None:
        given = {f.name: getattr(bounds, f.name) for f in dataclasses.fields(bounds)}
    given.update(tm_opt=values["tm_opt"], max_tm_diff=values["max_tm_diff"],
                 min_three_prime_distance=values["min_three_prime_distance"])
    try:
        keywords = design_keywords(given, conditions or Conditions())
        # Primer3's optimal length (20) inside the bounds: the window shows no field for it.
        keywords["len_opt"] = min(max(keywords["len_opt"], keywords["len_min"]), keywords["len_max"])
        design = DesignSettings(product_ranges=parse_product_ranges(values["product_ranges"]),
                                num_return=values["num_return"], **keywords)
        regions = Regions(tuple(map(tuple, values.get("amplify", ()))),
                          tuple(map(tuple, values.get("exclude", ()))),
                          tuple(values["include"]) if values.get("include") else None)
    except ValueError as err:
        raise ValueError(friendly(str(err))) from None
    return pairs.PairSettings(design, pcr.PcrSettings(max_edits=values["max_edits"]),
                              regions=regions,
                              avoid_masked=bool(values.get("avoid_masked", False)))


def settings_summary(design) -> str:
    """What Primer3 is told, in a line (the Pairs view shows it under its fields)."""
    c = design.conditions

    def bound(value, off, text):
        return "off" if value == off else text

    return (f"Primer3: length {design.len_min}–{design.len_max} nt, Tm {design.tm_min:g}–"
            f"{design.tm_max:g} °C (opt. {design.tm_opt:g}), GC {design.gc_min:g}–{design.gc_max:g} %, "
            f"poly-X ≤ {design.max_poly_x}, GC clamp {design.gc_clamp}, hairpin/dimer Tm ≤ "
            + bound(design.max_hairpin_tm, 1000.0, f"{design.max_hairpin_tm:g} °C")
            + f"; Na⁺ {c.mv_conc:g} mM, Mg²⁺ {c.dv_conc:g} mM, dNTP {c.dntp_conc:g} mM, "
              f"oligo {c.dna_conc:g} nM")


def pair_rows(result) -> list[tuple]:
    """The pair table's rows: the CSV's (``primerscope pairs ... -o OUT.csv``)."""
    from engine.primers import export_pairs

    return list(export_pairs.rows(result))


def product_rows(products) -> list[tuple]:
    from engine.primers.export_pcr import product_dict

    return [tuple(("yes" if value else "") if name == "spans_gap" else value
                  for name, value in product_dict(p, False).items()) for p in products]


def csv_text(result) -> str:
    import io

    from engine.primers import export_pairs

    buf = io.StringIO(newline="")
    export_pairs.write_csv(result, buf)
    return buf.getvalue()


def bed_text(result) -> str:
    from engine.primers import export_pairs

    return export_pairs.bed_text(result)


def records_label(records: Sequence[Record], most: int = 3) -> str:
    """``NC_008253.1:1-1000000`` (the records a job read, in their own numbering)."""
    parts = [f"{short_id(r.id)}:{r.offset + 1}-{r.offset + len(r)}" for r in records[:most]]
    if len(records) > most:
        parts.append(f"and {len(records) - most} more")
    return ", ".join(parts)


def primer_names(pair) -> tuple[str, str]:
    """Names of a pair's primers, as ``pcr``/``panel`` name them when reading a pairs CSV
    (``NC_001416.1_20101F``, ``NC_001416.1_20400R``): stable across designs."""
    from engine.primers.primer_sets import pair_primer_names

    return pair_primer_names(short_id(pair.target_id), pair.left.start, pair.right.end)


def library_entries(pairs, k: int | None, background: str = "") -> list[LibraryEntry]:
    """The primers of these pairs as library entries, each sequence once (a primer shared by
    several pairs is one oligo; :func:`library_links` says which pairs use it), named as
    :func:`panel_primers` names them; forward, then reverse, in pair order."""
    names = dict((seq, name) for name, seq in panel_primers(pairs))
    found: dict[str, tuple] = {}
    for p in pairs:
        for site, orientation in ((p.left, "forward"), (p.right, "reverse")):
            found.setdefault(site.sequence, (p, site, orientation))
    return [LibraryEntry(names[seq], seq, orientation, p.target_id, site.start, site.end, k,
                         background, round(site.tm, 2), round(site.gc_percent, 2))
            for seq, (p, site, orientation) in found.items()]


def library_links(pairs) -> list[tuple[str, str, int]]:
    """(forward sequence, reverse sequence, product size) of each pair: the library's pair
    links (engine.primers.library.Library.store)."""
    return [(p.left.sequence, p.right.sequence, p.product_size) for p in pairs]


def panel_primers(pairs) -> list[tuple[str, str]]:
    """(name, sequence) of every primer of these pairs, each sequence once, for a panel check
    (as ``panel`` reads them from a pairs CSV)."""
    from engine.primers.primer_sets import pair_primers

    return pair_primers((short_id(p.target_id), p.left.start, p.left.sequence, p.right.end,
                         p.right.sequence) for p in pairs)


#: The check report's tables (``primerscope check``'s findings, engine.primers.export_check).
CHECK_SUMMARY_COLUMNS = (
    Column("primer", "str", "", "Primer name"),
    Column("sequence", "str", "", "5′→3′"),
    Column("sites", "int", "", "Places in the background it can prime from (within the PCR "
                               "edits, no edit in its 3′ window)"),
    Column("products", "int", "", "In-silico PCR products it takes part in"),
    Column("3′ dimers", "int", "", "Primers (itself included) whose 3′-end dimer with it is at or "
                                  "below −5 kcal/mol"),
    Column("strongest dimer with", "str", "", "The primer it forms its most stable dimer with"),
    Column("dimer ΔG (kcal/mol)", "float", "", "ΔG of that dimer at 37 °C"),
)
CHECK_SITE_COLUMNS = (
    Column("primer", "str", "", "Primer name"),
    Column("record", "str", "", "Background record"),
    Column("strand", "str", "", "+: the primer reads along the forward strand"),
    Column("start", "int", "start", "First base of the site (1-based, forward strand)"),
    Column("end", "int", "end", "Last base of the site"),
    Column("edits", "int", "", "Edits between the primer and the site"),
    Column("3′ edits", "int", "", "Edits in the primer's 3′ window"),
)
CHECK_DIMER_COLUMNS = (
    Column("primer A", "str", "", "First primer"),
    Column("primer B", "str", "", "Second primer (the same one: its self-dimer)"),
    Column("dimer ΔG (kcal/mol)", "float", "", "Heterodimer ΔG at 37 °C (0: no structure)"),
    Column("dimer Tm (°C)", "float", "", "Heterodimer Tm (0: no structure)"),
    Column("3′ ΔG A on B", "float", "", "ΔG of A's 3′ end on B (kcal/mol)"),
    Column("3′ ΔG B on A", "float", "", "ΔG of B's 3′ end on A (kcal/mol)"),
    Column("3′-end dimer", "str", "", "yes: either 3′ end binds at or below −5 kcal/mol"),
    Column("products", "int", "", "In-silico PCR products of the two"),
)


def check_run(primers, background, settings, backend, threads, cancel: CancelToken,
              scheduler: str | None = None) -> Generator:
    """The primer check of the Pairs view (``primerscope check``'s job: the panel check with
    a background) on the worker thread; returns its PanelResult."""
    from engine.primers import panel

    job = panel.make_job(primers, background, settings, backend=backend, threads=threads,
                         scheduler=scheduler)
    return (yield from steps(panel.iter_solve(job, cancel)))


def check_tables(result) -> dict:
    """Rows of each table of the check report, from the command line's writers."""
    from engine.primers import export_check, export_panel

    summary = [tuple(row[f] for f in export_check.SUMMARY_FIELDS) for row in export_check.summary(result)]
    sites = [tuple(s[f] for f in ("primer", "record", "strand", "start", "end", "edits", "edits_3prime"))
             for s in export_check.site_dicts(result)]
    dimers = [(d["primer_a"], d["primer_b"], d["dimer_dg"], d["dimer_tm"], d["end_dg_ab"],
               d["end_dg_ba"], "yes" if d["end_dimer"] else "", d["products"])
              for d in export_panel.pair_rows(result)]
    return {"summary": summary, "sites": sites, "products": product_rows(result.products),
            "dimers": dimers}


def check_csv_text(result) -> str:
    import io

    from engine.primers import export_check

    buf = io.StringIO(newline="")
    export_check.write_csv(result, buf)
    return buf.getvalue()
