"""The genome store (``.psg``): a background read once, then memory-mapped.

``primerscope index GENOME -o NAME.psg`` reads FASTA (plain, ``.gz`` or bgzip),
GenBank, EMBL or UCSC ``.2bit`` once and writes:

======================  =====================================================
bytes [0, 4096)         header: magic, format version, flags, record count,
                        bases, payload, table and interval places and sizes,
                        the SHA-256 of the source file and of the payload, the
                        CRC-32 of the table, of the intervals and of the
                        header itself, and the store's ``gap_min``
[4096, 4096 + P)        payload: the 4-bit IUPAC codes of engine.sequences,
                        two per byte (low nibble first), each record starting
                        on a byte (an odd record ends with a 0 nibble)
[T, T + table bytes)    record table: int64 lengths[n], int64 byte offsets[n]
                        into the payload, int64 N-run counts[n], int64 mask
                        counts[n], then UTF-8 JSON with the ids, descriptions
                        and the source's name, size and format
[I, I + interval bytes) intervals (format 2): int64 starts and ends of every
                        run of N (all lengths), then of every lower-case run
                        (soft-masked repeats), record after record
======================  =====================================================

**Why the intervals.** The codes are case-blind and a gap is only a run of N, so
the N runs and the lower-case runs are found while the source is read (they cost
nothing then) and kept: a job never scans a genome for its assembly gaps
(:meth:`StoreRecord.with_gap_min` and the streaming planner read the table) and
``--avoid-masked`` needs no second pass over the FASTA. Every N run is kept, not
only those of ``gap_min`` or more, so that a run may ask for another ``--gap-min``
than the store's (``primerscope index --gap-min``, the default of a job that reads
the store). The intervals are mapped, and checked against their CRC the first time
a job reads them: a soft-masked human genome has about 5.6 million mask runs
(90 MB), which opening should not read.

**Older stores.** A format-1 store (no intervals) still opens: its N runs are
found on demand (one pass over the packed codes of a record, kept), and its soft
mask is unknown, so ``--avoid-masked`` refuses it with a message that says to
rebuild it.

**Why two per byte.** Half the disk, page cache and I/O of one code per byte (a
human genome is 1.55 GB instead of 3.1), and a GPU can take the packed bytes. The
price is an unpack (about 1 ns a base in numba) before a kernel reads the codes,
which is nothing against the per-base cost of any family (thousands of cells a
base). So codes are not views of the map: a :class:`StoreRecord` unpacks what is
asked of it, a range at a time (:meth:`StoreRecord.chunk`), and the streaming
drivers (:mod:`engine.streaming`) only ever ask for chunks. ``record.codes``
still works (it unpacks the whole record, a new array each time) so that every
family accepts a store wherever it accepts a background.

**Safety.** The build writes through :func:`engine.output.open_output` (a hidden
temporary file renamed at the end) and writes the header last, so an interrupted
build leaves no file under the store's name and no temporary file with a valid
header. Opening checks the magic, version, header CRC, the file size and the
table CRC (only the header and table are read; the payload is mapped, not read:
opening is milliseconds whatever the genome). :func:`verify` reads the payload
and checks its SHA-256 (``primerscope index --check NAME.psg``). Every problem is
a :class:`StoreError`, a one-line :class:`~engine.sequences.SequenceError`.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import mmap
import os
import struct
import time
import warnings
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np
from numba import njit

from engine.gaps import GAP_CODE, GAP_MIN, N_CODE
from engine.jobs import check_int
from engine.output import open_output
from engine.sequences import (_ENCODE_TABLE, COMPLEMENT_TABLE, STORE_MAGIC, STORE_SUFFIX, Record,
                              SequenceError, SequenceWarning, _describe_bad, _description,
                              merge_intervals, reading_errors, record_id, _sniff_format,
                              unique_names, warn_renamed)

MAGIC = STORE_MAGIC
VERSION = 2
#: versions this module reads (1: no interval tables; see the module docstring)
READS_VERSIONS = (1, 2)
assert READS_VERSIONS == tuple(range(1, VERSION + 1))  # (the message says "up to VERSION")
FLAG_PACKED = 1
HEADER_BYTES = 4096
SUFFIX = STORE_SUFFIX
# magic, version, flags, records, bases, payload offset/bytes, table offset/bytes, file bytes,
# source sha256, payload sha256, table crc32 (format 1 ends here); interval offset/bytes,
# interval crc32, gap_min. Then the header's own crc32.
_HEADER_V1 = struct.Struct("<8sIIQQQQQQQ32s32sI")
_HEADER = struct.Struct("<8sIIQQQQQQQ32s32sIQQII")
_HEADER_CRC = struct.Struct("<I")

#: bytes read from the source at a time while building.
BUILD_BLOCK = 1 << 23

_SKIP = 255  # white space inside sequence lines (FASTA: Biopython drops " \t\r\n")
_BUILD_TABLE = _ENCODE_TABLE.copy()  # encode's table, white space skipped
_BUILD_TABLE[list(b" \t\r\n")] = _SKIP


class StoreError(SequenceError):
    """A store that cannot be opened or built (one line, exit status 2 on the CLI)."""


# ---------------------------------------------------------------------------- kernels

@njit(nogil=True, cache=True)
def _pack_text(src, lo, hi, table, out, state, n_runs, mask_runs):
    """Encode ``src[lo:hi]`` (text bytes), pack two codes a byte into ``out``, and note the
    runs of N and of lower case that close on the way.

    ``state`` (int64, carried from call to call within a record): the code waiting for its
    partner (-1: none), codes taken so far in the record, the start of the open N run and
    of the open lower-case run (-1: none), and how many rows of ``n_runs`` and
    ``mask_runs`` ((cap, 2) int64: start, end) are filled. The loop stops early when either
    table is full (the caller empties them and calls again from where it stopped).
    White space is skipped. Returns (bytes written, index reached, index of the first
    invalid byte or -1).
    """
    pending, pos, n_open, m_open, n_count, m_count = (state[0], state[1], state[2], state[3],
                                                      state[4], state[5])
    cap = min(n_runs.shape[0], mask_runs.shape[0])
    n_out = 0
    bad = -1
    i = lo
    while i < hi:
        if n_count >= cap or m_count >= cap:
            break
        byte = src[i]
        c = table[byte]
        if c == 255:
            i += 1
            continue
        if c == 0:
            bad = i
            break
        if c == 15:
            if n_open < 0:
                n_open = pos
        elif n_open >= 0:
            n_runs[n_count, 0] = n_open
            n_runs[n_count, 1] = pos
            n_count += 1
            n_open = -1
        if byte >= 97:  # a lower-case letter (every valid byte above 'Z' is one)
            if m_open < 0:
                m_open = pos
        elif m_open >= 0:
            mask_runs[m_count, 0] = m_open
            mask_runs[m_count, 1] = pos
            m_count += 1
            m_open = -1
        pos += 1
        if pending < 0:
            pending = c
        else:
            out[n_out] = np.uint8(pending | (c << 4))
            n_out += 1
            pending = -1
        i += 1
    state[0], state[1], state[2], state[3], state[4], state[5] = (pending, pos, n_open, m_open,
                                                                  n_count, m_count)
    return n_out, i, bad


@njit(nogil=True, cache=True)
def _packed_runs(packed, byte_offset, n, code):
    """(starts, ends) of the runs of ``code`` in the n codes of a record (format-1 stores,
    which keep no N table)."""
    starts = np.empty(16, dtype=np.int64)
    ends = np.empty(16, dtype=np.int64)
    count = 0
    open_at = -1
    base = byte_offset * 2
    for i in range(n + 1):
        hit = False
        if i < n:
            q = base + i
            b = np.int64(packed[q >> 1])
            hit = ((b >> 4) if q & 1 else (b & 15)) == code
        if hit and open_at < 0:
            open_at = i
        elif not hit and open_at >= 0:
            if count == starts.shape[0]:
                starts = np.concatenate((starts, np.empty(count, dtype=np.int64)))
                ends = np.concatenate((ends, np.empty(count, dtype=np.int64)))
            starts[count] = open_at
            ends[count] = i
            count += 1
            open_at = -1
    return starts[:count].copy(), ends[:count].copy()


@njit(nogil=True, cache=True)
def _clear_runs(out, at, start, end, starts, ends, reverse):
    """Set to 0 (the gap code) the bases of runs [starts, ends) inside columns [start, end)
    of a record whose codes lie in ``out[at:at + end - start]`` (reversed when ``reverse``:
    column c then sits at ``at + end - 1 - c``). Runs are sorted and disjoint."""
    n = starts.shape[0]
    lo, hi = 0, n  # the first run that ends after ``start``
    while lo < hi:
        mid = (lo + hi) // 2
        if ends[mid] <= start:
            lo = mid + 1
        else:
            hi = mid
    j = lo
    while j < n and starts[j] < end:
        a = max(starts[j], start)
        b = min(ends[j], end)
        for c in range(a, b):
            out[at + (end - 1 - c if reverse else c - start)] = GAP_CODE
        j += 1


@njit(nogil=True, cache=True)
def unpack_into(packed, byte_offset, start, n, out, at):
    """Codes [start, start+n) of the record whose packed bytes begin at ``byte_offset``,
    written to ``out[at:at+n]``."""
    p = byte_offset * 2 + start
    for i in range(n):
        q = p + i
        b = np.int64(packed[q >> 1])
        out[at + i] = (b >> 4) if q & 1 else (b & 15)


@njit(nogil=True, cache=True)
def _plain_nibbles(x):
    """How many of the 16 codes packed in the uint64 ``x`` have one bit set (A, C, G, T)."""
    ones, twos = np.uint64(0x5555555555555555), np.uint64(0x3333333333333333)
    lows, one = np.uint64(0x7777777777777777), np.uint64(0x1111111111111111)
    pairs = (x & ones) + ((x >> np.uint64(1)) & ones)
    bits = (pairs & twos) + ((pairs >> np.uint64(2)) & twos)  # set bits per code, 0..4
    t = bits ^ one  # zero exactly where a code has one bit
    zero = ~(((t & lows) + lows) | t | lows)  # a code's top bit set iff the code is zero
    count = 0
    while zero:
        zero &= zero - np.uint64(1)
        count += 1
    return count


@njit(nogil=True, cache=True)
def _count_plain(packed, byte_offset, start, n):
    """How many of codes [start, start+n) of a record are A, C, G or T (codes 1, 2, 4, 8):
    16 codes a word in the middle, one at a time at the ends (the summary's count, with no
    unpacking)."""
    plain = np.zeros(16, dtype=np.int64)
    plain[1] = plain[2] = plain[4] = plain[8] = 1
    q, end = byte_offset * 2 + start, byte_offset * 2 + start + n
    count = 0
    while q < end and q & 15:  # up to a whole word (16 codes, 8 bytes)
        b = np.int64(packed[q >> 1])
        count += plain[(b >> 4) if q & 1 else (b & 15)]
        q += 1
    words = (end - q) >> 4
    if words > 0:
        body = packed[q >> 1:(q >> 1) + words * 8].view(np.uint64)
        for i in range(words):
            count += _plain_nibbles(body[i])
        q += words * 16
    while q < end:
        b = np.int64(packed[q >> 1])
        count += plain[(b >> 4) if q & 1 else (b & 15)]
        q += 1
    return count


@njit(nogil=True, cache=True)
def unpack_rc_into(packed, byte_offset, start, n, comp, out, at):
    """The reverse complement of codes [start, start+n) of a record, into ``out[at:at+n]``."""
    p = byte_offset * 2 + start + n - 1
    for i in range(n):
        q = p - i
        b = np.int64(packed[q >> 1])
        out[at + i] = comp[(b >> 4) if q & 1 else (b & 15)]


@njit(nogil=True, cache=True)
def gather_into(packed, byte_offset, positions, out):
    """``out[i]`` = code at ``positions[i]`` of the record whose bytes begin at ``byte_offset``."""
    for i in range(positions.shape[0]):
        q = byte_offset * 2 + positions[i]
        b = np.int64(packed[q >> 1])
        out[i] = (b >> 4) if q & 1 else (b & 15)


@njit(nogil=True, cache=True)
def reverse_complement_into(codes, comp, out, at):
    """``out[at:at+len] = reverse complement of codes`` (in-memory records' chunks)."""
    n = codes.shape[0]
    for i in range(n):
        out[at + i] = comp[codes[n - 1 - i]]


# ---------------------------------------------------------------------------- reading

@dataclass(frozen=True)
class StoreInfo:
    """What a store's header and table say."""

    path: str
    records: int
    bases: int
    file_bytes: int
    source_sha256: str
    payload_sha256: str
    source: dict
    version: int = VERSION
    #: the store's assembly-gap length (``index --gap-min``), a job's default
    gap_min: int = GAP_MIN


class GenomeStore:
    """An open store: the header and record table in memory, the payload mapped.

    ``payload`` is a read-only ``uint8`` view of the map (packed codes); nothing of it
    is read until a record's codes are asked for.
    """

    def __init__(self, path: str | os.PathLike):
        self.path = os.fspath(path)
        with reading_errors(self.path, StoreError, "a genome store"):
            fd = os.open(self.path, os.O_RDONLY)
        try:
            size = os.fstat(fd).st_size
            with reading_errors(self.path, StoreError, "a genome store"):  # (a directory opens)
                head = os.pread(fd, _HEADER.size + _HEADER_CRC.size, 0)
            self._read_header(head, size)
            table = os.pread(fd, self.table_bytes, self.table_offset)
            if len(table) != self.table_bytes or zlib.crc32(table) != self._table_crc:
                raise self._corrupt("record table checksum mismatch")
            self._read_table(table)
            self._map = mmap.mmap(fd, 0, access=mmap.ACCESS_READ) if size else None
        finally:
            os.close(fd)
        self.payload = np.frombuffer(self._map, dtype=np.uint8, count=self.payload_bytes,
                                     offset=self.payload_offset)

    def __reduce__(self):
        """Pickled as its path and payload checksum: another process (a Dask worker) opens
        the store by path instead of receiving it (see :func:`reopen`)."""
        return reopen, (self.path, self.payload_sha256)

    def _read_header(self, head: bytes, size: int) -> None:
        path = self.path
        if len(head) < 8 or head[:8] != MAGIC:
            raise StoreError(f"{path}: not a primerscope genome store (bad magic; an interrupted "
                             "build or another file type)")
        if len(head) < 12:
            raise StoreError(f"{path}: truncated genome store ({size} bytes, header incomplete)")
        (version,) = struct.unpack_from("<I", head, 8)
        if version not in READS_VERSIONS:
            raise StoreError(f"{path}: genome store format version {version}; this primerscope "
                             f"reads versions up to {VERSION} (rebuild it with primerscope index)")
        layout = _HEADER if version >= 2 else _HEADER_V1
        if len(head) < layout.size + _HEADER_CRC.size:
            raise StoreError(f"{path}: truncated genome store ({size} bytes, header incomplete)")
        fields = layout.unpack_from(head)
        (crc,) = _HEADER_CRC.unpack_from(head, layout.size)
        if zlib.crc32(head[:layout.size]) != crc:
            raise StoreError(f"{path}: corrupt genome store (header checksum mismatch)")
        (_, self.version, self.flags, self.n_records, self.bases, self.payload_offset,
         self.payload_bytes, self.table_offset, self.table_bytes, self.file_bytes, src, pay,
         self._table_crc) = fields[:13]
        if version >= 2:
            (self.interval_offset, self.interval_bytes, self._interval_crc,
             self.gap_min) = fields[13:]
        else:
            self.interval_offset = self.interval_bytes = self._interval_crc = 0
            self.gap_min = GAP_MIN
        if size != self.file_bytes:
            raise StoreError(f"{path}: truncated or damaged genome store ({size} bytes, the header "
                             f"says {self.file_bytes}); rebuild it with primerscope index")
        self.source_sha256, self.payload_sha256 = src.hex(), pay.hex()
        self._check_layout(layout.size + _HEADER_CRC.size)

    def _corrupt(self, what: str) -> StoreError:
        return StoreError(f"{self.path}: corrupt genome store ({what}); rebuild it with "
                          "primerscope index")

    def _check_layout(self, header_end: int) -> None:
        """The header's sections lie in order inside the file and the table can hold the
        record columns: checksums only say a file is as it was written, and a crafted store
        (checksums recomputed) must not make a read leave the map."""
        if not self.flags & FLAG_PACKED:
            raise self._corrupt(f"flags {self.flags}")
        columns = 4 if self.version >= 2 else 2
        sections = [("payload", self.payload_offset, self.payload_bytes),
                    ("record table", self.table_offset, self.table_bytes)]
        if self.version >= 2:
            sections.append(("interval table", self.interval_offset, self.interval_bytes))
            if not 1 <= self.gap_min <= 1_000_000_000:
                raise self._corrupt(f"gap_min {self.gap_min}")
        end = header_end
        for name, offset, length in sections:
            if offset < end or offset + length > self.file_bytes:
                raise self._corrupt(f"{name} at {offset:,}+{length:,} outside its place")
            end = offset + length
        if 8 * columns * self.n_records > self.table_bytes:
            raise self._corrupt(f"{self.n_records:,} records do not fit a table of "
                                f"{self.table_bytes:,} bytes")

    def _read_table(self, table: bytes) -> None:
        """The record columns and names, all checked before any is used: every record lies
        inside the payload where the build puts it (one after the other, from 0, each on a
        byte), the lengths add up to the header's bases, the ids are present and unique."""
        n = self.n_records
        columns = 4 if self.version >= 2 else 2
        arrays = np.frombuffer(table, dtype="<i8", count=columns * n).astype(np.int64)
        self.lengths, self.offsets = arrays[:n], arrays[n:2 * n]
        if n and (self.lengths.min() < 1 or self.lengths.max() > 2 * self.payload_bytes):
            raise self._corrupt("record lengths")
        record_bytes = (self.lengths + 1) // 2  # (each < 2**63 / 2 now: no overflow)
        if float(record_bytes.sum(dtype=np.float64)) > self.payload_bytes + 1 or \
                int(record_bytes.sum()) != self.payload_bytes or \
                int(self.lengths.sum()) != self.bases:
            raise self._corrupt("record lengths do not add up to the payload")
        if not np.array_equal(self.offsets, np.cumsum(record_bytes) - record_bytes):
            raise self._corrupt("record offsets")
        try:
            meta = json.loads(table[8 * columns * n:].decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            raise self._corrupt("record names are not JSON") from None
        if not isinstance(meta, dict) or not isinstance(meta.get("source"), dict) or any(
                not isinstance(meta.get(key), list) or len(meta[key]) != n or
                not all(isinstance(v, str) for v in meta[key]) for key in ("ids", "descriptions")):
            raise self._corrupt("record names")
        self.ids: list[str] = meta["ids"]
        self.descriptions: list[str] = meta["descriptions"]
        self.source: dict = meta["source"]
        if not all(self.ids) or len(set(self.ids)) != n:
            raise self._corrupt("empty or duplicate record ids")
        self._counts = None
        if self.version >= 2:
            self._counts = arrays[2 * n:3 * n], arrays[3 * n:]  # N runs, mask runs
            counts = arrays[2 * n:]  # (bounded before they are summed: no overflow)
            if (n and (counts.min() < 0 or counts.max() > self.interval_bytes // 16)) or \
                    self.interval_bytes != 16 * int(counts.sum()) or \
                    self.interval_offset + self.interval_bytes > self.file_bytes:
                raise self._corrupt("interval table size")
        self._intervals = None
        self._scanned: dict[int, tuple[np.ndarray, np.ndarray]] = {}

    @property
    def has_intervals(self) -> bool:
        """Whether the store keeps N-run and soft-mask tables (format 2)."""
        return self.version >= 2

    def _tables(self) -> list:
        """The interval section as (starts, ends, each record's first row) of the N runs,
        then of the mask runs; its CRC and rows are checked on first use."""
        if self._intervals is None:
            raw = np.frombuffer(self._map, dtype=np.uint8, count=self.interval_bytes,
                                offset=self.interval_offset) if self.interval_bytes else \
                np.zeros(0, dtype=np.uint8)
            if zlib.crc32(raw) != self._interval_crc:
                raise self._corrupt("interval table checksum mismatch")
            values, at, tables = raw.view("<i8"), 0, []
            for name, counts in zip(("N-run table", "soft-mask table"), self._counts):
                total = int(counts.sum())
                starts, ends = values[at:at + total], values[at + total:at + 2 * total]
                at += 2 * total
                self._check_runs(name, starts, ends, counts)
                tables.append((starts, ends, np.concatenate(([0], np.cumsum(counts)))))
            self._intervals = tables
        return self._intervals

    def _rows(self, table: int, index: int) -> tuple[np.ndarray, np.ndarray]:
        """(starts, ends) of record ``index`` in the N-run table (0) or the mask table (1)."""
        starts, ends, first = self._tables()[table]
        lo, hi = int(first[index]), int(first[index + 1])
        return starts[lo:hi], ends[lo:hi]

    def _check_runs(self, name: str, starts: np.ndarray, ends: np.ndarray,
                    counts: np.ndarray) -> None:
        """Each record's runs lie inside it, in order, not overlapping (what the kernels
        that clear or skip them assume)."""
        record = np.repeat(np.arange(self.n_records), counts)
        bad = (starts < 0) | (ends <= starts) | (ends > self.lengths[record])
        if starts.shape[0] > 1:
            same = record[1:] == record[:-1]
            bad[1:] |= same & (starts[1:] < ends[:-1])
        if bad.any():
            row = int(np.argmax(bad))
            raise self._corrupt(f"{name} row {row:,} of record '{self.ids[record[row]]}'")

    def n_runs(self, index: int) -> tuple[np.ndarray, np.ndarray]:
        """(starts, ends) of every run of N in record ``index`` (0-based, half-open, in
        order): the table's rows, or (format 1) found once in the packed codes."""
        if self.has_intervals:
            return self._rows(0, index)
        if index not in self._scanned:
            self._scanned[index] = _packed_runs(self.payload, int(self.offsets[index]),
                                                int(self.lengths[index]), N_CODE)
        return self._scanned[index]

    def soft_mask(self, index: int) -> tuple[np.ndarray, np.ndarray] | None:
        """(starts, ends) of the lower-case runs of record ``index``; None for a format-1
        store (it did not keep the case)."""
        return self._rows(1, index) if self.has_intervals else None

    def gap_counts(self) -> tuple[int, int, int]:
        """(assembly gaps of the store's gap_min, gap bases, soft-masked bases) over all
        records, from the tables (the soft-masked bases are 0 for a format-1 store)."""
        gaps = gap_bases = masked = 0
        for i in range(self.n_records):
            starts, ends = self.n_runs(i)
            lengths = ends - starts
            long_runs = lengths >= self.gap_min
            gaps += int(long_runs.sum())
            gap_bases += int(lengths[long_runs].sum())
            mask = self.soft_mask(i)
            if mask is not None:
                masked += int((mask[1] - mask[0]).sum())
        return gaps, gap_bases, masked

    def source_change(self) -> str | None:
        """How the source file differs from the one the store was built from (its size, its
        modification time), or None: the same, or not at its recorded path (moved, another
        machine). Cheap: one stat, no read (``index --check`` and every job ask)."""
        path, size, mtime = (self.source.get(key) for key in ("path", "bytes", "mtime_ns"))
        if not isinstance(path, str):
            return None
        try:
            st = os.stat(path)
        except (OSError, ValueError):
            return None
        if isinstance(size, int) and st.st_size != size:
            what = f"{st.st_size:,} bytes, {size:,} when the store was built"
        elif isinstance(mtime, int) and st.st_mtime_ns != mtime:
            when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(st.st_mtime))
            what = f"modified {when}, after the store was built"
        else:
            return None
        return (f"{self.path}: its source {path} has changed ({what}); rebuild the store with "
                "primerscope index if the genome changed")

    def warn_source_change(self) -> None:
        """A :class:`~engine.sequences.SequenceWarning` if :meth:`source_change` finds one."""
        change = self.source_change()
        if change:
            warnings.warn(SequenceWarning(change), stacklevel=3)

    def info(self) -> StoreInfo:
        return StoreInfo(self.path, self.n_records, self.bases, self.file_bytes,
                         self.source_sha256, self.payload_sha256, dict(self.source),
                         self.version, self.gap_min)

    def records(self) -> list["StoreRecord"]:
        return [StoreRecord(self, i) for i in range(self.n_records)]

    def plain_bases(self, index: int) -> int:
        """How many bases of record ``index`` are A, C, G or T: counted in the packed bytes
        a block at a time, each block's pages released after (a 3.1 Gb store costs about a
        second and no resident memory, where unpacking it cost 40 s)."""
        length, block, count = int(self.lengths[index]), 1 << 27, 0
        for lo in range(0, length, block):
            hi = min(length, lo + block)
            count += int(_count_plain(self.payload, int(self.offsets[index]), lo, hi - lo))
            self.release(index, lo, hi)
        return count

    def release(self, index: int, start: int, end: int) -> None:
        """Let the kernel drop the mapped pages of bases [start, end) of a record (they are
        clean file pages: dropping them shrinks RSS; reading them again faults them back)."""
        if self._map is None or not hasattr(self._map, "madvise"):
            return
        lo = self.payload_offset + int(self.offsets[index]) + start // 2
        hi = self.payload_offset + int(self.offsets[index]) + (end + 1) // 2
        lo = (lo + mmap.PAGESIZE - 1) // mmap.PAGESIZE * mmap.PAGESIZE  # whole pages inside only
        hi = hi // mmap.PAGESIZE * mmap.PAGESIZE
        if hi > lo:
            self._map.madvise(mmap.MADV_DONTNEED, lo, hi - lo)


class StoreRecord(Record):
    """A record of a :class:`GenomeStore`: a :class:`~engine.sequences.Record` whose codes
    are unpacked on demand. ``chunk(start, end)`` unpacks a range (what streaming uses);
    ``codes`` unpacks the whole record, a new array at each access (keep it if you need
    it twice). Its assembly gaps count only in the view :meth:`with_gap_min` gives."""

    def __init__(self, store: GenomeStore, index: int):  # noqa: D107 (no dataclass __init__)
        object.__setattr__(self, "id", store.ids[index])
        object.__setattr__(self, "description", store.descriptions[index])
        object.__setattr__(self, "source", store.path)
        object.__setattr__(self, "store", store)
        object.__setattr__(self, "index", index)

    @property
    def codes(self) -> np.ndarray:  # type: ignore[override]
        return self.chunk(0, len(self))

    @property
    def soft_mask(self):  # type: ignore[override]
        """(starts, ends) of the record's lower-case runs, from the store's table (0-based,
        half-open); None when it has none, or (format 1) when the store did not keep them."""
        mask = self.store.soft_mask(self.index)
        return None if mask is None or not mask[0].shape[0] else mask

    @property
    def soft_mask_known(self) -> bool:  # type: ignore[override]
        return self.store.has_intervals

    def __len__(self) -> int:
        return int(self.store.lengths[self.index])

    def __repr__(self) -> str:
        return f"StoreRecord(id={self.id!r}, length={len(self)}, store={self.store.path!r})"

    def n_runs(self, min_len: int = 1) -> tuple[np.ndarray, np.ndarray]:
        """(starts, ends) of the record's runs of at least ``min_len`` N, from the store's
        table (what :func:`engine.gaps.record_runs` asks for: no scan of the codes)."""
        starts, ends = self.store.n_runs(self.index)
        if min_len <= 1:
            return starts, ends
        keep = ends - starts >= min_len
        return starts[keep], ends[keep]

    def ambiguous_bases(self) -> int:
        """Bases that are neither A, C, G, T nor a gap (what :func:`engine.gaps.summarize`
        counts), from the packed codes: a gap's bases are N in the store."""
        starts, ends = self.gap_runs()
        return len(self) - self.store.plain_bases(self.index) - int((ends - starts).sum())

    def gap_runs(self) -> tuple[np.ndarray, np.ndarray]:
        """(starts, ends) of the bases read as gaps (code 0): none in a plain record."""
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty

    def with_gap_min(self, gap_min: int | None = None) -> "GappedStoreRecord":
        """A view of this record whose runs of at least ``gap_min`` N (default: the store's
        ``gap_min``) read as :data:`engine.gaps.GAP_CODE`, from the N table (no scan)."""
        return GappedStoreRecord(self.store, self.index,
                                 self.store.gap_min if gap_min is None else gap_min)

    def chunk(self, start: int, end: int) -> np.ndarray:
        length = len(self)
        start, end = max(0, start), min(end, length)
        out = np.empty(max(0, end - start), dtype=np.uint8)
        self.read_into(start, end, False, out, 0)
        return out

    def read_into(self, start: int, end: int, reverse: bool, out: np.ndarray, at: int) -> None:
        """Codes [start, end) (their reverse complement when ``reverse``) into ``out[at:]``,
        unpacked straight from the map (what streaming reads a chunk with; forward, clipped
        to the record)."""
        payload, offset = self.store.payload, int(self.store.offsets[self.index])
        if reverse:
            unpack_rc_into(payload, offset, start, end - start, COMPLEMENT_TABLE, out, at)
        else:
            start, end = max(0, start), min(end, len(self))
            unpack_into(payload, offset, start, max(0, end - start), out, at)

    def gather(self, positions: np.ndarray) -> np.ndarray:
        """Codes at scattered ``positions``."""
        out = np.empty(positions.shape[0], dtype=np.uint8)
        gather_into(self.store.payload, int(self.store.offsets[self.index]),
                    np.ascontiguousarray(positions, dtype=np.int64), out)
        return out


class GappedStoreRecord(StoreRecord):
    """A store record whose assembly gaps (runs of at least ``gap_min`` N) read as the gap
    code in every read (``chunk``, ``codes``, streaming's ``read_into``, ``gather``): the
    runs come from the store's table and are cleared in what was unpacked."""

    def __init__(self, store: GenomeStore, index: int, gap_min: int):  # noqa: D107
        super().__init__(store, index)
        object.__setattr__(self, "gap_min", check_int("gap_min", gap_min, 1))
        starts, ends = StoreRecord.n_runs(self, self.gap_min)
        object.__setattr__(self, "_gaps", (np.ascontiguousarray(starts, dtype=np.int64),
                                           np.ascontiguousarray(ends, dtype=np.int64)))

    def __repr__(self) -> str:
        return (f"GappedStoreRecord(id={self.id!r}, length={len(self)}, gap_min={self.gap_min}, "
                f"store={self.store.path!r})")

    def __reduce__(self):
        return GappedStoreRecord, (self.store, self.index, self.gap_min)

    def gap_runs(self) -> tuple[np.ndarray, np.ndarray]:
        return self._gaps

    def n_runs(self, min_len: int = 1) -> tuple[np.ndarray, np.ndarray]:
        """The runs of N as this view reads them: those shorter than ``gap_min`` (the
        longer ones read as gaps)."""
        starts, ends = StoreRecord.n_runs(self, min_len)
        keep = ends - starts < self.gap_min
        return starts[keep], ends[keep]

    def read_into(self, start: int, end: int, reverse: bool, out: np.ndarray, at: int) -> None:
        super().read_into(start, end, reverse, out, at)
        if self._gaps[0].shape[0]:
            _clear_runs(out, at, start, end, self._gaps[0], self._gaps[1], reverse)

    def gather(self, positions: np.ndarray) -> np.ndarray:
        out = super().gather(positions)
        starts, ends = self._gaps
        if starts.shape[0] and positions.shape[0]:
            run = np.searchsorted(ends, positions, side="right")
            inside = run < starts.shape[0]
            inside[inside] = starts[run[inside]] <= positions[inside]
            out[inside] = GAP_CODE
        return out


def open_store(path: str | os.PathLike) -> GenomeStore:
    return GenomeStore(path)


_OPENED: dict[str, GenomeStore] = {}


def reopen(path: str, payload_sha256: str) -> GenomeStore:
    """The store at ``path``, opened once per process (unpickling a store or its records: a
    Dask worker's tasks share one map). StoreError if it is not the store that was pickled."""
    store = _OPENED.get(path)
    if store is None or store.payload_sha256 != payload_sha256:
        store = _OPENED[path] = GenomeStore(path)
    if store.payload_sha256 != payload_sha256:
        raise StoreError(f"{path}: not the genome store the job was started with (changed, or "
                         "another file at that path on this machine)")
    return store


def load_store(path: str | os.PathLike) -> list[StoreRecord]:
    """What :func:`engine.sequences.load` returns for a store: its records, mapped."""
    store = GenomeStore(path)
    if store.n_records == 0:
        raise StoreError(f"{store.path}: the genome store has no records")
    store.warn_source_change()
    return store.records()


def verify(path: str | os.PathLike, progress: Callable[[int, int], None] | None = None) -> StoreInfo:
    """Open ``path`` and check the SHA-256 of its payload (reads it all); StoreError if not."""
    store = GenomeStore(path)
    digest = hashlib.sha256()
    step = 1 << 26
    for lo in range(0, store.payload_bytes, step):
        digest.update(store.payload[lo:lo + step])
        if progress:
            progress(min(store.payload_bytes, lo + step), store.payload_bytes)
    if digest.hexdigest() != store.payload_sha256:
        raise store._corrupt("payload checksum mismatch")
    if store.has_intervals:
        store._tables()  # checks the interval section's CRC and rows
        for index in range(store.n_records):  # the N table says where the codes are N
            found = _packed_runs(store.payload, int(store.offsets[index]),
                                 int(store.lengths[index]), N_CODE)
            kept = store.n_runs(index)
            if not (np.array_equal(found[0], kept[0]) and np.array_equal(found[1], kept[1])):
                raise store._corrupt(f"N-run table disagrees with the bases of record "
                                     f"'{store.ids[index]}'")
    store.warn_source_change()
    return store.info()


# ---------------------------------------------------------------------------- building

class _Writer:
    """Packs records into the payload of a store being written to ``fh``, noting each
    record's runs of N and of lower case on the way."""

    #: rows of the run tables the packing kernel fills before they are emptied
    RUN_ROWS = 1 << 16

    def __init__(self, fh, source: str):
        self.fh, self.source = fh, source
        self.sha = hashlib.sha256()
        self.pos = 0  # payload bytes written
        self.ids: list[str] = []
        self.descriptions: list[str] = []
        self.lengths: list[int] = []
        self.offsets: list[int] = []
        #: per record, its runs of N and its runs of lower case: (rows, 2) int64
        self.runs: tuple[list, list] = ([], [])
        self._out = np.empty(BUILD_BLOCK // 2 + 2, dtype=np.uint8)
        self._state = np.zeros(6, dtype=np.int64)
        self._rows = np.empty((2, self.RUN_ROWS, 2), dtype=np.int64)  # the kernel's two tables
        self._parts: tuple[list, list] = ([], [])  # the open record's runs, as they close
        self._open = False

    def begin(self, raw_id: str, description: str) -> None:
        """A new record, named as :func:`engine.sequences.load` names it (NCBI gi ids as
        their accession; the description without the id repeated)."""
        self.end()
        self.ids.append(record_id(raw_id))
        self.descriptions.append(_description(raw_id, description) if description != raw_id else "")
        self.offsets.append(self.pos)
        self.lengths.append(0)
        self._state[:] = (-1, 0, -1, -1, 0, 0)
        self._parts = ([], [])
        self._mask_blocks = None
        self._open = True

    def replace_mask(self, blocks) -> None:
        """The open record's mask runs are ``blocks`` ((start, end) pairs in order), not what
        the case of its text says (.2bit: py2bit gives an N block in upper case even where a
        mask block covers it). Touching blocks are merged, as runs of a text are."""
        rows = np.asarray(list(blocks), dtype=np.int64).reshape(-1, 2)
        rows = rows[rows[:, 1] > rows[:, 0]]  # (a file need not list them sorted)
        self._mask_blocks = np.stack(merge_intervals(rows[:, 0], rows[:, 1]), axis=1)

    def add_text(self, buf: np.ndarray, lo: int = 0, hi: int | None = None) -> None:
        """Encode and pack text bytes ``buf[lo:hi]`` of the open record (white space skipped)."""
        hi = buf.shape[0] if hi is None else hi
        state = self._state
        while lo < hi:
            part = min(hi, lo + 2 * (self._out.shape[0] - 1))
            n_out, reached, bad = _pack_text(buf, lo, part, _BUILD_TABLE, self._out, state,
                                             *self._rows)
            self._emit(self._out[:n_out])
            self.lengths[-1] = int(state[1])
            self._take_runs()
            if bad >= 0:
                char = chr(buf[bad])
                raise StoreError(f"{self.source}: record '{self.ids[-1]}' position "
                                 f"{self.lengths[-1] + 1}: invalid character {char!r} "
                                 f"({_describe_bad(char)})")
            lo = reached

    def _take_runs(self) -> None:
        """Move the runs the kernel closed out of its fixed tables."""
        for k, parts in enumerate(self._parts):
            filled = int(self._state[4 + k])
            if filled:
                parts.append(self._rows[k, :filled].copy())
                self._state[4 + k] = 0

    def _emit(self, data) -> None:
        if len(data):
            self.fh.write(data)
            self.sha.update(data)
            self.pos += len(data)

    def end(self) -> None:
        if not self._open:
            return
        self._open = False
        pending, length, n_open, m_open = (int(x) for x in self._state[:4])
        if pending >= 0:
            self._emit(np.array([pending], dtype=np.uint8))
        if length == 0:
            raise StoreError(f"{self.source}: record '{self.ids[-1]}' is empty")
        for parts, open_at in zip(self._parts, (n_open, m_open)):
            if open_at >= 0:  # a run that reaches the record's end
                parts.append(np.array([[open_at, length]], dtype=np.int64))
        n_rows, m_rows = map(_stacked, self._parts)
        self.runs[0].append(n_rows)
        self.runs[1].append(m_rows if self._mask_blocks is None else self._mask_blocks)

    def intervals(self) -> bytes:
        """The interval section: N starts, N ends, mask starts, mask ends (int64)."""
        return b"".join(rows[:, j].astype("<i8").tobytes()
                        for rows in map(_stacked, self.runs) for j in (0, 1))


def _stacked(tables) -> np.ndarray:
    """(rows, 2) int64 tables one after the other (none: no rows)."""
    return np.concatenate([np.zeros((0, 2), dtype=np.int64), *tables])


def _fasta(path: Path, raw, writer: _Writer, on_block: Callable[[], None]) -> None:
    """FASTA as Biopython reads it (id: the header's first word; description: the header;
    white space inside sequence lines dropped), at block speed: headers are found with
    ``bytes.find``, sequence text is encoded and packed by a numba loop. A block ends at
    its last newline (the rest is carried over), or anywhere inside a sequence line
    longer than a block (single-line chromosomes)."""
    fh = gzip.GzipFile(fileobj=raw) if raw.peek_magic == b"\x1f\x8b" else raw
    carry = b""
    first, line_start, index = True, True, 0
    while True:
        block = fh.read(BUILD_BLOCK)
        on_block()
        data = carry + block if carry else block
        carry = b""
        if block:
            cut = data.rfind(b"\n") + 1
            if cut == 0 and line_start and data.startswith(b">"):
                carry = data  # a header line longer than a block
                continue
            if 0 < cut < len(data):
                data, carry = data[:cut], data[cut:]
        if not data:
            break
        if first:
            if not data.startswith(b">"):
                raise StoreError(f"{path}: not a valid fasta file (text before the first '>' "
                                 "header line)")
            first = False
        arr = np.frombuffer(data, dtype=np.uint8)
        pos, at_start = 0, line_start
        while pos < len(data):
            if at_start and data.startswith(b">", pos):
                eol = data.find(b"\n", pos)
                eol = len(data) if eol < 0 else eol
                title = _decode(data[pos + 1:eol]).rstrip()
                index += 1
                words = title.split(None, 1)
                writer.begin(words[0] if words else f"record{index}", title)
                pos = eol + 1
                continue
            nxt = data.find(b"\n>", pos)
            stop = len(data) if nxt < 0 else nxt + 1
            writer.add_text(arr, pos, stop)
            pos, at_start = stop, True
        line_start = data.endswith(b"\n")
        if not block:
            break
    writer.end()


def _decode(raw: bytes) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("latin-1")


def _biopython(path: Path, raw, fmt: str, writer: _Writer, on_block) -> None:
    """GenBank and EMBL through Biopython's parsers (the file is read whole, as load does:
    these formats carry annotation, and their sequences are rarely long)."""
    import io

    from Bio import SeqIO

    data = raw.read()
    on_block()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    try:
        for index, seq_record in enumerate(SeqIO.parse(io.StringIO(_decode(data)), fmt), start=1):
            writer.begin(seq_record.id or f"record{index}", seq_record.description)
            writer.add_text(np.frombuffer(bytes(seq_record.seq), dtype=np.uint8))
    except SequenceError:
        raise
    except Exception as exc:  # Biopython raises ValueError and friends on malformed files
        raise StoreError(f"{path}: not a valid {fmt} file ({exc})") from None
    writer.end()


def _twobit(path: Path, raw, writer: _Writer, on_block) -> None:
    """UCSC .2bit through py2bit (Biopython's reader when py2bit is not installed). Both
    give N blocks as N, so the packing kernel finds the N runs a FASTA of the genome has.
    Biopython gives mask blocks as lower case; py2bit does too except over an N block, so
    its mask blocks are taken as it lists them."""
    while raw.read(BUILD_BLOCK):  # the source checksum
        on_block()
    step = BUILD_BLOCK
    try:
        import py2bit
    except ImportError:
        py2bit = None
    try:
        if py2bit is not None:
            tb = py2bit.open(str(path), True)
            try:
                for name, length in tb.chroms().items():
                    writer.begin(name, name)
                    for lo in range(0, length, step):
                        seq = tb.sequence(name, lo, min(length, lo + step)).encode("ascii")
                        writer.add_text(np.frombuffer(seq, dtype=np.uint8))
                        on_block()
                    writer.replace_mask(tb.softMaskedBlocks(name) or ())
            finally:
                tb.close()
        else:
            from Bio import SeqIO

            with open(path, "rb") as fh:
                for rec in SeqIO.parse(fh, "twobit"):
                    writer.begin(rec.id, rec.id)
                    for lo in range(0, len(rec), step):
                        seq = bytes(rec.seq[lo:lo + step])
                        writer.add_text(np.frombuffer(seq, dtype=np.uint8))
                        on_block()
    except SequenceError:
        raise
    except Exception as exc:
        raise StoreError(f"{path}: not a valid 2bit file ({exc})") from None
    writer.end()


_TWOBIT_SIGNATURES = {b"\x43\x27\x41\x1a": "<", b"\x1a\x41\x27\x43": ">"}


def check_twobit(path: Path) -> None:
    """StoreError unless every section of the .2bit file ``path`` lies inside it: the header,
    the index, and each record's N blocks, mask blocks and packed bases (blocks inside the
    record). py2bit trusts these sizes: a file cut short gave T for the missing bases, and a
    corrupt header made it read past its map (SIGBUS)."""
    def bad(what: str) -> StoreError:
        return StoreError(f"{path}: not a valid 2bit file ({what})")

    try:
        fh = open(path, "rb")
    except OSError as exc:
        raise StoreError(f"{path}: cannot read file ({exc.strerror or exc})") from None
    with fh:
        size = os.fstat(fh.fileno()).st_size

        def take(at: int, n: int, what: str) -> bytes:
            if at + n > size:
                raise bad(f"{what} at byte {at:,} runs past the end of the file, {size:,} bytes: "
                          "cut short?")
            fh.seek(at)
            return fh.read(n)

        head = take(0, 16, "header")
        order = _TWOBIT_SIGNATURES.get(head[:4])
        if order is None:
            raise bad("no 2bit signature")
        version, count, _ = struct.unpack(order + "III", head[4:])
        if version != 0:
            raise bad(f"version {version}; only version 0 is read")
        if 16 + 5 * count > size:
            raise bad(f"an index of {count:,} records runs past the end of the file, {size:,} "
                      "bytes: cut short?")
        at, entries = 16, []
        for _ in range(count):
            (name_len,) = take(at, 1, "the index")
            raw = take(at + 1, name_len, "the index")
            if not raw or min(raw) < 33 or max(raw) > 126:  # py2bit cuts a name at a NUL
                raise bad(f"record name {raw!r} in the index is not printable text")
            name = raw.decode("ascii")
            (offset,) = struct.unpack(order + "I", take(at + 1 + name_len, 4, "the index"))
            entries.append((name, offset))
            at += 5 + name_len
        names = [name for name, _ in entries]
        if len(set(names)) != len(names):
            raise bad("a record name listed twice in the index")
        for name, at in entries:
            dna_size, n_blocks = struct.unpack(order + "II", take(at, 8, f"record '{name}'"))
            at += 8
            for kind, count_at in (("N", None), ("mask", True)):
                if count_at:
                    (n_blocks,) = struct.unpack(order + "I", take(at, 4, f"record '{name}'"))
                    at += 4
                blocks = np.frombuffer(take(at, 8 * n_blocks, f"record '{name}' {kind} blocks"),
                                       dtype=order + "u4").astype(np.int64)
                at += 8 * n_blocks
                starts, sizes = blocks[:n_blocks], blocks[n_blocks:]
                if n_blocks and (starts + sizes).max() > dna_size:
                    raise bad(f"record '{name}': a {kind} block past its {dna_size:,} bases")
            (reserved,) = struct.unpack(order + "I", take(at, 4, f"record '{name}'"))
            if reserved:  # zero in every file; a block count that is off lands here
                raise bad(f"record '{name}': reserved field {reserved} (a block count is off?)")
            take(at + 4, (dna_size + 3) // 4, f"record '{name}' bases")


class _Source:
    """The source file opened once, read through :meth:`read` (what the format readers and
    gzip call), which hashes and counts the bytes; its first two bytes kept (gzip's magic)."""

    def __init__(self, path: Path):
        with reading_errors(path, StoreError):
            self.fh = open(path, "rb")
        st = os.fstat(self.fh.fileno())
        self.size, self.mtime_ns = st.st_size, st.st_mtime_ns
        self.sha, self.count = hashlib.sha256(), 0
        self.peek_magic = self.fh.peek(2)[:2]

    def read(self, n=-1):
        data = self.fh.read(n)
        self.sha.update(data)
        self.count += len(data)
        return data


def source_format(path: Path) -> str:
    """fasta, genbank, embl or twobit, from the name or the first bytes."""
    name = path.name.lower()
    if name.endswith(".2bit"):
        return "twobit"
    with reading_errors(path, StoreError), open(path, "rb") as fh:
        head = fh.read(4)
        fh.seek(0)
        if head in _TWOBIT_SIGNATURES:
            return "twobit"
        if head[:2] == b"\x1f\x8b":
            try:
                head_text = gzip.GzipFile(fileobj=fh).read(200)
            except (OSError, EOFError) as exc:
                raise StoreError(f"{path}: corrupt gzip file ({exc})") from None
        else:
            head_text = fh.read(200)
    try:
        return _sniff_format(path, head_text.decode("latin-1"))
    except SequenceError as exc:
        raise StoreError(str(exc)) from None


def build(source: str | os.PathLike, output: str | os.PathLike,
          progress: Callable[[int, int], None] | None = None,
          gap_min: int = GAP_MIN) -> StoreInfo:
    """Read ``source`` once and write the store ``output`` (atomically).

    ``progress(done, total)`` is called with source bytes read (compressed bytes for
    ``.gz``) after each block. ``gap_min`` is the store's assembly-gap length, the default
    of jobs that read it (every N run is kept, whatever its length).
    """
    gap_min = check_int("gap_min", gap_min, 1)
    path = Path(os.fspath(source))
    fmt = source_format(path)
    if fmt == "twobit":
        check_twobit(path)  # before a byte is written: no temporary to leave
    src = _Source(path)

    def on_block():
        if progress:
            progress(src.count, src.size)

    try:
        with open_output(os.fspath(output), "wb") as fh:
            fh.write(b"\0" * HEADER_BYTES)  # the header is written last (no magic until then)
            writer = _Writer(fh, str(path))
            try:
                if fmt == "fasta":
                    _fasta(path, src, writer, on_block)
                elif fmt == "twobit":
                    _twobit(path, src, writer, on_block)
                else:
                    _biopython(path, src, fmt, writer, on_block)
            except (gzip.BadGzipFile, EOFError, zlib.error) as exc:
                raise StoreError(f"{path}: corrupt gzip file ({exc})") from None
            if not writer.ids:
                raise StoreError(f"{path}: no {fmt} sequence records found (empty file?)")
            n = len(writer.ids)
            ids, renamed = unique_names(writer.ids)  # as load() names the records of the file
            if renamed:
                warn_renamed(str(path), renamed)
            meta = json.dumps({"ids": ids, "descriptions": writer.descriptions,
                               "source": {"name": path.name, "path": str(path.resolve()),
                                          "bytes": src.size, "mtime_ns": src.mtime_ns,
                                          "format": fmt,
                                          "built": time.strftime("%Y-%m-%dT%H:%M:%S")}},
                              ensure_ascii=False).encode("utf-8")
            counts = [[len(t) for t in tables] for tables in writer.runs]
            table = b"".join(np.asarray(column, dtype="<i8").tobytes() for column in
                             (writer.lengths, writer.offsets, *counts)) + meta
            table_offset = HEADER_BYTES + writer.pos
            fh.write(table)
            intervals = writer.intervals()
            pad = -(table_offset + len(table)) % 8 if intervals else 0  # int64 rows aligned
            fh.write(b"\0" * pad)
            interval_offset = table_offset + len(table) + pad
            fh.write(intervals)
            file_bytes = interval_offset + len(intervals)
            bases = int(sum(writer.lengths))
            header = _HEADER.pack(MAGIC, VERSION, FLAG_PACKED, n, bases, HEADER_BYTES, writer.pos,
                                  table_offset, len(table), file_bytes, src.sha.digest(),
                                  writer.sha.digest(), zlib.crc32(table), interval_offset,
                                  len(intervals), zlib.crc32(intervals), gap_min)
            fh.flush()
            fh.seek(0)
            fh.write(header + _HEADER_CRC.pack(zlib.crc32(header)))
            fh.flush()
            os.fsync(fh.fileno())
    finally:
        src.fh.close()
    return GenomeStore(output).info()
