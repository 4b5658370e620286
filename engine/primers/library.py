"""The primer library: primers kept between runs, in SQLite (Python's sqlite3).

One file per library (default: :func:`default_path`, the user's data directory). Every
change runs in one transaction taken with ``BEGIN IMMEDIATE`` (the write lock first,
so two writers queue instead of failing half-way), on a WAL journal with a busy
timeout: two windows or processes writing at once both keep their rows, and a
process killed in the middle of a write leaves the file as of the last commit.

Each entry (an oligo) records the name (unique), sequence (5'->3'), orientation, the target it
was designed on and its coordinates there, the k and background it was checked
against, Tm and GC, notes and the date it was added. A ``pairs`` table links two oligos
into a designed pair (:meth:`Library.store`), so a reverse primer shared by four pairs is one
row: ordered once, checked in a panel once.

**Schema versions.** Version 1 had the oligo table only (the window stored a shared primer
once per add, under a new name each time). Opening such a file for writing migrates it in the
set-up's one transaction: its rows stay, the sequence index and pairs table are added.

**One sequence, one name.** An oligo is its sequence: ``library add`` and ``import`` (the
window's import too) refuse a primer whose sequence the library already holds under another
name, or that an import gives twice, with one line naming the entry that has it; nothing is
added (a second name would order and count the oligo twice). :meth:`Library.store`, which
the window's adds from results use (names made up by the window, not chosen), takes the held
oligo instead and says so. A version-1 file that already holds a sequence under two names
keeps both rows.

**Names** are compared after Unicode NFKC normalisation and must then be printable
ASCII (letters, digits, punctuation, spaces): full-width and other compatibility forms
become their ASCII letters, and look-alikes from other scripts (a Cyrillic А for a
Latin A), control characters and terminal escape codes are refused, so two names that
look the same are the same name, and a name never re-colours a terminal it is printed on.

**Whose file.** A file is taken for a primer library only when it is empty, carries the
library's application id, or is an older library (only a ``primers`` table with these
columns); anything else (another application's SQLite database) is refused before
anything is written. Reading commands open the file read-only (``readonly=True``), so
a library on read-only media can be listed and exported; a library that does not exist
yet reads as empty and is not created.

**Spreadsheets.** CSV and order-sheet cells that start with ``=``, ``+``, ``-``, ``@``,
a tab or a carriage return get a leading ``'`` (OWASP's advice against formula
injection: a spreadsheet shows the text instead of running it); reading a CSV
(:func:`parse_csv`, and primer tables for pcr and panel) removes that one quote again,
so an export imports back unchanged.
"""

from __future__ import annotations

import contextlib
import csv
import io
import math
import os
import sqlite3
import sys
import unicodedata
import urllib.parse
import warnings
from dataclasses import asdict, dataclass, fields, replace
from datetime import datetime, timezone
from pathlib import Path

from engine.primers.primer_sets import MAX_PRIMER_LENGTH
from engine.sequences import SequenceError, SequenceWarning, decode, encode, reverse_complement
from engine.spreadsheet import spreadsheet_cell, unquoted_cell

__all__ = ["COLUMNS", "Library", "LibraryEntry", "default_path"]

ORIENTATIONS = ("forward", "reverse", "")
SCHEMA_VERSION = 2
#: SQLite's application id of a primer library ("PSLB"): marks the file as ours.
APPLICATION_ID = 0x50534C42
#: The largest coordinate and k a library stores (SQLite's integers are 64-bit; a number
#: past them was a raw OverflowError) and the range of a stored Tm and GC.
MAX_COORDINATE = 10 ** 12
TM_RANGE = (-50.0, 150.0)
_SCHEMA = """
CREATE TABLE IF NOT EXISTS primers (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    name         TEXT NOT NULL UNIQUE,
    sequence     TEXT NOT NULL,
    orientation  TEXT NOT NULL DEFAULT '',
    target_id    TEXT NOT NULL DEFAULT '',
    target_start INTEGER,
    target_end   INTEGER,
    k            INTEGER,
    background   TEXT NOT NULL DEFAULT '',
    tm           REAL,
    gc_percent   REAL,
    notes        TEXT NOT NULL DEFAULT '',
    created      TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS primers_sequence ON primers (sequence);
CREATE TABLE IF NOT EXISTS pairs (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    forward      INTEGER NOT NULL REFERENCES primers (id),
    reverse      INTEGER NOT NULL REFERENCES primers (id),
    product_size INTEGER,
    created      TEXT NOT NULL,
    UNIQUE (forward, reverse)
);
"""
#: The tables a library file may hold (any other marks another application's database).
_TABLES = {"primers", "pairs", "sqlite_sequence"}


