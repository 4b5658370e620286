"""Primer sets as the command line and the GUI take them: a FASTA/GenBank/EMBL file, a
CSV/TSV of name and sequence, literals (comma-separated), or what the tools write: a
``pairs`` CSV or JSON (both primers of each pair, see :func:`pair_primers`) and a JSON
with ``primers`` (``library list --json``, ``pcr``/``panel --json``).

Every primer becomes a :class:`~engine.sequences.Record` whose id is its name. A set is
checked before any work: no empty primer, none longer than :data:`MAX_PRIMER_LENGTH`,
no two primers of one name (results name primers, so names must say which).
"""

from __future__ import annotations

import csv
import io
import os
from pathlib import Path

from engine.sequences import Record, SequenceError, encode, load
# (spreadsheet_cell: importable from here, as the primer tools' writers once took it)
from engine.spreadsheet import spreadsheet_cell as spreadsheet_cell, unquoted_cell

#: Oligos longer than this are not primers (Primer3's thermodynamics stop at 60; synthesis
#: vendors at about 100-200).
MAX_PRIMER_LENGTH = 100

_TABLE_SUFFIXES = {".csv": ",", ".tsv": "\t", ".tab": "\t", ".txt": None}
_NAME_COLUMNS = ("name", "id", "primer", "primer_name")
_SEQUENCE_COLUMNS = ("sequence", "seq", "primer_sequence", "oligo")


def check_primers(primers) -> tuple[Record, ...]:
    """The set as a tuple of Records (any form of :func:`engine.api.records`); ValueError
    naming the first bad primer. A path, or literals with names or commas, is read as the
    command line reads PRIMERS (:func:`load_primers`: a CSV/TSV or JSON of primers,
    ``NAME=SEQ,...``), so the API takes what ``primerscope pcr`` takes; a bare sequence
    stays ``seq1`` (engine.api's name)."""
    from engine import api

    if isinstance(primers, os.PathLike) or (
            isinstance(primers, str) and ("," in primers or "=" in primers
                                          or os.path.exists(primers))):
        return load_primers(os.fspath(primers))
    primers = api.records(primers, "primers")
    if not primers:
        raise ValueError("no primers given")
    seen = set()
    for p in primers:
        if len(p) == 0:
            raise ValueError(f"primer {p.id!r} is empty")
        if len(p) > MAX_PRIMER_LENGTH:
            raise ValueError(f"primer {p.id!r} has {len(p)} nt; primers may have at most "
                             f"{MAX_PRIMER_LENGTH}")
        if p.id in seen:
            raise ValueError(f"two primers are named {p.id!r}; give each primer its own name")
        seen.add(p.id)
    return primers


def parse_literals(text: str) -> list[Record]:
    """``ACGT...,GGCA...`` (or ``NAME=ACGT...``): primers named primer1, primer2, ... unless named."""
    out = []
    for i, item in enumerate(text.split(","), start=1):
        name, _, seq = item.strip().rpartition("=")
        name = name.strip() or f"primer{i}"
        seq = seq.strip()
        if not seq:
            raise ValueError(f"primer {name!r} is empty")
        out.append(Record(name, encode(seq, record_id=name), "", "<literal>"))
    return out


#: Decimals of a float in the primer tools' CSVs (Primer3's values carry 15; the JSON keeps
#: them all).
CSV_DECIMALS = 4


def csv_number(value: float) -> float:
    """A float as the primer tools' CSVs write it: :data:`CSV_DECIMALS` decimals."""
    return round(float(value), CSV_DECIMALS)


def pair_primer_names(target_id: str, left_start: int, right_end: int) -> tuple[str, str]:
    """Names of a designed pair's primers: the target and the 5' end's position, F or R
    (``NC_001416.1_20101F``, ``NC_001416.1_20400R``): stable across designs."""
    return f"{target_id}_{left_start}F", f"{target_id}_{right_end}R"


def pair_primers(pairs) -> list[tuple[str, str]]:
    """(name, sequence) of both primers of each pair (``(target_id, left_start,
    left_sequence, right_end, right_sequence)``), each sequence once; a name that two
    sequences would share gets the primer's length appended to the second."""
    by_sequence: dict[str, str] = {}
    taken: set[str] = set()
    for target_id, left_start, left, right_end, right in pairs:
        for name, seq in zip(pair_primer_names(target_id, left_start, right_end), (left, right)):
            if seq in by_sequence:
                continue
            if name in taken:
                name = f"{name}_{len(seq)}nt"
            by_sequence[seq] = name
            taken.add(name)
    return [(name, seq) for seq, name in by_sequence.items()]


def _records(named, source: str) -> list[Record]:
    return [Record(name, encode(seq, source=source, record_id=name), "", source)
            for name, seq in named]


def parse_json(text: str, source: str = "<json>") -> list[Record]:
    """``{"pairs": [...]}`` (``pairs --json``) or ``{"primers": [{"name", "sequence"}]}``."""
    import json

    try:
        data = json.loads(text)
    except ValueError as err:
        raise SequenceError(f"{source}: not JSON ({err})") from None
    if isinstance(data, dict) and isinstance(data.get("pairs"), list) and data["pairs"] \
            and isinstance(data["pairs"][0], dict) and "left" in data["pairs"][0]:
        return _records(pair_primers((p["target"], p["left"]["start"], p["left"]["sequence"],
                                      p["right"]["end"], p["right"]["sequence"])
                                     for p in data["pairs"]), source)
    if isinstance(data, dict) and isinstance(data.get("primers"), list) and data["primers"]:
        try:
            return _records(((p["name"], p["sequence"]) for p in data["primers"]), source)
        except (KeyError, TypeError):
            pass
    raise SequenceError(f"{source}: no primers found (expected a JSON with 'pairs' from "
                        f"primerscope pairs, or 'primers' with name and sequence)")


