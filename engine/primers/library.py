"""The primer library: primers kept between runs, in SQLite (Python's sqlite3).

One file per library (default: :func:`default_path`, the user's data directory). Every
change runs in one transaction taken with ``BEGIN IMMEDIATE`` (the write lock first,
so two writers queue instead of failing half-way), on a WAL journal with a busy
timeout: two windows or processes writing at once both keep their rows, and a
process killed in the middle of a write leaves the file as of the last commit.

Each entry records the name (unique), sequence (5'->3'), orientation, the target it
was designed on and its coordinates there, the k and background it was checked
against, Tm and GC, notes and the date it was added.
"""

from __future__ import annotations

import contextlib
import csv
import io
import math
import os
import sqlite3
import sys
from dataclasses import asdict, dataclass, fields, replace
from datetime import datetime, timezone
from pathlib import Path

from engine.primers.primer_sets import MAX_PRIMER_LENGTH
from engine.sequences import SequenceError, decode, encode, reverse_complement

__all__ = ["COLUMNS", "Library", "LibraryEntry", "default_path"]

ORIENTATIONS = ("forward", "reverse", "")
SCHEMA_VERSION = 1
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
)
"""


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
        name = (self.name or "").strip()
        if not name:
            raise ValueError("a primer needs a name")
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
            if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < 1):
                raise ValueError(f"primer {name!r}: {f} must be an integer >= 1, got {v!r}")
        if (self.target_start is not None and self.target_end is not None
                and self.target_end < self.target_start):
            raise ValueError(f"primer {name!r}: target_end is before target_start")
        for f in ("tm", "gc_percent"):
            v = getattr(self, f)
            if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float))
                                  or not math.isfinite(v)):
                raise ValueError(f"primer {name!r}: {f} must be a number, got {v!r}")
        return replace(self, name=name, sequence=seq,
                       created=self.created or datetime.now(timezone.utc).strftime(
                           "%Y-%m-%dT%H:%M:%SZ"))


#: The CSV columns of an export (and the columns an import may have).
COLUMNS = tuple(f.name for f in fields(LibraryEntry))
_INT = {"target_start", "target_end", "k"}
_FLOAT = {"tm", "gc_percent"}


class Library:
    """A primer library file. Methods commit before they return (one transaction each)."""

    def __init__(self, path: str | os.PathLike | None = None, *, timeout: float = 60.0):
        self.path = Path(path) if path is not None else default_path()
        if self.path.is_dir():
            raise ValueError(f"{self.path}: is a directory, not a library file")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._db = sqlite3.connect(str(self.path), timeout=timeout, isolation_level=None)
            self._db.execute(f"PRAGMA busy_timeout = {int(timeout * 1000)}")
            self._db.execute("PRAGMA journal_mode = WAL")
            self._db.execute("PRAGMA synchronous = FULL")
            with self.transaction() as db:
                version = db.execute("PRAGMA user_version").fetchone()[0]
                if version > SCHEMA_VERSION:
                    raise ValueError(f"{self.path}: written by a newer primerscope "
                                     f"(schema {version})")
                db.execute(_SCHEMA)
                db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        except sqlite3.DatabaseError as exc:
            raise ValueError(f"{self.path}: not a primer library ({exc})") from None

    def close(self) -> None:
        self._db.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    @contextlib.contextmanager
    def transaction(self):
        """``BEGIN IMMEDIATE`` ... ``COMMIT`` (``ROLLBACK`` on any error)."""
        db = self._db
        db.execute("BEGIN IMMEDIATE")
        try:
            yield db
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")

    # -- changes ---------------------------------------------------------------------------

    def add(self, entry: LibraryEntry) -> LibraryEntry:
        return self.add_many([entry])[0]

    def add_many(self, entries) -> list[LibraryEntry]:
        """Add all or nothing; ValueError if a name is taken (or given twice)."""
        checked = [e.checked() for e in entries]
        names = [e.name for e in checked]
        dup = next((n for i, n in enumerate(names) if n in names[:i]), None)
        if dup is not None:
            raise ValueError(f"the primer name {dup!r} is given twice")
        cols = COLUMNS
        sql = f"INSERT INTO primers ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})"
        with self.transaction() as db:
            for e in checked:
                if db.execute("SELECT 1 FROM primers WHERE name = ?", (e.name,)).fetchone():
                    raise ValueError(f"the library already has a primer named {e.name!r}")
            db.executemany(sql, [tuple(getattr(e, c) for c in cols) for e in checked])
        return checked

    def remove(self, names) -> int:
        """Remove these primers (all or nothing); ValueError naming one that is not there."""
        names = list(names)
        with self.transaction() as db:
            for n in names:
                if not db.execute("SELECT 1 FROM primers WHERE name = ?", (n,)).fetchone():
                    raise ValueError(f"the library has no primer named {n!r}")
            db.executemany("DELETE FROM primers WHERE name = ?", [(n,) for n in names])
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

    def __len__(self) -> int:
        return self._db.execute("SELECT COUNT(*) FROM primers").fetchone()[0]

    # -- import and export -----------------------------------------------------------------

    def import_csv(self, text: str, source: str = "CSV") -> int:
        """Add every row of a CSV (an export's columns; ``name`` and ``sequence`` required,
        the others optional). All or nothing: any bad row, unknown column or taken name
        rejects the whole file with one line naming it."""
        return len(self.add_many(parse_csv(text, source)))

    def csv_text(self) -> str:
        buf = io.StringIO(newline="")
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(COLUMNS)
        for e in self.entries():
            w.writerow(["" if v is None else v for v in asdict(e).values()])
        return buf.getvalue()

    def order_sheet_text(self, *, scale: str = "25nm", purification: str = "STD") -> str:
        """Name,Sequence,Scale,Purification: the columns of oligo vendors' bulk-order forms."""
        buf = io.StringIO(newline="")
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(("Name", "Sequence", "Scale", "Purification"))
        for e in self.entries():
            w.writerow((e.name, e.sequence, scale, purification))
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
                for start, end, strand in _sites(e, target.id, text):
                    quals = {"label": [e.name], "note": [f"5'-{e.sequence}-3'"]}
                    if e.notes:
                        quals["note"].append(e.notes)
                    rec.features.append(SeqFeature(FeatureLocation(start - 1, end, strand=strand),
                                                   type="primer_bind", qualifiers=quals))
            rec.features.sort(key=lambda f: (int(f.location.start), int(f.location.end)))
            records.append(rec)
        SeqIO.write(records, out, "genbank")
        return out.getvalue()


def _locus_name(record_id: str) -> str:
    name = "".join(c if c.isalnum() or c in "_-." else "_" for c in record_id)
    return name[:16] or "target"


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
    rows = list(csv.reader(io.StringIO(text)))
    rows = [r for r in rows if any(c.strip() for c in r)]
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
        values = {}
        for col, cell in zip(header, row):
            cell = cell.strip()
            try:
                if col in _INT:
                    values[col] = int(cell) if cell else None
                elif col in _FLOAT:
                    values[col] = float(cell) if cell else None
                else:
                    values[col] = cell
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