def default_path() -> Path:
    """``$XDG_DATA_HOME/primerscope/library.sqlite`` (``~/.local/share`` without it; the
    platform's application data folder on Windows and macOS)."""
    if sys.platform == "win32":  # (where Qt's GenericDataLocation is: the GUI uses that)
        base = Path(os.environ.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local")
    elif sys.platform == "darwin":
        base = Path.home() / "Library" / "Application Support"
    else:
        base = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")
    return base / "primerscope" / "library.sqlite"


@dataclass(frozen=True)
class LibraryEntry:
    """One primer. Coordinates are 1-based, inclusive, on ``target_id``."""

    name: str
    sequence: str
    orientation: str = ""
    target_id: str = ""
    target_start: int | None = None
    target_end: int | None = None
    k: int | None = None
    background: str = ""
    tm: float | None = None
    gc_percent: float | None = None
    notes: str = ""
    created: str = ""

    def checked(self) -> "LibraryEntry":
        """The entry with its sequence normalised (upper case, U as T); ValueError naming
        the first bad field."""
        name = checked_name(self.name)
        if not self.sequence or not self.sequence.strip():
            raise ValueError(f"primer {name!r}: empty primer")
        try:
            seq = decode(encode(self.sequence.strip(), source="library", record_id=name))
        except SequenceError as exc:
            raise ValueError(str(exc)) from None
        if len(seq) > MAX_PRIMER_LENGTH:
            raise ValueError(f"primer {name!r} has {len(seq)} nt; primers may have at most "
                             f"{MAX_PRIMER_LENGTH}")
        if self.orientation not in ORIENTATIONS:
            raise ValueError(f"primer {name!r}: orientation must be forward, reverse or empty, "
                             f"got {self.orientation!r}")
        for f in ("target_start", "target_end", "k"):
            v = getattr(self, f)
            if v is not None and (isinstance(v, bool) or not isinstance(v, int)
                                  or not 1 <= v <= MAX_COORDINATE):
                raise ValueError(f"primer {name!r}: {f} must be an integer from 1 to "
                                 f"{MAX_COORDINATE:,}, got {v!r}")
        if (self.target_start is not None and self.target_end is not None
                and self.target_end < self.target_start):
            raise ValueError(f"primer {name!r}: target_end is before target_start")
        for f, (low, high) in (("tm", TM_RANGE), ("gc_percent", (0.0, 100.0))):
            v = getattr(self, f)
            if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float))
                                  or not math.isfinite(v)):
                raise ValueError(f"primer {name!r}: {f} must be a number, got {v!r}")
            if v is not None and not low <= v <= high:
                raise ValueError(f"primer {name!r}: {f} must be from {low:g} to {high:g}, "
                                 f"got {v:g}")
        # Free text as a CSV export keeps it: stripped (an import strips every cell), with
        # one kind of line break (a lone CR is no line break to a CSV reader).
        text = {f: _text_field(getattr(self, f)) for f in ("target_id", "background", "notes")}
        return replace(self, name=name, sequence=seq, **text,
                       created=self.created or datetime.now(timezone.utc).strftime(
                           "%Y-%m-%dT%H:%M:%SZ"))


def _text_field(value) -> str:
    if not isinstance(value, str):
        raise ValueError(f"a library text field must be text, got {value!r}")
    return value.replace("\r\n", "\n").replace("\r", "\n").strip()


