"""The generators the worker thread runs: one job, a comparison of backends, any call.

They are plain generators (no Qt), so tests can run them without a thread, and
they are built to start on the worker thread: building a job imports the
family's engine package (and numba), which must not stall the GUI.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Generator, Mapping, Sequence

import engine
from engine import registry
from engine.jobs import CancelToken, Job, Progress
from engine.sequences import Record

from app.families import FamilyAdapter, RunChoice


@dataclass(frozen=True)
class JobStarted:
    """First item of a run: the job as the engine validated it."""

    job: Job


def run_job(adapter: FamilyAdapter, inputs: Mapping[str, Sequence[Record]], choice: RunChoice,
            cancel: CancelToken) -> Generator:
    """Build the job, then pass on every Progress of ``engine.iter_solve``; return its result."""
    job = adapter.make_job(inputs, choice)
    if adapter.wants_snapshots and not job.snapshots:
        job = replace(job, snapshots=True)
    yield JobStarted(job)
    return (yield from engine.iter_solve(job, cancel))


@dataclass(frozen=True)
class CompareStep:
    """Progress of a comparison: run ``index`` of ``total`` (``label``) and its progress."""

    index: int
    total: int
    label: str
    progress: Progress | None
    finished: "CompareRow | None" = None


@dataclass(frozen=True)
class CompareRow:
    label: str
    variant: str
    backend: str
    parallel: str | None
    seconds: float
    cells: int
    complete: bool
    agrees: bool | None  # with the first complete run; None for the first


def combinations(fam: registry.FamilySpec, params=None) -> list[registry.Selection]:
    """Every variant x available backend x parallel form, with the backend's default flags;
    with ``params``, only backends that take them (registry.backend_refusal)."""
    out = []
    for variant in fam.variants:
        for bspec in variant.backends:
            if not registry.backend_status(bspec.name)[0]:
                continue
            if params is not None and registry.backend_refusal(fam, variant.name, bspec.name,
                                                               params):
                continue
            for form in bspec.parallel or (None,):
                out.append(registry.resolve(fam, variant.name, bspec.name, form, None))
    return out


def selection_label(sel: registry.Selection) -> str:
    label = f"{sel.variant}/{sel.backend}" + (f"/{sel.parallel}" if sel.parallel else "")
    return label + "".join("+" + f for f in sorted(sel.flags))


def compare_backends(adapter: FamilyAdapter, inputs: Mapping[str, Sequence[Record]],
                     choice: RunChoice, cancel: CancelToken) -> Generator:
    """Run the same job on every available variant/backend; return the list of CompareRow.

    Times are the engine's solve times (kernel compilation excluded), so the
    first run of a kernel is not penalised. Every answer is checked against the
    first complete one: variants that disagree have a bug.
    """
    selections = combinations(adapter.spec, choice.params)
    rows: list[CompareRow] = []
    reference = None
    for index, sel in enumerate(selections):
        if cancel.cancelled:
            break
        label = selection_label(sel)
        yield CompareStep(index, len(selections), label, None)
        job_choice = replace(choice, selection=sel,
                             threads=choice.threads if sel.backend != "serial" else None)
        job = adapter.make_job(inputs, job_choice)
        gen = engine.iter_solve(job, cancel)
        while True:
            try:
                progress = next(gen)
            except StopIteration as stop:
                result = stop.value
                break
            yield CompareStep(index, len(selections), label, progress)
        info = result.info
        agrees = None
        if info.complete:
            key = adapter.answer_key(result)
            if reference is None:
                reference = key
            else:
                agrees = key == reference
        row = CompareRow(label, sel.variant, sel.backend, sel.parallel, info.seconds, info.cells,
                         info.complete, agrees)
        rows.append(row)
        yield CompareStep(index, len(selections), label, None, finished=row)
    return rows


def call(function) -> Generator:
    """Run ``function()`` on the worker thread and return its value (loading files: E. coli
    takes most of a second to read)."""
    return (yield from _returning(function))


def _returning(function):
    return function()
    yield  # a generator that yields nothing: the worker only sees its return value
