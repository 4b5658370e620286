"""Pair design in the GUI, without Qt: the job the Pairs view runs and what its tables show.

The job is :mod:`engine.primers.pairs` (kdiff on both orientations of the target, Primer3's
choice and ranking, the in-silico PCR of each pair), run as its own ``iter_solve`` on the
worker thread; the pair table's rows are the CSV's (:func:`engine.primers.export_pairs.rows`)
and the products table's are :mod:`engine.primers.export_pcr`'s, so the GUI shows and
writes what ``primerscope pairs`` writes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generator, Sequence

from engine.jobs import CancelToken, Job
from engine.primers.library import LibraryEntry
from engine.sequences import Record

from app.families import Column
from app.primer3_guard import steps
from app.primers import short_id

#: The pair table, in the order of ``engine.primers.export_pairs.COLUMNS`` (the CSV's).
PAIR_COLUMNS = (
    Column("target", "str", "", "Target record"),
    Column("rank", "int", "", "Rank by Primer3's pair penalty (1: best)"),
    Column("penalty", "float", "", "Primer3's pair penalty (lower is better)"),
    Column("product", "int", "length", "Product size in the target (bp)"),
    Column("forward", "str", "", "Forward (left) primer, 5′→3′"),
    Column("F start", "int", "start", "First base of the forward primer's site (1-based)"),
    Column("F end", "int", "", "Last base of the forward primer's site"),
    Column("F Tm", "float", "", "Forward primer Tm (°C, Primer3)"),
    Column("F GC %", "float", "", "Forward primer GC content (%)"),
    Column("reverse", "str", "", "Reverse (right) primer as ordered, 5′→3′"),
    Column("R start", "int", "", "First base of the reverse primer's site (target coordinates)"),
    Column("R end", "int", "end", "Last base of the reverse primer's site: its 5′ end"),
    Column("R Tm", "float", "", "Reverse primer Tm (°C, Primer3)"),
    Column("R GC %", "float", "", "Reverse primer GC content (%)"),
    Column("compl. any Tm", "float", "", "Primer3: Tm of the most stable dimer of the two primers"),
    Column("compl. 3′ Tm", "float", "", "Primer3: Tm of the most stable 3′-anchored dimer"),
    Column("product Tm", "float", "", "Primer3: Tm of the product"),
    Column("off-target", "int", "", "Products of this pair in the background (in-silico PCR)"),
    Column("closest record", "str", "", "The closest off-target product (fewest edits, then "
                                        "fewest 3′ edits, then shortest): its record"),
    Column("closest start", "int", "", "Closest off-target product: first base"),
    Column("closest end", "int", "", "Closest off-target product: last base"),
    Column("closest length", "int", "", "Closest off-target product: length (bp)"),
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
    Column("length", "int", "length", "Product length (bp)"),
    Column("F edits", "int", "", "Edits of the forward site"),
    Column("R edits", "int", "", "Edits of the reverse site"),
    Column("F 3′ edits", "int", "", "Edits in the forward primer's 3′ window"),
    Column("R 3′ edits", "int", "", "Edits in the reverse primer's 3′ window"),
    Column("spans gap", "str", "", "The product holds an assembly gap (a run of N): its sites "
                                   "lie on both sides of it, so its true length is unknown"),
)


#: Primer3's listing of a record's primers holds the GIL for the whole call (primer3-py runs
#: ``choose_primers`` without releasing it): about a second for 2 kb on one core, growing a
#: little faster than the length. Above this many seconds the view asks first.
LONG_PAUSE_S = 10.0


def primer3_pause(length: int) -> float:
    """Seconds the window would not respond while Primer3 lists a record of ``length`` bp."""
    return 1.0 * (max(length, 0) / 2000) ** 1.27


@dataclass(frozen=True)
class PairsStarted:
    """First item of a pair design: the job as the engine validated it."""

    job: Job


def design_run(target: Sequence[Record], background: Sequence[Record], k: int, settings,
               selection, threads: int | None, cancel: CancelToken,
               scheduler: str | None = None) -> Generator:
    """Build the pair design job (on the worker thread: it imports numba), yield
    :class:`PairsStarted`, then the job's Progress; return its :class:`PairsResult`.
    ``scheduler``: the run panel's Dask scheduler (dask only; None: a local cluster)."""
    from engine.primers import pairs

    job = pairs.make_job(target, background, k, settings, variant=selection.variant,
                         backend=selection.backend, parallel=selection.parallel,
                         flags=selection.flags, threads=threads,
                         scheduler=scheduler if selection.backend == "dask" else None)
    yield PairsStarted(job)
    return (yield from steps(pairs.iter_solve(job, cancel)))


def settings_from(values: dict):
    """:class:`engine.primers.pairs.PairSettings` from the view's fields (ValueError naming
    the first bad one, as the engine says it)."""
    from engine.primers import pairs, pcr
    from engine.primers.primer3_design import DesignSettings, parse_product_ranges

    design = DesignSettings(product_ranges=parse_product_ranges(values["product_ranges"]),
                            tm_min=values["tm_min"], tm_opt=values["tm_opt"], tm_max=values["tm_max"],
                            max_tm_diff=values["max_tm_diff"], num_return=values["num_return"])
    return pairs.PairSettings(design, pcr.PcrSettings(max_edits=values["max_edits"]),
                              avoid_masked=bool(values.get("avoid_masked", False)))


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
    """Names of a pair's primers: the target and the 5′ end's position, F or R
    (``NC_001416.1_20101F``, ``NC_001416.1_20400R``): stable across designs."""
    target = short_id(pair.target_id)
    return f"{target}_{pair.left.start}F", f"{target}_{pair.right.end}R"


def library_entries(pairs, k: int | None, background: str = "") -> list[LibraryEntry]:
    """Both primers of each pair as library entries (forward, then reverse)."""
    out = []
    for p in pairs:
        names = primer_names(p)
        for name, site, orientation in ((names[0], p.left, "forward"), (names[1], p.right, "reverse")):
            out.append(LibraryEntry(name, site.sequence, orientation, p.target_id, site.start,
                                    site.end, k, background, round(site.tm, 2),
                                    round(site.gc_percent, 2),
                                    notes=f"pair {p.rank} ({p.product_size} bp)"))
    return out


def panel_primers(pairs) -> list[tuple[str, str]]:
    """(name, sequence) of every primer of these pairs, each once, for a panel check."""
    out: dict[str, str] = {}
    for p in pairs:
        names = primer_names(p)
        out.setdefault(names[0], p.left.sequence)
        out.setdefault(names[1], p.right.sequence)
    return list(out.items())
