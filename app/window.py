"""The main window: inputs and parameters on the left, views over the results table.

The window knows no family: the registry gives the parameters, the family's
adapter (:mod:`app.families`) gives the job, the table columns and the views.
Jobs run on a worker thread (:mod:`app.worker`); the window keeps only the
newest Progress and draws it at about 30 Hz.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from PySide6.QtCore import QSettings, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QIcon, QKeySequence
from PySide6.QtWidgets import (QApplication, QFileDialog, QLabel, QMainWindow, QMessageBox,
                               QProgressBar, QScrollArea, QSplitter, QStyle, QTabWidget, QToolBar,
                               QVBoxLayout, QWidget)

from engine.output import write_text
from engine.jobs import Progress
from engine.sequences import load_many

from app import demo
from app.families import adapter as family_adapter
from app.inputs import FILE_FILTER, InputPanel, InputState, PasteDialog
from app.jobs import CompareStep, JobStarted, call, compare_backends, run_job
from app.params import ParamsPanel
from app.results import ResultsPanel
from app.settings import load_json, save_json
from app.views.compare import CompareView
from app.views.plotting import configure, export_plot, si
from app.views.throughput import ThroughputView
from app.worker import JobRunner

RESOURCES = Path(__file__).resolve().parents[1] / "resources"
DRAW_INTERVAL_MS = 33  # ~30 Hz
TABLE_INTERVAL_S = 0.25  # rows join the table at most 4 times a second while a job runs
MAX_RECENT = 10


def format_duration(seconds: float) -> str:
    seconds = max(0, int(round(seconds)))
    if seconds < 60:
        return f"{seconds} s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes}:{seconds:02d}"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{seconds:02d}"


class MainWindow(QMainWindow):
    """Signals: ``inputs_loaded`` after a file or demo load, ``run_finished(result)``,
    ``run_failed(str)``, ``compare_finished(list)``."""

    inputs_loaded = Signal()
    run_finished = Signal(object)
    run_failed = Signal(str)
    compare_finished = Signal(object)

    def __init__(self, settings: QSettings | None = None, parent=None):
        super().__init__(parent)
        configure()
        self.settings = settings if settings is not None else QSettings("primerscope", "primerscope")
        self.setWindowTitle("primerscope")
        self.setWindowIcon(QIcon(str(RESOURCES / "icons" / "primerscope.svg")))
        self.setAcceptDrops(False)

        self.runner = JobRunner(self)
        self.runner.progress.connect(self._on_progress)
        self.runner.finished.connect(self._on_finished)
        self.runner.failed.connect(self._on_failed)
        self.loader = JobRunner(self)
        self.loader.finished.connect(self._on_loaded)
        self.loader.failed.connect(self._on_load_failed)
        self._load_queue: list = []
        self._loading = None

        self.mode = "idle"  # idle | running | comparing
        self.job = None
        self.result = None
        self.compare_rows = None
        self._latest: Progress | None = None
        self._dirty = False
        self._started_at = 0.0
        self._cancel_at: float | None = None
        self.cancel_latency: float | None = None
        self._last_demo: str | None = None
        self._compare_step: CompareStep | None = None
        self._table_at = 0.0
        self.error_sink = None
        self._input_states: dict[tuple[str, str], InputState] = {}
        self.input_panels: dict[str, InputPanel] = {}
        self.views: list = []

        self._build_left()
        self._build_center()
        self._build_status()
        self._build_actions()
        self._draw_timer = QTimer(self)
        self._draw_timer.setInterval(DRAW_INTERVAL_MS)
        self._draw_timer.timeout.connect(self._draw)
        self._setup_family()
        self._restore_geometry()
        self._update_actions()

    # ---------------------------------------------------------------------------------------
    # construction
    def _build_left(self) -> None:
        self.params = ParamsPanel(self.settings)
        self.params.family_changed.connect(self._on_family_changed)
        self.params.changed.connect(self._update_actions)
        self.inputs_box = QWidget()
        self.inputs_layout = QVBoxLayout(self.inputs_box)
        self.inputs_layout.setContentsMargins(0, 0, 0, 0)
        self.params.layout().insertWidget(2, self.inputs_box)
        container = QWidget()
        layout = QVBoxLayout(container)
        layout.addWidget(self.params)
        layout.addStretch(1)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setWidget(container)
        scroll.setMinimumWidth(360)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.left = scroll

    def _build_center(self) -> None:
        self.tabs = QTabWidget()
        self.tabs.setDocumentMode(True)
        self.results = ResultsPanel()
        self.results.selected.connect(self._on_item_selected)
        self.results.filtered.connect(self._on_filtered)
        right = QSplitter(Qt.Orientation.Vertical)
        right.addWidget(self.tabs)
        right.addWidget(self.results)
        right.setStretchFactor(0, 3)
        right.setStretchFactor(1, 2)
        right.setSizes([560, 300])
        self.right = right
        main = QSplitter(Qt.Orientation.Horizontal)
        main.addWidget(self.left)
        main.addWidget(right)
        main.setStretchFactor(1, 1)
        main.setSizes([380, 1060])
        self.main_splitter = main
        self.setCentralWidget(main)

    def _build_status(self) -> None:
        bar = self.statusBar()
        self.state_label = QLabel("Ready.")
        self.rate_label = QLabel()
        self.rate_label.setToolTip("Throughput of the running job (average since its start)")
        self.eta_label = QLabel()
        self.progress_bar = QProgressBar()
        self.progress_bar.setRange(0, 1000)
        self.progress_bar.setTextVisible(True)
        self.progress_bar.setFormat("")
        self.progress_bar.setFixedWidth(220)
        bar.addWidget(self.state_label, 1)
        bar.addPermanentWidget(self.rate_label)
        bar.addPermanentWidget(self.eta_label)
        bar.addPermanentWidget(self.progress_bar)

    def _action(self, text, slot, shortcut=None, icon=None, tip=None) -> QAction:
        action = QAction(text, self)
        if icon is not None:
            action.setIcon(self.style().standardIcon(icon))
        if shortcut is not None:
            shortcuts = shortcut if isinstance(shortcut, list) else [shortcut]
            action.setShortcuts([QKeySequence(s) for s in shortcuts])
            action.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
        if tip:
            action.setStatusTip(tip)
            action.setToolTip(f"{tip} ({QKeySequence(shortcuts[0]).toString()})" if shortcut else tip)
        action.triggered.connect(lambda checked=False: slot())
        return action

    def _build_actions(self) -> None:
        SP = QStyle.StandardPixmap
        self.open_action = self._action("&Open…", lambda: self.open_dialog(self._roles()[0]),
                                         QKeySequence.StandardKey.Open, SP.SP_DialogOpenButton,
                                         "Open a sequence file for the first input")
        self.open2_action = self._action("Open &second input…", lambda: self.open_dialog(self._roles()[-1]),
                                         "Ctrl+Shift+O", None, "Open a sequence file for the second input")
        self.paste_action = self._action("&Paste sequence…", lambda: self.paste_dialog(self._roles()[0]),
                                         "Ctrl+Shift+V", None, "Paste a sequence for the first input")
        self.run_action = self._action("&Run", self.run, ["Ctrl+R", "F5"], SP.SP_MediaPlay,
                                       "Run the job")
        self.cancel_action = self._action("&Cancel", self.cancel, ["Esc", "Ctrl+."], SP.SP_MediaStop,
                                          "Cancel the job; results found so far are kept")
        self.compare_action = self._action("Compare &backends", self.compare, "Ctrl+B", SP.SP_ComputerIcon,
                                           "Run the job on every available variant and backend")
        self.export_action = self._action("&Export results as CSV…", self.export_csv, "Ctrl+E",
                                          SP.SP_DialogSaveButton, "Export the results table as CSV")
        self.export_align_action = self._action("Export &alignments as text…", self.export_alignments,
                                                "Ctrl+Shift+E", None, "Export alignments as plain text")
        self.save_plot_action = self._action("Save &plot as PNG/SVG…", self.save_plot, "Ctrl+Shift+S",
                                             None, "Save the plot of the current tab")
        quit_action = self._action("&Quit", self.close, QKeySequence.StandardKey.Quit)

        menu = self.menuBar().addMenu("&File")
        for action in (self.open_action, self.open2_action, self.paste_action):
            menu.addAction(action)
        menu.addSeparator()
        for action in (self.export_action, self.export_align_action, self.save_plot_action):
            menu.addAction(action)
        menu.addSeparator()
        menu.addAction(quit_action)
        demo_menu = self.menuBar().addMenu("&Demo")
        self.demo_actions = {}
        for key, (title, description) in demo.DATASETS.items():
            action = self._action(title, lambda k=key: self.load_demo(k), tip=description)
            demo_menu.addAction(action)
            self.demo_actions[key] = action
        run_menu = self.menuBar().addMenu("&Run")
        for action in (self.run_action, self.cancel_action, self.compare_action):
            run_menu.addAction(action)
        help_menu = self.menuBar().addMenu("&Help")
        help_menu.addAction(self._action("&About primerscope", self._about))

        toolbar = QToolBar("Main")
        toolbar.setObjectName("main-toolbar")
        toolbar.setMovable(False)
        toolbar.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        for action in (self.open_action, self.run_action, self.cancel_action, self.compare_action,
                       self.export_action):
            toolbar.addAction(action)
        self.addToolBar(toolbar)

    # ---------------------------------------------------------------------------------------
    # family
    @property
    def adapter(self):
        return family_adapter(self.params.family)

    def _roles(self) -> list[str]:
        return [spec.role for spec in self.params.spec.inputs]

    def _setup_family(self) -> None:
        fam = self.params.spec
        self.setWindowTitle(f"primerscope — {fam.name}: {fam.title}")
        # Input panels for this family's roles, restoring what they held before.
        for panel in self.input_panels.values():
            panel.setParent(None)
            panel.deleteLater()
        self.input_panels = {}
        recent = self.recent_files()
        for spec in fam.inputs:
            panel = InputPanel(spec, recent)
            panel.set_state(self._input_states.get((fam.name, spec.role), InputState()))
            panel.open_requested.connect(self.open_dialog)
            panel.paste_requested.connect(self.paste_dialog)
            panel.files_dropped.connect(self.load_files)
            panel.recent_requested.connect(lambda role, path: self.load_files(role, [path]))
            panel.changed.connect(self._on_input_changed)
            self.inputs_layout.addWidget(panel)
            self.input_panels[spec.role] = panel
        titles = [s.title.lower() for s in fam.inputs]
        self.open_action.setText(f"&Open {titles[0]}…")
        self.open2_action.setText(f"Open {titles[-1]}…")
        self.open2_action.setVisible(len(titles) > 1)
        self.paste_action.setText(f"&Paste {titles[0]}…")
        # Views: the family's own, then throughput and compare.
        for view in self.views:
            view.shutdown()
            view.setParent(None)
            view.deleteLater()
        self.tabs.clear()
        self.results.set_tools(None)
        self.views = list(self.adapter.create_views(self))
        self.throughput = ThroughputView(fam.metric)
        self.compare_view = CompareView()
        self.views += [self.throughput, self.compare_view]
        for view in self.views:
            if getattr(view, "placement", "tab") == "results":  # tools over the results table
                self.results.set_tools(view)
            else:
                self.tabs.addTab(view, view.title)
            view.item_activated.connect(self._on_view_activated)
        self.results.set_columns(self.adapter.table_columns(self.params.state()["params"]))
        self.job = self.result = self.compare_rows = None

    def _on_family_changed(self, name: str) -> None:
        self._setup_family()
        if self._last_demo and not any(p.state().records for p in self.input_panels.values()):
            self.load_demo(self._last_demo)
        self._update_actions()

    def _on_input_changed(self, role: str) -> None:
        self._input_states[(self.params.family, role)] = self.input_panels[role].state()
        self._update_actions()

    # ---------------------------------------------------------------------------------------
    # inputs
    def recent_files(self) -> list[str]:
        return [p for p in load_json(self.settings, "recent", []) if isinstance(p, str)]

    def _remember(self, paths) -> None:
        recent = self.recent_files()
        for path in paths:
            path = os.path.abspath(path)
            if path in recent:
                recent.remove(path)
            recent.insert(0, path)
        recent = recent[:MAX_RECENT]
        save_json(self.settings, "recent", recent)
        for panel in self.input_panels.values():
            panel.set_recent(recent)

    def open_dialog(self, role: str) -> None:
        spec = next(s for s in self.params.spec.inputs if s.role == role)
        start = self.settings.value("last_dir", str(Path.home()))
        paths, _ = QFileDialog.getOpenFileNames(self, f"Open {spec.title.lower()}", start, FILE_FILTER)
        if paths:
            self.settings.setValue("last_dir", os.path.dirname(paths[0]))
            self.load_files(role, paths)

    def paste_dialog(self, role: str) -> None:
        spec = next(s for s in self.params.spec.inputs if s.role == role)
        dialog = PasteDialog(spec.title, self)
        if dialog.exec() and dialog.records:
            self._set_records(role, dialog.records, "pasted text")

    def load_files(self, role: str, paths: list[str]) -> None:
        """Load files (off the GUI thread); on failure the panel keeps what it held."""
        names = ", ".join(os.path.basename(p) for p in paths)
        self._enqueue_load(f"Loading {names}…", lambda: load_many(paths),
                           lambda records: self._files_loaded(role, paths, records),
                           f"Cannot load {names}")

    def _files_loaded(self, role: str, paths, records) -> None:
        self._remember(paths)
        self._set_records(role, records, paths[0] if len(paths) == 1 else f"{len(paths)} files")
        total = sum(len(r) for r in records)
        self.state_label.setText(f"Loaded {len(records)} record(s), {total:,} bp.")

    def _set_records(self, role: str, records, source: str) -> None:
        panel = self.input_panels.get(role)
        if panel is not None:
            panel.set_records(records, source)
        self.inputs_loaded.emit()

    def load_demo(self, dataset: str) -> None:
        """Load a demo data set into the current family's inputs."""
        adapter, family = self.adapter, self.params.family
        title = demo.DATASETS[dataset][0]
        self._last_demo = dataset
        self._enqueue_load(f"Loading demo: {title}…", lambda: adapter.demo_inputs(dataset),
                           lambda inputs: self._demo_loaded(family, dataset, inputs),
                           f"Cannot load the demo {title}")

    def _demo_loaded(self, family: str, dataset: str, inputs) -> None:
        if family == self.params.family:
            for name, value in self.adapter.demo_params(dataset).items():
                self.params.set_param(name, value)
        for role, spec in inputs.items():
            state = InputState.of(spec.records, spec.source, spec.use, spec.region)
            self._input_states[(family, role)] = state
            if family == self.params.family and role in self.input_panels:
                self.input_panels[role].set_state(state)
        self.state_label.setText(f"Demo loaded: {demo.DATASETS[dataset][0]}. Press Run (Ctrl+R).")
        self._update_actions()
        self.inputs_loaded.emit()

    def _enqueue_load(self, message, function, on_done, error_title) -> None:
        self._load_queue.append((message, function, on_done, error_title))
        if not self.loader.running:
            self._next_load()

    def _next_load(self) -> None:
        if not self._load_queue:
            self._loading = None
            self._update_actions()
            return
        self._loading = self._load_queue.pop(0)
        message, function = self._loading[:2]
        self.state_label.setText(message)
        self.loader.start(lambda token: call(function))
        self._update_actions()

    def _on_loaded(self, value) -> None:
        on_done = self._loading[2]
        on_done(value)
        self._next_load()

    def _on_load_failed(self, message: str) -> None:
        title = self._loading[3]
        self.state_label.setText(title + ".")
        self.show_error(title, f"{message}\n\nThe sequences loaded before are kept.")
        self._next_load()

    def inputs(self) -> dict:
        return {role: panel.state().selected() for role, panel in self.input_panels.items()}

    # ---------------------------------------------------------------------------------------
    # running
    def _missing_input(self) -> str | None:
        for spec in self.params.spec.inputs:
            panel = self.input_panels[spec.role]
            if not panel.state().selected():
                what = "no record selected" if panel.state().records else "nothing loaded"
                return f"{spec.title}: {what}. Open a file, paste a sequence, or load a demo (Demo menu)."
        return None

    def _prepare(self):
        missing = self._missing_input()
        if missing:
            self.show_error("Inputs missing", missing)
            return None
        try:
            choice = self.params.choice()
        except ValueError as err:
            self.show_error("Invalid parameters", str(err))
            return None
        return choice

    def run(self) -> bool:
        """Start the job the panels describe. False if it could not start."""
        if self.mode != "idle":
            return False
        choice = self._prepare()
        if choice is None:
            return False
        adapter, inputs = self.adapter, self.inputs()
        self._begin("running")
        for view in self.views[:-1]:
            view.reset(None)
        self.results.set_columns(adapter.table_columns(choice.params))
        self.state_label.setText("Starting…")
        self.runner.start(lambda token: run_job(adapter, inputs, choice, token))
        return True

    def compare(self) -> bool:
        if self.mode != "idle":
            return False
        choice = self._prepare()
        if choice is None:
            return False
        adapter, inputs = self.adapter, self.inputs()
        self._begin("comparing")
        self.compare_view.reset(None)
        self.throughput.reset(None)
        self.tabs.setCurrentWidget(self.compare_view)
        self.runner.start(lambda token: compare_backends(adapter, inputs, choice, token))
        return True

    def _begin(self, mode: str) -> None:
        self.mode = mode
        self.result = None if mode == "running" else self.result
        self._latest = None
        self._cancel_at = None
        self.cancel_latency = None
        self._started_at = time.perf_counter()
        self.progress_bar.setValue(0)
        self.progress_bar.setFormat("")
        self.eta_label.setText("")
        self.rate_label.setText("")
        self._draw_timer.start()
        self._update_actions()

    def cancel(self) -> None:
        if self.mode == "idle" or self._cancel_at is not None:
            return
        self._cancel_at = time.perf_counter()
        self.runner.cancel()
        self.state_label.setText("Cancelling… (results found so far are kept)")
        self._update_actions()

    def _on_progress(self, item) -> None:
        if isinstance(item, JobStarted):
            self.job = item.job
            for view in self.views[:-1]:
                view.reset(item.job)
            return
        if isinstance(item, CompareStep):
            if item.finished is not None:
                self.compare_view.add_row(item.finished)
            if item.progress is None:
                self.throughput.reset(None)
                self._compare_step = item
                return
            self._compare_step = item
            item = item.progress
        self._latest = item
        self.throughput.add(item)
        self._dirty = True

    def _draw(self) -> None:
        """Draw the newest progress (timer, ~30 Hz)."""
        p = self._latest
        if not self._dirty or p is None:
            return
        self._dirty = False
        label = self._run_label()
        if self._cancel_at is not None:
            pass  # keep saying "Cancelling…" until the generator has returned
        elif p.phase == "compiling":
            self.progress_bar.setRange(0, 0)  # busy: compiling has no measurable progress
            self.state_label.setText(f"Compiling kernels for {label}… (first run only; cached on disk "
                                     "afterwards)")
        else:
            self.progress_bar.setRange(0, 1000)
            fraction = p.fraction
            if self.mode == "comparing":
                step = self._compare_step
                fraction = (step.index + fraction) / max(1, step.total)
            self.progress_bar.setValue(int(1000 * fraction))
            self.progress_bar.setFormat(f"{100 * fraction:.0f}%")
            if self.mode == "comparing":
                step = self._compare_step
                self.state_label.setText(f"Comparing {step.index + 1}/{step.total}: {step.label}…")
            else:
                self.state_label.setText(f"Running {label}…")
            if 0 < p.fraction < 1 and p.elapsed > 0.3:
                remaining = p.elapsed * (1 - p.fraction) / p.fraction
                self.eta_label.setText(f"ETA {format_duration(remaining)}")
            self.rate_label.setText(self._rate_text(p))
        if self.mode == "running":
            now = time.perf_counter()
            if p.partial is not None and now - self._table_at >= TABLE_INTERVAL_S:
                self._table_at = now
                empty = self.results.model.rowCount() == 0
                self.results.model.extend_to(self.adapter.items(p.partial), self.adapter.rows)
                if empty and self.results.model.rowCount():
                    self.results.fit_columns()  # once, on the first rows: not again at the end
            for view in self.views[:-1]:
                view.show_progress(p)
        else:
            self.throughput.show_progress(p)

    def _rate_text(self, p: Progress) -> str:
        text = si(p.cells_per_second, "cells/s")
        if self.params.spec.metric == "comparisons" and p.comparisons:
            text += " · " + si(p.comparisons_per_second, "cmp/s")
        return text

    def _run_label(self) -> str:
        job = self.job
        if job is None:
            return self.params.family
        label = f"{job.family} {job.variant}/{job.backend}"
        return label + (f"/{job.parallel}" if job.parallel else "")

    def _end(self) -> None:
        self._draw()
        self._draw_timer.stop()
        if self._cancel_at is not None:
            self.cancel_latency = time.perf_counter() - self._cancel_at
        self.mode = "idle"
        self.progress_bar.setRange(0, 1000)
        self.eta_label.setText("")
        self._update_actions()

    def _on_finished(self, value) -> None:
        if self.mode == "comparing":
            self._end()
            self.compare_rows = value
            done = sum(1 for r in value if r.complete)
            self.state_label.setText(f"Compared {done} runs of the same job.")
            self.progress_bar.setValue(1000 if self._cancel_at is None else self.progress_bar.value())
            self.compare_finished.emit(value)
            return
        result = value
        self.result = result
        self._dirty = True
        self._end()
        adapter = self.adapter
        had_rows = self.results.model.rowCount() > 0
        self.results.model.settle(adapter.items(result), adapter.rows, adapter.result_extends_partial)
        if not had_rows:
            self.results.fit_columns()
        for view in self.views[:-1]:
            view.show_result(result)
        self._on_filtered()
        info = result.info
        rate = si(info.cells / info.seconds, "cells/s") if info.seconds > 0 else ""
        if info.complete:
            self.progress_bar.setValue(1000)
            self.progress_bar.setFormat("100%")
            self.state_label.setText(f"Done: {adapter.summary(result)} in {info.seconds:.3g} s "
                                     f"({self._run_label()}, {rate}).")
        else:
            self.state_label.setText(f"Cancelled after {info.seconds:.3g} s: kept {adapter.summary(result)}."
                                     " They can be exported.")
        self._update_actions()
        self.run_finished.emit(result)

    def _on_failed(self, message: str) -> None:
        self._end()
        self.state_label.setText("The run failed.")
        self.show_error("The run failed", message, self.runner.details)
        self.run_failed.emit(message)

    # ---------------------------------------------------------------------------------------
    # selection and filters
    def _on_item_selected(self, item) -> None:
        for view in self.views:
            view.select(item)

    def select_best(self) -> bool:
        """Select the adapter's most interesting result item (used by --screenshot)."""
        if self.result is None:
            return False
        item = self.adapter.best_item(self.result)
        return item is not None and self.results.select_item(item)

    def _on_view_activated(self, item) -> None:
        if not self.results.select_item(item):
            self.results.clear_filters()
            self.results.select_item(item)

    def _on_filtered(self) -> None:
        proxy = self.results.proxy
        items = proxy.visible_items() if proxy.active() else None
        for view in self.views:
            view.highlight(items)

    # ---------------------------------------------------------------------------------------
    # export
    def export_csv(self, path: str | None = None) -> str | None:
        if self.result is None:
            return None
        if path is None:
            start = os.path.join(self.settings.value("last_export_dir", str(Path.home())),
                                 f"{self.params.family}-results.csv")
            path, _ = QFileDialog.getSaveFileName(self, "Export results as CSV", start,
                                                  "CSV files (*.csv);;All files (*)")
            if not path:
                return None
        try:
            write_text(path, self.adapter.csv_text(self.result))
        except OSError as err:
            self.show_error("Cannot write the CSV file", f"{path}: {err.strerror or err}")
            return None
        self.settings.setValue("last_export_dir", os.path.dirname(os.path.abspath(path)))
        self.state_label.setText(f"Exported {self.adapter.summary(self.result)} to {path}.")
        return path

    def alignment_text(self) -> str:
        parts = []
        if self.result is not None:
            parts.append(self.adapter.alignment_text(self.result, self.job))
        parts += [view.alignment_text() for view in self.views]
        return "\n\n".join(p for p in parts if p)

    def export_alignments(self, path: str | None = None) -> str | None:
        text = self.alignment_text()
        if not text:
            self.show_error("No alignment to export", "Run a job (or select a candidate) first.")
            return None
        if path is None:
            start = os.path.join(self.settings.value("last_export_dir", str(Path.home())),
                                 f"{self.params.family}-alignments.txt")
            path, _ = QFileDialog.getSaveFileName(self, "Export alignments", start,
                                                  "Text files (*.txt);;All files (*)")
            if not path:
                return None
        try:
            write_text(path, text + "\n")
        except OSError as err:
            self.show_error("Cannot write the file", f"{path}: {err.strerror or err}")
            return None
        self.state_label.setText(f"Alignments written to {path}.")
        return path

    def save_plot(self, path: str | None = None) -> list[str]:
        view = self.tabs.currentWidget()
        items = view.plot_items() if view is not None else {}
        if not items:
            return []
        if path is None:
            start = os.path.join(self.settings.value("last_export_dir", str(Path.home())),
                                 f"{self.params.family}-{next(iter(items))}.png")
            path, _ = QFileDialog.getSaveFileName(self, "Save plot", start,
                                                  "PNG image (*.png);;SVG image (*.svg)")
            if not path:
                return []
        base, suffix = os.path.splitext(path)
        suffix = suffix if suffix.lower() in (".png", ".svg") else ".png"
        written = []
        for name, item in items.items():
            target = base + suffix if len(items) == 1 else f"{base}-{name}{suffix}"
            try:
                export_plot(item, target)
            except Exception as err:  # noqa: BLE001 -- exporters raise assorted errors
                self.show_error("Cannot save the plot", f"{target}: {err}")
                return written
            written.append(target)
        self.state_label.setText("Saved " + ", ".join(written))
        return written

    # ---------------------------------------------------------------------------------------
    # misc
    def show_error(self, title: str, text: str, details: str = "") -> None:
        """An error dialog; with ``error_sink`` set (headless runs) the sink gets it instead."""
        if self.error_sink is not None:
            self.error_sink(title, text, details)
            return
        box = QMessageBox(QMessageBox.Icon.Critical, title, text, QMessageBox.StandardButton.Ok, self)
        if details:
            box.setDetailedText(details)
        box.exec()

    def _about(self) -> None:
        QMessageBox.about(self, "About primerscope",
                          "<b>primerscope</b><br>Candidate primer regions and DNA dynamic programming, "
                          "live, on CPU and GPU.<br><br>Coordinates are 1-based and inclusive.")

    def _update_actions(self) -> None:
        idle = self.mode == "idle"
        ready = idle and self._missing_input() is None
        self.run_action.setEnabled(ready)
        self.compare_action.setEnabled(ready)
        self.cancel_action.setEnabled(not idle and self._cancel_at is None)
        self.export_action.setEnabled(idle and self.result is not None)
        self.export_align_action.setEnabled(idle and self.result is not None)
        self.params.setEnabled(idle)
        for action in list(self.demo_actions.values()) + [self.open_action, self.open2_action,
                                                            self.paste_action]:
            action.setEnabled(idle)

    def _restore_geometry(self) -> None:
        geometry = self.settings.value("window/geometry")
        if geometry is not None:
            self.restoreGeometry(geometry)
        else:
            self.resize(1440, 900)

    def closeEvent(self, event) -> None:
        self.settings.setValue("window/geometry", self.saveGeometry())
        self.runner.shutdown()
        self.loader.shutdown()
        for view in self.views:
            view.shutdown()
        self.settings.sync()
        super().closeEvent(event)


def application() -> QApplication:
    app = QApplication.instance()
    if app is None:
        app = QApplication(["primerscope"])
        app.setApplicationName("primerscope")
        app.setOrganizationName("primerscope")
    style = RESOURCES / "style.qss"
    if style.exists():
        app.setStyleSheet(style.read_text())
    return app
