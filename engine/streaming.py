"""Backgrounds of any size, a chunk at a time: the one place where they are cut.

Every family that takes a background streams it: kdiff, kmismatch, edit search (and
the off-target report built on it) and pcr (its search, then its site refinement),
on every backend. A family's driver hands its background records (in memory or from
a genome store, :mod:`engine.store`) to a :class:`Background`. When the background's
text (both strands counted when searched on both) fits the budget, the driver keeps
its in-memory path (one text, built once; on cuda, uploaded once and reused by every
slice). Otherwise it asks for :meth:`Background.chunks` and reads one
:class:`ChunkText` at a time into one reused buffer (on cuda, uploads it into one
device buffer), a store's pages released behind the reader.

**Memory bound** (beyond the target, the patterns and the results themselves):

- CPU: at most 2 GB of RSS, whatever the background's size. The in-memory path
  holds at most ``config.STREAM_MEMORY_BASES`` (2^28) bases of text, about 3 bytes a
  base at its peak (768 MB); a streamed job holds one chunk's text,
  ``config.STREAM_CHUNK_BASES`` (2^26) bases per strand, 128 MB with both strands,
  plus at most one copy of it in a kernel's layout, and its kernels' scratch (tens of
  MB). tests/engine/test_streaming.py runs kdiff against a 200 Mb store under a
  1.5 GB address-space limit;
- GPU: ``config.GPU_STREAM_BYTES`` (512 MiB) of background text on the device, one
  byte a base: a background whose text fits is uploaded whole, a larger one a chunk
  of at most that many bytes (its pieces' leads included) at a time. The kernels'
  scratch comes on top, bounded by each family's ``*_CUDA_MEMORY_FRACTION`` of the
  free memory. On the host, a cuda job holds what it uploads: at most about 3 bytes a
  base of that budget (1.5 GB), so the CPU's bound holds for it too.

**Overlap.** Each record is cut into pieces that *own* consecutive ranges of its
columns; a piece's text starts ``overlap`` columns before the first column it owns
(never before the record's start). Every substring of at most ``overlap + 1``
columns then lies whole in the piece that owns its last column, and, because the
reverse complement of a piece is a piece of the reverse strand, the same holds on
that strand. A family picks its overlap from the longest footprint a hit can have:

- kdiff: a prefix of length L of alpha[r:] found within K = k-1 edits spans at most
  L + K columns; L <= m - r_lo for a slice of starts from r_lo, so an overlap of
  m - r_lo + K makes each chunk's c(r) a lower bound (a chunk's DP runs on a
  substring of the record: nothing false is found) that the chunk owning the
  witness's end attains. c(r) is the max over chunks, exactly (the CUDA
  bitparallel driver makes the same argument per thread). The driver uses m + K
  for every slice of a record, so that one chunk plan serves them all;
- searches with m-long patterns: windows (k mismatches) span m columns: overlap m-1;
  edit-distance hits span at most m + k columns: overlap m + k (m + m without k). A
  hit is reported by the piece that owns its end (kmismatch drops the others; edit's
  tasks record owned ends only, engine/edit/problem.py); a best hit per record is
  the minimum over its pieces, a score profile bin too;
- pcr: its sites come from the edit search and are refined where their end is owned
  (overlap: longest primer + max_edits, the refinement's reach). Products pair the
  sites of a whole record, so they need no overlap of their own, however far apart
  (``--max-product``) their primers lie, and none is seen twice.

**Gaps.** An assembly gap (a run of at least ``gap_min`` N, engine.gaps) reads as the
gap code, which matches nothing, so no hit of at most K edits holds more than K gap
bases. The plan leaves out the inside of every gap longer than twice that
(:func:`gap_skips`): only K gap bases are read at either end, and the columns between
two such gaps are cut like a record of their own. A GRCh38-like genome (about 120 Mb of
N, mostly in runs of 10 kb and more) is then 120 Mb less work on every backend that
streams, and a store's gapped view (:meth:`engine.store.StoreRecord.with_gap_min`) says
where its gaps are from its table, without a scan.

**Tasks.** A job over a streamed background is a grid of tasks, (range of target
starts or patterns) x (chunk), each computing a partial answer from one
:class:`ChunkText`, and a merge that is associative and commutative (kdiff: the
max of c(r) per r; searches: hits de-duplicated by owner). A family describes these
tasks once (engine.executors.ChunkedProblem); the in-process executor runs them one
after another, a slice at a time, and the Dask executor submits them to a cluster,
with workers opening the store by its path (:attr:`Piece` names records by index,
so a task is small to ship), and merges results as they arrive.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine import config
from engine.gaps import GAP_CODE, record_runs
from engine.sequences import COMPLEMENT_TABLE, Record, end_to_end


@dataclass(frozen=True)
class Piece:
    """Columns [start, end) of background record ``record`` (forward coordinates); the
    piece owns [own, end): occurrences that end there are whole in it."""

    record: int
    start: int
    end: int
    own: int

    def __len__(self) -> int:
        return self.end - self.start


@dataclass(frozen=True)
class Chunk:
    """Pieces read together: one kernel call's background text."""

    pieces: tuple[Piece, ...]

    @property
    def bases(self) -> int:
        return sum(len(p) for p in self.pieces)


