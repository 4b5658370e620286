"""The off-target report of the selected kdiff candidate: every background site within a
number of edits, on both strands, with the edits at the 3′ end and the alignment.

The search is :func:`app.primers.offtarget_run` (the engine's off-target job on the edit
family's search) on a worker thread.
"""

from __future__ import annotations

from PySide6.QtCore import QItemSelectionModel, Qt, Signal
from PySide6.QtGui import QFont, QFontDatabase
from PySide6.QtWidgets import (QAbstractItemView, QHBoxLayout, QHeaderView, QLabel, QPlainTextEdit,
                               QPushButton, QSpinBox, QSplitter, QTableView, QVBoxLayout)

from engine.jobs import Progress

from app import primers
from app.families import Column
from app.table import ElidedTipDelegate, ResultsFilter, ResultsModel
from app.views import ResultView
from app.warmup import COMPILING, CompileClock
from app.worker import JobRunner

SITE_COLUMNS = (
    Column("record", "str", "", "Background record", user_text=True),
    Column("start", "int", "start", "First base of the site (1-based, forward-strand coordinates)"),
    Column("end", "int", "end", "Last base of the site (1-based, inclusive)"),
    Column("strand", "str", "", "'+': the primer's sequence occurs on the forward strand; "
                                "'-': on the reverse strand"),
    Column("edits", "int", "", "Edits between the primer and the site"),
    Column("3′ edits", "int", "", "Edits in the last 5 bases at the primer's 3′ end: with none, "
                                  "the polymerase would likely extend from this site"),
    Column("CIGAR", "str", "", "Primer orientation: = match, X mismatch, I primer base without "
                               "site base, D site base without primer base"),
)


