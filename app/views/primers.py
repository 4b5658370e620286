"""Primer tools for kdiff over the results table: annotations, filters, regions, exports.

The work itself is in :mod:`app.primers` (engine code only); these widgets hold the
settings, run that work on worker threads and show it. Binding follows the params panel's
habit: widgets are filled from the state with their signals blocked, and every widget change
goes through one method (:meth:`PrimerTools._on_input`), which applies only values the engine
accepts; anything else is explained in a red label beside the inputs, and what was applied
before stays applied.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import (QAbstractSpinBox, QCheckBox, QDoubleSpinBox, QFileDialog, QHBoxLayout,
                               QLabel, QMenu, QPushButton, QSizePolicy, QSpinBox, QToolButton,
                               QVBoxLayout, QWidget)

from engine.primers import export_kdiff as export
from engine.output import write_text
from engine.primers import merge_candidates

from app import primers
from engine.primers.annotate_children import annotate_in_children, annotated_csv
from app.settings import load_json, save_json
from app.views import ResultView
from app.widgets import FlowBar
from app.worker import JobRunner

SETTINGS_KEY = "primers"


#: The landscape's k slider annotates the new k's candidates once it has rested this long: a
#: drag across k does not start (and end) a child process at every step.
K_SETTLE_MS = 400


def _spin(field: primers.Field) -> QSpinBox | QDoubleSpinBox:
    """A number box that also takes values the engine refuses (negative concentrations, ...),
    so the engine's own check can explain them."""
    if field.kind == "int":
        box = QSpinBox()
        box.setRange(-1000, 100_000)
    else:
        box = QDoubleSpinBox()
        box.setDecimals(2 if field.step < 1 else 1)
        box.setRange(-10_000.0, 100_000.0)
        box.setSingleStep(field.step)
    box.setKeyboardTracking(False)
    box.setToolTip(field.tip)
    box.setAlignment(Qt.AlignmentFlag.AlignRight)
    box.setButtonSymbols(QAbstractSpinBox.ButtonSymbols.NoButtons)  # narrow: the row is long
    box.setFixedWidth(52 if field.kind == "int" else 60)
    return box


def _unit(text: str) -> QLabel:
    label = QLabel(text)
    label.setObjectName("help")
    return label


@dataclasses.dataclass
class _Annotation:
    """The runner annotates: the wanted annotations' generation (a new run or new
    conditions makes another), under ``conditions``, batches finished so far in ``done``;
    ``missing``: only the sequences not annotated yet (another k of the landscape)."""

    generation: int
    conditions: object
    done: dict
    missing: bool


@dataclasses.dataclass
class _Export:
    """The runner writes the annotated CSV to ``path``."""

    path: str


