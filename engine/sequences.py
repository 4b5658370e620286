"""Sequence loading, validation and IUPAC 4-bit encoding.

Every family works on ``uint8`` arrays of 4-bit base sets (A=1, C=2, G=4, T=8,
IUPAC codes are unions). Two symbols match when their sets intersect, so an
``N`` never invents a difference. Files are read with Biopython; the text of
every record is validated in full before anything is computed, and the first
bad character is reported with file, record and 1-based position.
"""

from __future__ import annotations

import gzip
import io
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

#: IUPAC nucleotide code -> 4-bit base set.
IUPAC_CODES: dict[str, int] = {
    "A": 1, "C": 2, "G": 4, "T": 8,
    "R": 5, "Y": 10, "S": 6, "W": 9, "K": 12, "M": 3,
    "B": 14, "D": 13, "H": 11, "V": 7, "N": 15,
}

#: 4-bit base set -> canonical letter (index 0 is never produced by encode).
DECODE_TABLE = np.frombuffer(b"?ACMGRSVTWYHKDBN", dtype=np.uint8)

# Byte -> code; 0 marks a byte that is not a nucleotide symbol.
_ENCODE_TABLE = np.zeros(256, dtype=np.uint8)
for _letter, _code in IUPAC_CODES.items():
    _ENCODE_TABLE[ord(_letter)] = _code
    _ENCODE_TABLE[ord(_letter.lower())] = _code
_ENCODE_TABLE[ord("U")] = _ENCODE_TABLE[ord("u")] = IUPAC_CODES["T"]

# Complement of a base set: swap A<->T and C<->G bits.
COMPLEMENT_TABLE = np.array(
    [((c & 1) << 3) | ((c & 8) >> 3) | ((c & 2) << 1) | ((c & 4) >> 1) for c in range(16)],
    dtype=np.uint8,
)

_FORMAT_BY_SUFFIX = {
    ".fa": "fasta", ".fasta": "fasta", ".fna": "fasta", ".ffn": "fasta", ".fas": "fasta",
    ".fsa": "fasta", ".seq": "fasta", ".mfa": "fasta",
    ".gb": "genbank", ".gbk": "genbank", ".genbank": "genbank", ".gbff": "genbank",
    ".embl": "embl", ".emb": "embl",
}
_PROTEIN_ONLY = set("EFIJLOPQXZ*efijlopqxz")
_LITERAL_RE = re.compile(r"^[A-Za-z]+$")


class SequenceError(ValueError):
    """Bad sequence input. ``str(err)`` is a one-line message meant for people."""


@dataclass(frozen=True)
class Record:
    """One validated, encoded sequence record."""

    id: str
    codes: np.ndarray = field(repr=False)
    description: str = ""
    source: str = ""

    def __len__(self) -> int:
        return int(self.codes.shape[0])

    @property
    def text(self) -> str:
        return decode(self.codes)

    def slice(self, start: int, end: int | None = None) -> "Record":
        """A 0-based half-open slice, named ``id[start:end]``."""
        end = len(self) if end is None else min(end, len(self))
        return Record(f"{self.id}[{start}:{end}]", self.codes[start:end].copy(),
                      self.description, self.source)

    def chunk(self, start: int, end: int) -> np.ndarray:
        """Codes [start, end): a view here; a genome store's record (engine.store) unpacks
        just that range, which is how streaming reads backgrounds of any size."""
        return self.codes[start:end]


def _describe_bad(char: str) -> str:
    if char == "-" or char == ".":
        return "a gap character; give degapped sequences, not an alignment"
    if char.isdigit():
        return "a digit"
    if char.isspace():
        return "white space"
    if char in _PROTEIN_ONLY:
        return "not a nucleotide code; is this a protein sequence?"
    return "not an IUPAC nucleotide code"


def encode(text: str | bytes, *, source: str = "<literal>", record_id: str = "literal") -> np.ndarray:
    """Encode nucleotide text to 4-bit base sets.

    Raises
    ------
    SequenceError
        On an empty sequence or the first character that is not an IUPAC code,
        naming ``source``, ``record_id``, the 1-based position and the character.

    Examples
    --------
    >>> encode("ACGTN").tolist()
    [1, 2, 4, 8, 15]
    """
    raw = text.encode("latin-1", errors="replace") if isinstance(text, str) else bytes(text)
    if not raw:
        raise SequenceError(f"{source}: record '{record_id}' is empty")
    buf = np.frombuffer(raw, dtype=np.uint8)
    codes = _ENCODE_TABLE[buf]
    bad = np.flatnonzero(codes == 0)
    if bad.size:
        pos = int(bad[0])
        char = chr(raw[pos])
        raise SequenceError(
            f"{source}: record '{record_id}' position {pos + 1}: invalid character {char!r} "
            f"({_describe_bad(char)})"
        )
    return codes


