"""The main window's layout: inputs and parameters on the left, view tabs over the results table.

The window knows no family: the registry gives the parameters, the family's adapter
(:mod:`app.families`) gives the job, the table columns and the views. The other jobs live in
their own modules: :mod:`app.run_controller` (Run, Compare, Cancel and the drawing of a run),
:mod:`app.exports` (CSV, alignments, pictures), :mod:`app.loading` (the load queue),
:mod:`app.workspace` (File ▸ Save/Open workspace) and :mod:`app.library_dock` (the primer
library). The window only wires views to them: rows to the library, primer sets to the
Panel view, views' files to the exports.
"""

from __future__ import annotations

import itertools
import os
from pathlib import Path

from PySide6.QtCore import QEvent, QSettings, Qt, QTimer, QUrl, Signal
from PySide6.QtGui import QAction, QDesktopServices, QIcon, QKeySequence
from PySide6.QtWidgets import (QApplication, QFileDialog, QLabel, QMainWindow, QMessageBox,
                               QProgressBar, QScrollArea, QSplitter, QStyle, QTabWidget, QToolBar,
                               QVBoxLayout, QWidget)


from app import demo, workspace
from app.desktop import DESKTOP_ID
from app.exports import Exports
from app.families import PRIMER_FAMILY
from app.families import adapter as family_adapter
from app.inputs import FILE_FILTER, InputPanel, InputState, PasteDialog
from app.library_dock import LibraryDock
from app.loading import LoadQueue, read_files
from app.params import ParamsPanel
from app.paths import ICON, RESOURCES
from app.results import ResultsPanel
from app.run_controller import RunController
from app.settings import load_json, save_json
from app.views import TabPage
from app.views.compare import CompareView
from app.views.plotting import configure
from app.views.throughput import ThroughputView

GUIDE = Path(__file__).resolve().parents[1] / "docs" / "gui.md"
GUIDE_URL = "https://github.com/primerscope/primerscope/blob/main/docs/gui.md"
MAX_RECENT = 10
#: Tabs with tables of their own: the results table under them is hidden (at 720 px it took
#: half of their height while holding nothing they use).
OWN_TABLE_TABS = ("Pairs", "Panel", "Group")
#: Tabs with inputs and parameters of their own: the left panel is hidden there (full width).
OWN_INPUT_TABS = ("Group",)
#: The smallest screen the window must fit (a 1366x768 laptop, less its panel and title bar).
SMALL_SCREEN = (1280, 720)


def in_sentence(title: str) -> str:
    """An input box's title inside a sentence, as the box writes it: "Target" -> "target",
    "Sequence A" -> "sequence A" (not "sequence a": the toolbar and the boxes say the same)."""
    return title[:1].lower() + title[1:]


def version() -> str:
    import engine

    return engine.__version__