def checked_name(name) -> str:
    """A primer name by the library's rule (module docstring): NFKC, stripped, printable
    ASCII; ValueError naming the first character that is not."""
    if not isinstance(name, str):
        raise ValueError(f"a primer name must be text, got {name!r}")
    text = unicodedata.normalize("NFKC", name).strip()
    if not text:
        raise ValueError("a primer needs a name")
    bad = next((c for c in text if not " " <= c <= "~"), None)
    if bad is not None:
        raise ValueError(f"primer name {text!r}: character {bad!r} (U+{ord(bad):04X}) is "
                         "not allowed; names are printable ASCII (letters, digits, "
                         "punctuation, spaces)")
    return text


#: The CSV columns of an export (and the columns an import may have).
COLUMNS = tuple(f.name for f in fields(LibraryEntry))
#: The numeric columns of an import and their types (an empty cell: None).
_NUMBERS = {"target_start": int, "target_end": int, "k": int, "tm": float, "gc_percent": float}


class Library:
    """A primer library file. Methods commit before they return (one transaction each).

    ``readonly``: for reading only (list, export): opened read-only (immutable on
    read-only media), nothing created. ``before_commit``: called just before each COMMIT
    (the command line's engine.interrupts.settle: a signal from then on cannot turn a
    committed change into an "interrupted" message)."""

    def __init__(self, path: str | os.PathLike | None = None, *, timeout: float = 60.0,
                 readonly: bool = False, before_commit=None):
        self.path = Path(path) if path is not None else default_path()
        self.readonly = readonly
        self._before_commit = before_commit
        fresh = _check_path(self.path, readonly)
        if not readonly:
            _check_writable(self.path)
        known = False
        try:
            if readonly and fresh:  # nothing to read: an empty library, nothing created
                target, uri = ":memory:", False
            elif readonly:
                target, uri = _read_only_uri(self.path), True
            else:
                target, uri = str(self.path), False
            self._db = sqlite3.connect(target, uri=uri, timeout=timeout, isolation_level=None)
        except sqlite3.Error as exc:
            raise ValueError(f"{self.path}: cannot open the library ({exc})") from None
        try:
            self._db.execute(f"PRAGMA busy_timeout = {int(timeout * 1000)}")
            known = self._recognise()
            if readonly:
                if not known:  # (an in-memory stand-in for a library not made yet)
                    self._db.executescript(_SCHEMA)
                return
            self._db.execute("PRAGMA journal_mode = WAL")
            self._db.execute("PRAGMA synchronous = FULL")
            with self.transaction(change=False) as db:
                # Version 1 -> 2 is the schema's new index and pairs table, made here inside
                # the set-up's one transaction: all or nothing. (executescript would COMMIT.)
                for statement in _SCHEMA.split(";"):
                    if statement.strip():
                        db.execute(statement)
                db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
                db.execute(f"PRAGMA application_id = {APPLICATION_ID}")
        except sqlite3.DatabaseError as exc:
            self._db.close()
            if known:  # (a library it could read: writing it failed, e.g. locked too long)
                raise ValueError(f"{self.path}: cannot write to the library ({exc})") from None
            raise ValueError(f"{self.path}: not a primer library ({exc})") from None
        except BaseException:
            self._db.close()
            raise

    def _recognise(self) -> bool:
        """Whether the file already is a primer library (read-only queries); ValueError for
        another application's database or a newer library. False: an empty database."""
        db = self._db
        version = db.execute("PRAGMA user_version").fetchone()[0]
        app = db.execute("PRAGMA application_id").fetchone()[0]
        tables = {r[0] for r in db.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table'")}
        if app not in (0, APPLICATION_ID) or tables - _TABLES:
            other = sorted(tables - _TABLES)
            what = (f"tables {', '.join(map(repr, other[:3]))}" if other
                    else f"application id {app:#x}")
            raise ValueError(f"{self.path}: not a primer library but another application's "
                             f"SQLite database ({what}); nothing was changed")
        if version > SCHEMA_VERSION:
            raise ValueError(f"{self.path}: written by a newer primerscope (schema {version})")
        if "primers" not in tables:
            return False
        columns = [r[1] for r in db.execute("PRAGMA table_info(primers)")]
        if columns[1:] != list(COLUMNS) or columns[:1] != ["id"]:
            raise ValueError(f"{self.path}: not a primer library: its primers table has other "
                             f"columns; nothing was changed")
        return True

    def close(self) -> None:
        self._db.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    @contextlib.contextmanager
    def transaction(self, change: bool = True):
        """``BEGIN IMMEDIATE`` ... ``COMMIT`` (``ROLLBACK`` on any error). ``change``: a
        change of the library's primers (not the set-up of its schema)."""
        if self.readonly:
            raise ValueError(f"{self.path}: opened for reading only")
        db = self._db
        db.execute("BEGIN IMMEDIATE")
        try:
            yield db
            if change and self._before_commit is not None:
                self._before_commit()
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")

    # -- changes ---------------------------------------------------------------------------

    def add(self, entry: LibraryEntry) -> LibraryEntry:
        return self.add_many([entry])[0]

    def add_many(self, entries, progress=None) -> list[LibraryEntry]:
        """Add all or nothing, in one transaction; ValueError if a name or a sequence is
        taken (or given twice). ``progress(done, total)`` is called every
        :data:`PROGRESS_ROWS` rows."""
        return self._insert([e.checked() for e in entries], progress)

    def _insert(self, checked: list[LibraryEntry], progress=None) -> list[LibraryEntry]:
        """:meth:`add_many` of entries already checked (LibraryEntry.checked)."""
        with self.transaction() as db:
            self._insert_in(db, checked, progress)
        return checked

    def _insert_in(self, db, checked: list[LibraryEntry], progress=None) -> None:
        """Insert checked entries inside the caller's transaction; ValueError for a name or
        a sequence given twice or already held (one sequence, one name: module docstring)."""
        seen: set[str] = set()
        named: dict[str, str] = {}  # sequence -> the first name given it
        for e in checked:  # (a set: the list scan this was made 40k rows take 79 s)
            if e.name in seen:
                raise ValueError(f"the primer name {e.name!r} is given twice")
            seen.add(e.name)
            first = named.setdefault(e.sequence, e.name)
            if first != e.name:
                raise ValueError(f"primers {first!r} and {e.name!r} have the same sequence; "
                                 "the library keeps a sequence once, under one name")
        cols = COLUMNS
        sql = f"INSERT INTO primers ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})"
        for at in range(0, len(checked), PROGRESS_ROWS):
            part = checked[at:at + PROGRESS_ROWS]
            names = _held(db, [e.name for e in part], "name")
            taken = next((e.name for e in part if e.name in names), None)
            if taken:
                raise ValueError(f"the library already has a primer named {taken!r}")
            held = _held(db, [e.sequence for e in part])
            if held:
                e = next(e for e in part if e.sequence in held)
                raise ValueError(f"primer {e.name!r}: the library already has its sequence, "
                                 f"as {held[e.sequence]!r} (one name per sequence)")
            db.executemany(sql, [tuple(getattr(e, c) for c in cols) for e in part])
            if progress is not None:
                progress(at + len(part), len(checked))

    def store(self, entries, pairs=(), rename=None) -> tuple[list[LibraryEntry], int]:
        """Keep these oligos and link these pairs, in one transaction: an entry whose sequence
        the library (or an earlier entry) already has is that oligo, not a new row. ``pairs``:
        (forward sequence, reverse sequence, product size); a link already held is kept once.
        ``rename(entries, taken_names)``: new names for new entries whose names are taken
        (else a taken name is a ValueError). Returns (the entries added, pairs linked)."""
        checked = [e.checked() for e in entries]
        links = [(_normalised(f), _normalised(r), size) for f, r, size in pairs]
        with self.transaction() as db:
            held = _held(db, [e.sequence for e in checked])
            new: dict[str, LibraryEntry] = {}
            for e in checked:
                if e.sequence not in held:
                    new.setdefault(e.sequence, e)
            fresh = list(new.values())
            if rename is not None:
                fresh = rename(fresh, [r[0] for r in db.execute("SELECT name FROM primers")])
            self._insert_in(db, fresh)
            ids = _held(db, sorted({s for f, r, _ in links for s in (f, r)}), answer="id")
            linked = 0
            now = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
            for f, r, size in links:
                if f not in ids or r not in ids:
                    raise ValueError("a pair's primer is not among the primers given")
                linked += db.execute("INSERT OR IGNORE INTO pairs (forward, reverse, product_size, "
                                     "created) VALUES (?, ?, ?, ?)",
                                     (ids[f], ids[r], size, now)).rowcount
        return fresh, linked

    def remove(self, names) -> int:
        """Remove these primers (all or nothing; a name given twice counts once); ValueError
        naming one that is not there."""
        names = list(dict.fromkeys(names))
        with self.transaction() as db:
            for n in names:
                if not db.execute("SELECT 1 FROM primers WHERE name = ?", (n,)).fetchone():
                    raise ValueError(f"the library has no primer named {n!r}")
            gone = [(n,) for n in names]
            if _has_table(db, "pairs"):  # (a pair without one of its primers is no pair)
                db.executemany("DELETE FROM pairs WHERE forward = (SELECT id FROM primers WHERE "
                               "name = ?1) OR reverse = (SELECT id FROM primers WHERE name = ?1)",
                               gone)
            db.executemany("DELETE FROM primers WHERE name = ?", gone)
        return len(names)

    def set_notes(self, name: str, notes: str) -> None:
        with self.transaction() as db:
            if db.execute("UPDATE primers SET notes = ? WHERE name = ?", (notes, name)).rowcount == 0:
                raise ValueError(f"the library has no primer named {name!r}")

    # -- reading ---------------------------------------------------------------------------

    def entries(self) -> list[LibraryEntry]:
        """Every primer, in the order they were added."""
        rows = self._db.execute(f"SELECT {', '.join(COLUMNS)} FROM primers ORDER BY id").fetchall()
        return [LibraryEntry(*row) for row in rows]

    def get(self, name: str) -> LibraryEntry | None:
        row = self._db.execute(f"SELECT {', '.join(COLUMNS)} FROM primers WHERE name = ?",
                               (name,)).fetchone()
        return LibraryEntry(*row) if row else None

    def pairs(self) -> list[tuple[str, str, int | None]]:
        """(forward name, reverse name, product size) of every linked pair, in the order
        they were linked."""
        if not _has_table(self._db, "pairs"):  # (a version-1 file opened read-only)
            return []
        return self._db.execute(
            "SELECT f.name, r.name, pairs.product_size FROM pairs JOIN primers f ON "
            "f.id = pairs.forward JOIN primers r ON r.id = pairs.reverse ORDER BY pairs.id"
        ).fetchall()

    def __len__(self) -> int:
        return self._db.execute("SELECT COUNT(*) FROM primers").fetchone()[0]

    # -- import and export -----------------------------------------------------------------

    def import_csv(self, text: str, source: str = "CSV", progress=None) -> int:
        """Add every row of a CSV (an export's columns; ``name`` and ``sequence`` required,
        the others optional). All or nothing: any bad row, unknown column or taken name
        rejects the whole file with one line naming it."""
        return len(self._insert(parse_csv(text, source), progress))  # (parse_csv checks)

    def csv_text(self) -> str:
        buf = io.StringIO(newline="")
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(COLUMNS)
        for e in self.entries():
            w.writerow(["" if v is None else spreadsheet_cell(v) for v in asdict(e).values()])
        return buf.getvalue()

    def order_sheet_text(self, *, scale: str = "25nm", purification: str = "STD") -> str:
        """Name,Sequence,Scale,Purification: the columns of oligo vendors' bulk-order forms;
        each sequence once, under its first name."""
        buf = io.StringIO(newline="")
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(("Name", "Sequence", "Scale", "Purification"))
        ordered = set()
        for e in self.entries():  # (one oligo, one order: a sequence held under two names)
            if e.sequence not in ordered:
                ordered.add(e.sequence)
                w.writerow(tuple(map(spreadsheet_cell, (e.name, e.sequence, scale, purification))))
        return buf.getvalue()

    def genbank_text(self, targets) -> str:
        """The target records as GenBank with a ``primer_bind`` feature per primer site
        (Biopython). A primer designed on a record (same id, with coordinates) is placed
        there; any other primer at every exact match on either strand."""
        from Bio import SeqIO
        from Bio.Seq import Seq
        from Bio.SeqFeature import FeatureLocation, SeqFeature
        from Bio.SeqRecord import SeqRecord

        entries = self.entries()
        out = io.StringIO()
        records = []
        for target in targets:
            text = target.text
            rec = SeqRecord(Seq(text), id=target.id, name=_locus_name(target.id),
                            description=target.description or target.id,
                            annotations={"molecule_type": "DNA",
                                         "date": datetime.now().strftime("%d-%b-%Y").upper()})
            for e in entries:
                for start, end, strand in _inside(_sites(e, target.id, text), e, target.id,
                                                  len(text)):
                    quals = {"label": [e.name],
                             "note": [f"5'-{e.sequence}-3'"] + ([e.notes] if e.notes else [])}
                    rec.features.append(SeqFeature(FeatureLocation(start - 1, end, strand=strand),
                                                   type="primer_bind", qualifiers=quals))
            rec.features.sort(key=lambda f: (int(f.location.start), int(f.location.end)))
            records.append(rec)
        SeqIO.write(records, out, "genbank")
        return out.getvalue()


#: Rows per INSERT batch of an import (and between its progress reports).
PROGRESS_ROWS = 10_000


def _held(db, values: list, column: str = "sequence", answer: str = "name") -> dict:
    """``column`` value -> ``answer`` of the primers whose ``column`` is one of ``values``
    (one query per batch)."""
    found: dict = {}
    for at in range(0, len(values), 500):  # (SQLite's bound on host parameters)
        part = values[at:at + 500]
        found.update(db.execute(f"SELECT {column}, {answer} FROM primers WHERE {column} IN "
                                f"({', '.join('?' * len(part))})", part).fetchall())
    return found


def _normalised(sequence: str) -> str:
    """A sequence as LibraryEntry.checked stores it (upper case, U as T)."""
    return decode(encode(sequence.strip(), source="library"))


def _has_table(db, name: str) -> bool:
    return db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?",
                      (name,)).fetchone() is not None


