"""The *Primer library* dock: the primers kept between runs, their notes, exports, panel checks.

Rows arrive from any results table (its context menu, *Add to primer library*) and from
the Pairs view; Tm and GC that a row lacks are computed by primer3-py on the worker
thread before the rows are written (one transaction: all or nothing). Notes are edited
in place. Exports (CSV, an order sheet, the target as GenBank with ``primer_bind``
features) are :class:`engine.primers.library.Library`'s own writers, run on the worker
thread; *Check as panel* sends the selected primers (or all) to the Panel view.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from PySide6.QtCore import QSortFilterProxyModel, Qt, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (QAbstractItemView, QApplication, QDockWidget, QFileDialog,
                               QHBoxLayout, QHeaderView, QLabel, QMenu, QPushButton, QTableView,
                               QToolButton, QVBoxLayout, QWidget)

from engine.primers.library import Library

from app import library
from app.exports import names_tsv
from app.library import FORMATS, LibraryModel
from app.worker import JobRunner


class LibraryDock(QDockWidget):
    """Signals ``added(names)`` once rows are in the file, ``exported(path)`` once an export
    is written and ``panel_requested(primers, source)`` for *Check as panel*.

    ``host`` gives the settings, ``exports`` (writing files), ``show_error``/``ask`` (dialogs
    that headless runs answer) and ``library_targets(ids)`` (records for GenBank).
    """

    added = Signal(object)
    exported = Signal(str)
    panel_requested = Signal(object, str)

    def __init__(self, host):
        super().__init__("Primer library", host)
        self.setObjectName("library-dock")
        self.host = host
        self.library: Library | None = None
        self.model = LibraryModel(self)
        self.model.failed.connect(self._show_error)
        self.proxy = QSortFilterProxyModel(self)
        self.proxy.setSourceModel(self.model)
        self.proxy.setSortRole(Qt.ItemDataRole.UserRole + 1)
        self.runner = JobRunner(self)
        self.runner.finished.connect(self._on_finished)
        self.runner.failed.connect(self._on_failed)
        self._task = None     # (what, data) of the runner's job
        self._queue: list = []  # rows to add while the runner was busy
        self._placed = False
        self._build()
        self.model.modelReset.connect(self._show_count)

    def _build(self) -> None:
        self.path_label = QLabel()
        self.path_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.path_label.setWordWrap(True)
        open_button = QPushButton("Open…")
        open_button.setToolTip("Use another library file (a new name makes a new library)")
        open_button.clicked.connect(lambda: self.open_library())
        top = QHBoxLayout()
        top.addWidget(self.path_label, 1)
        top.addWidget(open_button)

        self.table = QTableView()
        self.table.setModel(self.proxy)
        self.table.setSortingEnabled(True)
        self.table.sortByColumn(-1, Qt.SortOrder.AscendingOrder)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.DoubleClicked
                                   | QAbstractItemView.EditTrigger.EditKeyPressed)
        self.table.setAlternatingRowColors(True)
        self.table.verticalHeader().setDefaultSectionSize(22)
        header = self.table.horizontalHeader()
        header.setStretchLastSection(True)
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        for col, width in enumerate((150, 200, 70, 110, 70, 70, 40, 150, 55, 55, 200, 150)):
            header.resizeSection(col, width)
        self.table.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.table.customContextMenuRequested.connect(
            lambda pos: self.context_menu().exec(self.table.viewport().mapToGlobal(pos)))
        self.table.selectionModel().selectionChanged.connect(lambda *_: self._update_buttons())
        copy = QAction("Copy", self.table)
        copy.setShortcut(QKeySequence.StandardKey.Copy)
        copy.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)
        copy.triggered.connect(self.copy_selection)
        self.table.addAction(copy)

        self.remove_button = QPushButton("Remove")
        self.remove_button.setToolTip("Remove the selected primers from the library")
        self.remove_button.clicked.connect(lambda: self.remove_selected())
        import_button = QPushButton("Import…")
        import_button.setToolTip("Add the primers of a CSV file (an export's columns; name and "
                                 "sequence required). A bad file changes nothing.")
        import_button.clicked.connect(lambda: self.import_csv())
        self.export_button = QToolButton()
        self.export_button.setText("Export")
        self.export_button.setToolTip("Write the library as CSV, as an order sheet, or the target "
                                      "as GenBank with a primer_bind feature per primer")
        self.export_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        menu = QMenu(self.export_button)
        for key, (text, _, _) in FORMATS.items():
            menu.addAction(text, lambda k=key: self.export(k))
        self.export_button.setMenu(menu)
        self.panel_button = QPushButton("Check as panel")
        self.panel_button.setToolTip("Check the selected primers (all, if none is selected) as a "
                                     "multiplex panel: heterodimers, 3′-end dimers, cross-products")
        self.panel_button.clicked.connect(lambda: self.check_panel())
        buttons = QHBoxLayout()
        for button in (self.remove_button, import_button, self.export_button, self.panel_button):
            buttons.addWidget(button)
        buttons.addStretch(1)
        self.status = QLabel()
        self.status.setWordWrap(True)
        self.error = QLabel()
        self.error.setObjectName("error")
        self.error.setWordWrap(True)
        self.error.setVisible(False)

        body = QWidget()
        layout = QVBoxLayout(body)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(top)
        layout.addLayout(buttons)
        layout.addWidget(self.error)
        layout.addWidget(self.table, 1)
        layout.addWidget(self.status)
        self.setWidget(body)
        self._update_buttons()

    # -- the file ------------------------------------------------------------------------------------
    @property
    def path(self) -> Path:
        return self.library.path if self.library is not None else library.library_path(self.host.settings)

    def ensure_open(self) -> bool:
        """Open the library file on first use (not at start: most sessions never touch it)."""
        if self.library is not None:
            return True
        return self.set_path(library.library_path(self.host.settings), remember=False)

    def set_path(self, path, remember: bool = True) -> bool:
        try:
            lib = Library(path, timeout=5.0)
        except (ValueError, OSError, sqlite3.Error) as err:
            self._show_error(f"Cannot open the library {path}: {err}")
            return False
        if self.library is not None:
            self.library.close()
        self.library = lib
        if remember:
            self.host.settings.setValue(library.PATH_KEY, str(lib.path))
        self.model.set_library(lib)
        self.path_label.setText(f"<small>{lib.path}</small>")
        self.path_label.setToolTip(f"The library file. On the command line: primerscope library "
                                   f"--library {lib.path} list")
        self.error.setVisible(False)
        self._show_count()
        return True

    def open_library(self, path: str | None = None) -> bool:
        if path is None:
            path, _ = QFileDialog.getSaveFileName(
                self, "Open or create a primer library", str(self.path), "Primer libraries (*.sqlite);;"
                "All files (*)", options=QFileDialog.Option.DontConfirmOverwrite)
            if not path:
                return False
        return self.set_path(path)

    def place(self) -> None:
        """Each time it shows until the user moves it (floating: docked at the side it would
        widen a 1280-pixel window, whose results table needs its width): over the lower right
        of the window, right of the input boxes. Dragged onto the window's edge it docks, on
        a larger screen."""
        if self._placed or not self.isFloating():
            return  # the user moved or docked it: theirs
        host = self.parentWidget()
        width, height = 760, 360
        if host is not None:
            corner = host.mapToGlobal(host.rect().bottomRight())
            x = corner.x() - width - 24
            inputs = getattr(host, "left", None)  # the input boxes stay in view: right of them
            if inputs is not None and inputs.isVisible():
                clear = inputs.mapToGlobal(inputs.rect().topRight()).x() + 8
                if x < clear:
                    width = max(420, corner.x() - 24 - clear)
                    x = clear
            self._placing = True
            self.resize(width, height)
            self.move(max(0, x), max(0, corner.y() - height - 48))
            self._placing = False
        else:
            self.resize(width, height)

    def moveEvent(self, event) -> None:
        # Placed again at each show (the window may have been resized since) until the user
        # moves it; then it stays where they put it.
        if self.isVisible() and not getattr(self, "_placing", False) and event.spontaneous():
            self._placed = True
        super().moveEvent(event)

    def showEvent(self, event) -> None:
        self.place()
        self.ensure_open()
        if self.library is not None:
            self.model.reload()  # another window may have written to it
            self._show_count()
        super().showEvent(event)

    # -- adding ---------------------------------------------------------------------------------------
    def add_entries(self, entries, source: str = "", links=()) -> bool:
        """Add these entries (Tm/GC filled in on the worker thread, names made unique; a
        sequence the library holds is that oligo, not a new row) and link ``links``
        ((forward sequence, reverse sequence, product size) of pairs): the dock shows itself,
        and ``added`` says when the rows are in the file."""
        entries, links = list(entries), list(links)
        if not entries or not self.ensure_open():
            return False
        self.show()
        self.raise_()
        if self.runner.running:
            self._queue.append((entries, source, links))
            return True
        self._task = ("add", source, links)
        self.status.setText(f"Adding {len(entries)} primer{'s' if len(entries) != 1 else ''}…")
        self.runner.start(lambda token: library.with_thermo(entries))
        self._update_buttons()
        return True

    def _store(self, entries, source: str, links) -> None:
        try:
            added, linked = self.library.store(entries, links, rename=library.unique_names)
        except (ValueError, OSError, sqlite3.Error) as err:
            self._show_error(f"Cannot add to the library: {err}")
            return
        self.model.reload()
        new = {e.sequence for e in added}
        held = {e.sequence: e.name for e in self.model.entries()}
        kept = list(dict.fromkeys(held[e.sequence] for e in (e.checked() for e in entries)
                                  if e.sequence in held and e.sequence not in new))
        names = [e.name for e in added]
        self._select(names + kept)
        self.error.setVisible(False)
        where = f" from {source}" if source else ""
        said = [f"Added {len(names)} primer{'s' if len(names) != 1 else ''}{where}"
                + (f": {', '.join(names[:4])}{'…' if len(names) > 4 else ''}" if names else "")]
        if kept:
            said.append(f"already held: {', '.join(kept[:4])}{'…' if len(kept) > 4 else ''}")
        if linked:
            said.append(f"{linked} pair{'s' if linked != 1 else ''} linked")
        self.status.setText("; ".join(said) + ".")
        self.added.emit(names + kept)

    def _select(self, names) -> None:
        wanted = set(names)
        selection = self.table.selectionModel()
        selection.clearSelection()
        for row in range(self.model.rowCount()):
            if self.model.entry(row).name in wanted:
                index = self.proxy.mapFromSource(self.model.index(row, 0))
                selection.select(index, selection.SelectionFlag.Select | selection.SelectionFlag.Rows)
                self.table.scrollTo(index)

    # -- changing -------------------------------------------------------------------------------------
    def selected_entries(self) -> list:
        rows = sorted({self.proxy.mapToSource(i).row() for i in self.table.selectionModel().selectedRows()})
        return [self.model.entry(r) for r in rows]

    def remove_selected(self) -> int:
        chosen = self.selected_entries()
        if not chosen or self.library is None:
            return 0
        names = [e.name for e in chosen]
        if not self.host.ask("Remove primers", f"Remove {len(names)} primer{'s' if len(names) != 1 else ''} "
                             f"({', '.join(names[:3])}{'…' if len(names) > 3 else ''}) from the library?"):
            return 0
        try:
            self.library.remove(names)
        except (ValueError, OSError, sqlite3.Error) as err:
            self._show_error(f"Cannot remove: {err}")
            self.model.reload()
            return 0
        self.model.reload()
        self.status.setText(f"Removed {len(names)} primer{'s' if len(names) != 1 else ''}.")
        self._show_count()
        return len(names)

    def set_notes(self, name: str, notes: str) -> bool:
        for row in range(self.model.rowCount()):
            if self.model.entry(row).name == name:
                return self.model.set_notes(row, notes)
        return False

    def import_csv(self, path: str | None = None) -> int:
        if not self.ensure_open():
            return 0
        if path is None:
            path, _ = QFileDialog.getOpenFileName(self, "Import primers", str(Path.home()),
                                                  "CSV files (*.csv);;All files (*)")
            if not path:
                return 0
        try:
            with open(path, encoding="utf-8-sig") as fh:
                text = fh.read()
            count = self.library.import_csv(text, os.path.basename(path))
        except (ValueError, OSError, UnicodeDecodeError, sqlite3.Error) as err:
            self._show_error(f"Nothing imported. {err}")
            return 0
        self.model.reload()
        self.error.setVisible(False)
        self.status.setText(f"Imported {count} primer{'s' if count != 1 else ''} from {path}.")
        return count

    # -- exports and panels ---------------------------------------------------------------------------
    def export(self, fmt: str, path: str | None = None) -> str | None:
        """Write the library in a format of :data:`app.library.FORMATS`; the text is made on
        the worker thread (``exported(path)`` when written)."""
        if not self.ensure_open() or self.runner.running:
            return None
        if len(self.model.entries()) == 0:
            self._show_error("The library is empty: add primers from a results table first.")
            return None
        text, name, pattern = FORMATS[fmt]
        path = path or self.host.exports.ask_path(text.rstrip("…"), name, pattern)
        if not path:
            return None
        targets = ()
        if fmt == "genbank":
            targets = self.host.library_targets({e.target_id for e in self.model.entries()})
        self._task = ("export", path)
        self.status.setText(f"Writing {path}…")
        lib_path = self.library.path
        self.runner.start(lambda token: library.export_text(lib_path, fmt, targets))
        self._update_buttons()
        return path

    def check_panel(self) -> bool:
        chosen = self.selected_entries() or self.model.entries()
        if not chosen:
            self._show_error("The library is empty: add primers from a results table first.")
            return False
        # Each oligo once: a sequence held under two names would count its dimers twice.
        primers: dict[str, tuple[str, str]] = {}
        for e in chosen:
            primers.setdefault(e.sequence, (e.name, e.sequence))
        primers = list(primers.values())
        source = "the primer library" + (" (the selected ones)" if self.selected_entries() else "")
        self.panel_requested.emit(primers, source)
        return True

    def copy_selection(self) -> None:
        chosen = self.selected_entries()
        if chosen:
            QApplication.clipboard().setText(names_tsv((e.name, e.sequence) for e in chosen))

    def context_menu(self) -> QMenu:
        menu = QMenu(self)
        count = len(self.selected_entries())
        for text, slot in ((f"Copy {count} name{'s' if count != 1 else ''} and sequences",
                            self.copy_selection),
                           ("Check as panel", self.check_panel), ("Remove…", self.remove_selected)):
            action = menu.addAction(text, slot)
            action.setEnabled(count > 0)
        return menu

    # -- the worker -------------------------------------------------------------------------------------
    def _on_finished(self, value) -> None:
        task, self._task = self._task, None
        if task[0] == "add":
            self._store(value, task[1], task[2])
        elif task[0] == "export":
            if self.host.exports.write(task[1], value, "file"):
                self.status.setText(f"Wrote {task[1]}.")
                self.exported.emit(task[1])
        self._next()

    def _on_failed(self, message: str) -> None:
        self._task = None
        self._show_error(message)
        self._next()

    def _next(self) -> None:
        self._update_buttons()
        if self._queue and not self.runner.running:
            self.add_entries(*self._queue.pop(0))

    def runners(self) -> list:
        return [self.runner]

    def shutdown(self) -> None:
        self._queue.clear()
        self.runner.shutdown()
        if self.library is not None:
            self.library.close()
            self.library = None

    # -- showing ----------------------------------------------------------------------------------------
    def _show_error(self, message: str) -> None:
        self.error.setText(message)
        self.error.setVisible(True)

    def _show_count(self) -> None:
        n = self.model.rowCount()
        self.setWindowTitle(f"Primer library ({n})" if n else "Primer library")
        self._update_buttons()

    def _update_buttons(self) -> None:
        has = self.model.rowCount() > 0
        selected = bool(self.table.selectionModel().selectedRows()) if self.table.selectionModel() else False
        self.remove_button.setEnabled(selected)
        self.export_button.setEnabled(has and not self.runner.running)
        self.panel_button.setEnabled(has)