def parse_table(text: str, source: str = "<table>", delimiter: str | None = None) -> list[Record]:
    """A CSV/TSV of name and sequence. A header row (name/id/primer and sequence/seq) is
    optional; without one the first two columns are name and sequence. A ``pairs`` CSV
    (left_sequence, right_sequence...) gives both primers of each pair (:func:`pair_primers`)."""
    if delimiter is None:
        first = text.lstrip().split("\n", 1)[0]
        delimiter = "\t" if "\t" in first else ","
    reader = csv.reader(io.StringIO(text), delimiter=delimiter)
    try:
        rows = [(reader.line_num, [unquoted_cell(c) for c in r]) for r in reader
                if any(cell.strip() for cell in r)]
    except csv.Error as exc:  # a field over csv.field_size_limit, a NUL byte...
        raise SequenceError(f"{source}: line {reader.line_num}: {exc}") from None
    if not rows:
        raise SequenceError(f"{source}: no primers found (empty table?)")
    header = [c.strip().lower() for c in rows[0][1]]
    pair_columns = ("target", "left_start", "left_sequence", "right_end", "right_sequence")
    if all(c in header for c in pair_columns):
        at = [header.index(c) for c in pair_columns]
        if len(rows) == 1:
            raise SequenceError(f"{source}: no pairs in it (a pairs CSV with its header only)")
        try:
            return _records(pair_primers((row[at[0]], int(row[at[1]]), row[at[2]].strip(),
                                          int(row[at[3]]), row[at[4]].strip())
                                         for _, row in rows[1:]), source)
        except (IndexError, ValueError):
            raise SequenceError(f"{source}: a pairs CSV row lacks its primers' columns") from None
    name_col, seq_col = 0, 1
    if any(h in _SEQUENCE_COLUMNS for h in header):
        seq_col = next(i for i, h in enumerate(header) if h in _SEQUENCE_COLUMNS)
        names = [i for i, h in enumerate(header) if h in _NAME_COLUMNS]
        name_col = names[0] if names else None
        rows = rows[1:]
    out = []
    for line, row in rows:
        if len(row) <= seq_col or (name_col is not None and len(row) <= name_col):
            raise SequenceError(f"{source}: line {line}: expected name and sequence columns")
        name = row[name_col].strip() if name_col is not None else f"primer{len(out) + 1}"
        seq = row[seq_col].strip()
        if not seq:
            raise SequenceError(f"{source}: line {line}: primer {name!r} is empty")
        out.append(Record(name, encode(seq, source=source, record_id=name), "", source))
    if not out:
        raise SequenceError(f"{source}: no primers found (only a header?)")
    return out


def parse_text(text: str, source: str = "<pasted>") -> tuple[Record, ...]:
    """Primers typed or pasted (the window's *Check primers*), checked: FASTA, a ``primers``
    or ``pairs`` JSON, a CSV/TSV table of several lines (a pairs CSV included), or
    literals: one per line or comma-separated, each ``SEQ``, ``NAME=SEQ`` or ``NAME SEQ``."""
    from engine.sequences import _fasta_records

    stripped = text.strip()
    if not stripped:
        raise ValueError("no primers given")
    if stripped.startswith(">"):
        return check_primers(_records(((rid, seq) for rid, _, seq in
                                       _fasta_records(stripped, Path(source))), source))
    if stripped.startswith("{"):
        return check_primers(parse_json(stripped, source))
    lines = [line.strip() for line in stripped.splitlines() if line.strip()]
    if len(lines) > 1 and ("\t" in lines[0] or "," in lines[0]):
        return check_primers(parse_table(stripped, source))
    items = [item.strip() for line in lines for item in line.split(",") if item.strip()]
    named = []
    for item in items:
        words = item.split()
        if "=" not in item and len(words) == 2:
            item = f"{words[0]}={words[1]}"  # NAME SEQ
        named.append(item)
    return check_primers(parse_literals(",".join(named)))


def load_primers(source: str) -> tuple[Record, ...]:
    """Primers from a sequence file, a CSV/TSV table, or literals; checked (see module)."""
    if not os.path.exists(source):
        if source.strip() == "" or all(c.strip() == "" for c in source.split(",")):
            raise ValueError("empty primer")
        if "," in source or "=" in source or source.replace(" ", "").isalpha():
            return check_primers(parse_literals(source))
        return check_primers(load(source))  # names the missing file
    path = Path(source)
    suffix = path.suffix.lower()
    if suffix == ".json":
        return check_primers(parse_json(path.read_text(encoding="utf-8"), str(path)))
    if suffix in _TABLE_SUFFIXES:
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            text = path.read_text(encoding="latin-1")
        if not text.lstrip().startswith(">"):
            return check_primers(parse_table(text, str(path), _TABLE_SUFFIXES[suffix]))
    return check_primers(load(path))
