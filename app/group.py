"""Group-specific primers in the GUI, without Qt: the job the Group page runs and its read-outs.

The job is :mod:`engine.primers.group` (``make_job`` over the inclusion and exclusion files,
its ``iter_solve``) on the worker thread, as ``primerscope group`` runs it; the files the page
writes come from the engine's writers (CSV, BED, ``to_json``), so the page writes what the
command line writes.
"""

from __future__ import annotations

import io
import json
import math
from dataclasses import dataclass
from typing import Generator, Sequence

from engine.jobs import CancelToken, Job
from engine.primers.library import LibraryEntry

from app.families import Column
from app.primer3_guard import steps
from app.primers import short_id

#: The ranked pairs table (reference coordinates, as the CSV).
PAIR_COLUMNS = (
    Column("rank", "int", "", "Rank by Primer3's pair penalty on the reference (1: best)"),
    Column("penalty", "float", "", "Primer3's pair penalty on the reference (lower is better)"),
    Column("coverage %", "float", "", "Inclusion genomes with a product in the size range"),
    Column("product", "int", "length", "Product size on the reference (bp)"),
    Column("sizes", "str", "", "Smallest–largest product over the inclusion genomes (bp)"),
    Column("forward", "str", "", "Forward (left) primer, 5′→3′"),
    Column("F start", "int", "start", "First base of the forward primer's site on the reference"),
    Column("F Tm", "float", "", "Forward primer Tm (°C, Primer3)"),
    Column("reverse", "str", "", "Reverse (right) primer as ordered, 5′→3′"),
    Column("R end", "int", "end", "Last base of the reverse primer's site on the reference: "
                                  "its 5′ end"),
    Column("R Tm", "float", "", "Reverse primer Tm (°C, Primer3)"),
    Column("record", "str", "", "Reference record"),
    Column("missing in", "str", "", "Inclusion genomes without a product"),
)


@dataclass(frozen=True)
class GroupStarted:
    """First item of a group run: the job as the engine validated it (genomes loaded)."""

    job: Job


def group_run(include: Sequence[str], exclude: Sequence[str], k: int, settings,
              threads: int | None, cancel: CancelToken, backend: str | None = None) -> Generator:
    """Build the group job (on the worker thread: it reads the genomes and imports numba),
    yield :class:`GroupStarted`, then the job's Progress; return its GroupResult (the pairs
    verified so far after a cancel)."""
    from engine.primers import group

    job = group.make_job(list(include), list(exclude), k, settings, backend=backend,
                         threads=threads)
    yield GroupStarted(job)
    return (yield from steps(group.iter_solve(job, cancel)))


def parse_size_range(text: str) -> tuple[int, int]:
    """``"100-300"`` -> (100, 300); ValueError in the page's words."""
    parts = text.replace("–", "-").split("-")
    try:
        lo, hi = (int(p.strip()) for p in parts)
    except ValueError:
        raise ValueError(f"Product size: give a range A-B in bp (e.g. 100-300), not {text!r}.") \
            from None
    if not 1 <= lo <= hi:
        raise ValueError(f"Product size: {lo}-{hi} is not a range 1 <= A <= B.")
    return lo, hi


def settings_from(values: dict, pair_settings=None):
    """:class:`engine.primers.group.GroupSettings` from the page's fields (``reference``: a
    genome name, or '' for the first); ``pair_settings`` Primer3's (None: the defaults of
    ``primerscope group``). ValueError naming the first bad field."""
    from engine.primers.group import GroupSettings
    from engine.primers.pairs import PairSettings

    try:
        return GroupSettings(include_edits=values["include_edits"],
                             include_3prime_exact=values["include_3prime_exact"],
                             min_coverage=values["min_coverage"],
                             product_size=parse_size_range(values["product_size"]),
                             num_return=values["num_return"],
                             reference=values.get("reference") or None,
                             pairs=pair_settings or PairSettings())
    except ValueError as err:
        raise ValueError(str(err)) from None


def size_span(pair) -> str:
    sizes = [q.size for q in pair.products if q is not None]
    if not sizes:
        return ""
    lo, hi = min(sizes), max(sizes)
    return f"{lo}" if lo == hi else f"{lo}–{hi}"


