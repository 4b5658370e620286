"""The multiplex panel check in the GUI, without Qt: the job the Panel view runs and its read-outs.

The job is :mod:`engine.primers.panel` (every heterodimer by primer3-py, the 3′-end dimers
and, with a background, the in-silico PCR of the whole set), run as its own ``iter_solve``
on the worker thread; files are written by :mod:`engine.primers.export_panel`, the command
line's writers.
"""

from __future__ import annotations

import io
import math
from dataclasses import dataclass
from typing import Generator

from engine.jobs import CancelToken, Job
from engine.sequences import Record, encode

from app.primer3_guard import steps

#: The matrices the heatmap can show: key -> (menu text, the result's attribute, unit, short name).
MATRICES = {
    "dg": ("Heterodimer ΔG", "dimer_dg", "kcal/mol", "ΔG"),
    "tm": ("Heterodimer Tm", "dimer_tm", "°C", "Tm"),
    "end": ("3′-end ΔG (row's 3′ end on the column)", "end_dg", "kcal/mol", "3′ ΔG"),
}


@dataclass(frozen=True)
class PanelStarted:
    """First item of a panel check: the job as the engine validated it."""

    job: Job


@dataclass(frozen=True)
class PanelRequest:
    """What to check: primers (name, sequence), where they came from, and a background."""

    primers: tuple[tuple[str, str], ...]
    source: str
    background: tuple[Record, ...] = ()
    background_label: str = ""


def check_run(request: PanelRequest, backend: str | None, threads: int | None,
              cancel: CancelToken, scheduler: str | None = None) -> Generator:
    """Build the panel job on the worker thread, yield :class:`PanelStarted`, then its
    Progress; return the :class:`engine.primers.panel.PanelResult` (``scheduler``: the dask
    backend's cluster, for the cross-products)."""
    from engine.primers import panel

    records = [Record(name, encode(seq, source="panel", record_id=name), "", "panel")
               for name, seq in request.primers]
    job = panel.make_job(records, request.background, backend=backend, threads=threads,
                         scheduler=scheduler)
    yield PanelStarted(job)
    return (yield from steps(panel.iter_solve(job, cancel)))


def _value(v, unit: str) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "–"
    return f"{v:.2f} {unit}"


def cell_text(result, i: int, j: int) -> str:
    """The hover read-out of one cell: both primers, ΔG, Tm, both 3′ ends, flag, products."""
    names = [n for n, _ in result.primers]
    a, b = names[i], names[j]
    pair = "itself" if i == j else b
    text = (f"{a} × {pair}: heterodimer ΔG {_value(result.dimer_dg[i, j], 'kcal/mol')}, "
            f"Tm {_value(result.dimer_tm[i, j], '°C')}; 3′ end of {a} on {b}: "
            f"{_value(result.end_dg[i, j], 'kcal/mol')}")
    if i != j:
        text += f", of {b} on {a}: {_value(result.end_dg[j, i], 'kcal/mol')}"
    if result.end_dimer[i, j]:
        text += f" — 3′-end dimer (ΔG ≤ {result.settings.end_dimer_dg:g} kcal/mol)"
    if result.has_background:
        n = len(result.products_between(a, b))
        text += f"; {n} product{'s' if n != 1 else ''} in the background"
    return text


def summary(result) -> str:
    n = len(result.primers)
    flagged = int(sum(result.end_dimer[i, j] for i in range(n) for j in range(i, n)))
    text = (f"{n} primers, {n * (n + 1) // 2} pairs (each primer with itself included): "
            f"{flagged} 3′-end dimer{'s' if flagged != 1 else ''}")
    if result.has_background:
        cross = sum(1 for p in result.products if p.forward != p.reverse)
        text += (f"; {len(result.products)} in-silico PCR product{'s' if len(result.products) != 1 else ''}"
                 f" in the background, {cross} between two different primers")
    if not result.info.complete:
        text = "Cancelled: " + text + " (so far)"
    return text + "."


def csv_text(result, matrix: str | None = None) -> str:
    """``primerscope panel ... -o OUT.csv`` (``matrix``: ``--matrix dg|tm|end``)."""
    from engine.primers import export_panel

    buf = io.StringIO(newline="")
    export_panel.write_csv(result, buf, matrix=matrix)
    return buf.getvalue()

