"""The run controller: Run, Compare backends and Cancel, as one state machine.

States: ``idle`` -> ``running`` | ``comparing`` -> ``idle`` (Cancel only shortens the way
back). The job runs on a worker thread (:class:`app.worker.JobRunner`); the controller keeps
the newest Progress and draws it at about 30 Hz into the status bar, the results table and
the *run views* (every view but the compare view). Each family keeps its last outcome
(result and status), shown again when the user comes back to it.

Work that follows a run (primer annotations, the closest match of a selected candidate, an
off-target search) runs on the views' own runners; :meth:`RunController.busy` counts them
and :meth:`RunController.shutdown` stops them, and a runner that has been shut down never
starts again, so nothing starts once the window is closing.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field, replace

from PySide6.QtCore import QObject, QTimer, Signal

from engine import registry
from engine.jobs import Progress

from app.jobs import (PROBE_WALL_S, CompareRow, CompareStep, JobStarted, compare_backends,
                      probe_backends, run_job)
from app.settings import load_json, save_json
from app.views.plotting import si
from app.warmup import COMPILING, CompileClock
from app.worker import JobRunner

DRAW_INTERVAL_MS = 33  # ~30 Hz
TABLE_INTERVAL_S = 0.25  # rows join the table at most 4 times a second while a job runs
#: A run estimated to take longer than this is announced, with cheaper settings, before it starts.
LONG_RUN_S = 180.0
#: A compared run estimated (by its probe) this many times slower than the fastest form of its
#: variant, and past SLOW_RUN_S, is offered to be skipped (the kdiff demo's conventional fine
#: form: 514 s against 3.9 s serial; probed on 2 busy cores, 36,000 s against 61 s).
SLOW_FACTOR = 20.0
SLOW_RUN_S = 30.0
#: Work units (see ``FamilyAdapter.work``) per second per thread before a run has been measured.
FALLBACK_RATE = {"serial": 1.5e8, "multicore": 1.5e8, "cuda": 1.5e10}


def format_duration(seconds: float) -> str:
    seconds = max(0, int(round(seconds)))
    if seconds < 60:
        return f"{seconds} s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes}:{seconds:02d}"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{seconds:02d}"


@dataclass
class Outcome:
    """A family's last run as the window shows it (kept while another family is viewed)."""

    columns: tuple = ()
    job: object = None
    result: object = None
    status: str = "Ready."
    summary: str = ""
    compare_rows: list = field(default_factory=list)