def _check_path(path: Path, readonly: bool) -> bool:
    """One line for a path no library can be at; makes the folder for a new library (not
    for reading). True when there is no library file yet."""
    if path.is_dir():
        raise ValueError(f"{path}: is a directory, not a library file")
    folder = path.parent
    for up in (folder, *folder.parents):
        if up.exists():
            if not up.is_dir():
                raise ValueError(f"{path}: {up} is a file, not a folder")
            break
    if path.exists():
        return path.stat().st_size == 0 and readonly
    if readonly:
        return True
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ValueError(f"{path}: cannot make its folder ({exc.strerror or exc})") from None
    return True


def _check_writable(path: Path) -> None:
    """One line when the library (or, for SQLite's journal, its folder) cannot be written:
    a library on read-only media read as "not a primer library (unable to open database
    file)" when a command tried to change it."""
    for place in (path, path.parent):
        if place.exists() and not os.access(place, os.W_OK):
            try:
                read_only = bool(os.statvfs(place).f_flag & os.ST_RDONLY)
            except OSError:
                read_only = False
            why = "a read-only file system" if read_only else f"no permission to write {place}"
            raise ValueError(f"{path}: cannot write to the library ({why}); list and export "
                             "can still read it")


def _read_only_uri(path: Path) -> str:
    """An SQLite URI that opens ``path`` without writing; on read-only media (where SQLite
    could not make its shared-memory file) as immutable: nothing else writes it there."""
    uri = "file:" + urllib.parse.quote(str(path.resolve())) + "?mode=ro"
    writable = os.access(path.parent, os.W_OK) and os.access(path, os.W_OK)
    return uri if writable else uri + "&immutable=1"


