"""The primer library in the GUI: where its file lives, a table model over it, and the work
the dock hands to the worker thread.

The SQLite work is :class:`engine.primers.library.Library`'s (one transaction per change,
so two windows or a window and ``primerscope library`` can write at once). The window's
library file is ``primerscope/library.sqlite`` in the user's data directory
(QStandardPaths' GenericDataLocation), the file ``primerscope library`` uses by default, so
primers chosen in the window are listed on the command line and back, unless the user opened
another file (remembered in the settings).

Primer3 (Tm of entries that come without one) and the exports (a GenBank target may be a
whole genome) run on the worker thread; the worker opens its own connection to the file,
as SQLite wants one per thread.
"""

from __future__ import annotations

import sqlite3
from dataclasses import replace
from pathlib import Path
from typing import Generator, Sequence

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QStandardPaths, Qt, Signal

from engine.primers.library import Library, LibraryEntry
from engine.primers.library import default_path as engine_default_path

from app.families import Column
from app.table import cell_data, column_header
from app.primer3_guard import steps

PATH_KEY = "library/path"

#: Columns of the dock's table, in the order of ``engine.primers.library.COLUMNS``.
COLUMNS = (
    Column("name", "str", "", "The primer's name (unique in the library)"),
    Column("sequence", "str", "", "5′→3′, as ordered"),
    Column("orientation", "str", "", "forward or reverse on the target (empty: not known)"),
    Column("target", "str", "", "The record it was designed on"),
    Column("start", "int", "", "First base of its site on the target (1-based)"),
    Column("end", "int", "", "Last base of its site on the target"),
    Column("k", "int", "", "The k it was checked at (kdiff, pair design)"),
    Column("background", "str", "", "The background it was checked against"),
    Column("Tm", "float", "", "Melting temperature (°C, Primer3)"),
    Column("GC %", "float", "", "GC content (%)"),
    Column("notes", "str", "", "Your notes (double-click to edit)"),
    Column("added", "str", "", "When it was added (UTC)"),
)
NOTES = 10

#: Export formats: key -> (menu text, default file name, file filter).
FORMATS = {
    "csv": ("CSV (every field; importable)…", "primers.csv", "CSV files (*.csv);;All files (*)"),
    "order": ("Order sheet (Name, Sequence, Scale, Purification)…", "primer-order.csv",
              "CSV files (*.csv);;All files (*)"),
    "genbank": ("Target as GenBank with primer_bind features…", "primers.gb",
                "GenBank files (*.gb *.gbk);;All files (*)"),
}


def library_path(settings) -> Path:
    """The library file the window uses: the one the user opened last, else the default
    (which first takes a copy of an earlier version's window-only library, if any)."""
    chosen = settings.value(PATH_KEY, "", type=str) if settings is not None else ""
    if chosen:
        return Path(chosen)
    path = default_path()
    if not path.exists():
        _adopt_legacy(path)
    return path


def default_path() -> Path:
    """``primerscope/library.sqlite`` in QStandardPaths' GenericDataLocation: the same file
    as the CLI's default (:func:`engine.primers.library.default_path`, ``$XDG_DATA_HOME``
    or ``~/.local/share`` here), so primers kept in the window are listed on the command
    line and back."""
    base = QStandardPaths.writableLocation(QStandardPaths.StandardLocation.GenericDataLocation)
    return Path(base) / "primerscope" / "library.sqlite" if base else engine_default_path()


def _adopt_legacy(path: Path) -> None:
    """Copy the library an earlier version kept under QStandardPaths.AppDataLocation (the
    window's own file, which the CLI never saw) to the shared default ``path``: copied, not
    moved, so nothing is lost if the copy fails."""
    import shutil

    base = QStandardPaths.writableLocation(QStandardPaths.StandardLocation.AppDataLocation)
    legacy = Path(base) / "library.sqlite" if base else None
    if legacy is None or legacy == path or not legacy.is_file():
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(legacy, path)
    except OSError:
        pass  # the window then starts an empty library; the old file stays where it was


def unique_names(entries: Sequence[LibraryEntry], taken) -> list[LibraryEntry]:
    """The entries with names the library does not hold yet (``name``, ``name-2``, ...)."""
    used = set(taken)
    out = []
    for e in entries:
        name, n = e.name, 1
        while name in used:
            n += 1
            name = f"{e.name}-{n}"
        used.add(name)
        out.append(replace(e, name=name) if name != e.name else e)
    return out