class OffTargetView(ResultView):
    """Every background site of the selected candidate within a number of edits (both strands).

    *Run* starts the edit family's search (:func:`engine.primers.offtarget.make_job`) on the
    run's background with the backend chosen in the parameters, on a worker thread; *Cancel*
    keeps the sites found so far. Signals ``searched(report)`` when a search ends.
    """

    title = "Off-targets"
    searched = Signal(object)
    #: Asks the window to export the sites table (the window's exports write files).
    export_requested = Signal(object)

    def __init__(self, backend_choice):
        super().__init__()
        # () -> (backend, threads, Dask scheduler or None) chosen in the parameters
        self._backend_choice = backend_choice
        self.header = QLabel("Select a candidate (table or profile), then press Run to list every "
                             "place in the background where it could still bind.")
        self.header.setWordWrap(True)
        self.max_edits = QSpinBox()
        self.max_edits.setRange(0, 100)
        self.max_edits.setValue(3)
        self.max_edits.setToolTip("Report every site within this many edits (substitutions, "
                                  "insertions, deletions), on both strands")
        self.run_button = QPushButton("Run")
        self.run_button.setToolTip("Search the background for the selected candidate")
        self.run_button.clicked.connect(self.run)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setToolTip("Stop the search; the sites found so far are kept")
        self.cancel_button.clicked.connect(self.cancel)
        self.export_button = QPushButton("Export sites…")
        self.export_button.setToolTip("Write the sites table as CSV")
        self.export_button.clicked.connect(lambda: self.export_requested.emit(self.model))
        self.status = QLabel()
        self.status.setWordWrap(True)
        self.error = QLabel()
        self.error.setObjectName("error")
        self.error.setWordWrap(True)
        self.error.setVisible(False)
        controls = QHBoxLayout()
        controls.addWidget(QLabel("Max edits"))
        controls.addWidget(self.max_edits)
        controls.addWidget(self.run_button)
        controls.addWidget(self.cancel_button)
        controls.addWidget(self.export_button)
        controls.addSpacing(8)
        controls.addWidget(self.error, 1)
        controls.addWidget(self.status, 1)

        self.model = ResultsModel(self)
        self.model.set_columns(SITE_COLUMNS)
        self.proxy = ResultsFilter(self)
        self.proxy.setSourceModel(self.model)
        self.table = QTableView()
        self.table.setModel(self.proxy)
        self.table.setItemDelegate(ElidedTipDelegate(self.table))  # an elided cell's text as a tip
        self.table.setSortingEnabled(True)
        self.table.sortByColumn(-1, Qt.SortOrder.AscendingOrder)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.table.setAlternatingRowColors(True)
        self.table.verticalHeader().setDefaultSectionSize(22)
        header = self.table.horizontalHeader()
        header.setStretchLastSection(True)
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        for col in range(len(SITE_COLUMNS)):
            header.resizeSection(col, 200 if col == 0 else 70)
        self.table.selectionModel().currentRowChanged.connect(self._on_site_selected)
        self.alignment = QPlainTextEdit()
        self.alignment.setReadOnly(True)
        self.alignment.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        font = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        font.setStyleHint(QFont.StyleHint.Monospace)
        self.alignment.setFont(font)
        self.alignment.setPlaceholderText("The selected site's alignment (primer 5′→3′ over the site).")
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.table)
        split.addWidget(self.alignment)
        split.setSizes([300, 120])

        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 0)
        layout.addWidget(self.header)
        layout.addLayout(controls)
        layout.addWidget(split, 1)

        self.runner = JobRunner(self)
        self.runner.progress.connect(self._on_progress)
        self.runner.finished.connect(self._on_finished)
        self.runner.failed.connect(self._on_failed)
        self._job = None          # the kdiff job: its background and k
        self._candidate = None    # the selected candidate
        self._searching = None    # (candidate, max_edits, note) of the search in progress
        self.clock = CompileClock()  # its compiling phase (the first search compiles)
        self.report: primers.OffTargetReport | None = None
        self._update_buttons()

    @property
    def sites(self) -> tuple:
        return self.report.sites if self.report is not None else ()

    # -- ResultView --------------------------------------------------------------------------------
    def reset(self, job) -> None:
        if job is None:
            self.runner.cancel()
            self._candidate = self._searching = None
            self._show_report(None)
            self.header.setText("Select a candidate (table or profile), then press Run to list every "
                                "place in the background where it could still bind.")
        self._job = job
        self._update_buttons()

    def select(self, item) -> None:
        if item is None or item is self._candidate:
            return
        self._candidate = item
        self._show_header()
        self._update_buttons()

    def has_data(self) -> bool:
        # The search waits for Run, so an idle view already shows all it will (--screenshot).
        return not self.runner.running

    def is_empty(self) -> bool:
        return self._job is None

    def runners(self) -> list:
        return [self.runner]

    def alignment_text(self) -> str:
        """The sites of the selected candidate (nothing while another candidate's are shown)."""
        if self.report is None or self.report.candidate != self._candidate:
            return ""
        c = self.report.candidate
        head = f"Off-target sites of {self._label(c)} {c.sequence}"
        return "\n\n".join([head] + [primers.site_alignment(s) for s in self.report.sites])

    def shutdown(self) -> None:
        self.runner.shutdown()

    # -- running -------------------------------------------------------------------------------------
    def run(self) -> bool:
        """Search the background for the selected candidate; False if it could not start."""
        if self.runner.running or self._candidate is None or self._job is None:
            return False
        backend, threads, scheduler = self._backend_choice()
        edit_backend, edit_threads, note = primers.edit_backend(backend, threads)
        candidate, max_edits = self._candidate, self.max_edits.value()
        background = list(self._job.inputs["background"])
        self._searching = (candidate, max_edits, note)
        self.error.setVisible(False)
        self.status.setVisible(True)
        self.status.setText(f"Searching {self._label(candidate)} within {max_edits} edits…")
        self.clock = CompileClock()
        self.runner.start(lambda token: primers.offtarget_run(
            candidate, background, max_edits, backend=edit_backend, threads=edit_threads,
            cancel=token, scheduler=scheduler if edit_backend == "dask" else None))
        self._update_buttons()
        return True

    def cancel(self) -> None:
        if self.runner.running:
            self.runner.cancel()
            self.status.setText("Cancelling…")

    def _on_progress(self, item) -> None:
        if self._searching is None or self.runner.cancel_token.cancelled:
            return  # a search being cancelled: keep saying so
        label = self._label(self._searching[0])
        if isinstance(item, primers.OffTargetStarted):
            self.status.setText(f"Searching {label} within {self._searching[1]} edits with edit "
                                f"{item.job.variant}/{item.job.backend}…")
        elif isinstance(item, Progress):
            self.clock.see(item)
            if item.phase == "compiling":
                self.status.setText(f"The edit search's kernels: {COMPILING}… (kept on disk: "
                                    "later searches start at once)")
            else:
                self.status.setText(f"Searching {label} within {self._searching[1]} edits… "
                                    f"{100 * item.fraction:.0f}%")

    def _on_finished(self, report) -> None:
        if self._searching is None:
            return  # a search the last reset cancelled: its sites belong to the previous run
        self._show_report(report)
        self._update_buttons()
        self.searched.emit(report)

    def _on_failed(self, message: str) -> None:
        self.status.setText("")
        self.status.setVisible(False)
        self.error.setText(message)
        self.error.setVisible(True)
        self._searching = None
        self._update_buttons()

    # -- showing -------------------------------------------------------------------------------------
    @staticmethod
    def _label(candidate) -> str:
        return f"{primers.short_id(candidate.target_id)}:{candidate.start}-{candidate.end}"

    def _show_header(self) -> None:
        c = self._candidate
        text = (f"Candidate {primers.short_id(c.target_id)} {c.start:,}–{c.end:,} ({c.length} bp) "
                f"{c.sequence}.")
        shown = self.report.candidate if self.report is not None else None
        if shown is not None and shown != c:
            text += (f" The sites below are those of {shown.start:,}–{shown.end:,}; "
                     "press Run for this one.")
        elif shown is None:
            text += " Press Run to list every site in the background within Max edits."
        self.header.setText(text)

    def _show_report(self, report) -> None:
        self.report = report
        self.model.replace(report.sites if report else (), lambda sites: [
            (primers.short_id(s.record_id), s.start, s.end, s.strand, s.edits, s.edits_3prime, s.cigar)
            for s in sites])
        self.alignment.clear()
        self.status.setVisible(True)
        if report is None:
            self.status.setText("")
            return
        _, max_edits, note = self._searching
        self._searching = None
        job = report.job
        sites = report.sites
        n = len(sites)
        extend = sum(1 for s in sites if s.edits_3prime == 0)
        # The first search compiles its kernels: that wait is not search time.
        compiling = self.clock.total()
        where = f"edit {job.variant}/{job.backend} in {max(0.0, report.seconds - compiling):.2g} s"
        if self.clock.note():
            where += f", {self.clock.note()}"
        if not report.complete:
            text = f"Cancelled: {n:,} sites found before the cancel ({where})."
        elif n:
            text = (f"{n:,} site{'s' if n != 1 else ''} within {max_edits} edits on both strands, "
                    f"{extend:,} with no edit in the 3′ end's last 5 bases ({where}).")
        else:
            text = f"No site within {max_edits} edits on either strand ({where})."
            k = self._job.params.get("k") if self._job is not None else None
            if k is not None and max_edits < k:
                text += (f" kdiff keeps every candidate at least k = {k} edits from this background; "
                         f"raise Max edits to {k} or more to see its closest sites.")
        if note:
            text += f" ({note}.)"
        self.status.setText(text)
        if self._candidate is not None:
            self._show_header()
        if n:
            self.table.selectionModel().setCurrentIndex(
                self.proxy.index(0, 0), QItemSelectionModel.SelectionFlag.ClearAndSelect
                | QItemSelectionModel.SelectionFlag.Rows)

    def _on_site_selected(self, current, _previous) -> None:
        if not current.isValid() or self.report is None:
            return
        site = self.model.item(self.proxy.mapToSource(current).row())
        self.alignment.setPlainText(primers.site_alignment(site))

    def _update_buttons(self) -> None:
        running = self.runner.running
        self.run_button.setEnabled(not running and self._candidate is not None and self._job is not None)
        self.cancel_button.setEnabled(running)
        self.export_button.setEnabled(not running and self.model.rowCount() > 0)
        self.max_edits.setEnabled(not running)