def _locus_name(record_id: str) -> str:
    name = "".join(c if c.isalnum() or c in "_-." else "_" for c in record_id)
    return name[:16] or "target"


def _inside(sites, entry: LibraryEntry, record_id: str, length: int):
    """The sites clipped to the record (GenBank allows no feature past its end): a site
    that overlaps the end is cut there, one wholly past it left out; a warning each."""
    for start, end, strand in sites:
        if start > length:
            warnings.warn(SequenceWarning(
                f"primer {entry.name!r}: its site {start}-{end} lies past the end of "
                f"{record_id!r} ({length:,} nt): left out of the GenBank file"), stacklevel=2)
            continue
        if end > length:
            warnings.warn(SequenceWarning(
                f"primer {entry.name!r}: its site {start}-{end} runs past the end of "
                f"{record_id!r} ({length:,} nt): cut to {start}-{length} in the GenBank file"),
                stacklevel=2)
            end = length
        yield start, end, strand


def _sites(entry: LibraryEntry, record_id: str, text: str):
    """(start, end, strand) of a primer on a target: its own coordinates, else exact matches."""
    if entry.target_id == record_id and entry.target_start and entry.target_end:
        yield entry.target_start, entry.target_end, -1 if entry.orientation == "reverse" else 1
        return
    seq = entry.sequence
    rc = decode(reverse_complement(encode(seq)))
    for probe, strand in ((seq, 1), (rc, -1)):
        at = text.find(probe)
        while at >= 0:
            yield at + 1, at + len(probe), strand
            at = text.find(probe, at + 1)
        if rc == seq:
            break