class RunController(QObject):
    """Signals ``run_finished(result)``, ``run_failed(str)``, ``compare_finished(rows)`` and
    ``state_changed()`` (mode or cancel state; the window updates its actions)."""

    run_finished = Signal(object)
    run_failed = Signal(str)
    compare_finished = Signal(object)
    state_changed = Signal()

    def __init__(self, host):
        super().__init__(host)
        self.host = host
        self.runner = JobRunner(self)
        self.runner.progress.connect(self._on_progress)
        self.runner.finished.connect(self._on_finished)
        self.runner.failed.connect(self._on_failed)
        self.mode = "idle"  # idle | running | comparing
        self.closing = False
        self.outcomes: dict[str, Outcome] = {}
        self.cancel_latency: float | None = None
        self._latest: Progress | None = None
        self._dirty = False
        self._started_at = 0.0
        self._cancel_at: float | None = None
        self._compare_step: CompareStep | None = None
        self._compare_plan: list[float] = []
        self._compare_phase = ""  # "probing" | "running" while comparing
        self._compare_skipped: list = []
        self._compare_choice = self._compare_inputs = None
        self._table_at = 0.0
        self.compile_clock = CompileClock()
        self._draw_timer = QTimer(self)
        self._draw_timer.setInterval(DRAW_INTERVAL_MS)
        self._draw_timer.timeout.connect(self._draw)

    # -- what the window asks ------------------------------------------------------------------
    @property
    def outcome(self) -> Outcome:
        return self.outcomes.setdefault(self.host.params.family, Outcome())

    @property
    def job(self):
        return self.outcome.job

    @property
    def result(self):
        return self.outcome.result

    @property
    def cancelling(self) -> bool:
        return self._cancel_at is not None

    def busy(self) -> list[str]:
        """What is still working: the run, and work that follows it in the views."""
        out = []
        if self.runner.running:
            out.append("the comparison of backends" if self.mode == "comparing" else "the run")
        for name, runner in self.host.followup_runners():
            if runner.running:
                out.append(name)
        return out

    # -- starting --------------------------------------------------------------------------------
    def _prepare(self):
        missing = self.host.missing_input()
        if missing:
            self.host.show_error("Inputs missing", missing)
            return None
        try:
            return self.host.params.choice()
        except ValueError as err:
            self.host.show_error("Invalid parameters", str(err))
            return None

    def run(self) -> bool:
        """Start the job the panels describe. False if it could not (or should not) start."""
        if self.mode != "idle" or self.closing:
            return False
        choice = self._prepare()
        if choice is None:
            return False
        adapter, inputs = self.host.adapter, self.host.inputs()
        if not self._confirm_cost([self.estimate(choice, inputs)], choice):
            return False
        self._begin("running")
        outcome = self.outcome
        outcome.job = outcome.result = None
        outcome.columns = adapter.table_columns(choice.params)
        outcome.status, outcome.summary = "Starting…", ""
        for view in self.host.run_views():
            view.reset(None)
        self.host.results.set_columns(outcome.columns)
        self.host.results.set_summary("")
        self.host.state_label.setText(outcome.status)
        self.host.refresh_pages()
        self.runner.start(lambda token: run_job(adapter, inputs, choice, token))
        return True

    def compare(self) -> bool:
        """Compare backends: first probe every variant/backend for a moment (the estimates of
        the whole runs), then ask about slow ones, then run the chosen ones."""
        if self.mode != "idle" or self.closing:
            return False
        choice = self._prepare()
        if choice is None:
            return False
        adapter, inputs = self.host.adapter, self.host.inputs()
        self._compare_choice, self._compare_inputs = choice, inputs
        self._compare_phase = "probing"
        self._compare_plan = []
        self._compare_skipped: list[CompareRow] = []
        self._begin("comparing")
        self.outcome.compare_rows = []
        self.host.compare_view.reset(None)
        self.host.compare_view.set_running("Probing each variant and backend for a moment to "
                                           "estimate its run…")
        self.host.throughput.reset(None)
        self.host.show_view(self.host.compare_view)
        self.host.refresh_pages()
        self.runner.start(lambda token: probe_backends(adapter, inputs, choice, token))
        return True

    def _after_probes(self, probes) -> None:
        """The probes are in: skip or ask about the slow runs, then compare the others."""
        if self._cancel_at is not None or not probes:
            self._finish_compare([])
            return
        chosen = self._choose_runs(probes)
        if chosen is None:
            self._finish_compare([])
            return
        self._compare_skipped = [
            CompareRow(p.label, p.selection.variant, p.selection.backend, p.selection.parallel,
                       0.0, 0, False, None, skipped=p.estimate) for p in probes if p not in chosen]
        self._compare_plan = [p.estimate for p in chosen]
        self._compare_phase = "running"
        self._compare_step = None
        self.host.compare_view.set_running(
            f"Comparing {len(chosen)} runs (about {format_duration(sum(self._compare_plan))}, "
            "from short probes of each)…")
        adapter, inputs, choice = self.host.adapter, self._compare_inputs, self._compare_choice
        selections = [p.selection for p in chosen]
        self._compare_selections = selections
        self.runner.start(lambda token: compare_backends(adapter, inputs, choice, token, selections))

    def _choose_runs(self, probes) -> list | None:
        """The probes to run: all, or without the pathological ones (asked when there are
        some, or when the whole is long); None: the user cancelled."""
        fastest: dict[str, float] = {}  # per variant: the other forms of the same algorithm
        for p in probes:
            fastest[p.selection.variant] = min(fastest.get(p.selection.variant, float("inf")),
                                               p.estimate)
        slow = [p for p in probes if p.estimate == float("inf")
                or (p.estimate > SLOW_FACTOR * fastest[p.selection.variant]
                    and p.estimate > SLOW_RUN_S)]
        quick = [p for p in probes if p not in slow]
        total_all = sum(p.estimate for p in probes)
        total_quick = sum(p.estimate for p in quick)
        if not slow and total_all <= LONG_RUN_S:
            return list(probes)

        def say(p):
            return (f"{p.label}: more than {format_duration(PROBE_WALL_S)} for its first slice"
                    if p.estimate == float("inf") else f"{p.label}: about {format_duration(p.estimate)}")

        text = (f"Short probes estimate the {len(probes)} runs at about "
                f"{format_duration(total_all) if total_all != float('inf') else 'an unknown time'} in all.")
        options = {}
        if slow:
            text += "\n\nPathologically slow here:\n" + "\n".join(say(p) for p in slow)
            options["skip"] = (f"Skip the {len(slow)} slow run{'s' if len(slow) != 1 else ''} "
                               f"(about {format_duration(total_quick)})")
        options["all"] = f"Run all {len(probes)}"
        answer = self.host.choose("Compare backends: a long comparison", text, options)
        if answer is None:
            return None
        return quick if answer == "skip" else list(probes)

    def _begin(self, mode: str) -> None:
        self.mode = mode
        self._latest = None
        self._compare_step = None
        self._cancel_at = None
        self.cancel_latency = None
        self._started_at = time.perf_counter()
        self._table_at = 0.0
        self.compile_clock = CompileClock()
        bar = self.host.progress_bar
        bar.setRange(0, 1000)
        bar.setValue(0)
        bar.setFormat("")
        self.host.eta_label.setText("")
        self.host.rate_label.setText("")
        self._draw_timer.start()
        self.state_changed.emit()

    def cancel(self) -> None:
        if self.mode == "idle" or self._cancel_at is not None:
            return
        self._cancel_at = time.perf_counter()
        self.runner.cancel()
        self.host.state_label.setText("Cancelling… (results found so far are kept)")
        self.state_changed.emit()

    def shutdown(self) -> None:
        """The window is closing: stop the run and never start another."""
        self.closing = True
        self._draw_timer.stop()
        self.runner.shutdown()

    # -- cost ------------------------------------------------------------------------------------
    def _rate_key(self, choice) -> str:
        sel = choice.selection
        return f"rates/{choice.family}/{sel.variant}/{sel.backend}/{sel.parallel or '-'}"

    def estimate(self, choice, inputs) -> float:
        """Seconds the run should take: work units over the rate measured for this selection
        on this machine (a rough default before the first measurement)."""
        work = self.host.adapter.work(inputs, choice.params)
        rate = load_json(self.host.settings, self._rate_key(choice), None)
        if not isinstance(rate, (int, float)) or rate <= 0:
            backend = choice.selection.backend
            rate = FALLBACK_RATE.get(backend, FALLBACK_RATE["serial"])
            if backend == "multicore":
                rate *= choice.threads or os.cpu_count() or 1
        return work / rate

    def _learn_rate(self, choice_like, inputs, seconds: float) -> None:
        if seconds > 0.05:
            work = self.host.adapter.work(inputs, choice_like.params)
            save_json(self.host.settings, self._rate_key(choice_like), work / seconds)

    def _confirm_cost(self, estimates: list[float], choice, compare: bool = False) -> bool:
        total = sum(estimates)
        if total <= LONG_RUN_S:
            return True
        what = f"Comparing {len(estimates)} runs" if compare else "This run"
        sel = choice.selection
        cheaper = ["a region of the inputs (Only positions, under each input): the time grows "
                   "with the product of the lengths"]
        vspec = self.host.params.spec.variant(sel.variant)
        if sel.backend != "cuda" and vspec.backend("cuda") and registry.backend_status("cuda")[0]:
            cheaper.append("the cuda backend")
        if sel.backend == "serial" and vspec.backend("multicore"):
            cheaper.append(f"the multicore backend ({os.cpu_count() or 1} threads)")
        text = (f"{what} should take about {format_duration(total)} with {sel.variant}/{sel.backend}. "
                "Cheaper: " + "; ".join(cheaper) + ".\n\nStart anyway? (Cancel keeps the results "
                "found so far.)")
        return self.host.ask("A long run", text)

    # -- progress --------------------------------------------------------------------------------
    def _on_progress(self, item) -> None:
        if isinstance(item, JobStarted):
            self.outcome.job = item.job
            for view in self.host.run_views():
                view.reset(item.job)
            return
        if isinstance(item, CompareStep):
            if item.finished is not None:
                self.outcome.compare_rows.append(item.finished)
                self.host.compare_view.add_row(item.finished)
                self.host.refresh_pages()
            self._compare_step = item
            if item.progress is None:
                self.host.throughput.reset(None)
                return
            item = item.progress
        self.compile_clock.see(item)
        self._latest = item
        self.host.throughput.add(item)
        self._dirty = True

    def _draw(self) -> None:
        """Draw the newest progress (timer, ~30 Hz)."""
        p = self._latest
        if not self._dirty or p is None:
            return
        self._dirty = False
        host = self.host
        label = self._run_label()
        bar = host.progress_bar
        if self._cancel_at is not None:
            pass  # keep saying "Cancelling…" until the generator has returned
        elif p.phase == "compiling":
            bar.setRange(0, 0)  # busy: compiling has no measurable progress
            host.eta_label.setText("")
            waited = f" {self.compile_clock.total():.0f} s"
            if p.message in ("", "compiling kernels…"):
                host.state_label.setText(f"{label}: {COMPILING}…{waited} (the kernels are kept on "
                                         "disk: later runs start at once)")
            else:  # another set-up phase (a dask job: starting the cluster)
                host.state_label.setText(f"{p.message} ({label}){waited}")
        else:
            bar.setRange(0, 1000)
            step = self._compare_step if self.mode == "comparing" else None
            fraction = p.fraction if step is None else (step.index + p.fraction) / max(1, step.total)
            bar.setValue(int(1000 * fraction))
            bar.setFormat(f"{100 * fraction:.0f}%")
            if step is not None and self._compare_phase == "probing":
                host.state_label.setText(f"Estimating {step.index + 1}/{step.total}: {step.label}…")
            elif step is not None:
                host.state_label.setText(f"Comparing {step.index + 1}/{step.total}: {step.label}…")
            else:
                host.state_label.setText(f"Running {label}…")
            remaining = self._remaining(p, step)
            if remaining is not None:
                text = f"ETA {format_duration(remaining)}"
                host.eta_label.setText(text + (f" for all {step.total} runs" if step else ""))
            host.rate_label.setText(self._rate_text(p))
        if self.mode == "running":
            now = time.perf_counter()
            if p.partial is not None and now - self._table_at >= TABLE_INTERVAL_S:
                self._table_at = now
                model = host.results.model
                empty = model.rowCount() == 0
                model.extend_to(host.adapter.items(p.partial), host.adapter.rows)
                if empty and model.rowCount():
                    host.results.fit_columns()  # once, on the first rows: not again at the end
            for view in host.run_views():
                view.show_progress(p)
            host.refresh_pages()
        else:
            host.throughput.show_progress(p)

    def _remaining(self, p: Progress, step: CompareStep | None) -> float | None:
        """Seconds left: this run's, plus the probes' estimates of the comparison's runs to
        come (none while probing: the probes are what the estimate is made of)."""
        if step is not None and self._compare_phase == "probing":
            return None
        if not (0 < p.fraction < 1 and p.elapsed > 0.3):
            return None if step is None else sum(self._compare_plan[step.index + 1:]) or None
        mine = p.elapsed * (1 - p.fraction) / p.fraction
        if step is None:
            return mine
        return mine + sum(self._compare_plan[step.index + 1:])

    def _rate_text(self, p: Progress) -> str:
        text = si(p.cells_per_second, "cells/s")
        if self.host.params.spec.metric == "comparisons" and p.comparisons:
            text += " · " + si(p.comparisons_per_second, "cmp/s")
        return text

    def _run_label(self, job=None) -> str:
        step = self._compare_step if self.mode == "comparing" and job is None else None
        if step is not None:  # the run being compared, not the last single run's job
            return f"{self.host.params.family} {step.label}"
        job = job or self.job
        if job is None:
            return self.host.params.family
        label = f"{job.family} {job.variant}/{job.backend}"
        return label + (f"/{job.parallel}" if job.parallel else "")

    # -- the end ---------------------------------------------------------------------------------
    def _end(self) -> None:
        self._draw()
        self._draw_timer.stop()
        if self._cancel_at is not None:
            self.cancel_latency = time.perf_counter() - self._cancel_at
        self.mode = "idle"
        self.host.progress_bar.setRange(0, 1000)
        self.host.eta_label.setText("")

    def _on_finished(self, value) -> None:
        if self.closing:
            return
        if self.mode == "comparing" and self._compare_phase == "probing":
            self._after_probes(value)
        elif self.mode == "comparing":
            self._finish_compare(value)
        else:
            self._finish_run(value)

    def _finish_compare(self, rows) -> None:
        cancelled = self._cancel_at is not None
        self._end()
        self._compare_phase = ""
        choice, inputs = self._compare_choice, self._compare_inputs
        for row, sel in zip(rows, getattr(self, "_compare_selections", [])):
            if row.complete:
                self._learn_rate(replace(choice, selection=sel), inputs, row.seconds)
        for row in self._compare_skipped:
            self.outcome.compare_rows.append(row)
            self.host.compare_view.add_row(row)
        self.host.compare_view.set_running("")
        done = sum(1 for r in rows if r.complete)
        status = f"Compared {done} runs of the same job."
        if self._compare_skipped:
            status += f" Skipped {len(self._compare_skipped)} slow run(s) (see the chart's note)."
        if cancelled:
            status = f"Comparison cancelled: {done} runs finished."
        self.outcome.status = status
        self.host.state_label.setText(status)
        bar = self.host.progress_bar
        bar.setValue(1000 if not cancelled else bar.value())
        self.host.refresh_pages()
        self.state_changed.emit()
        self.compare_finished.emit(rows)

    def _finish_run(self, result) -> None:
        host, adapter, outcome = self.host, self.host.adapter, self.outcome
        outcome.result = result
        self._dirty = True
        self._end()
        model = host.results.model
        had_rows = model.rowCount() > 0
        model.settle(adapter.items(result), adapter.rows, adapter.result_extends_partial)
        if not had_rows:
            host.results.fit_columns()
        for view in host.run_views():
            view.show_result(result)
        info = result.info
        outcome.summary = adapter.summary(result)
        if info.complete:
            host.progress_bar.setValue(1000)
            host.progress_bar.setFormat("100%")
            details = [self._run_label(outcome.job)]
            if info.seconds > 0 and info.cells:
                details.append(si(info.cells / info.seconds, "cells/s"))
            if self.compile_clock.note():  # the first run's wait, apart from the search time
                details.append(self.compile_clock.note())
            outcome.status = f"Done: {outcome.summary} in {info.seconds:.3g} s ({', '.join(details)})."
            why = adapter.empty_reason(result, outcome.job) if not adapter.items(result) else ""
            if why:
                outcome.status += " " + why
            if outcome.job is not None:
                self._learn_rate(host.params.choice(), dict(outcome.job.inputs), info.seconds)
        else:
            outcome.status = (f"Cancelled after {info.seconds:.3g} s: kept {outcome.summary}. "
                              "They can be exported.")
        host.state_label.setText(outcome.status)
        host.results.set_summary(outcome.summary)
        host.refresh_pages()
        host.on_filtered()
        self.state_changed.emit()
        self.run_finished.emit(result)

    def _on_failed(self, message: str) -> None:
        if self.closing:
            return
        self._end()
        self.outcome.status = "The run failed."
        self.host.state_label.setText(self.outcome.status)
        self.state_changed.emit()
        self.host.show_error("The run failed", message, self.runner.details)
        self.run_failed.emit(message)

    # -- coming back to a family -------------------------------------------------------------------
    def restore(self) -> None:
        """Show the current family's last outcome in the freshly built views (family switch)."""
        host, outcome = self.host, self.outcome
        host.state_label.setText(outcome.status)
        host.results.set_summary(outcome.summary)
        for row in outcome.compare_rows:
            host.compare_view.add_row(row)
        if outcome.result is not None:
            adapter = host.adapter
            host.results.set_columns(outcome.columns)
            host.results.model.replace(adapter.items(outcome.result), adapter.rows)
            host.results.fit_columns()
            for view in host.run_views():
                view.reset(outcome.job)
                view.show_result(outcome.result)
            host.on_filtered()
        host.refresh_pages()
