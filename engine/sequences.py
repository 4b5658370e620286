"""Sequence loading, validation and IUPAC 4-bit encoding.

Every family works on ``uint8`` arrays of 4-bit base sets (A=1, C=2, G=4, T=8,
IUPAC codes are unions). Two symbols match when their sets intersect, so an
``N`` never invents a difference. Files are read with Biopython (FASTA through its
SimpleFastaParser, after a check here that accepts a BOM, blank lines and any line
ending and says every problem in one line; GenBank and EMBL through SeqIO).
The text of every record is validated in full before anything is computed, and
the first bad character is reported with file, record and 1-based position.
"""

from __future__ import annotations

import gzip
import io
import os
import re
import warnings
import zlib
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from collections.abc import Sequence
from contextlib import contextmanager
from operator import attrgetter
from typing import Iterator

import numpy as np

from engine.columns import Ids

#: IUPAC nucleotide code -> 4-bit base set.
IUPAC_CODES: dict[str, int] = {
    "A": 1, "C": 2, "G": 4, "T": 8,
    "R": 5, "Y": 10, "S": 6, "W": 9, "K": 12, "M": 3,
    "B": 14, "D": 13, "H": 11, "V": 7, "N": 15,
}

#: 4-bit base set -> canonical letter; 0 is an assembly gap base (engine.gaps), shown as N.
DECODE_TABLE = np.frombuffer(b"NACMGRSVTWYHKDBN", dtype=np.uint8)

# Byte -> code; 0 marks a byte that is not a nucleotide symbol.
_ENCODE_TABLE = np.zeros(256, dtype=np.uint8)
for _letter, _code in IUPAC_CODES.items():
    _ENCODE_TABLE[ord(_letter)] = _code
    _ENCODE_TABLE[ord(_letter.lower())] = _code
_ENCODE_TABLE[ord("U")] = _ENCODE_TABLE[ord("u")] = IUPAC_CODES["T"]
_ENCODE_BYTES = _ENCODE_TABLE.tobytes()  # the same table for bytes.translate

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
_LEADING_SPACE = re.compile(r"\s*")
_FASTA_DROP = str.maketrans("", "", " \t\r\n")
_PROTEIN_ONLY = set("EFIJLOPQXZ*efijlopqxz")
_LITERAL_RE = re.compile(r"^[A-Za-z]+$")  # a file named so is read, with a warning
_NCBI_GI_RE = re.compile(r"^gi\|\d+\|[a-z]+\|([^|]+)\|[^|]*$")


class SequenceError(ValueError):
    """Bad sequence input. ``str(err)`` is a one-line message meant for people."""


class SequenceWarning(UserWarning):
    """Input read, but perhaps not as meant (duplicate ids, a file named like a literal);
    the command line shows it as one line on stderr."""


@contextmanager
def reading_errors(path, error: type[Exception] = SequenceError, what: str = "a sequence file"):
    """The OS's errors on opening or reading ``path`` inside the block as one-line ``error``s
    (``what``: the kind of file a directory was given for), worded alike for every input."""
    try:
        yield
    except FileNotFoundError:
        raise error(f"{path}: no such file") from None
    except IsADirectoryError:
        raise error(f"{path}: is a directory, not {what}") from None
    except OSError as exc:
        raise error(f"{path}: cannot read file ({exc.strerror or exc})") from None