def with_thermo(entries: Sequence[LibraryEntry], conditions=None) -> Generator:
    """Entries with Tm and GC filled in where missing (primer3-py, on the worker thread)."""
    return (yield from steps(_with_thermo(list(entries), conditions)))


def _with_thermo(entries, conditions):
    from engine.primers import annotate

    out = []
    for e in entries:
        if e.tm is None or e.gc_percent is None:
            note = annotate(e.sequence.upper(), conditions)
            e = replace(e, tm=e.tm if e.tm is not None else (None if note.tm is None else round(note.tm, 2)),
                        gc_percent=(e.gc_percent if e.gc_percent is not None
                                    else round(note.gc_percent, 2)))
        out.append(e)
    return out
    yield  # a generator (the worker loops over it): one step


def export_text(path: Path, fmt: str, targets=()) -> Generator:
    """The text of an export of the library at ``path`` (its own connection: worker thread)."""
    return (yield from steps(_export(path, fmt, tuple(targets))))


def _export(path, fmt, targets):
    with Library(path) as lib:
        if fmt == "csv":
            return lib.csv_text()
        if fmt == "order":
            return lib.order_sheet_text()
        if not targets:
            raise ValueError("no target to write: load the records the primers were designed on "
                             "(an input of any family)")
        return lib.genbank_text(targets)
    yield  # a generator (the worker loops over it): one step


class LibraryModel(QAbstractTableModel):
    """The library's entries in the order they were added; the notes column is editable.

    Signals ``failed(str)`` when the file refuses a change (another window removed the
    primer, the disk is full...).
    """

    failed = Signal(str)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.library: Library | None = None
        self.columns = COLUMNS
        self._entries: list[LibraryEntry] = []

    def set_library(self, library: Library | None) -> None:
        self.library = library
        self.reload()

    def reload(self) -> None:
        """Read the file again (another window may have written to it)."""
        self.beginResetModel()
        self._entries = self.library.entries() if self.library is not None else []
        self.endResetModel()

    def entry(self, row: int) -> LibraryEntry:
        return self._entries[row]

    def entries(self) -> list[LibraryEntry]:
        return list(self._entries)

    def row_values(self, row: int) -> tuple:
        e = self._entries[row]
        return (e.name, e.sequence, e.orientation, e.target_id, e.target_start, e.target_end, e.k,
                e.background, e.tm, e.gc_percent, e.notes, e.created)

    # -- Qt model interface ----------------------------------------------------------------
    def rowCount(self, parent=QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self._entries)

    def columnCount(self, parent=QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self.columns)

    def data(self, index, role=Qt.ItemDataRole.DisplayRole):
        if not index.isValid():
            return None
        if role == Qt.ItemDataRole.ToolTipRole and index.column() == NOTES:
            return "Double-click to edit the notes"
        if role == Qt.ItemDataRole.EditRole:
            role = Qt.ItemDataRole.DisplayRole  # the editor starts from the shown text
        return cell_data(self.columns[index.column()], self.row_values(index.row())[index.column()],
                         role)

    def headerData(self, section, orientation, role=Qt.ItemDataRole.DisplayRole):
        if orientation == Qt.Orientation.Horizontal:
            return column_header(self.columns, section, role)
        return None

    def flags(self, index):
        flags = super().flags(index)
        if index.isValid() and index.column() == NOTES:
            flags |= Qt.ItemFlag.ItemIsEditable
        return flags

    def setData(self, index, value, role=Qt.ItemDataRole.EditRole) -> bool:
        if role != Qt.ItemDataRole.EditRole or not index.isValid() or index.column() != NOTES:
            return False
        return self.set_notes(index.row(), str(value))

    def set_notes(self, row: int, notes: str) -> bool:
        entry = self._entries[row]
        if notes == entry.notes or self.library is None:
            return False
        try:
            self.library.set_notes(entry.name, notes)
        except (ValueError, OSError, sqlite3.Error) as err:
            self.failed.emit(f"Cannot save the notes of {entry.name}: {err}")
            return False
        self._entries[row] = replace(entry, notes=notes)
        index = self.index(row, NOTES)
        self.dataChanged.emit(index, index)
        return True