def decode(codes: np.ndarray) -> str:
    """Inverse of :func:`encode` (IUPAC letters, upper case, ``U`` as ``T``)."""
    return DECODE_TABLE[np.asarray(codes, dtype=np.uint8)].tobytes().decode("ascii")


def reverse_complement(codes: np.ndarray) -> np.ndarray:
    """Reverse complement of an encoded sequence (IUPAC codes map by the standard table)."""
    return COMPLEMENT_TABLE[np.asarray(codes, dtype=np.uint8)[::-1]]


def reverse_complement_record(record: Record) -> Record:
    return Record(record.id, reverse_complement(record.codes), record.description, record.source)


def _looks_like_literal(source: str) -> bool:
    return bool(_LITERAL_RE.match(source)) and not os.path.exists(source)


def _sniff_format(path: Path, head: str) -> str:
    name = path.name.lower()
    if name.endswith(".gz"):
        name = name[:-3]
    suffix = os.path.splitext(name)[1]
    if suffix in _FORMAT_BY_SUFFIX:
        return _FORMAT_BY_SUFFIX[suffix]
    stripped = head.lstrip()
    if stripped.startswith(">"):
        return "fasta"
    if stripped.startswith("LOCUS"):
        return "genbank"
    if stripped.startswith("ID "):
        return "embl"
    raise SequenceError(f"{path}: unknown sequence format (expected FASTA, GenBank or EMBL)")


def _read_text(path: Path) -> str:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise SequenceError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise SequenceError(f"{path}: is a directory, not a sequence file") from None
    except OSError as exc:
        raise SequenceError(f"{path}: cannot read file ({exc.strerror or exc})") from None
    if data[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError) as exc:
            raise SequenceError(f"{path}: corrupt gzip file ({exc})") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("latin-1")


def load(source: str | os.PathLike) -> list[Record]:
    """Load every record of a FASTA/GenBank/EMBL file (optionally ``.gz``), a genome store
    (``.psg``, see engine.store: its records map the store), or a literal.

    A string made only of letters that is not an existing path is read as a
    literal sequence (record id ``literal``).

    Raises
    ------
    SequenceError
        On a missing or unreadable file, an unknown format, an empty file or
        record, or an invalid character. Nothing partial is returned.
    """
    source_str = os.fspath(source)
    if isinstance(source, str) and _looks_like_literal(source_str):
        return [Record("literal", encode(source_str), "", "<literal>")]
    path = Path(source_str)
    from engine import store  # a genome store (.psg) maps instead of reading

    if store.is_store(path):
        return list(store.load_store(path))
    text = _read_text(path)
    fmt = _sniff_format(path, text[:200])
    from Bio import SeqIO  # deferred: Biopython's import costs ~0.2 s

    records: list[Record] = []
    try:
        for index, seq_record in enumerate(SeqIO.parse(io.StringIO(text), fmt), start=1):
            record_id = seq_record.id or f"record{index}"
            seq_text = str(seq_record.seq)
            codes = encode(seq_text, source=str(path), record_id=record_id)
            records.append(Record(record_id, codes, seq_record.description, str(path)))
    except SequenceError:
        raise
    except Exception as exc:  # Biopython raises ValueError and friends on malformed files
        raise SequenceError(f"{path}: not a valid {fmt} file ({exc})") from None
    if not records:
        raise SequenceError(f"{path}: no {fmt} sequence records found (empty file?)")
    return records


def load_many(sources) -> list[Record]:
    """Load several sources into one list of records."""
    out: list[Record] = []
    for source in sources:
        out.extend(load(source))
    return out


def concat_with_offsets(records: list[Record]) -> tuple[np.ndarray, np.ndarray]:
    """Concatenate encoded records; ``offsets[i]:offsets[i+1]`` is record i.

    Kernels take one flat array plus offsets so that a numba loop can walk all
    records without Python objects, and so that no match spans two records.
    """
    lengths = np.array([len(r) for r in records], dtype=np.int64)
    offsets = np.zeros(len(records) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    flat = np.concatenate([r.codes for r in records]) if records else np.zeros(0, np.uint8)
    return flat.astype(np.uint8, copy=False), offsets