@dataclass(frozen=True)
class Record:
    """One validated, encoded sequence record.

    ``offset`` is the number of bases of the loaded record before ``codes[0]`` (a region of
    it, see :meth:`region`): families report 1-based positions as ``offset + i + 1``, so
    results stay in the loaded record's coordinates and keep its id.

    ``soft_mask`` is (starts, ends), int64 arrays of the lower-case runs of the text it was
    read from (soft-masked repeats; 0-based, half-open, in ``codes`` coordinates), or None
    when nothing of it was lower case or the case is unknown. The codes are case-blind:
    only ``--avoid-masked`` and the views' bands read it.
    """

    id: str
    codes: np.ndarray = field(repr=False)
    description: str = ""
    source: str = ""
    offset: int = 0
    soft_mask: tuple | None = field(default=None, repr=False, compare=False)

    def __len__(self) -> int:
        return int(self.codes.shape[0])

    @property
    def text(self) -> str:
        return decode(self.codes)

    def slice(self, start: int, end: int | None = None) -> "Record":
        """A 0-based half-open slice, named ``id[start:end]`` (read through :meth:`chunk`:
        a genome store's record unpacks only that range)."""
        end = len(self) if end is None else min(end, len(self))
        return Record(f"{self.id}[{start}:{end}]", self.chunk(start, end).copy(),
                      self.description, self.source,
                      soft_mask=clip_intervals(self.soft_mask, start, end))

    def region(self, start: int, end: int) -> "Record":
        """Positions ``start..end`` (1-based, inclusive, in this record's coordinates; ``end``
        clipped to the record) as a record with the same id whose results keep this numbering."""
        first = start - self.offset
        last = min(end - self.offset, len(self))
        if first < 1 or first > last:
            raise SequenceError(f"region {start:,}-{end:,} lies outside {self.id} "
                                f"({self.offset + 1:,}-{self.offset + len(self):,})")
        return Record(self.id, self.codes[first - 1:last].copy(), self.description, self.source,
                      self.offset + first - 1,
                      clip_intervals(self.soft_mask, first - 1, last))

    @property
    def soft_mask_known(self) -> bool:
        """Whether ``soft_mask`` says what was lower case (False: a format-1 genome store)."""
        return True

    def chunk(self, start: int, end: int) -> np.ndarray:
        """Codes [start, end): a view here; a genome store's record (engine.store) unpacks
        just that range, which is how streaming reads backgrounds of any size."""
        return self.codes[start:end]

    def gather(self, positions: np.ndarray) -> np.ndarray:
        """Codes at scattered ``positions`` (a genome store's record reads only those)."""
        lo, hi = int(positions.min()), int(positions.max()) + 1
        return self.chunk(lo, hi)[positions - lo]


def clip_intervals(intervals, start: int, end: int):
    """Intervals (starts, ends) cut to [start, end) and shifted to count from ``start``
    (None, or none left: None)."""
    if intervals is None:
        return None
    starts, ends = intervals
    keep = (ends > start) & (starts < end)
    if not keep.any():
        return None
    return (np.clip(starts[keep], start, end) - start, np.clip(ends[keep], start, end) - start)