@dataclass(frozen=True)
class ChunkText:
    """A chunk as the kernels take a background: codes of the forward pieces, then (both
    strands) of their reverse complements, with record-style ``offsets`` (segment i is
    ``codes[offsets[i]:offsets[i+1]]``) so that no match spans two pieces.
    ``strands[i]`` is ``'+'`` or ``'-'`` and ``pieces[i]`` the piece of segment i; a
    ``'-'`` segment holds reverse-strand columns [len - end, len - start) of its record."""

    codes: np.ndarray
    offsets: np.ndarray
    pieces: tuple[Piece, ...]
    strands: tuple[str, ...]


def plan_chunks(lengths, overlap: int, chunk_bases: int | None = None,
                skips=None) -> list[Chunk]:
    """Cut records of ``lengths`` into chunks of at most about ``chunk_bases`` text bases
    (per strand), each piece's text starting ``overlap`` columns before the columns it
    owns. Records shorter than a chunk share one whole. A chunk is at least
    ``config.STREAM_OVERLAP_RATIO`` x the overlap, so little is read twice.

    ``skips[i]`` (optional): (starts, ends) of columns of record i that no piece reads,
    sorted and disjoint (the inside of long assembly gaps, :func:`gap_skips`). The columns
    between two skips are planned as a record of their own: a piece's lead never reaches
    back across a skip. The piece after a skip owns its columns (its ``own`` lies before its
    ``start``: no hit ends there), so that the owned ranges still partition each record and
    progress counted in owned columns still reaches the whole text."""
    overlap = max(0, int(overlap))
    size = max(int(chunk_bases or config.STREAM_CHUNK_BASES),
               config.STREAM_OVERLAP_RATIO * overlap, 1)
    chunks: list[Chunk] = []
    current: list[Piece] = []
    filled = 0
    for index, n in enumerate(int(x) for x in lengths):
        for owned_from, first, stop in _segments(n, None if skips is None else skips[index]):
            pos = first
            while pos < stop:
                lead = min(pos - first, overlap)
                take = min(stop - pos, size - filled - lead)
                if take < stop - pos and take < max(1, overlap) and current:
                    chunks.append(Chunk(tuple(current)))  # too little room left: a new chunk
                    current, filled = [], 0
                    continue
                take = max(1, take)
                current.append(Piece(index, pos - lead, pos + take,
                                     owned_from if pos == first else pos))
                filled += take + lead
                pos += take
                if filled >= size:
                    chunks.append(Chunk(tuple(current)))
                    current, filled = [], 0
    if current:
        chunks.append(Chunk(tuple(current)))
    return chunks


def _segments(n: int, skip):
    """(first column owned, first column read, end) of each stretch of a record of length n
    between its skips. A skip that reaches the record's end stops one column short of it, so
    that some piece owns every column."""
    if skip is None or not len(skip[0]):
        return [(0, 0, n)] if n else []
    starts, ends = (np.asarray(a).tolist() for a in skip)
    if ends[-1] >= n:
        ends[-1] = n - 1
        if ends[-1] <= starts[-1]:
            starts, ends = starts[:-1], ends[:-1]
    out, owned_from = [], 0
    for lo, hi in zip([0] + ends, starts + [n]):
        if hi > lo:
            out.append((owned_from, lo, hi))
            owned_from = hi
    return out