def parse_csv(text: str, source: str = "CSV") -> list[LibraryEntry]:
    """Library entries from CSV text; ValueError (one line) for a malformed file."""
    reader = csv.reader(io.StringIO(text))
    try:
        rows = [r for r in reader if any(c.strip() for c in r)]
    except csv.Error as exc:  # a field over csv.field_size_limit, a NUL byte...
        raise ValueError(f"{source}: line {reader.line_num}: {exc}") from None
    if not rows:
        raise ValueError(f"{source}: empty file (expected a header with name,sequence)")
    header = [c.strip().lower() for c in rows[0]]
    unknown = [c for c in header if c not in COLUMNS]
    if unknown:
        raise ValueError(f"{source}: unknown column {unknown[0]!r} (known: {', '.join(COLUMNS)})")
    for need in ("name", "sequence"):
        if need not in header:
            raise ValueError(f"{source}: no {need!r} column")
    dup = next((c for i, c in enumerate(header) if c in header[:i]), None)
    if dup:
        raise ValueError(f"{source}: column {dup!r} appears twice")
    entries = []
    for line, row in enumerate(rows[1:], start=2):
        if len(row) != len(header):
            raise ValueError(f"{source}: line {line}: {len(row)} fields, the header has {len(header)}")
        values = {col: unquoted_cell(cell.strip()) for col, cell in zip(header, row)}
        for col in [c for c in header if c in _NUMBERS]:  # (the first bad cell named)
            cell = values[col]
            try:
                values[col] = _NUMBERS[col](cell) if cell else None
            except ValueError:
                raise ValueError(f"{source}: line {line}: {col} must be a number, "
                                 f"got {cell!r}") from None
        try:
            entries.append(LibraryEntry(**values).checked())
        except ValueError as exc:
            raise ValueError(f"{source}: line {line}: {exc}") from None
    if not entries:
        raise ValueError(f"{source}: no primers (only a header)")
    return entries
