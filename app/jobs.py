"""The generators the worker thread runs: one job, a comparison of backends, any call.

They are plain generators (no Qt), so tests can run them without a thread, and
they are built to start on the worker thread: building a job imports the
family's engine package (and numba), which must not stall the GUI.
"""

from __future__ import annotations

import math
import threading
import time
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
    skipped: float | None = None  # not run: its probe's estimate (seconds; inf: unknown)


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


#: Solve seconds each run is probed for before a comparison commits to it.
PROBE_SECONDS = 0.4
#: Wall seconds after which a probe stops waiting for its first slice (that slowness is the
#: verdict: the run is estimated unknown, i.e. pathological), and the allowance on top of it
#: for a probe that compiles its kernels first.
PROBE_WALL_S = 6.0
PROBE_COMPILE_ALLOWANCE_S = 240.0


@dataclass(frozen=True)
class Probe:
    """A short run of one selection: its label and the seconds the whole run should take
    (inf when not even one slice ended within the probe's time)."""

    label: str
    selection: registry.Selection
    estimate: float


def _choice_for(choice: RunChoice, sel: registry.Selection) -> RunChoice:
    return replace(choice, selection=sel, threads=choice.threads if sel.backend != "serial" else None)


class _Deadline:
    """Cancels ``token`` when ``outer`` is cancelled or the deadline passes (a thread that
    watches both; a kernel polls the token inside its slice)."""

    def __init__(self, token: CancelToken, outer: CancelToken, seconds: float):
        self.token, self.outer = token, outer
        self.deadline = time.perf_counter() + seconds
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._watch, daemon=True)
        self.thread.start()

    def extend(self, seconds: float) -> None:
        self.deadline = time.perf_counter() + seconds

    def _watch(self) -> None:
        while not self.stop.wait(0.05):
            if self.outer.cancelled or time.perf_counter() > self.deadline:
                self.token.cancel()
                return

    def close(self) -> None:
        self.stop.set()
        self.thread.join()


def probe_backends(adapter: FamilyAdapter, inputs: Mapping[str, Sequence[Record]],
                   choice: RunChoice, cancel: CancelToken,
                   selections: Sequence[registry.Selection] | None = None) -> Generator:
    """Run each selection for about :data:`PROBE_SECONDS` of solve time and extrapolate its
    whole run from the fraction done (compiling excluded); return the list of :class:`Probe`.

    Yields CompareStep items (``label`` prefixed "probing") with the probe's progress."""
    selections = list(selections or combinations(adapter.spec, choice.params))
    probes: list[Probe] = []
    for index, sel in enumerate(selections):
        if cancel.cancelled:
            break
        label = selection_label(sel)
        yield CompareStep(index, len(selections), f"probing {label}", None)
        job = adapter.make_job(inputs, _choice_for(choice, sel))
        token = CancelToken()
        watch = _Deadline(token, cancel, PROBE_WALL_S)
        last = None
        try:
            gen = engine.iter_solve(job, token)
            while True:
                try:
                    progress = next(gen)
                except StopIteration as stop:
                    result = stop.value
                    break
                if progress.phase == "compiling":
                    watch.extend(PROBE_WALL_S + PROBE_COMPILE_ALLOWANCE_S)
                else:
                    last = progress
                    watch.extend(PROBE_WALL_S)
                    if progress.elapsed >= PROBE_SECONDS and 0 < progress.fraction < 1:
                        token.cancel()
                yield CompareStep(index, len(selections), f"probing {label}", progress)
        finally:
            watch.close()
        if result.info.complete:
            estimate = result.info.seconds
        elif last is not None and last.fraction > 0:
            estimate = last.elapsed / last.fraction
        else:
            estimate = math.inf
        probes.append(Probe(label, sel, estimate))
    return probes


def compare_backends(adapter: FamilyAdapter, inputs: Mapping[str, Sequence[Record]],
                     choice: RunChoice, cancel: CancelToken,
                     selections: Sequence[registry.Selection] | None = None) -> Generator:
    """Run the same job on every available variant/backend (or on ``selections``); return the
    list of CompareRow.

    Times are the engine's solve times (kernel compilation excluded), so the
    first run of a kernel is not penalised. Every answer is checked against the
    first complete one: variants that disagree have a bug.
    """
    selections = list(selections if selections is not None else combinations(adapter.spec, choice.params))
    rows: list[CompareRow] = []
    reference = None
    for index, sel in enumerate(selections):
        if cancel.cancelled:
            break
        label = selection_label(sel)
        yield CompareStep(index, len(selections), label, None)
        job = adapter.make_job(inputs, _choice_for(choice, sel))
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