def merge_intervals(starts: np.ndarray, ends: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Intervals (starts, ends) in order of start, overlapping or touching ones joined (the
    reach of the ends so far says whether the next one starts inside)."""
    order = np.argsort(starts, kind="stable")
    starts, ends = starts[order], ends[order]
    reach = np.maximum.accumulate(ends)
    new = np.ones(starts.shape[0], dtype=bool)
    new[1:] = starts[1:] > reach[:-1]
    return starts[new], reach[np.roll(new, -1)]  # (rolled: the last row before each new one)


_LOWER_RE = re.compile(r"[a-z]")


def lower_runs(text: str) -> tuple[np.ndarray, np.ndarray] | None:
    """(starts, ends) of the lower-case runs of sequence text (no white space in it), or None
    when it has none (one regex scan decides, so an upper-case genome costs nothing more)."""
    if _LOWER_RE.search(text) is None:
        return None
    lower = np.frombuffer(text.encode("latin-1", errors="replace"), dtype=np.uint8) >= 97
    edges = np.flatnonzero(np.diff(lower.view(np.int8), prepend=0, append=0))
    return edges[0::2].astype(np.int64), edges[1::2].astype(np.int64)


_SPAN_RE = re.compile(r"\s*([\d,_]+)\s*[-–]\s*([\d,_]+)\s*")


@dataclass(frozen=True)
class Region:
    """Positions ``start..end`` (1-based, inclusive) of the record named ``record``, or, with
    no record named, of an input's only record (``[RECORD:]START-END``, as samtools writes
    it: ``chr2:1,000-5,000``)."""

    start: int
    end: int
    record: str | None = None

    def __str__(self) -> str:
        span = f"{self.start:,}-{self.end:,}"
        return span if self.record is None else f"{self.record}:{span}"

    def indices(self, records) -> list[int]:
        """Which of ``records`` this region is of: every record of its name, or the only
        record. The plain form on several records is refused: it does not say which."""
        records = list(records)
        if self.record is None:
            if len(records) > 1:
                names = ", ".join(r.id for r in records[:3]) + (", …" if len(records) > 3 else "")
                raise SequenceError(f"region {self} is ambiguous: the input has {len(records):,} "
                                    f"records ({names}); name one, as "
                                    f"{records[0].id}:{self.start}-{self.end}")
            return list(range(len(records)))
        chosen = [i for i, r in enumerate(records) if r.id == self.record]
        if not chosen:
            names = ", ".join(r.id for r in records[:5]) + (", …" if len(records) > 5 else "")
            raise SequenceError(f"region {self}: the input has no record {self.record!r} "
                                f"(it has {names})")
        return chosen

    def select(self, records) -> list[Record]:
        """The records of :meth:`indices`, cut to the region (:meth:`Record.region`: same id
        and numbering)."""
        records = list(records)
        return [records[i].region(self.start, self.end) for i in self.indices(records)]


def parse_region(text: str) -> Region:
    """``"[RECORD:]START-END"`` -> :class:`Region` (1-based, inclusive; thousands separators
    allowed; a record name may hold ``:``, the last one ends it).

    >>> parse_region("1,001-1,500")
    Region(start=1001, end=1500, record=None)
    >>> parse_region("chr2:1000-5000")
    Region(start=1000, end=5000, record='chr2')
    """
    m = _SPAN_RE.fullmatch(text)
    name = None
    if not m and ":" in text:
        name, span = text.rsplit(":", 1)
        name = name.strip()
        m = _SPAN_RE.fullmatch(span) if name else None
    if not m:
        raise ValueError(f"region must be [RECORD:]START-END (1-based, inclusive), got {text!r}")
    start, end = (int(g.replace(",", "").replace("_", "")) for g in m.groups())
    if start < 1 or end < start:
        raise ValueError(f"region must have 1 <= START <= END, got {text!r}")
    return Region(start, end, name)


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
    if ord(char) > 127:
        return f"U+{ord(char):04X}, not ASCII; sequences are plain ASCII letters"
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
    # One byte per character (a character past latin-1 becomes '?', itself invalid), so
    # that a position in ``raw`` is the position in ``text``.
    raw = text.encode("latin-1", errors="replace") if isinstance(text, str) else bytes(text)
    if not raw:
        raise SequenceError(f"{source}: record '{record_id}' is empty")
    codes, pos = _translate(raw)
    if pos >= 0:
        raise SequenceError(f"{source}: record '{record_id}' {bad_character(text, pos)}")
    return codes


def _translate(raw: bytes) -> tuple[np.ndarray, int]:
    """(IUPAC codes, index of the first byte that is no IUPAC letter or -1) of one-byte
    characters. bytes.translate and a byte search: a few ms for a 5 Mb genome, where numpy's
    table lookup and search took 10-20 (issue #16: a command line's start-up)."""
    coded = bytearray(raw.translate(_ENCODE_BYTES))
    return np.frombuffer(coded, dtype=np.uint8), coded.find(0)


def bad_character(text: str | bytes, pos: int) -> str:
    """'position P: invalid character C (why)' for the 0-based ``pos`` of ``text``."""
    char = text[pos] if isinstance(text, str) else chr(text[pos])
    return f"position {pos + 1}: invalid character {char!r} ({_describe_bad(char)})"


def decode(codes: np.ndarray) -> str:
    """Inverse of :func:`encode` (IUPAC letters, upper case, ``U`` as ``T``)."""
    return DECODE_TABLE[np.asarray(codes, dtype=np.uint8)].tobytes().decode("ascii")


def reverse_complement(codes: np.ndarray) -> np.ndarray:
    """Reverse complement of an encoded sequence (IUPAC codes map by the standard table)."""
    return COMPLEMENT_TABLE[np.asarray(codes, dtype=np.uint8)[::-1]]


def reverse_complement_record(record: Record) -> Record:
    mask = record.soft_mask
    if mask is not None:  # the same bases, counted from the other end
        n = len(record)
        mask = (n - mask[1][::-1], n - mask[0][::-1])
    return Record(record.id, reverse_complement(record.codes), record.description, record.source,
                  soft_mask=mask)


def _format_suffix(name: str) -> str:
    """The suffix of a file name that says its format (lower case; a ``.gz`` after it dropped)."""
    return os.path.splitext(name.lower().removesuffix(".gz"))[1]


def _looks_like_path(source: str) -> bool:
    """A name meant as a file: a folder in it or a sequence file suffix."""
    return ("/" in source or os.sep in source or _format_suffix(source) in _FORMAT_BY_SUFFIX
            or source.lower().endswith((".txt", ".gz")))


def _literal(source: str) -> list[Record]:
    """A command-line argument that names no file: a literal sequence, or an error that
    says what is wrong with it as a sequence (and that no such file exists)."""
    if source == "":
        raise SequenceError("'' is an empty sequence (and names no file)")
    if _looks_like_path(source):
        raise SequenceError(f"{source}: no such file (and not a sequence)")
    codes, pos = _translate(source.encode("latin-1", errors="replace"))
    if pos >= 0:
        shown = source if len(source) <= 40 else source[:37] + "..."
        raise SequenceError(f"{shown!r} names no file and is not a sequence: "
                            f"{bad_character(source, pos)}")
    return [Record("literal", codes, "", "<literal>")]


def _sniff_format(path: Path, head: str) -> str:
    suffix = _format_suffix(path.name)
    if suffix in _FORMAT_BY_SUFFIX:
        return _FORMAT_BY_SUFFIX[suffix]
    stripped = head.lstrip()
    if stripped.startswith((">", ";")):
        return "fasta"
    if stripped.startswith("LOCUS"):
        return "genbank"
    if stripped.startswith("ID "):
        return "embl"
    raise SequenceError(f"{path}: unknown sequence format (expected FASTA, GenBank or EMBL)")


#: Memory a whole-file read takes per byte of text: the bytes, the text, its lines, the
#: joined sequence and its codes (measured: 7.8 on a 100 MB FASTA).
READ_BYTES_PER_TEXT_BYTE = 8


def _text_limit() -> int | None:
    """The most text this process can read whole (engine.memory), None: no known bound."""
    from engine.memory import available_bytes

    free = available_bytes()
    return None if free is None else free // READ_BYTES_PER_TEXT_BYTE


def _refuse_too_large(path: Path, what: str, limit: int) -> None:
    """Refuse a file with more text than :func:`_text_limit` (``what``: how much)."""
    raise SequenceError(f"{path}: {what} more text than this process can read into memory "
                        f"(about {limit:,} bytes): build a genome store with 'primerscope "
                        f"index {path} -o NAME.psg' and give that instead")


def _gunzip(fh, path: Path, limit: int | None) -> bytes:
    """The unpacked bytes of a gzip stream, read a block at a time and never more than
    ``limit`` of them: a small file may unpack to gigabytes (a gzip bomb)."""
    blocks, total = [], 0
    try:
        with gzip.GzipFile(fileobj=fh) as gz:
            while block := gz.read(1 << 24):
                total += len(block)
                if limit is not None and total > limit:
                    _refuse_too_large(path, "unpacks to", limit)
                blocks.append(block)
    except (EOFError, zlib.error, gzip.BadGzipFile) as exc:
        raise SequenceError(f"{path}: corrupt gzip file ({exc})") from None
    return b"".join(blocks)


def _read_text(path: Path) -> str:
    """The file's text: gunzipped, UTF-8 (a byte-order mark dropped) or else latin-1, with
    every line ending (CR LF, and the old Mac's lone CR) made LF."""
    limit = _text_limit()
    with reading_errors(path), open(path, "rb") as fh:
        gzipped = fh.peek(2)[:2] == b"\x1f\x8b"
        if not gzipped:
            size = os.fstat(fh.fileno()).st_size
            if limit is not None and size > limit:
                _refuse_too_large(path, f"holds {size:,} bytes,", limit)
            data = fh.read()
        else:
            data = _gunzip(fh, path, limit)
    if data[:2] in (b"\xff\xfe", b"\xfe\xff"):
        raise SequenceError(f"{path}: is UTF-16 text; save it as plain text (ASCII or UTF-8)")
    if data[:3] == b"\xef\xbb\xbf":
        data = data[3:]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = data.decode("latin-1")
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text


def _fasta_records(text: str, path: Path) -> Iterator[tuple[str, str, str]]:
    """(id, description, sequence) of each FASTA record, parsed by Biopython's
    SimpleFastaParser (id: the title's first word). Checked first, so that each problem is
    one line: blank lines before the first header are skipped; ';' comment lines and text
    before the first header are errors."""
    from Bio.SeqIO.FastaIO import SimpleFastaParser  # deferred: Biopython's import costs ~0.1 s

    content = _LEADING_SPACE.match(text).end()
    start = text.rfind("\n", 0, content) + 1  # the first line that is not blank
    lineno = text.count("\n", 0, start) + 1
    end = text.find("\n", start)
    line = text[start:] if end < 0 else text[start:end]
    if not line.startswith(">"):
        if not line.strip():
            return
        if line.startswith(";"):
            _comment_line(path, lineno)
        raise SequenceError(f"{path}: line {lineno}: expected a '>' header line, found "
                            f"{line[:30]!r}")
    comment = text.find("\n;", start)
    if comment >= 0:
        _comment_line(path, text.count("\n", 0, comment) + 2)
    # The lines as a list split at "\n" (as a text handle splits this text), which the
    # parser walks twice as fast as a StringIO; empty lines left out: it strips every line
    # and joins them, so they add nothing (and have no first character for it to test).
    for title, seq in SimpleFastaParser(filter(None, text[start:].split("\n"))):
        words = title.split(None, 1)
        yield (words[0] if words else ""), title, seq.translate(_FASTA_DROP)


def _comment_line(path: Path, lineno: int) -> None:
    raise SequenceError(f"{path}: line {lineno}: ';' comment lines are not read; remove them")


def _biopython_records(text: str, path: Path, fmt: str) -> Iterator[tuple[str, str, bytes]]:
    """(id, description, sequence) of each GenBank/EMBL record; Biopython's errors and
    warnings become one line each."""
    from Bio import BiopythonWarning, SeqIO  # deferred: Biopython's import costs ~0.2 s

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", BiopythonWarning)
        try:
            parsed = [(r.id, r.description, bytes(r.seq))  # bytes: any byte is reported by encode
                      for r in SeqIO.parse(io.StringIO(text), fmt)]
        except UnicodeError:  # Biopython keeps sequences as ASCII bytes
            found = re.search(r"[^\x00-\x7f]", text)
            if found is None:
                raise SequenceError(f"{path}: not a valid {fmt} file (bad text encoding)") from None
            line = text.count("\n", 0, found.start()) + 1
            raise SequenceError(f"{path}: line {line}: invalid character {found.group()!r} "
                                f"({_describe_bad(found.group())})") from None
        except Exception as exc:  # Biopython raises ValueError and friends on malformed files
            raise SequenceError(f"{path}: not a valid {fmt} file ({_one_line(exc)})") from None
    for seen in sorted({_one_line(w.message) for w in caught
                        if issubclass(w.category, BiopythonWarning)}):
        warnings.warn(SequenceWarning(f"{path}: {seen}"), stacklevel=3)
    return iter(parsed)


def _one_line(exc) -> str:
    text = " ".join(str(exc).split())
    return text if len(text) <= 200 else text[:197] + "..."


def load(source: str | os.PathLike, on_empty=None) -> list[Record]:
    """Load every record of a FASTA/GenBank/EMBL file (optionally ``.gz``), a genome store
    (``.psg``, see engine.store: its records map the store), or a literal.

    A string that is not an existing path is read as a literal sequence (record id
    ``literal``): made only of letters, it must be IUPAC codes; otherwise the error
    names the first character that is not. A file named like a literal (``ACGT``)
    is read, with a :class:`SequenceWarning`. Records are named by :func:`record_id`;
    duplicate ids are made unique (``id``, ``id_2``...), with a warning. With
    ``on_empty`` (a callable), an empty record is skipped and its id passed to it
    instead of failing the whole file.

    Raises
    ------
    SequenceError
        On a missing or unreadable file, an unknown format, an empty file or
        record, or an invalid character. Nothing partial is returned.
    """
    source_str = os.fspath(source)
    if isinstance(source, str) and (source_str == "" or not os.path.exists(source_str)):
        return _literal(source_str)
    if isinstance(source, str) and _LITERAL_RE.match(source_str) and os.path.isfile(source_str):
        warnings.warn(SequenceWarning(
            f"{source_str}: read as the file of that name in the working directory, not as "
            "a literal sequence"), stacklevel=2)
    path = Path(source_str)
    if is_store(path):  # a genome store (.psg) maps instead of reading
        from engine import store  # (it imports numba: only for a store)

        return list(store.load_store(path))
    text = _read_text(path)
    fmt = _sniff_format(path, text[:200])
    parsed = _fasta_records(text, path) if fmt == "fasta" else _biopython_records(text, path, fmt)
    records: list[Record] = []
    for index, (raw_id, description, seq_text) in enumerate(parsed, start=1):
        raw_id = raw_id or f"record{index}"
        rid = record_id(raw_id)
        if not seq_text and on_empty is not None:
            on_empty(rid)
            continue
        codes = encode(seq_text, source=str(path), record_id=rid)
        # GenBank and EMBL write every base in lower case (Biopython gives upper case): only
        # FASTA's case is soft-masking
        mask = lower_runs(seq_text) if fmt == "fasta" else None
        records.append(Record(rid, codes, _description(raw_id, description), str(path),
                              soft_mask=mask))
    if not records:
        raise SequenceError(f"{path}: no {fmt} sequence records found (empty file?)")
    return unique_ids(records, str(path))


#: A genome store's (engine.store) file suffix and first bytes: told apart here, where reading
#: a sequence file does not import the store's module (nor numba with it).
STORE_SUFFIX = ".psg"
STORE_MAGIC = b"PSGENOME"


def is_store(path: str | os.PathLike) -> bool:
    """True for a ``.psg`` name or a regular file that starts with the store's magic (a pipe
    is never peeked at: that would eat its first bytes)."""
    path = os.fspath(path)
    if path.lower().endswith(STORE_SUFFIX):
        return True
    if not os.path.isfile(path):
        return False
    try:
        with open(path, "rb") as fh:
            return fh.read(len(STORE_MAGIC)) == STORE_MAGIC
    except OSError:
        return False


def unique_names(ids: list[str]) -> tuple[list[str], list[str]]:
    """``ids`` with duplicates renamed ``id_2``, ``id_3``... (the first keeps its id; a new
    name never takes one that is already there), and the renames as ``"old -> new"``. One
    rule for records loaded from a file and for a genome store's ids (engine.store), so
    that a job names a record alike whichever it was given."""
    seen = set(ids)
    if len(seen) == len(ids):
        return list(ids), []
    taken: set[str] = set()
    out, renamed = [], []
    for rid in ids:
        new, n = rid, 1
        while new in taken or (new != rid and new in seen):
            n += 1
            new = f"{rid}_{n}"
        taken.add(new)
        if new != rid:
            renamed.append(f"{rid} -> {new}")
        out.append(new)
    return out, renamed


def warn_renamed(source: str, renamed: list[str], stacklevel: int = 3) -> None:
    """One :class:`SequenceWarning` listing the first renames of :func:`unique_names`."""
    shown = ", ".join(renamed[:3]) + (f" and {len(renamed) - 3} more" if len(renamed) > 3 else "")
    warnings.warn(SequenceWarning(f"{source}: duplicate record ids made unique ({shown})"),
                  stacklevel=stacklevel)


def unique_ids(records: list[Record], source: str) -> list[Record]:
    """The records with duplicate ids renamed (:func:`unique_names`), and one
    :class:`SequenceWarning` saying so: output rows must be told apart."""
    ids, renamed = unique_names([r.id for r in records])
    if not renamed:
        return records
    out = [r if new == r.id else Record(new, r.codes, r.description, r.source, r.offset,
                                        r.soft_mask)
           for r, new in zip(records, ids)]
    warn_renamed(source, renamed, stacklevel=4)
    return out


def load_many(sources, on_empty=None) -> list[Record]:
    """Load several sources into one list of records (ids made unique across them;
    ``on_empty``: see :func:`load`)."""
    out: list[Record] = []
    for source in sources:
        out.extend(load(source, on_empty))
    return unique_ids(out, ", ".join(map(os.fspath, sources)) if len(sources) < 4 else "inputs")


def load_files(paths) -> tuple[list[Record], list[str]]:
    """:func:`load_many` of files, skipping empty records: the records and the skipped ids.
    A plain function of picklable values, so that the GUI can run a large load in a child
    process (a 100 Mb parse holds the GIL for whole seconds in a thread)."""
    skipped: list[str] = []
    return load_many(paths, on_empty=skipped.append), skipped


def load_files_noting(paths) -> tuple[list[Record], list[str], list[str]]:
    """:func:`load_files` and the text of each :class:`SequenceWarning` it raised (duplicate
    ids made unique, a file named like a sequence...), for a caller with no stderr to show
    them on (the GUI; also picklable, for its child process)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", SequenceWarning)
        records, skipped = load_files(paths)
    notes = [str(w.message) for w in caught if issubclass(w.category, SequenceWarning)]
    return records, skipped, list(dict.fromkeys(notes))


def _int_column(name: str, values) -> np.ndarray:
    """A 1-D integer array as int64 (no copy when it is one already)."""
    array = np.asarray(values)
    if array.ndim != 1 or not (array.dtype.kind in "iu" or array.size == 0):
        raise ValueError(f"{name} must be a 1-D integer array, got {array.dtype} of shape "
                         f"{array.shape}")
    return array.astype(np.int64, copy=False)


class SeqColumns(Sequence):
    """Many sequences as columns: one buffer of 4-bit codes and where each sequence lies in it.

    Sequence i is ``codes[starts[i]:ends[i]]``. Sequences may share the buffer and overlap:
    candidate regions as ranges of one genome, or a read checked against several regions as
    the same range several times. A batch of 200,000 (query, region) pairs then costs no
    Python object per pair (``edit.verify`` reads the arrays as they are); reading item i
    makes its :class:`Record` (a view of the buffer). ``ids`` is an
    :class:`engine.columns.Ids` (given strings, or a prefix and a number made when read);
    ``shifts[i]`` is sequence i's ``Record.offset`` (results number its positions from
    ``shift + 1``), zeros when not given.

    Build one with :meth:`from_offsets` (sequences end to end), :meth:`from_ranges`,
    :meth:`encode` (IUPAC letters, encoded in one pass) or :meth:`from_records`.

    >>> batch = SeqColumns.encode(["ACGT", "GGA"], ids="read")
    >>> len(batch), batch.offsets.tolist(), batch[1].id, batch[1].text
    (2, [0, 4, 7], 'read1', 'GGA')
    """

    def __init__(self, codes: np.ndarray, starts, ends, ids=None, shifts=None, *,
                 records: tuple | None = None, check: bool = True):
        """``check``: validate the arrays (one pass over the codes; the constructors do)."""
        self.codes = codes
        self.starts = _int_column("starts", starts) if check else starts
        self.ends = _int_column("ends", ends) if check else ends
        n = self.starts.shape[0]
        self.ids = _ids(ids, n)
        self.shifts = None if shifts is None else _int_column("shifts", shifts)
        #: the records these columns were made from (:meth:`from_records`; their codes are
        #: then a copy made for them), else None (the caller's own buffer)
        self.records = records
        if check:
            self._check()

    def _check(self) -> None:
        codes, starts, ends = self.codes, self.starts, self.ends
        if not isinstance(codes, np.ndarray) or codes.dtype != np.uint8 or codes.ndim != 1:
            what = f"{codes.dtype} of shape {codes.shape}" if isinstance(codes, np.ndarray) \
                else type(codes).__name__
            raise ValueError(f"codes must be a 1-D uint8 array of IUPAC codes "
                             f"(engine.sequences.encode), got {what}")
        n = starts.shape[0]
        for name, count in (("ends", ends.shape[0]), ("ids", len(self.ids)),
                            ("shifts", n if self.shifts is None else self.shifts.shape[0])):
            if count != n:
                raise ValueError(f"{count} {name} for {n} sequences (one each)")
        # The codes of [first start, last end) only: bytes of the buffer that no sequence
        # reads are never used (a batch's queries may be a few reads of a large buffer).
        lo, hi = (int(starts.min()), int(ends.max())) if n else (0, 0)
        if lo < 0 or hi > codes.shape[0] or (n and np.any(ends < starts)):
            bad = np.flatnonzero((starts < 0) | (ends < starts) | (ends > codes.shape[0]))
            i = int(bad[0])
            name, lo, hi = self.ids[i], int(starts[i]), int(ends[i])
            raise ValueError(f"sequence {i} ({name!r}): [{lo}, {hi}) is not a range of the "
                             f"{codes.shape[0]:,} codes")
        read = codes[lo:hi]
        if read.size and read.max() > 15:  # (0 is an assembly gap base, engine.gaps)
            i = lo + int(np.flatnonzero(read > 15)[0])
            code = int(codes[i])
            raise ValueError(f"codes must be IUPAC 4-bit codes 0-15 (engine.sequences.encode; 0: "
                             "an assembly gap base), "
                             f"found {code} at index {i} (letters? use SeqColumns.encode)")

    # -- constructors ----------------------------------------------------------------------
    @classmethod
    def from_offsets(cls, codes: np.ndarray, offsets, ids=None, shifts=None) -> "SeqColumns":
        """Sequences end to end: sequence i is ``codes[offsets[i]:offsets[i+1]]``, offsets
        from 0 to ``len(codes)``. ``ids``: a sequence of str, an :class:`Ids`, or a str
        prefix (ids prefix + index; None: ``seq`` + index)."""
        offsets = _check_offsets(offsets, codes)
        return cls(codes, offsets[:-1], offsets[1:], ids, shifts)

    @classmethod
    def from_ranges(cls, codes: np.ndarray, starts, ends, ids=None, shifts=None) -> "SeqColumns":
        """Sequence i is ``codes[starts[i]:ends[i]]`` (ranges may overlap and repeat)."""
        return cls(codes, starts, ends, ids, shifts)

    @classmethod
    def encode(cls, texts, offsets=None, ids=None) -> "SeqColumns":
        """IUPAC letters encoded in one pass (:func:`encode`'s table): ``texts`` a sequence of
        str or bytes, or with ``offsets`` one str/bytes/uint8 array of them end to end.

        Raises
        ------
        SequenceError
            On the first character that is not an IUPAC code, naming its sequence.
        """
        if offsets is None:
            parts = [t.encode("latin-1", errors="replace") if isinstance(t, str) else bytes(t)
                     for t in texts]
            offsets = end_to_end(parts)
            raw = b"".join(parts)
        elif isinstance(texts, np.ndarray):
            raw = np.ascontiguousarray(texts, dtype=np.uint8).reshape(-1).tobytes()
        else:
            raw = texts.encode("latin-1", errors="replace") if isinstance(texts, str) \
                else bytes(texts)
        codes, pos = _translate(raw)
        offsets = _check_offsets(offsets, codes)
        if pos >= 0:
            i = int(np.searchsorted(offsets, pos, side="right")) - 1
            start = int(offsets[i])
            name = _ids(ids, len(offsets) - 1)[i]
            where = bad_character(raw[start:int(offsets[i + 1])], pos - start)
            raise SequenceError(f"sequence {i} ({name!r}) {where}")
        return cls(codes, offsets[:-1], offsets[1:], ids)

    @classmethod
    def from_records(cls, records) -> "SeqColumns":
        """The records' codes end to end (one record: read in place), their ids and offsets;
        reading item i gives record i itself."""
        records = tuple(records)
        n = len(records)
        if n == 1:
            codes = np.ascontiguousarray(records[0].codes, dtype=np.uint8)
            offsets = end_to_end((codes,))
        else:
            codes, offsets = concat_with_offsets(records)
        shifts = np.fromiter(map(attrgetter("offset"), records), dtype=np.int64, count=n)
        return cls(codes, offsets[:-1], offsets[1:], Ids(list(map(attrgetter("id"), records))),
                   shifts if shifts.any() else None, records=records, check=False)

    # -- reading ---------------------------------------------------------------------------
    def __len__(self) -> int:
        return int(self.starts.shape[0])

    def __getitem__(self, index):
        if isinstance(index, slice):
            return self.take(np.arange(len(self))[index])
        i = range(len(self))[index]
        if self.records is not None:
            return self.records[i]
        return Record(self.ids[i], self.codes[self.starts[i]:self.ends[i]],
                      offset=0 if self.shifts is None else int(self.shifts[i]))

    def __repr__(self) -> str:
        return f"<SeqColumns: {len(self):,} sequences, {int(self.lengths.sum()):,} symbols>"

    @cached_property
    def lengths(self) -> np.ndarray:
        """Each sequence's length (made once: starts and ends never change)."""
        return self.ends - self.starts

    @property
    def offsets(self) -> np.ndarray:
        """starts, then the last end: the offsets of sequences that lie end to end."""
        if not self.contiguous():
            raise ValueError("these sequences do not lie end to end in their buffer")
        return np.append(self.starts, self.ends[-1:] if len(self) else [0])

    def contiguous(self) -> bool:
        """Whether each sequence starts where the one before ends."""
        return bool(np.array_equal(self.starts[1:], self.ends[:-1]))

    def shift_array(self) -> np.ndarray:
        return np.zeros(len(self), dtype=np.int64) if self.shifts is None else self.shifts

    def take(self, index) -> "SeqColumns":
        """Some of the sequences (an index array), in that order, on the same buffer."""
        index = np.asarray(index, dtype=np.int64)
        records = None if self.records is None else tuple(self.records[i] for i in index.tolist())
        return SeqColumns(self.codes, self.starts[index], self.ends[index], self.ids.take(index),
                          None if self.shifts is None else self.shifts[index], records=records,
                          check=False)


def _check_offsets(offsets, codes) -> np.ndarray:
    """Offsets of sequences end to end in ``codes``: from 0 to its length, never decreasing."""
    offsets = _int_column("offsets", offsets)
    size = codes.shape[0] if isinstance(codes, np.ndarray) and codes.ndim == 1 else None
    if offsets.shape[0] == 0 or offsets[0] != 0 or (size is not None and offsets[-1] != size):
        span = f"{int(offsets[0])}..{int(offsets[-1])}" if offsets.shape[0] else "nothing"
        raise ValueError(f"offsets must run from 0 to the number of codes ({size}), got {span}")
    if np.any(offsets[1:] < offsets[:-1]):
        i = int(np.flatnonzero(offsets[1:] < offsets[:-1])[0]) + 1
        raise ValueError(f"offsets must not decrease (offsets[{i}] is below the one before)")
    return offsets


def _ids(ids, count: int) -> Ids:
    """An :class:`Ids` column from what SeqColumns takes: Ids, a str prefix, None or strings."""
    if isinstance(ids, Ids):
        return ids
    if ids is None or isinstance(ids, str):
        return Ids.numbered("seq" if ids is None else ids, count)
    return Ids([str(i) for i in ids])


def end_to_end(parts) -> np.ndarray:
    """The offsets of ``parts`` (anything with a length) laid end to end: 0, then where each
    ends (int64; a C loop over the lengths, no Python frame per part)."""
    offsets = np.zeros(len(parts) + 1, dtype=np.int64)
    np.cumsum(np.fromiter(map(len, parts), dtype=np.int64, count=len(parts)), out=offsets[1:])
    return offsets


def concat_with_offsets(records: Sequence[Record]) -> tuple[np.ndarray, np.ndarray]:
    """Concatenate encoded records; ``offsets[i]:offsets[i+1]`` is record i.

    Kernels take one flat array plus offsets so that a numba loop can walk all
    records without Python objects, and so that no match spans two records.
    """
    parts = list(map(attrgetter("codes"), records))
    flat = np.concatenate(parts) if parts else np.zeros(0, np.uint8)
    return flat.astype(np.uint8, copy=False), end_to_end(parts)
