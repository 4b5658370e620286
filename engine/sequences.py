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
_NCBI_GI_RE = re.compile(r"^gi\|\d+\|[a-z]+\|([^|]+)\|[^|]*$")


class SequenceError(ValueError):
    """Bad sequence input. ``str(err)`` is a one-line message meant for people."""


@dataclass(frozen=True)
class Record:
    """One validated, encoded sequence record.

    ``offset`` is the number of bases of the loaded record before ``codes[0]`` (a region of
    it, see :meth:`region`): families report 1-based positions as ``offset + i + 1``, so
    results stay in the loaded record's coordinates and keep its id.
    """

    id: str
    codes: np.ndarray = field(repr=False)
    description: str = ""
    source: str = ""
    offset: int = 0

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

    def region(self, start: int, end: int) -> "Record":
        """Positions ``start..end`` (1-based, inclusive, in this record's coordinates; ``end``
        clipped to the record) as a record with the same id whose results keep this numbering."""
        first = start - self.offset
        last = min(end - self.offset, len(self))
        if first < 1 or first > last:
            raise SequenceError(f"region {start:,}-{end:,} lies outside {self.id} "
                                f"({self.offset + 1:,}-{self.offset + len(self):,})")
        return Record(self.id, self.codes[first - 1:last].copy(), self.description, self.source,
                      self.offset + first - 1)


def parse_region(text: str) -> tuple[int, int]:
    """``"1,001-1,500"`` -> ``(1001, 1500)`` (1-based, inclusive; thousands separators allowed).

    >>> parse_region("1,001-1,500")
    (1001, 1500)
    """
    m = re.fullmatch(r"\s*([\d,_]+)\s*[-–:]\s*([\d,_]+)\s*", text)
    if not m:
        raise ValueError(f"region must be START-END (1-based, inclusive), got {text!r}")
    start, end = (int(g.replace(",", "").replace("_", "")) for g in m.groups())
    if start < 1 or end < start:
        raise ValueError(f"region must have 1 <= START <= END, got {text!r}")
    return start, end


def record_id(raw_id: str) -> str:
    """The accession of NCBI's old FASTA ids (``gi|9626243|ref|NC_001416.1|`` ->
    ``NC_001416.1``, as GenBank files and genome browsers name the record); other ids as they are."""
    m = _NCBI_GI_RE.match(raw_id)
    return m.group(1) if m else raw_id


def _description(raw_id: str, description: str) -> str:
    """Biopython's FASTA description repeats the id first: keep what follows it."""
    if description.startswith(raw_id):
        return description[len(raw_id):].strip()
    return description


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


def _fasta(text: str):
    """(id, title, sequence) of each record of an ASCII FASTA text that starts with '>', as
    Biopython's "fasta" parser (Bio.SeqIO.FastaIO.FastaIterator) reads them: a record
    starts at each line that starts with '>'; its title is that line's rest without
    trailing whitespace and its id the title's first word; its sequence is the lines up
    to the next record without spaces, tabs, CR and LF (bytes, as :func:`encode` takes)."""
    for chunk in text.encode("ascii")[1:].split(b"\n>"):
        head, _, body = chunk.partition(b"\n")
        title = head.decode("ascii").rstrip()
        words = title.split(None, 1)
        yield (words[0] if words else ""), title, body.translate(None, b" \t\r\n")


def load(source: str | os.PathLike, on_empty=None) -> list[Record]:
    """Load every record of a FASTA/GenBank/EMBL file (optionally ``.gz``), or a literal.

    A string made only of letters that is not an existing path is read as a
    literal sequence (record id ``literal``). Records are named by :func:`record_id`.
    With ``on_empty`` (a callable), an empty record is skipped and its id passed to it
    instead of failing the whole file.

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
    text = _read_text(path)
    fmt = _sniff_format(path, text[:200])
    if fmt == "fasta" and text.startswith(">") and text.isascii():
        parsed = _fasta(text)  # what Biopython reads, without importing it (~0.15 s)
    else:
        from Bio import SeqIO  # deferred: Biopython's import costs ~0.2 s

        parsed = ((r.id, r.description, str(r.seq)) for r in SeqIO.parse(io.StringIO(text), fmt))
    records: list[Record] = []
    try:
        for index, (raw_id, description, seq_text) in enumerate(parsed, start=1):
            raw_id = raw_id or f"record{index}"
            rid = record_id(raw_id)
            if not seq_text and on_empty is not None:
                on_empty(rid)
                continue
            codes = encode(seq_text, source=str(path), record_id=rid)
            records.append(Record(rid, codes, _description(raw_id, description), str(path)))
    except SequenceError:
        raise
    except Exception as exc:  # Biopython raises ValueError and friends on malformed files
        raise SequenceError(f"{path}: not a valid {fmt} file ({exc})") from None
    if not records:
        raise SequenceError(f"{path}: no {fmt} sequence records found (empty file?)")
    return records


def load_many(sources, on_empty=None) -> list[Record]:
    """Load several sources into one list of records (``on_empty``: see :func:`load`)."""
    out: list[Record] = []
    for source in sources:
        out.extend(load(source, on_empty))
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