class MainWindow(QMainWindow):
    """Signals: ``inputs_loaded`` after a file or demo load; the run controller's
    ``run_finished(result)``, ``run_failed(str)`` and ``compare_finished(rows)``."""

    inputs_loaded = Signal()

    def __init__(self, settings: QSettings | None = None, parent=None, restore: bool = True):
        super().__init__(parent)
        configure()
        self.settings = settings if settings is not None else QSettings("primerscope", "primerscope")
        self.setWindowTitle("primerscope")
        self.setWindowIcon(QIcon(str(ICON)))
        self.setAcceptDrops(False)
        #: Headless runs (--screenshot, tests) answer dialogs through these instead.
        self.error_sink = None
        self.ask_sink = None
        self.choose_sink = None

        self.controller = RunController(self)
        self.controller.state_changed.connect(self._update_actions)
        self.run_finished = self.controller.run_finished
        self.run_failed = self.controller.run_failed
        self.compare_finished = self.controller.compare_finished
        self.exports = Exports(self)
        self.loads = LoadQueue(self)
        self.loads.message.connect(self._on_load_message)
        self.loads.failed.connect(self._on_load_failed)
        self.loads.idle.connect(self._on_loads_idle)

        self.warmup = None  # compiling ahead (start_warmup): interactive sessions only
        self._last_demo: str | None = None
        self._input_states: dict[tuple[str, str], InputState] = {}
        self.input_panels: dict[str, InputPanel] = {}
        #: The adapter's views (tabs, and tools over the results table); then the two every
        #: family has: throughput (fed by a run) and compare (fed by Compare backends only).
        self.family_views: list = []
        self.pages: list[TabPage] = []

        self._build_left()
        self._build_center()
        self._build_status()
        self._build_library()
        self._build_actions()
        self.tabs.currentChanged.connect(lambda _: self._update_actions())  # Pairs: its own export
        self._setup_family()
        self._restore_geometry()
        self._update_actions()
        if restore and self.restore_on_start.isChecked():
            saved = load_json(self.settings, workspace.LAST_KEY, None)
            if isinstance(saved, dict):
                QTimer.singleShot(0, lambda: workspace.apply(self, saved, quiet=True))

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
        self.left_content = QWidget()
        layout = QVBoxLayout(self.left_content)
        layout.setContentsMargins(9, 4, 9, 4)  # (the kdiff panel with the pairs' rows fits 720 px)
        layout.addWidget(self.params)
        layout.addStretch(1)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setWidget(self.left_content)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.left = scroll
        # The panel's needs change after the first layout (records listed, Advanced opened,
        # help re-wrapped): fit again on every layout request, or its right edge is cut off.
        self.left_content.installEventFilter(self)

    def eventFilter(self, watched, event) -> bool:
        if watched is self.left_content and event.type() == QEvent.Type.LayoutRequest:
            QTimer.singleShot(0, self._fit_left)
        return super().eventFilter(watched, event)

    def _build_center(self) -> None:
        self.tabs = QTabWidget()
        self.tabs.setDocumentMode(True)
        self.tabs.currentChanged.connect(lambda _: self._show_results_table())
        self.results = ResultsPanel()
        self.results.selected.connect(self._on_item_selected)
        self.results.filtered.connect(self.on_filtered)
        self.results.export_selection_requested.connect(lambda: self.exports.export_selection())
        right = QSplitter(Qt.Orientation.Vertical)
        right.addWidget(self.tabs)
        right.addWidget(self.results)
        # Plots and table share the height evenly: at 720 px (kdiff's primer tools over the
        # table) the table still shows about ten rows.
        right.setStretchFactor(0, 1)
        right.setStretchFactor(1, 1)
        right.setChildrenCollapsible(False)
        right.setSizes([500, 500])
        self.right = right
        main = QSplitter(Qt.Orientation.Horizontal)
        main.addWidget(self.left)
        main.addWidget(right)
        main.setStretchFactor(1, 1)
        main.setChildrenCollapsible(False)
        main.setSizes([380, 1060])
        self.main_splitter = main
        self.setCentralWidget(main)

    def _build_library(self) -> None:
        """The primer library dock: hidden until asked for (View menu) or rows are added."""
        dock = LibraryDock(self)
        dock.panel_requested.connect(self.check_panel)
        self.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, dock)
        dock.setFloating(True)  # see LibraryDock.place
        dock.hide()
        self.library_dock = dock
        self.results.library_add_requested.connect(self._add_rows_to_library)

    def _build_status(self) -> None:
        bar = self.statusBar()
        self.state_label = QLabel("Ready.")
        # Hovering a menu or toolbar entry shows its tip in the status bar: the state stays
        # visible beside it (a permanent widget), and results have their own label anyway.
        self.rate_label = QLabel()
        self.rate_label.setToolTip("Throughput of the running job (average since its start)")
        self.eta_label = QLabel()
        self.progress_bar = QProgressBar()
        self.progress_bar.setRange(0, 1000)
        self.progress_bar.setTextVisible(True)
        self.progress_bar.setFormat("")
        self.progress_bar.setFixedWidth(180)
        bar.addPermanentWidget(self.state_label, 1)
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
        ex = self.exports
        self.open_action = self._action("&Open…", lambda: self.open_dialog(self._roles()[0]),
                                        QKeySequence.StandardKey.Open, SP.SP_DialogOpenButton,
                                        "Open a sequence file for the first input")
        self.open2_action = self._action("Open &second input…", lambda: self.open_dialog(self._roles()[-1]),
                                         "Ctrl+Shift+O", None, "Open a sequence file for the second input")
        self.paste_action = self._action("&Paste sequence…", lambda: self.paste_dialog(self._roles()[0]),
                                         "Ctrl+Shift+V", None, "Paste a sequence for the first input")
        self.save_workspace_action = self._action(
            "Save &workspace…", lambda: workspace.save_dialog(self), None, None,
            "Save the loaded files, their regions, the family and its parameters as a small JSON file")
        self.open_workspace_action = self._action(
            "Open w&orkspace…", lambda: workspace.open_dialog(self), None, None,
            "Load the files, regions, family and parameters of a saved workspace")
        self.restore_on_start = QAction("Restore the last workspace on start", self)
        self.restore_on_start.setCheckable(True)
        self.restore_on_start.setChecked(self.settings.value(workspace.RESTORE_KEY, False, type=bool))
        self.restore_on_start.toggled.connect(
            lambda on: self.settings.setValue(workspace.RESTORE_KEY, bool(on)))
        self.run_action = self._action("&Run", self.run, ["Ctrl+R", "F5"],
                                       SP.SP_MediaPlay, "Run the job")
        self._run_tips = (self.run_action.toolTip(), self.run_action.statusTip())
        self.cancel_action = self._action("&Cancel", self.cancel, ["Esc", "Ctrl+."],
                                          SP.SP_MediaStop, "Cancel the job; results found so far are kept")
        self.compare_action = self._action("Compare &backends", lambda: self.controller.compare(), "Ctrl+B",
                                           SP.SP_ComputerIcon,
                                           "Run the job on every available variant and backend")
        self.export_action = self._action("&Export results as CSV…", ex.export_csv, "Ctrl+E",
                                          SP.SP_DialogSaveButton,
                                          "Export the results: all rows, or the rows the table shows")
        self.export_align_action = self._action("Export &alignments as text…", ex.export_alignments,
                                                "Ctrl+Shift+E", None, "Export alignments as plain text")
        self.save_plot_action = self._action("Save a &picture of the tab (PNG/SVG)…", ex.save_picture,
                                             "Ctrl+Shift+S", None,
                                             "Save the current tab, all of its plots, as one picture")
        # Ctrl+Q itself: StandardKey.Quit is empty on some platforms (offscreen, some desktops).
        quit_action = self._action("&Quit", self.close, "Ctrl+Q")

        menu = self.menuBar().addMenu("&File")
        for action in (self.open_action, self.open2_action, self.paste_action):
            menu.addAction(action)
        menu.addSeparator()
        for action in (self.open_workspace_action, self.save_workspace_action, self.restore_on_start):
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
        self.demo_actions["group"] = self._action(  # the Group page's own demo (issue 30)
            "Group: Klebsiella pneumoniae vs E. coli", self.load_group_demo,
            tip="Eight K. pneumoniae genomes to amplify, three E. coli genomes to avoid "
                "(built by scripts/build-group-demo)")
        demo_menu.addAction(self.demo_actions["group"])
        view_menu = self.menuBar().addMenu("&View")
        library_action = self.library_dock.toggleViewAction()
        library_action.setText("Primer &library")
        library_action.setShortcut(QKeySequence("Ctrl+L"))
        library_action.setStatusTip("Show or hide the primer library: primers kept between runs")
        view_menu.addAction(library_action)
        run_menu = self.menuBar().addMenu("&Run")
        for action in (self.run_action, self.cancel_action, self.compare_action):
            run_menu.addAction(action)
        help_menu = self.menuBar().addMenu("&Help")
        help_menu.addAction(self._action("User &guide", self.open_guide, "F1",
                                         tip="Open the guide to the window (docs/gui.md)"))
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

    def run_views(self) -> list:
        """The views a run feeds: the family's and throughput (not the compare view)."""
        return self.family_views + [self.throughput]

    def all_views(self) -> list:
        return self.run_views() + [self.compare_view]

    def followup_runners(self) -> list:
        """(what, runner) of the work views start after a run (annotations, searches, pair
        design, panel checks) and of the primer library's."""
        return ([(f"{view.title.lower()} work", runner) for view in self.family_views
                 for runner in view.runners()]
                + [("the primer library", runner) for runner in self.library_dock.runners()])

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
        titles = [in_sentence(s.title) for s in fam.inputs]
        self.open_action.setText(f"&Open {titles[0]}…")
        self.open2_action.setText(f"Open {titles[-1]}…")
        self.open2_action.setVisible(len(titles) > 1)
        self.paste_action.setText(f"&Paste {titles[0]}…")
        # Views: the family's own, then throughput and compare; each tab shows a note until
        # its view has something to show.
        if self.family_views:
            for view in self.all_views():
                view.shutdown()
                view.setParent(None)
                view.deleteLater()
        for page in self.pages:
            page.deleteLater()
        self.tabs.clear()
        self.pages = []
        self.results.set_tools(None)
        self.params.set_biology(None)
        self.family_views = list(self.adapter.create_views(self))
        if fam.name == PRIMER_FAMILY:  # the Group page: its own inputs and job (app.views.group)
            from app.views.group import page as group_page

            self.family_views.append(group_page(self))
        self.throughput = ThroughputView(fam.metric)
        self.compare_view = CompareView()
        for view in self.all_views():
            if getattr(view, "placement", "tab") == "results":  # tools over the results table
                self.results.set_tools(view)
            else:
                page = TabPage(view)
                self.pages.append(page)
                self.tabs.addTab(page, view.title)
            view.item_activated.connect(self._on_view_activated)
            if hasattr(view, "export_requested"):  # a view's own table (off-target sites)
                view.export_requested.connect(lambda model, v=view: self.exports.export_table(
                    model, f"{self.params.family}-{v.title.lower().replace(' ', '-')}.csv"))
            if hasattr(view, "exportable"):  # Export results follows its results
                view.designed.connect(lambda _: self._update_actions())
            if hasattr(view, "save_requested"):  # a view's own files (pairs, panel)
                view.save_requested.connect(
                    lambda text, title, name, pattern: self.exports.save_text(text, title, name, pattern))
            if hasattr(view, "library_add_requested"):
                view.library_add_requested.connect(self.library_dock.add_entries)
            if hasattr(view, "panel_requested"):
                view.panel_requested.connect(self.check_panel)
            if getattr(view, "runs_own_job", False):  # the toolbar's Run/Cancel follow its job
                view.running_changed.connect(lambda v=view: self._on_own_job_changed(v))
            if hasattr(view, "biology"):  # product size and Tm beside k and strands
                self.params.set_biology(view.biology)
        self.results.set_library_what(self.adapter.library_what)
        self.results.set_columns(self.adapter.table_columns(self.params.state()["params"]))
        self.controller.restore()
        self._set_tab_order()
        QTimer.singleShot(0, self._fit_left)

    def start_warmup(self) -> None:
        """Compile the kernels of the page shown ahead, in a low-priority process, shortly
        after start and after each change of family or selection (app.warmup)."""
        from app.warmup import WARMUP_DELAY_MS, Warmup

        if self.warmup is None:
            self.warmup = Warmup(self, again=self._warm)
            self.params.changed.connect(self._warm_soon)
        QTimer.singleShot(WARMUP_DELAY_MS, self._warm)

    def _warm_soon(self) -> None:
        from app.warmup import WARMUP_DELAY_MS

        QTimer.singleShot(WARMUP_DELAY_MS, self._warm)

    def _warm(self) -> None:
        if self.warmup is not None and not self.controller.closing:
            self.warmup.start(self.params.family, self.params.state())

    def _on_family_changed(self, name: str) -> None:
        self._setup_family()
        if self._last_demo and not any(p.state().records for p in self.input_panels.values()):
            self.load_demo(self._last_demo)
        self._update_actions()

    def _on_input_changed(self, role: str) -> None:
        self._input_states[(self.params.family, role)] = self.input_panels[role].state()
        self._update_actions()
        self.refresh_pages()  # a tab waiting for inputs (Pairs) shows its view
        QTimer.singleShot(0, self._fit_left)

    def _fit_left(self) -> None:
        """The left panel is as wide as its widgets need (it scrolls vertically, never clips)."""
        needed = self.left_content.minimumSizeHint().width()
        scrollbar = self.left.verticalScrollBar().sizeHint().width()
        self.left.setMinimumWidth(max(300, needed + scrollbar + 2 * self.left.frameWidth()))

    def _set_tab_order(self) -> None:
        """Tab follows the layout: family, inputs, parameters, view tabs, filters, table."""
        chain = [self.params.family_combo]
        for panel in self.input_panels.values():
            chain += panel.focus_chain()
        chain += self.params.focus_chain() + [self.tabs.tabBar()] + self.results.focus_chain()
        for first, second in itertools.pairwise(chain):
            QWidget.setTabOrder(first, second)

    # ---------------------------------------------------------------------------------------
    # pages and views
    def refresh_pages(self) -> None:
        controller = getattr(self, "controller", None)  # (not yet while the window is built)
        # (a comparison fills the Compare tab only: the others keep their note)
        running = controller is not None and controller.mode == "running"
        for page in self.pages:
            page.refresh(running)

    def current_view(self):
        page = self.tabs.currentWidget()
        return page.view if isinstance(page, TabPage) else None

    def show_view(self, view) -> None:
        for page in self.pages:
            if page.view is view:
                self.tabs.setCurrentWidget(page)

    def view_titled(self, title: str):
        if not title:
            return None
        return next((v for v in self.family_views if v.title == title), None)

    def _show_results_table(self) -> None:
        view = self.current_view()
        self.results.setVisible(view is None or view.title not in OWN_TABLE_TABS)
        self.left.setVisible(view is None or view.title not in OWN_INPUT_TABS)

    def load_group_demo(self) -> bool:
        """Demo ▸ Group: the Group page with the Klebsiella demo, or why it is not there."""
        if self.params.family != PRIMER_FAMILY:
            self.params.set_family(PRIMER_FAMILY)
        view = self.view_titled("Group")
        self.show_view(view)
        loaded = view.load_demo()
        self.state_label.setText("Demo loaded: Group, Klebsiella pneumoniae vs E. coli." if loaded
                                 else view.error.text())
        return loaded

    def load_start_demo(self, dataset: str) -> None:
        """``primerscope gui --demo``: the family's demo, and the Group page's (its lists hold
        the group demo when scripts/build-group-demo has built it; else it says how to)."""
        self.load_demo(dataset)
        view = self.view_titled("Group")
        if view is not None:
            view.load_demo(asked=False)

    # ---------------------------------------------------------------------------------------
    # the primer library and panels
    def _add_rows_to_library(self) -> None:
        """The results table's selected rows to the library (what the adapter says they hold)."""
        items = [self.results.model.item(r) for r in self.results.selected_source_rows()]
        entries = self.adapter.library_entries(items, self.controller.job)
        if not entries:
            self.state_label.setText("The selected rows hold no primer to add.")
            return
        self.library_dock.add_entries(entries, f"the {self.params.family} results")

    def check_panel(self, primers, source: str) -> bool:
        """Check primers as a multiplex panel in the Panel view (of the primer tools' family)."""
        if self.params.family != PRIMER_FAMILY:
            if self.controller.mode != "idle":
                self.show_error("Check as panel", "The Panel view is one of the "
                                f"{PRIMER_FAMILY} views: wait for the run to end, or cancel it.")
                return False
            self.params.set_family(PRIMER_FAMILY)
        view = self.view_titled("Panel")
        if view is None:
            return False
        self.show_view(view)
        started = view.check(primers, source)
        self.refresh_pages()
        return started

    def library_targets(self, ids) -> tuple:
        """Loaded records (whole, not cut to a region) for a GenBank export of the library:
        those with these ids, else the current family's first input."""
        seen: dict = {}
        states = list(self._input_states.values()) + [p.state() for p in self.input_panels.values()]
        for state in states:
            for record in state.records:
                seen.setdefault(record.id, record)
        chosen = tuple(r for rid, r in seen.items() if rid in ids)
        if chosen:
            return chosen
        first = next(iter(self.input_panels.values()), None)
        return tuple(first.state().records) if first is not None else ()

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
        paths, _ = QFileDialog.getOpenFileNames(self, f"Open {in_sentence(spec.title)}", start, FILE_FILTER)
        if paths:
            self.settings.setValue("last_dir", os.path.dirname(paths[0]))
            self.load_files(role, paths)

    def paste_dialog(self, role: str) -> None:
        spec = next(s for s in self.params.spec.inputs if s.role == role)
        dialog = PasteDialog(spec.title, self)
        if dialog.exec() and dialog.records:
            self._set_records(role, dialog.records, "pasted text")

    def load_files(self, role: str, paths: list[str], use=None, region=None) -> None:
        """Load files (off the GUI thread); on failure the panel keeps what it held.

        Empty records are skipped with a warning in the panel; ``use`` and ``region`` (a
        workspace's) choose records and positions once loaded.
        """
        names = ", ".join(os.path.basename(p) for p in paths)
        family = self.params.family

        self.loads.add(f"Loading {names}…", lambda: read_files(paths),
                       lambda value: self._files_loaded(family, role, paths, *value, use, region),
                       f"Cannot load {names}")

    def _files_loaded(self, family, role, paths, records, skipped, notes=(), use=None,
                      region=None) -> None:
        self._remember(paths)
        source = paths[0] if len(paths) == 1 else f"{len(paths)} files"
        if use is None:
            spec = next(s for s in self.params.families[family].inputs if s.role == role)
            use = None if spec.many else {0}
        else:
            use = [i for i in use if 0 <= i < len(records)]
        state = InputState.of(records, source, use, region, skipped=tuple(skipped),
                              files=tuple(os.path.abspath(p) for p in paths))
        self._input_states[(family, role)] = state
        if family == self.params.family and role in self.input_panels:
            self.input_panels[role].set_state(state)
            self._on_input_changed(role)
        total = sum(len(r) for r in records)
        text = f"Loaded {len(records)} record(s), {total:,} bp."
        if skipped:
            text += f" Skipped {len(skipped)} empty record(s): {', '.join(skipped[:3])}."
        for note in notes[:2]:  # what the command line prints as warnings
            text += f" Warning: {note}."
        self.state_label.setText(text)
        self.inputs_loaded.emit()

    def _set_records(self, role: str, records, source: str) -> None:
        panel = self.input_panels.get(role)
        if panel is not None:
            panel.set_records(records, source)
        self.inputs_loaded.emit()

    def load_demo(self, dataset: str, overrides: dict | None = None) -> None:
        """Load a demo data set into the current family's inputs; ``overrides`` (a workspace's)
        maps roles to the (use, region) to apply instead of the demo's own."""
        owner = demo.FAMILY.get(dataset)
        if owner and owner != self.params.family:
            self._last_demo = None  # the family switch must not load the previous demo
            self.params.set_family(owner)
        adapter, family = self.adapter, self.params.family
        title = demo.DATASETS[dataset][0]
        self._last_demo = dataset
        self.loads.add(f"Loading demo: {title}…", lambda: adapter.demo_inputs(dataset),
                       lambda inputs: self._demo_loaded(family, dataset, inputs, overrides or {}),
                       f"Cannot load the demo {title}")

    def _demo_loaded(self, family: str, dataset: str, inputs, overrides: dict) -> None:
        if family == self.params.family and not overrides:
            for name, value in self.adapter.demo_params(dataset).items():
                self.params.set_param(name, value)
        for role, spec in inputs.items():
            use, region = overrides.get(role, (spec.use, spec.region))
            state = InputState.of(spec.records, spec.source, use, region, demo=dataset)
            self._input_states[(family, role)] = state
            if family == self.params.family and role in self.input_panels:
                self.input_panels[role].set_state(state)
        self.state_label.setText(f"Demo loaded: {demo.DATASETS[dataset][0]}. Press Run (Ctrl+R).")
        self._update_actions()
        QTimer.singleShot(0, self._fit_left)
        view = self.view_titled(self.adapter.demo_view(dataset)) if family == self.params.family else None
        if view is not None and not overrides:  # the demo runs the view's own job (Pairs)
            self.show_view(view)
            self.state_label.setText(f"Demo loaded: {demo.DATASETS[dataset][0]}.")
            view.run()
        self.refresh_pages()
        self.inputs_loaded.emit()

    def own_job_view(self):
        """The shown view when it runs a job of its own (the Group page), else None: the
        toolbar's Run and Cancel are that job's there."""
        view = self.current_view()
        return view if getattr(view, "runs_own_job", False) else None

    def _on_own_job_changed(self, view) -> None:
        """A page's own job started, is being cancelled or ended: the status bar says so (not
        a stale "Demo loaded ... Press Run")."""
        if view.cancellable():
            self.state_label.setText(f"{view.title}: running; its progress is on the "
                                     f"{view.title} tab.")
        elif view.runner.running:
            self.state_label.setText(f"{view.title}: cancelling…")
        elif view.result is not None:
            self.state_label.setText(f"{view.title}: {view.status.text()}")
        self._update_actions()

    def run(self) -> bool:
        """Run ▸ Run: the shown page's own job (the Group page's), else the family's job."""
        view = self.own_job_view()
        if view is not None:
            return view.run()
        return self.controller.run()

    def cancel(self) -> None:
        """Cancel the shown page's own job, else the run, or else the loads."""
        view = self.own_job_view()
        if view is not None and view.cancellable():
            view.cancel()
        elif self.controller.mode != "idle":
            self.controller.cancel()
        else:
            self.loads.cancel()

    def _on_load_message(self, text: str) -> None:
        self.state_label.setText(text)
        if self.controller.mode == "idle" and self.loads.cancellable:
            self.progress_bar.setRange(0, 0)  # busy: a read has no progress to report
        self._update_actions()

    def _on_loads_idle(self) -> None:
        if self.controller.mode == "idle":
            self.progress_bar.setRange(0, 1000)
        self._update_actions()

    def _on_load_failed(self, title: str, message: str) -> None:
        self.state_label.setText(title + ".")
        self.show_error(title, f"{message}\n\nThe sequences loaded before are kept.")

    def inputs(self) -> dict:
        return {role: panel.state().selected() for role, panel in self.input_panels.items()}

    def missing_input(self) -> str | None:
        for spec in self.params.spec.inputs:
            panel = self.input_panels[spec.role]
            if not panel.state().selected():
                what = "no record selected" if panel.state().records else "nothing loaded"
                return f"{spec.title}: {what}. Open a file, paste a sequence, or load a demo (Demo menu)."
        return None

    # ---------------------------------------------------------------------------------------
    # selection and filters
    def _on_item_selected(self, item) -> None:
        for view in self.all_views():
            view.select(item)

    def select_best(self) -> bool:
        """Select the adapter's most interesting result item (used by --screenshot)."""
        result = self.controller.result
        if result is None:
            return False
        item = self.adapter.best_item(result)
        return item is not None and self.results.select_item(item)

    def _on_view_activated(self, item) -> None:
        if not self.results.select_item(item):
            self.results.clear_filters()
            self.results.select_item(item)

    def on_filtered(self) -> None:
        proxy = self.results.proxy
        items = proxy.visible_items() if proxy.active() else None
        for view in self.all_views():
            view.highlight(items)

    # ---------------------------------------------------------------------------------------
    # dialogs
    def show_error(self, title: str, text: str, details: str = "") -> None:
        """An error dialog; with ``error_sink`` set (headless runs) the sink gets it instead."""
        if self.error_sink is not None:
            self.error_sink(title, text, details)
            return
        box = QMessageBox(QMessageBox.Icon.Critical, title, text, QMessageBox.StandardButton.Ok, self)
        if details:
            box.setDetailedText(details)
        box.exec()

    def ask(self, title: str, text: str) -> bool:
        """A yes/no question (No is the default); ``ask_sink`` answers it in headless runs."""
        if self.ask_sink is not None:
            return bool(self.ask_sink(title, text))
        box = QMessageBox(QMessageBox.Icon.Question, title, text,
                          QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No, self)
        box.setDefaultButton(QMessageBox.StandardButton.No)
        return box.exec() == QMessageBox.StandardButton.Yes

    def choose(self, title: str, text: str, options: dict[str, str]) -> str | None:
        """One of ``options`` (key -> button text), or None for Cancel."""
        if self.choose_sink is not None:
            return self.choose_sink(title, text, options)
        box = QMessageBox(QMessageBox.Icon.Question, title, text, QMessageBox.StandardButton.NoButton, self)
        buttons = {box.addButton(label, QMessageBox.ButtonRole.AcceptRole): key
                   for key, label in options.items()}
        box.addButton(QMessageBox.StandardButton.Cancel)
        box.exec()
        return buttons.get(box.clickedButton())

    def open_guide(self) -> None:
        url = QUrl.fromLocalFile(str(GUIDE)) if GUIDE.exists() else QUrl(GUIDE_URL)
        QDesktopServices.openUrl(url)

    def _about(self) -> None:
        QMessageBox.about(self, "About primerscope", about_text())

    def _update_actions(self) -> None:
        idle = self.controller.mode == "idle"
        ready = idle and self.missing_input() is None
        has_result = idle and self.controller.result is not None
        cancellable = (not idle and not self.controller.cancelling
                       or idle and self.loads.cancellable)
        own = self.own_job_view()
        if own is not None:  # Run/Cancel are the page's job; Compare backends is the family's
            self.run_action.setEnabled(not own.runner.running)
            self.compare_action.setEnabled(False)
            self.cancel_action.setEnabled(own.cancellable() or cancellable)
            tip = f"{own.run_button.text()}: {own.run_button.toolTip()}"
            self.run_action.setToolTip(f"{tip} (Ctrl+R)")
            self.run_action.setStatusTip(tip)
        else:
            self.run_action.setEnabled(ready)
            self.compare_action.setEnabled(ready)
            self.cancel_action.setEnabled(cancellable)
            self.run_action.setToolTip(self._run_tips[0])
            self.run_action.setStatusTip(self._run_tips[1])
        view = self.current_view()  # a view with results of its own (Pairs) exports those
        own = view is not None and getattr(view, "exportable", lambda: False)()
        self.export_action.setEnabled(has_result or own)
        self.export_align_action.setEnabled(has_result)
        self.params.setEnabled(idle)
        for action in list(self.demo_actions.values()) + [self.open_action, self.open2_action,
                                                            self.paste_action,
                                                            self.open_workspace_action]:
            action.setEnabled(idle)

    # ---------------------------------------------------------------------------------------
    # geometry and closing
    def _restore_geometry(self) -> None:
        geometry = self.settings.value("window/geometry")
        if geometry is not None:
            self.restoreGeometry(geometry)
        else:
            screen = QApplication.primaryScreen()
            room = screen.availableGeometry().size() if screen is not None else None
            width, height = 1440, 900
            if room is not None:
                width, height = min(width, room.width()), min(height, room.height())
            self.resize(max(width, 800), max(height, 560))

    def closeEvent(self, event) -> None:
        busy = self.controller.busy() + (["loading files"] if self.loads.running else [])
        if busy and not self.controller.closing:
            if not self.ask("Quit primerscope?", f"A job is running ({', '.join(busy)}): quit? "
                            "It will be cancelled and its results lost."):
                event.ignore()
                return
        if not self.controller.closing:
            save_json(self.settings, workspace.LAST_KEY, workspace.capture(self))
            self.settings.setValue("window/geometry", self.saveGeometry())
        self.controller.shutdown()
        if self.warmup is not None:
            self.warmup.shutdown()
        self.loads.shutdown()
        for view in self.all_views():
            view.shutdown()
        self.library_dock.shutdown()
        self.settings.sync()
        super().closeEvent(event)


def about_text() -> str:
    guide = QUrl.fromLocalFile(str(GUIDE)).toString() if GUIDE.exists() else GUIDE_URL
    return (f"<b>primerscope {version()}</b><br>Candidate primer regions and DNA dynamic programming, "
            "live, on CPU and GPU.<br><br>Coordinates are 1-based and inclusive, in the loaded "
            f"record's own numbering.<br><br>User guide: <a href=\"{guide}\">{guide}</a>")


def application() -> QApplication:
    app = QApplication.instance()
    if app is None:
        app = QApplication(["primerscope"])
        app.setApplicationName("primerscope")
        app.setDesktopFileName(DESKTOP_ID)  # the desktop matches the window to its menu entry
        app.setOrganizationName("primerscope")
    style = RESOURCES / "style.qss"
    if style.exists():
        app.setStyleSheet(style.read_text())
    return app