def pair_rows(result) -> list[tuple]:
    """The pairs table's rows, best first."""
    rows = []
    for rank, p in enumerate(result.pairs, start=1):
        missing = [g for g, q in zip(result.genomes, p.products) if q is None]
        rows.append((rank, round(p.penalty, 3), round(100 * p.coverage, 1), p.product_size,
                     size_span(p), p.left.sequence, p.left.start, round(p.left.tm, 2),
                     p.right.sequence, p.right.end, round(p.right.tm, 2), short_id(p.record),
                     ", ".join(missing)))
    return rows


def product_text(genome: str, product) -> str:
    """A coverage cell's read-out (its tooltip)."""
    if product is None:
        return f"{genome}: no product in the size range (missing)"
    return (f"{genome}: {short_id(product.record)} {product.start:,}–{product.end:,}, "
            f"{product.size} bp; forward {product.left_edits} edit"
            f"{'s' if product.left_edits != 1 else ''}, reverse {product.right_edits} edit"
            f"{'s' if product.right_edits != 1 else ''}")


def size_fraction(size: int, size_range: tuple[int, int]) -> float:
    """Where a product size lies in the product size range, 0..1 (the matrix's colour)."""
    lo, hi = size_range
    return 0.5 if hi <= lo else min(1.0, max(0.0, (size - lo) / (hi - lo)))


def seconds_text(seconds: float) -> str:
    """A run's or a stage's time as people read it: 0.52 s, 12 s, 4 min 02 s (a real
    genome's stages take minutes: not "2.4e+02 s")."""
    if seconds < 10:
        return f"{seconds:.2g} s"
    if seconds < 100:
        return f"{seconds:.0f} s"
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes} min {rest:02d} s"


def summary(result) -> str:
    """One line for the status: pairs, coverage, time per stage; the diagnosis when none."""
    n = len(result.pairs)
    stages = ", ".join(f"{name} {seconds_text(sec)}" for name, sec in
                       result.stage_seconds.items())
    seconds = seconds_text(result.info.seconds)
    what = (f"{len(result.genomes)} inclusion genome{'s' if len(result.genomes) != 1 else ''}, "
            f"{len(result.exclusions)} exclusion; reference {result.reference}")
    if not result.complete:
        return (f"Cancelled after {seconds}: kept the {n} pair{'s' if n != 1 else ''} "
                f"verified so far ({what}).")
    if n == 0:
        why = " ".join(result.diagnosis) or "no pair qualified"
        return f"No group pair at k = {result.k}: {why} ({seconds})."
    full = sum(1 for p in result.pairs if math.isclose(p.coverage, 1.0))
    return (f"{n} group pair{'s' if n != 1 else ''} at k = {result.k}, J = "
            f"{result.settings.include_edits}; {full} cover every genome ({what}). "
            f"{seconds}" + (f": {stages}" if stages else "") + ".")


def csv_text(result) -> str:
    """``primerscope group ... -o OUT.csv``."""
    from engine.primers import group

    buf = io.StringIO(newline="")
    group.write_csv(result, buf)
    return buf.getvalue()


def bed_text(result) -> str:
    from engine.primers import group

    buf = io.StringIO(newline="")
    group.write_bed(result, buf)
    return buf.getvalue()


def json_text(result) -> str:
    """``primerscope group ... --json``."""
    return json.dumps(result.to_json(), indent=2) + "\n"


def library_entries(result, pairs) -> list[LibraryEntry]:
    """The primers of these pairs as library entries, each sequence once, named as ``pairs``
    names a design's primers (``RECORD_STARTF``, ``RECORD_ENDR``); the background is the
    exclusion set."""
    from engine.primers.primer_sets import pair_primers

    names = dict((seq, name) for name, seq in pair_primers(
        (short_id(p.record), p.left.start, p.left.sequence, p.right.end, p.right.sequence)
        for p in pairs))
    background = "group exclusion: " + ", ".join(result.exclusions)
    found: dict[str, tuple] = {}
    for p in pairs:
        for site, orientation in ((p.left, "forward"), (p.right, "reverse")):
            found.setdefault(site.sequence, (p, site, orientation))
    return [LibraryEntry(names[seq], seq, orientation, p.record, site.start, site.end, result.k,
                         background, round(site.tm, 2), round(site.gc_percent, 2),
                         notes=f"group pair, coverage {p.coverage:.0%} of {len(result.genomes)}")
            for seq, (p, site, orientation) in found.items()]


def library_links(pairs) -> list[tuple[str, str, int]]:
    """(forward, reverse, product size on the reference) of each pair: the library's links."""
    return [(p.left.sequence, p.right.sequence, p.product_size) for p in pairs]