class PrimerTools(ResultView):
    """Primer filters, reaction conditions, region merging and exports, above the results table.

    Annotations of every candidate are computed when a run ends (and again when the conditions
    change) in child processes driven from a worker thread (:mod:`engine.primers.annotate_children`: Primer3
    never runs in the window's process, so it never holds up a repaint); they fill the
    computed columns of the table. The filter keeps
    the candidates :func:`engine.primers.passes` keeps; with *Merge into regions* the table
    shows :func:`engine.primers.merge_candidates` of the kept candidates instead.

    Signals ``annotated()`` when the annotations of the result are in the table and
    ``exported(str)`` with the path of each file written.
    """

    title = "Primers"
    placement = "results"  # the window puts it over the results table, not in a tab
    annotated = Signal()
    exported = Signal(str)

    def __init__(self, adapter, results, settings):
        super().__init__()
        self.adapter, self.results, self.settings = adapter, results, settings
        self.runner = JobRunner(self)  # primer3 work, one job at a time (see app.primers)
        self.runner.progress.connect(self._on_p3_progress)
        self.runner.finished.connect(self._on_p3_finished)
        self.runner.failed.connect(self._on_p3_failed)
        self._task: _Annotation | _Export | None = None  # what the runner does
        self._pending = None         # annotate again when the runner is free: "all" | "missing"
        self._generation = 0         # of the annotations wanted: a new run or new conditions
        self._result = None
        self._notes: dict | None = None
        # Batches annotated under the current conditions by a cancelled annotation (the k
        # slider moved on): not lost, left out of the next one, merged when it completes.
        self._spare: dict = {}
        # The landscape's k slider: the new k's candidates are annotated once it rests.
        self._k_settle = QTimer(self)
        self._k_settle.setSingleShot(True)
        self._k_settle.setInterval(K_SETTLE_MS)
        self._k_settle.timeout.connect(lambda: self._annotate(missing=True))
        self._passing: frozenset | None = None
        self._regions: list = []
        self._merged_shown = False
        self._targets: tuple = ()          # the run's target records (their soft masks)
        # (target, start) of the shown candidates with a 3' end in a soft mask; None until
        # needed (_hidden): a million candidates take about a second, and a k slider move
        # with the switch off must not pay it
        self._masked: frozenset | None = None

        state = self._load_state()
        self._build(state)
        self.conditions = primers.make_conditions(self._condition_values())
        try:
            self.filters = primers.make_filters(*self._filter_values())
        except ValueError:  # saved bounds that no longer pass: back to Primer3's
            self._fill_filters(primers.default_filter_values(), primers.default_filter_enabled())
            self.filters = primers.make_filters(*self._filter_values())
        self._show_enabled()
        results.model.set_computed(primers.ANNOTATION_COLUMNS, self._row_values,
                                   primers.annotation_text)
        self._show_status("Annotated when a run ends")

    # -- construction --------------------------------------------------------------------------
    def _load_state(self) -> dict:
        state = {"filter": False, "merge": False, "avoid_masked": False,
                 "values": primers.default_filter_values(),
                 "enabled": primers.default_filter_enabled(),
                 "conditions": {f.name: getattr(primers.Conditions(), f.name)
                                for f in primers.CONDITION_FIELDS}}
        saved = load_json(self.settings, SETTINGS_KEY, {})
        if isinstance(saved, dict):
            for key in ("filter", "merge", "avoid_masked"):
                if isinstance(saved.get(key), bool):
                    state[key] = saved[key]
            for key in ("values", "enabled", "conditions"):
                for name, value in (saved.get(key) or {}).items():
                    if name in state[key] and isinstance(value, (int, float)):
                        state[key][name] = value
            try:  # saved conditions the engine refuses (an older version) fall back to Primer3's
                primers.make_conditions(state["conditions"])
            except ValueError:
                state["conditions"] = {f.name: getattr(primers.Conditions(), f.name)
                                       for f in primers.CONDITION_FIELDS}
        return state

    def _build(self, state: dict) -> None:
        self.filter_box = QCheckBox("Primer filters")
        self.filter_box.setToolTip("Keep only candidates that pass the bounds on the right "
                                   "(engine.primers.passes, as primerscope kdiff --filter)")
        self.filter_box.setChecked(state["filter"])
        self.filter_box.toggled.connect(self._on_input)
        self.bounds: dict[str, tuple[QCheckBox, QWidget]] = {}
        # One group per bound (its box, value and unit), wrapped as the width allows: at
        # 1280x720 the bar would otherwise run past the window's right edge.
        self.filter_bar = FlowBar(spacing=10)
        self.filter_bar.addWidget(self.filter_box)
        self.mask_box = QCheckBox("Avoid soft-masked 3′ ends")
        self.mask_box.setToolTip("Hide candidates whose 3′-most 5 bases touch a soft-masked "
                                 "(lower-case) base of the target (as primerscope kdiff "
                                 "--avoid-masked); the band under the profile shows the mask")
        self.mask_box.setChecked(state["avoid_masked"])
        self.mask_box.toggled.connect(self._on_input)
        self.filter_bar.addWidget(self.mask_box)
        group = None
        for field in primers.FILTER_FIELDS:
            check = QCheckBox(field.label)
            check.setToolTip(f"{field.tip}. Untick to switch this bound off.")
            check.setChecked(bool(state["enabled"][field.name]))
            spin = _spin(field)
            spin.setValue(state["values"][field.name])
            check.toggled.connect(self._on_input)
            spin.valueChanged.connect(self._on_input)
            if group is None or not field.label.startswith("≤"):  # "≤" pairs with the bound before
                group = QHBoxLayout()
                group.setContentsMargins(0, 0, 0, 0)
                group.setSpacing(2)
                holder = QWidget()
                holder.setLayout(group)
                self.filter_bar.addWidget(holder)
            group.addWidget(check)
            group.addWidget(spin)
            if field.unit:
                group.addWidget(_unit(field.unit))
            self.bounds[field.name] = (check, spin)
        self.defaults_button = QPushButton("Primer3 defaults")
        self.defaults_button.setToolTip("Bounds and reaction conditions as Primer3 sets them")
        self.defaults_button.clicked.connect(self.restore_defaults)
        self.filter_bar.addWidget(self.defaults_button)

        conditions = self.filter_bar  # one bar: the conditions follow on the defaults' line
        conditions.addWidget(QLabel("Conditions:"))
        self.condition_spins: dict[str, QDoubleSpinBox] = {}
        for field in primers.CONDITION_FIELDS:
            spin = _spin(field)
            spin.setValue(state["conditions"][field.name])
            spin.valueChanged.connect(self._on_input)
            label = QLabel(field.label)
            label.setToolTip(field.tip)
            group = QHBoxLayout()
            group.setContentsMargins(0, 0, 0, 0)
            group.setSpacing(2)
            for widget in (label, spin, _unit(field.unit)):
                group.addWidget(widget)
            holder = QWidget()
            holder.setLayout(group)
            conditions.addWidget(holder)
            self.condition_spins[field.name] = spin
        self.merge_box = QCheckBox("Merge into regions")
        self.merge_box.setToolTip("Show regions of overlapping candidates (start, end, best candidate, "
                                  "count) instead of the candidates; with the primer filters on, "
                                  "only the candidates that pass are merged")
        self.merge_box.setChecked(state["merge"])
        self.merge_box.toggled.connect(self._on_input)
        conditions.addWidget(self.merge_box)
        self.export_button = QToolButton()
        self.export_button.setText("Export primers")
        self.export_button.setToolTip("Export what the primer tools show (the filters applied)")
        self.export_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        menu = QMenu(self)
        self.export_annotated_action = menu.addAction("Candidates with annotations (CSV)…",
                                                      lambda: self.export_annotated())
        self.export_regions_action = menu.addAction("Regions (CSV)…", lambda: self.export_regions())
        self.export_bed_action = menu.addAction("Regions (BED)…", lambda: self.export_bed())
        self.export_button.setMenu(menu)
        conditions.addWidget(self.export_button)
        self.error = QLabel()
        self.error.setObjectName("error")
        self.error.setWordWrap(True)
        self.error.setVisible(False)
        self.status = QLabel()
        self.status.setObjectName("help")
        # Never wider than the room left: the row must not widen the window.
        self.status.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        conditions.addWidget(self.status)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 2, 0, 2)
        layout.setSpacing(2)
        layout.addWidget(self.filter_bar)
        layout.addWidget(self.error)

    # -- widgets -> state (the one path) ---------------------------------------------------------
    def _condition_values(self) -> dict:
        return {name: spin.value() for name, spin in self.condition_spins.items()}

    def _filter_values(self) -> tuple[dict, dict]:
        values = {name: spin.value() for name, (_, spin) in self.bounds.items()}
        enabled = {name: check.isChecked() for name, (check, _) in self.bounds.items()}
        return values, enabled

    def _on_input(self, *_) -> None:
        """Apply what the widgets say, if the engine accepts it; else say why, inline."""
        self._show_enabled()
        errors = []
        try:
            conditions = primers.make_conditions(self._condition_values())
        except ValueError as err:
            conditions = self.conditions
            errors.append(str(err))
        try:
            filters = primers.make_filters(*self._filter_values())
        except ValueError as err:
            filters = self.filters
            errors.append(str(err))
        if errors:
            self.error.setText("; ".join(errors) + ". The last valid settings stay applied.")
        self.error.setVisible(bool(errors))
        if not errors:
            self._save()
        new_conditions = conditions != self.conditions
        self.conditions, self.filters = conditions, filters
        if new_conditions and self._result is not None:
            self._annotate()
        self._update_passing()
        self._apply()

    def _show_enabled(self) -> None:
        on = self.filter_box.isChecked()
        for check, spin in self.bounds.values():
            check.setEnabled(on)
            spin.setEnabled(on and check.isChecked())

    def _save(self) -> None:
        values, enabled = self._filter_values()
        save_json(self.settings, SETTINGS_KEY, {
            "filter": self.filter_box.isChecked(), "merge": self.merge_box.isChecked(),
            "avoid_masked": self.mask_box.isChecked(),
            "values": values, "enabled": enabled, "conditions": self._condition_values()})

    def _fill_filters(self, values: dict, enabled: dict) -> None:
        for name, (check, spin) in self.bounds.items():
            for widget in (check, spin):
                widget.blockSignals(True)
            check.setChecked(bool(enabled[name]))
            spin.setValue(values[name])
            for widget in (check, spin):
                widget.blockSignals(False)

    def restore_defaults(self) -> None:
        """Primer3's bounds and conditions (the filter and merge switches stay as they are)."""
        self._fill_filters(primers.default_filter_values(), primers.default_filter_enabled())
        default = primers.Conditions()
        for name, spin in self.condition_spins.items():
            spin.blockSignals(True)
            spin.setValue(getattr(default, name))
            spin.blockSignals(False)
        self._on_input()

    def set_values(self, *, conditions: dict | None = None, bounds: dict | None = None,
                   enabled: dict | None = None, filter: bool | None = None,
                   merge: bool | None = None) -> None:
        """Set widgets from code (tests, scripts) and apply them as a person's edit would be."""
        widgets = [self.filter_box, self.merge_box] + list(self.condition_spins.values())
        widgets += [w for pair in self.bounds.values() for w in pair]
        for widget in widgets:
            widget.blockSignals(True)
        for name, value in (conditions or {}).items():
            self.condition_spins[name].setValue(value)
        for name, value in (bounds or {}).items():
            self.bounds[name][1].setValue(value)
        for name, value in (enabled or {}).items():
            self.bounds[name][0].setChecked(value)
        if filter is not None:
            self.filter_box.setChecked(filter)
        if merge is not None:
            self.merge_box.setChecked(merge)
        for widget in widgets:
            widget.blockSignals(False)
        self._on_input()

    def clear_filters(self) -> None:
        """The results panel's Clear filters: the primer filter goes off too."""
        if self.filter_box.isChecked():
            self.filter_box.setChecked(False)

    # -- annotations (child processes, driven from a worker thread) ---------------------------
    def _annotate(self, missing: bool = False) -> None:
        """Annotate the shown candidates: all of them (a new run, new conditions), or with
        ``missing`` only the sequences not annotated yet (another k of the landscape)."""
        self._k_settle.stop()
        if self.runner.running:
            self._pending = "all" if not missing or self._pending == "all" else "missing"
            if isinstance(self._task, _Annotation):
                self.runner.cancel()
            return
        self._pending = None
        candidates = self._result.candidates
        conditions = self.conditions
        if not missing:
            self._spare = {}
        # (the spare batches are in _notes already once it exists: see _on_p3_finished)
        known = {} if not missing else self._spare if self._notes is None else self._notes
        done: dict = {}
        self._generation += 1
        self._task = _Annotation(self._generation, conditions, done, missing)
        self._show_status(f"Annotating {len(candidates):,}…")
        # Primer3 in a child process (engine.primers.annotate_children): it holds Python's lock for a whole
        # call, which in this process would make every repaint wait for it (issue #33).
        self.runner.start(lambda token: annotate_in_children(candidates, conditions, token,
                                                             known=known, into=done))

    def show_k(self, result) -> None:
        """The landscape's k slider: ``result`` at another k (its candidates, from the one
        scan). The annotations already made stay; the sequences new at this k go to Primer3
        once the slider rests (:data:`K_SETTLE_MS`). Until then the primer filter waits."""
        self._take(result)
        if self.filter_box.isChecked():
            self._passing = None  # (waiting: the filter is applied when they are in)
        if self.filter_box.isChecked() or self.mask_box.isChecked() or self.merge_box.isChecked():
            self._apply()  # (with every switch off the family's table is what to show)
        self._k_settle.start()

    def _on_p3_progress(self, fraction) -> None:
        task = self._task
        if isinstance(task, _Annotation) and task.generation == self._generation \
                and self._result is not None:
            self._show_status(f"Annotating {len(self._result.candidates):,}… {100 * fraction:.0f}%")

    def _on_p3_finished(self, value) -> None:
        task, self._task = self._task, None
        if isinstance(task, _Export):
            if value is None:  # cancelled (a new run): nothing written
                self._show_status(f"Not written (cancelled): {task.path}")
            else:
                self._written(task.path, value)
        elif task.conditions != self.conditions:
            pass  # made under conditions no longer set: dropped
        elif value is None or self._pending or task.generation != self._generation:
            # Cancelled (the slider moved on, a new k): its finished batches are kept, in
            # the annotations when they exist (more sequences than shown do no harm there)
            (self._spare if self._notes is None else self._notes).update(task.done)
        else:
            if task.missing and self._notes is not None:  # another k's sequences: added
                self._notes.update(self._spare)
                self._notes.update(value)
            else:
                value.update(self._spare)
                self._notes = value
            self._spare = {}
            self.results.model.computed_changed()
            self._update_passing()
            self._apply()
            self.annotated.emit()
        if self._pending and self._result is not None:
            self._annotate(missing=self._pending == "missing")
        self._update_actions()

    def _on_p3_failed(self, message: str) -> None:
        task, self._task = self._task, None
        self.error.setText(("Cannot annotate: " if isinstance(task, _Annotation) else "Cannot export: ")
                           + message)
        self.error.setVisible(True)
        if self._pending and self._result is not None:
            self._annotate(missing=self._pending == "missing")
        self._update_actions()

    def annotation(self, sequence: str):
        """The annotation shown for a sequence (None until it is computed)."""
        return None if self._notes is None else self._notes.get(sequence)

    def _row_values(self, candidate) -> tuple:
        notes = self._notes
        return primers.annotation_values(None if notes is None else notes.get(candidate.sequence))

    # -- what the table shows --------------------------------------------------------------------
    def _update_passing(self) -> None:
        """The kept sequences: None without the filter; the previous set while annotating."""
        if not self.filter_box.isChecked():
            self._passing = None
        elif self._notes is not None:
            self._passing = primers.passing_sequences(self._notes, self.filters)

    def _waiting(self) -> bool:
        """The filter is on but the candidates have no annotations yet."""
        return self.filter_box.isChecked() and self._passing is None

    def _hidden(self) -> frozenset:
        """(target, start) of the candidates the soft-mask switch hides (none when it is off)."""
        return self._masked_keys() if self.mask_box.isChecked() else frozenset()

    def _masked_keys(self) -> frozenset:
        if self._masked is None:
            try:
                self._masked = primers.masked_keys(self._result.candidates, self._targets) \
                    if self._targets and self._result is not None else frozenset()
            except ValueError as err:  # a format-1 store's target: its mask is unknown
                self._masked = frozenset()
                self.error.setText(str(err))
                self.error.setVisible(True)
        return self._masked

    def kept(self) -> list:
        """The candidates the primer filter and the soft-mask switch keep (all when off)."""
        if self._result is None:
            return []
        return primers.kept_candidates(self._result.candidates, self._passing, self._hidden())

    def _apply(self) -> None:
        """Show candidates or regions, with the filter applied."""
        self._update_actions()
        if self._result is None:
            return
        current = self._current_item()
        merged = self.merge_box.isChecked() and not self._waiting()
        model, proxy = self.results.model, self.results.proxy
        if merged:
            self._regions = merge_candidates(self.kept())
            regions = self._regions
            if not self._merged_shown:
                self.results.set_columns(primers.REGION_COLUMNS)
            # Row items are the regions' best candidates: selecting a region selects that candidate.
            model.replace([r.best for r in regions],
                          lambda bests: [export.region_row(r) for r in regions[:len(bests)]])
            proxy.set_keep(lambda item: True)  # the views highlight the regions' best candidates
        else:
            if self._merged_shown:
                self.results.set_columns(self.adapter.columns)
                model.replace(self.adapter.items(self._result), self.adapter.rows)
            passing, hidden = self._passing, self._hidden()
            proxy.set_keep(None if passing is None and not hidden else
                           (lambda c: (passing is None or c.sequence in passing)
                            and (c.target_id, c.start) not in hidden))
        if merged != self._merged_shown:
            self.results.fit_columns()
        self._merged_shown = merged
        self.results.refilter()
        if current is not None:
            self.results.select_item(current)
        self._show_summary()

    def _current_item(self):
        index = self.results.view.selectionModel().currentIndex()
        if not index.isValid():
            return None
        return self.results.model.item(self.results.proxy.mapToSource(index).row())

    def table_item(self, item):
        """The row item standing for a candidate: its region's best candidate when merged."""
        if not self._merged_shown or item is None:
            return item
        for region in self._regions:
            if (region.target_id == item.target_id and region.start <= item.start
                    and item.end <= region.end):
                return region.best
        return item

    def _show_summary(self) -> None:
        if self._result is None or self._task is not None:
            return
        n = len(self._result.candidates)
        if self._notes is None:
            self._show_status("")
            return
        parts = [f"{n:,} annotated" if self._passing is None and not self._hidden()
                 else f"{len(self.kept()):,} of {n:,} pass"]
        if self._merged_shown:
            parts.append(f"{len(self._regions):,} regions")
        self._show_status(" · ".join(parts))

    def _show_status(self, text: str) -> None:
        self.status.setText(text)
        self.status.setToolTip(text)

    def _update_actions(self) -> None:
        has = self._result is not None and not self._waiting()
        self.export_regions_action.setEnabled(has)
        self.export_bed_action.setEnabled(has)
        self.export_annotated_action.setEnabled(has and self._notes is not None
                                                and not self.runner.running)

    # -- ResultView ------------------------------------------------------------------------------
    def reset(self, job) -> None:
        if job is not None:  # the second reset of a run (its job is known): its targets
            self._targets = tuple(job.inputs["target"])
            return
        self.runner.cancel()
        self._k_settle.stop()
        self._pending = None
        self._generation += 1  # annotations still on their way belong to the previous run
        self._result, self._notes, self._passing, self._spare = None, None, None, {}
        self._regions, self._merged_shown = [], False
        self._targets, self._masked = (), None
        self.results.proxy.set_keep(None)
        self._show_status("Annotated when the run ends")
        self._update_actions()

    def show_result(self, result) -> None:
        self._take(result)
        self._apply()
        self._annotate()

    def _take(self, result) -> None:
        """``result`` becomes the shown one (its soft-masked candidates found when needed)."""
        self._result = result
        self._masked = None

    def has_data(self) -> bool:
        return self._notes is not None and not self.runner.running

    def runners(self) -> list:
        return [self.runner]

    def focus_chain(self) -> list:
        """Its inputs in the order they are laid out (the window's tab order)."""
        chain = [self.filter_box, self.mask_box]
        for check, spin in self.bounds.values():
            chain += [check, spin]
        return chain + [self.defaults_button, *self.condition_spins.values(), self.merge_box,
                        self.export_button]

    def shutdown(self) -> None:
        self.runner.shutdown()

    # -- exports ---------------------------------------------------------------------------------
    def _ask_path(self, title: str, name: str, pattern: str) -> str | None:
        start = os.path.join(self.settings.value("last_export_dir", str(Path.home())), name)
        path, _ = QFileDialog.getSaveFileName(self, title, start, pattern)
        return path or None

    def _written(self, path: str, text: str) -> None:
        try:
            write_text(path, text)
        except OSError as err:
            self.error.setText(f"Cannot write {path}: {err.strerror or err}")
            self.error.setVisible(True)
            return
        self.settings.setValue("last_export_dir", os.path.dirname(os.path.abspath(path)))
        self._show_status(f"Wrote {path}.")
        self.exported.emit(path)

    def export_regions(self, path: str | None = None) -> str | None:
        """The regions of the kept candidates, as ``primerscope kdiff ... --merge`` writes them."""
        if self._result is None or self._waiting():
            return None
        path = path or self._ask_path("Export regions as CSV", "kdiff-regions.csv",
                                      "CSV files (*.csv);;All files (*)")
        if path:
            self._written(path, export.regions_csv_text(self.kept()))
        return path

    def export_bed(self, path: str | None = None) -> str | None:
        """The regions of the kept candidates as BED (``primerscope kdiff ... --bed``)."""
        if self._result is None or self._waiting():
            return None
        path = path or self._ask_path("Export regions as BED", "kdiff-regions.bed",
                                      "BED files (*.bed);;All files (*)")
        if path:
            self._written(path, export.bed_text(self.kept()))
        return path

    def export_annotated(self, path: str | None = None) -> str | None:
        """Candidates with annotation columns, as ``primerscope kdiff ... --annotate [--filter]``.

        The kdiff CLI's writer, from the table's annotations
        (:func:`engine.primers.annotate_children.annotated_csv`: child processes make those
        missing, each once); ``exported`` tells when the file is written.
        """
        if self._result is None or self._notes is None or self.runner.running:
            return None
        path = path or self._ask_path("Export candidates with annotations", "kdiff-primers.csv",
                                      "CSV files (*.csv);;All files (*)")
        if not path:
            return None
        result, conditions = self._result, self.conditions
        if getattr(result, "landscape", None) is not None:  # these candidates, not every k's table
            result = dataclasses.replace(result, landscape=None)
        if self._hidden():  # as primerscope kdiff --avoid-masked writes them
            from engine.softmask import drop_masked_candidates

            result = dataclasses.replace(result, candidates=drop_masked_candidates(
                result.candidates, self._targets))
        filters = self.filters if self.filter_box.isChecked() else None
        self._task = _Export(path)
        self._show_status(f"Writing {path}…")
        notes = self._notes
        self.runner.start(lambda token: annotated_csv(result, conditions, filters, token, notes))
        self._update_actions()
        return path