def gap_skips(starts: np.ndarray, ends: np.ndarray, reach: int):
    """The columns of gap runs [starts, ends) that no chunk needs to read: each run less
    ``reach`` bases at either end, where that leaves any.

    A gap base matches nothing, so it costs an edit (or a mismatch) in any hit that holds it:
    a hit of at most ``reach`` edits holds at most ``reach`` gap bases, and so lies wholly on
    one side of a run's inside, within the ``reach`` gap bases kept there. The overlap of
    every family is at least its edits (kdiff m + K, k-mismatch windows m - 1 >= k, edit
    search m + k, pcr primer + edits), which is the ``reach`` :class:`Background` uses unless
    a caller gives its edits.

    This needs every hit to hold a base that is not a gap, i.e. fewer edits than the
    pattern is long. kdiff always has it (it reports lengths, not places); a k-mismatch or
    edit search with k >= m, where every window of the text is a hit, loses the all-gap
    windows inside a gap when streamed (a gap-as-record-break answer has none either)."""
    starts = np.asarray(starts, dtype=np.int64) + reach
    ends = np.asarray(ends, dtype=np.int64) - reach
    keep = ends > starts
    return starts[keep], ends[keep]


class Background:
    """Background records, read a chunk at a time (see the module docstring)."""

    def __init__(self, records, strands: str = "both", gpu: bool = False):
        self.records = tuple(records)
        self.strands = strands
        #: a cuda job's background: its budget is config.GPU_STREAM_BYTES of device memory
        self.gpu = gpu
        self.lengths = np.array([len(r) for r in self.records], dtype=np.int64)
        self.text_bases = int(self.lengths.sum()) * (2 if strands == "both" else 1)
        self._buffer = np.zeros(0, dtype=np.uint8)
        self._plans: dict = {}
        self._gap_runs: list | None = None

    def fits(self, budget: int | None = None) -> bool:
        """Whether the whole text stays within the budget (then no streaming): in memory,
        ``config.STREAM_MEMORY_BASES``; on the GPU, ``config.GPU_STREAM_BYTES``."""
        if budget is None:
            budget = config.GPU_STREAM_BYTES if self.gpu else config.STREAM_MEMORY_BASES
        return self.text_bases <= budget

    def chunk_bases(self, overlap: int) -> int:
        """Bases per strand of a chunk: ``config.STREAM_CHUNK_BASES``, or on the GPU as many
        as keep a chunk's text (a piece's lead included) within ``config.GPU_STREAM_BYTES``."""
        if not self.gpu:
            return config.STREAM_CHUNK_BASES
        strands = 2 if self.strands == "both" else 1
        return max(1, config.GPU_STREAM_BYTES // strands - int(overlap) - 1)

    def chunks(self, overlap: int, chunk_bases: int | None = None,
               max_edits: int | None = None) -> list[Chunk]:
        """The chunk plan for ``overlap`` (kept: a job asks for the same plan every slice).

        The inside of each long assembly gap is left out (:func:`gap_skips`): a hit holds at
        most ``max_edits`` gap bases (default: ``overlap``, never less than a family's
        edits), so only that many are read at each end of a gap."""
        chunk_bases = chunk_bases or self.chunk_bases(overlap)
        reach = int(overlap) if max_edits is None else min(int(overlap), int(max_edits))
        key = (int(overlap), chunk_bases, config.STREAM_OVERLAP_RATIO, reach)
        if key not in self._plans:
            skips = [gap_skips(*runs, reach) for runs in self.gap_runs()]
            self._plans[key] = plan_chunks(self.lengths, overlap, chunk_bases, skips)
        return self._plans[key]

    def plan_work(self, overlap: int, chunk_bases: int | None = None,
                  max_edits: int | None = None) -> dict:
        """What the plan of :meth:`chunks` reads, per strand: ``chunks``, ``pieces``,
        ``bases`` (text read, leads included), ``lead_bases`` (read twice: the overlap),
        ``skipped`` (columns no piece reads) and ``smallest_chunk`` (a task's least text):
        the work a streamed job does, to compare plans without timing them."""
        plan = self.chunks(overlap, chunk_bases, max_edits)
        pieces = [p for c in plan for p in c.pieces]
        bases = sum(len(p) for p in pieces)
        owned_read = sum(p.end - max(p.own, p.start) for p in pieces)
        return {"chunks": len(plan), "pieces": len(pieces), "bases": bases,
                "lead_bases": bases - owned_read,
                "skipped": int(self.lengths.sum()) - owned_read,
                "smallest_chunk": min((c.bases for c in plan), default=0)}

    def gap_runs(self) -> list[tuple[np.ndarray, np.ndarray]]:
        """Each record's gap runs (:func:`engine.gaps.record_runs`: a store's from its table, a
        record in memory scanned once while it lives)."""
        if self._gap_runs is None:
            self._gap_runs = [record_runs(r, GAP_CODE) for r in self.records]
        return self._gap_runs

    def text(self, chunk: Chunk) -> ChunkText:
        """The chunk's codes in a buffer reused from call to call (valid until the next)."""
        both = self.strands == "both"
        n = chunk.bases * (2 if both else 1)
        if self._buffer.shape[0] < n:
            self._buffer = np.empty(n, dtype=np.uint8)
        buf = self._buffer
        pieces = chunk.pieces + (chunk.pieces if both else ())
        strands = ("+",) * len(chunk.pieces) + (("-",) * len(chunk.pieces) if both else ())
        offsets = np.zeros(len(pieces) + 1, dtype=np.int64)
        at = 0
        for i, (piece, strand) in enumerate(zip(pieces, strands)):
            _read(self.records[piece.record], piece.start, piece.end, strand == "-", buf, at)
            at += len(piece)
            offsets[i + 1] = at
        return ChunkText(buf[:n], offsets, pieces, strands)

    def release(self, chunk: Chunk) -> None:
        """Drop the mapped store pages the chunk read (RSS stays bounded while streaming)."""
        from engine.store import StoreRecord

        for piece in chunk.pieces:
            rec = self.records[piece.record]
            if isinstance(rec, StoreRecord):
                rec.store.release(rec.index, piece.start, piece.end)


def _read(record: Record, start: int, end: int, reverse: bool, out: np.ndarray, at: int) -> None:
    """Codes [start, end) of ``record`` (their reverse complement when ``reverse``) into
    ``out[at:]``: unpacked straight from a store's map, or copied from memory."""
    from engine.store import StoreRecord, reverse_complement_into

    if isinstance(record, StoreRecord):  # (a gapped view clears its gaps as it reads)
        record.read_into(start, end, reverse, out, at)
        return
    codes = record.chunk(start, end)
    if reverse:
        reverse_complement_into(np.ascontiguousarray(codes, dtype=np.uint8), COMPLEMENT_TABLE,
                                out, at)
    else:
        out[at:at + codes.shape[0]] = codes


class FlatText:
    """Records laid end to end, read on demand: for code that indexes one flat text by
    position (a hit table's ``matched`` strings) when the text is too large to hold.
    Takes a slice or an integer array of positions (any shape)."""

    def __init__(self, records):
        self.records = tuple(records)
        self.offsets = end_to_end(self.records)
        self.shape = (int(self.offsets[-1]),)
        self.dtype = np.dtype(np.uint8)

    def __len__(self) -> int:
        return self.shape[0]

    def __getitem__(self, index):
        if isinstance(index, slice):
            lo, hi, step = index.indices(self.shape[0])
            return self[np.arange(lo, hi, step, dtype=np.int64)]
        index = np.asarray(index, dtype=np.int64)
        flat = index.reshape(-1)
        out = np.empty(flat.shape[0], dtype=np.uint8)
        which = np.searchsorted(self.offsets, flat, side="right") - 1
        for rec in np.unique(which).tolist():
            rows = np.flatnonzero(which == rec)
            out[rows] = self.records[rec].gather(flat[rows] - self.offsets[rec])
        return out.reshape(index.shape)


def piece_records(records, text: ChunkText) -> list[Record]:
    """The segments of a chunk's text as records (views of its buffer), named as theirs."""
    return [Record(records[p.record].id, text.codes[text.offsets[i]:text.offsets[i + 1]],
                   records[p.record].description, records[p.record].source)
            for i, p in enumerate(text.pieces)]
