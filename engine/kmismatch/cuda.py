"""kmismatch on CUDA: the host side of the four methods (imported lazily, only for cuda jobs).

:class:`CudaSearch` is what ``engine.kmismatch.driver`` drives for a cuda job: host text
in, columnar hits out, with a fixed amount of host work a slice however many hits it finds
(kernels: engine/kmismatch/cuda_search.py).

**The text.** The records end to end go up packed two codes a byte, from page-locked
memory (engine.gpu.PACKED_TEXTS keeps the packed text for the records while they live, so
solving them again starts at the copy), in pieces of ``config.GPU_UPLOAD_BYTES`` on a copy
stream; a kernel unpacks each piece as it lands, then an event marks it. A slice is
searched a piece at a time, each batch of launches waiting for its own piece only, so the
kernels of the text already up run while the rest is on its way, and each batch's hits
go back while the next piece comes up.

**A batch of launches.** Every launch (search, ordering pass, a one-block finish) is queued
on one stream without a host round trip: the ordering pass writes the launch's hits in text
order, unpacked into compact columns (position, slot code 2 * pattern + strand, mismatches,
each in the smallest integer type that holds them: :func:`hit_dtypes`), after the hits of
the launches before, whose count the finish kernel keeps on the GPU. One synchronisation
at the end of the batch reads that count. Several length groups write to their own parts of
the columns and are merged into one text order on the GPU. Then the hits are counted on
the GPU (per pattern, per density bin) and only the used length of the columns is copied
into page-locked host columns (engine.gpu.PINNED), which the result's
:class:`~engine.kmismatch.hits.HitTable` takes as they are.

**The hit buffer.** Each tile (a block's windows) writes its hits into its own region,
sized from the hits per window seen so far (at first, what random DNA would give); tiles
that find more spill into an area after the regions. When that area overflows, the tiles
that did not fit write nothing, but the spill counter counts them all; the launch (and the
launches after it, which write nothing either) write no hits, the finish kernel records the
room they need, and the batch runs again with it. A batch whose hits could take more than
``KMISMATCH_CUDA_MEMORY_FRACTION`` of the GPU's free memory is split in two. No hit is ever
dropped.

Every CUDA failure (out of memory, a launch the device refuses, a fault in a kernel)
becomes a one-line :class:`~engine.gpu.CudaFailure`; the CPU backends keep working.
"""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
from numba import cuda

from engine import config, gpu
from engine.gpu import SIMULATOR, CudaFailure, cuda_errors, register_cap
from engine.kmismatch.cpu_pmasm import counter_bits, fb_vectors
from engine.kmismatch.cuda_search import (_BASE, _COUNT, _NEED, ORDER_RUN, PAIR_SWIZZLE,
                                          SHARED_WINDOWS, TALLY_RUN, block_thread_kernel,
                                          block_thread_shared_bytes, finish_launch, hold,
                                          merge_groups, order_hits, pair_tile_kernel,
                                          pair_tile_shared_bytes, shared_mem_kernel,
                                          shared_mem_shared_bytes, tally_hits, unpack_text,
                                          window_kernel, window_shared_bytes)

METHODS = ("thread", "block-thread", "shared-mem", "pair-tile")
#: Bytes a hit may take on the GPU: packed (8), then in columns (at most 8 + 4 + 4), merged
#: (several lengths) once more. (Regions sized for twice the expected hits make room in the
#: first buffer count double.)
HIT_BYTES = 24
#: Threads a block of the passes that unpack the text and count the hits.
_PASS_THREADS = 256
#: Patterns up to which the counting pass adds up per-pattern counts in shared memory.
_SHARED_PATTERNS = 4096


def counter_layout(m: int, k: int) -> tuple[int, int]:
    """(b, bias) of the counters for patterns of length m and at most k <= m mismatches.

    A counter holds bias + mismatches, and its top bit is set exactly when the
    mismatches exceed k. b = ceil(log2(m+1)) bits when that bias fits in them
    (as for the study's settings), else one bit more, where it always does.
    """
    b = counter_bits(m)
    half = 1 << (b - 1)
    if k > half - 1 or m - k > half:
        b += 1
        half <<= 1
    return b, half - 1 - k


def pair_index() -> np.ndarray:
    """[c1, c2] -> the entry of the symbol pair in a pair look-up memory (as pair_code)."""
    c = np.arange(16, dtype=np.int64)
    swizzle = (PAIR_SWIZZLE >> (4 * c)) & 15
    return (c[:, None] << 4) | (c[None, :] ^ swizzle[:, None])


@dataclass(frozen=True)
class Tables:
    """One length group's counter layout and look-up memories, as the kernels read them."""

    m: int
    slots: int
    b: int
    rpw: int       # counters a 64-bit word
    bias: int
    valid: np.ndarray  # uint64 [W]: the top bits of the counters in use
    fb: np.ndarray     # uint64 [W * m * 16]: fb[w, level, symbol], the bias in level 0
    lut: np.ndarray | None  # uint64 [W * G * 256]: pair look-up memory (pair-tile)

    @property
    def words(self) -> int:
        return int(self.valid.shape[0])


def build_tables(slot_patterns: np.ndarray, k: int, pairs: bool) -> Tables:
    """Counters and look-up memory for the ``(R, m)`` slot patterns (a pattern, or its
    reverse complement, per row); ``pairs`` adds pair-tile's pair look-up memory."""
    slots, m = slot_patterns.shape
    k = min(k, m)  # k >= m: every window hits; the counters still give the distance
    b, bias = counter_layout(m, k)
    rpw = 64 // b
    W = -(-slots // rpw)
    fb = fb_vectors(np.ascontiguousarray(slot_patterns, dtype=np.uint8), b, rpw, W)
    valid = np.zeros(W, dtype=np.uint64)
    start = np.zeros(W, dtype=np.uint64)
    for r in range(slots):
        w, f = divmod(r, rpw)
        valid[w] |= np.uint64(1 << (f * b + b - 1))
        start[w] += np.uint64(bias << (f * b))
    fb[:, 0, :] += start[:, None]
    lut = None
    if pairs:
        G = (m + 1) // 2
        lut = np.zeros((W, G, 256), dtype=np.uint64)
        where = pair_index()
        for g in range(G):
            second = fb[:, 2 * g + 1, None, :] if 2 * g + 1 < m else np.zeros((W, 1, 16), np.uint64)
            lut[:, g][:, where] = fb[:, 2 * g, :, None] + second
        lut = lut.ravel()
    return Tables(m, slots, b, rpw, bias, valid, fb.ravel(), lut)


@dataclass
class Group:
    """One length group on the GPU and how its kernel is launched."""

    m: int
    slots: int
    tables: Tables
    slot_code: object  # device int32 [R]: what a hit of each slot reports (2 * pattern + strand)
    table: object      # device uint64: fb (study methods) or lut (pair-tile)
    valid: object      # device uint64 [W]
    kernel: object
    tpb: int
    tile: int          # windows a block takes per tile
    shared: int        # dynamic shared memory bytes
    extra: tuple       # method arguments after rpw (block-thread's tiles are added per launch)
    texts: tuple       # the search's attributes the kernel takes the text from (bytes, words)
    #: Tiles start at multiples of this from lo rounded down to one (shared-mem: 4, so that it
    #: stages whole text words; the windows before lo are masked out).
    align: int = 1
    #: Hits a window, as seen so far (the first guess: expected_per_window x HIT_GUESS).
    per_window: float = 1.0
    #: Room for the hits of tiles that outgrow their regions (grown as launches need).
    spill: int = 0


def expected_per_window(m: int, k: int, slots: int) -> float:
    """Hits a window on random DNA: slots x P(at most k of m positions mismatch), each
    mismatching with probability 3/4 (the first guess for sizing the hit buffer)."""
    p = sum(math.comb(m, i) * 0.75 ** i * 0.25 ** (m - i) for i in range(min(k, m) + 1))
    return slots * p


def default_threads(variant: str, threads_per_block: int | None) -> int:
    """The threads per block a job asked for, else its method's default."""
    if threads_per_block:
        return int(threads_per_block)
    if variant == "shared-mem":
        return config.KMISMATCH_CUDA_SHARED_MEM_THREADS_PER_BLOCK
    return config.KMISMATCH_CUDA_THREADS_PER_BLOCK


def shared_mem_registers(tpb: int, words: int = 1, staged: bool = True) -> int:
    """Registers a shared-mem thread may have: few enough for a block of tpb, and for one
    counter word and the look-up memory in shared memory at most
    KMISMATCH_CUDA_SHARED_MEM_REGISTERS (more resident warps to hide the look-ups'
    latency; the other kernels would spill)."""
    cap = register_cap(tpb)
    if words == 1 and staged:
        return min(cap, config.KMISMATCH_CUDA_SHARED_MEM_REGISTERS)
    return cap


class HitTypes(NamedTuple):
    """The integer types of the hit columns (on the GPU and in the result)."""

    pos: type
    code: type
    mis: type


def hit_dtypes(n_text: int, n_patterns: int, k_max: int) -> HitTypes:
    """The smallest integer types for positions in a text of ``n_text`` symbols, slot codes
    (2 * pattern + strand) of ``n_patterns`` patterns and mismatches up to ``k_max``: fewer
    bytes to order, copy back and keep (T3x20: 6 a hit instead of 16)."""
    pos = np.int32 if n_text < 1 << 31 else np.int64
    codes = 2 * n_patterns
    code = np.int8 if codes <= 1 << 7 else np.int16 if codes <= 1 << 15 else np.int32
    mis = np.int8 if k_max < 1 << 7 else np.int16 if k_max < 1 << 15 else np.int32
    return HitTypes(pos, code, mis)


class Launch(NamedTuple):
    """One search launch: windows starting in [lo, hi), its tiles, their regions and spill."""

    lo: int
    hi: int
    tiles: int
    groups: int      # groups of ordering blocks' tiles
    grid: int
    extra: tuple     # the method's arguments after rpw
    per_tile: int    # hits a tile's region holds
    regular: int     # hits all the regions hold
    spill: int       # hits the spill area holds
    expected: int    # hits expected (sizes the ordering pass)

    @property
    def bound(self) -> int:
        """Most hits it writes (a launch that would write more overflows and writes none)."""
        return self.regular + self.spill


class CudaSearch:
    """A cuda kmismatch job's GPU: text, record offsets and length groups uploaded once;
    :meth:`scan` adds the hits of a range of window starts, every length group's, to a
    host :class:`~engine.kmismatch.hits.HitBuffer` in text order; :meth:`run` leaves one
    group's hits of a range on the device (``pos``, ``code``, ``mis``).

    ``groups`` holds (m, slot_patterns (R, m) uint8, slot_code (R,) int32) per length.
    ``owners``: what the text is the text of (the records), to keep its packed copy for
    them (engine.gpu.PACKED_TEXTS); None: packed for this search only. ``counts`` (a
    ``driver.Counts``) has the GPU count the hits of :meth:`scan` (:meth:`fetch_counts`).
    With ``timing``, :attr:`phase_seconds` adds up GPU time (CUDA events) by phase:
    ``upload`` (copy and unpack the text), ``search`` (the search kernel), ``order`` (the
    ordering pass and the merge of length groups), ``tally`` (the counts), ``copy back``;
    :attr:`kernel_seconds` the kernels' (search, order, tally). :attr:`launches` counts the
    search kernel's launches (reruns included), :attr:`reruns` the batches run again.
    """

    KERNEL_PHASES = ("search", "order", "tally")

    @gpu.in_context
    def __init__(self, variant: str, text: np.ndarray, offsets: np.ndarray, groups, k: int,
                 threads_per_block: int | None = None, abort: np.ndarray | None = None,
                 timing: bool = False, owners=None, counts=None, n_patterns: int | None = None):
        if variant not in METHODS:
            raise ValueError(f"kmismatch has no CUDA method {variant!r}")
        self._held: dict = {}  # name -> (allocation, array) of device memory (see close)
        self._closed = False
        self._text_owners = None  # the records to leave the uploaded text on the GPU for
        self.variant = variant
        self.tpb = default_threads(variant, threads_per_block)
        self.dev = gpu.Device(self.tpb, abort)
        n = int(text.shape[0])
        if n >= 1 << 32:
            raise CudaFailure("the text is longer than 2^32 symbols, too long for the CUDA "
                              "kernels' 32-bit window numbers; use a CPU backend")
        self.timing = timing
        self.kernel_seconds = 0.0
        self.phase_seconds = dict.fromkeys(("upload", "search", "order", "tally", "copy back"),
                                           0.0)
        self.launches = self.reruns = 0
        self._marks: list = []  # (phase, start event, end event) not yet read
        # Ordering blocks take a power of two of tiles (tiles are summed per group by a shift).
        order = min(config.KMISMATCH_CUDA_ORDER_THREADS, self.dev.max_block)
        self.order_shift = order.bit_length() - 1
        self.order_tpb = 1 << self.order_shift
        self.max_hits = self.dev.scratch_budget(config.KMISMATCH_CUDA_MEMORY_FRACTION) // HIT_BYTES
        if n_patterns is None:
            n_patterns = 1 + max(int(np.max(codes)) for _, _, codes in groups) // 2
        self.dtypes = hit_dtypes(n, n_patterns, max(min(k, m) for m, _, _ in groups))
        # (streams of an earlier search, idle: creating and destroying them are driver calls)
        self.stream, self.copy_stream = gpu.STREAMS.take(self.dev.id, 2)
        self.counts = counts
        self.pos = self.code = self.mis = None
        self._status_out = self._status_in = self._status_views = None
        self._tallies_host = None
        tables = [build_tables(pats, k, variant == "pair-tile") for _, pats, _ in groups]
        # The text first: its upload (copy stream) goes on while the rest is set up.
        self._upload(np.ascontiguousarray(text, dtype=np.uint8), owners)
        for t in tables:  # (the window kernels' indices into a look-up memory are 32-bit)
            if t.fb.shape[0] >= 1 << 32:
                raise CudaFailure(f"the look-up memory of {t.slots} patterns of length {t.m} is "
                                  "too large for the CUDA kernels; use a CPU backend")
        parts = [(np.asarray(offsets), np.int64)]
        for (_, _, codes), t in zip(groups, tables):
            parts += [(np.asarray(codes), np.int32), t.lut if t.lut is not None else t.fb,
                      t.valid]
        if counts is not None:
            parts += [(counts.shifts, np.int64), (counts.bin_starts, np.int64)]
        # The constants in one transfer on the compute stream, queued (one on the default
        # stream would wait for the text's upload); their page-locked staging lives as long
        # as this search.
        keep: dict = {}
        consts = self.dev.upload_many("the look-up memory", *parts, keep=keep,
                                      spare="kmismatch constants", stream=self.stream)
        self._held["constants"] = (keep["the look-up memory"], None)
        self._staging = keep[("the look-up memory", "staging")]
        self.offsets = consts[0]
        self.groups = [self._group(t, *consts[1 + 3 * i:4 + 3 * i], k)
                       for i, t in enumerate(tables)]
        if counts is not None:
            self.shifts, self.bin_starts = consts[-2:]
            P, B = counts.pattern_hits.shape[0], counts.bins.shape[0]
            # Both counts in one array: one clear, one copy back.
            self.tallies = self._array("tallies", P + B, np.int64, "the hit counts")[:P + B]
            self.pattern_hits, self.bins = self.tallies[:P], self.tallies[P:]
            self.dev.clear(self.tallies, "clearing the hit counts", self.stream)

    def _group(self, tables: Tables, slot_code, table, valid, k: int) -> Group:
        m = tables.m
        unrolled = m <= config.KMISMATCH_CUDA_UNROLL_MAX
        one_word = tables.words == 1
        tpb, tile, extra, texts, align = self.tpb, self.tpb, (), ("text",), 1
        if self.variant == "thread":
            kernel = window_kernel(m if unrolled else 0, one_word)
            shared = window_shared_bytes(tpb)
        elif self.variant == "shared-mem":
            # The look-up memory goes to shared memory too when it fits the budget.
            table_staged = 128 * m * tables.words <= config.KMISMATCH_CUDA_LUT_BYTES
            kernel = shared_mem_kernel(m if unrolled else 0, one_word, table_staged,
                                       shared_mem_registers(tpb, tables.words,
                                                            table_staged))
            texts = ("text32",)
            shared = shared_mem_shared_bytes(tpb, m, tables.words, table_staged)
            tile = SHARED_WINDOWS * tpb
            align = 4
        elif self.variant == "block-thread":
            # The study's m threads a block (at most the device's limit; then threads take
            # several levels each).
            tpb = min(m, self.dev.max_block)
            tile = config.KMISMATCH_CUDA_BLOCK_THREAD_WINDOWS
            kernel = block_thread_kernel()
            shared = block_thread_shared_bytes(tpb, tile)
            extra = (tile,)
        else:
            G = (m + 1) // 2
            piece = G if unrolled else max(1, min(G, config.KMISMATCH_CUDA_LUT_BYTES // 2048))
            kernel = pair_tile_kernel(G if unrolled else 0, one_word)
            shared = pair_tile_shared_bytes(tpb, m, piece)
            tile = 4 * tpb
            extra = (piece,)
        guess = expected_per_window(m, min(k, m), tables.slots) * config.KMISMATCH_CUDA_HIT_GUESS
        return Group(m, tables.slots, tables, slot_code, table, valid, kernel, tpb, tile, shared,
                     extra, texts, align, guess)

    # -- memory -----------------------------------------------------------------------------
    def _array(self, name: str, n: int, dtype, what: str):
        """The device array ``name``: at least ``n`` items of ``dtype``, the whole of this
        search's allocation of that name (views made once: numba's cost a few microseconds
        each), grown when too small (from engine.gpu.SPARES when it has one; the old one
        goes there once the stream is idle)."""
        nbytes = max(1, n) * np.dtype(dtype).itemsize
        held = self._held.get(name)
        if held is not None and held[0].shape[0] < nbytes:
            self._sync()  # (a copy of the last batch's hits may still read it)
            del self._held[name]
            gpu.SPARES.give(f"kmismatch {name}", held[0])
            held = None
        if held is None:  # (a quarter more: the next batch's hits per window may be more)
            raw = self.dev.spare(f"kmismatch {name}", nbytes + nbytes // 4, what)
            held = self._held[name] = (raw, raw.view(dtype))
        elif held[1] is None or held[1].dtype != np.dtype(dtype):
            held = self._held[name] = (held[0], held[0].view(dtype))
        return held[1]

    def _columns(self, name: str, n: int):
        """Hit columns ``name`` (position, code, mismatches) for at least ``n`` hits."""
        return tuple(self._array(f"{name} {c}", n, dtype, "the hit columns")
                     for c, dtype in zip(("pos", "code", "mis"), self.dtypes))

    def _status_rows(self, G: int):
        """The (G, 4) device status of a batch of G groups, and its rows."""
        status = self._array("status", 4 * G, np.int64, "the hit counters")
        if self._status_views is None or self._status_views[0] is not status or \
                self._status_views[1].shape[0] != G:
            table = status[:4 * G].reshape(G, 4)
            self._status_views = (status, table, [table[g] for g in range(G)])
        return self._status_views[1:]

    @gpu.in_context
    def close(self) -> None:
        """Give the device memory back to engine.gpu.SPARES for the next job, once this
        search's streams are idle (a search that failed frees it instead)."""
        if getattr(self, "_closed", True):
            return
        self._closed = True
        held, self._held = self._held, {}
        try:
            with cuda_errors("finishing"):
                self.stream.synchronize()
                self.copy_stream.synchronize()
        except Exception:
            return
        gpu.STREAMS.give(self.dev.id, [self.stream, self.copy_stream])
        self._host_text = self._staging = None
        text = held.pop("text", None) if self._text_owners is not None else None
        if text is not None and not self.dev.keep_text(self._text_owners, text[0]):
            held["text"] = text
        for name, (raw, _) in held.items():
            gpu.SPARES.give(f"kmismatch {name}", raw)

    def __del__(self):
        try:
            self.close()
        except Exception:  # (interpreter shutdown)
            pass

    # -- the text ---------------------------------------------------------------------------
    def _upload(self, text: np.ndarray, owners) -> None:
        """Start the packed text's upload on the copy stream, a piece at a time, each piece
        unpacked by a kernel on the GPU and then marked by an event (:meth:`_wait_text`).
        A text not packed yet is packed a piece at a time too, each piece's copy going on
        while the next is packed; with ``owners`` it is then kept for them, and the text
        left on the GPU for them when the search is done (:meth:`close`), which a later
        search of the same records then takes as it is: no upload, one piece."""
        self.n_text = n = text.shape[0]
        size = gpu.packed_bytes(n)  # whole words: 8 codes each, zeros after the end
        if owners is not None:
            owners = tuple(owners)
            resident = gpu.DEVICE_TEXTS.get(owners, self.dev.id)
            if resident is not None and resident.shape[0] >= 2 * size:
                self.text = resident[:2 * size]
                self.text32 = self.text.view(np.uint32)
                self._ready_ends, self._ready, self._waited = [2 * size], [None], 0
                return
            self._text_owners = owners
        packed = None if owners is None else gpu.PACKED_TEXTS.get(owners)
        fresh = packed is None
        if fresh:
            packed = gpu.pinned_empty(size, np.uint8)
        self._host_text = packed  # (the copies read it until they are done)
        self.text = None
        staged = self._array("packed text", size, np.uint8, "the text")
        staged32 = staged.view(np.uint32)
        step = max(4, config.GPU_UPLOAD_BYTES // 4 * 4)
        self._ready_ends: list[int] = []  # text bytes on the GPU once piece i is
        self._ready: list = []            # piece i's event
        self._waited = -1                 # the last piece the compute stream waits for
        first = self._event(self.copy_stream) if self.timing else None
        for a in range(0, size, step):
            z = min(size, a + step)
            if fresh:
                gpu.pack_into(text, packed, a, z)
            with cuda_errors("copying the text to the GPU", n):
                staged[a:z].copy_to_device(packed[a:z], stream=self.copy_stream)
            if self.text is None:  # (allocated while the first piece is on its way)
                self._text_array(size)
            words = (z - a) // 4
            self.dev.launch(unpack_text, -(-words // _PASS_THREADS), _PASS_THREADS, 0, staged32,
                            self.text32, a // 4, z // 4, stream=self.copy_stream)
            event = gpu.sync_event()
            with cuda_errors("copying the text to the GPU"):
                event.record(self.copy_stream)
            self._ready.append(event)
            self._ready_ends.append(2 * z)
        if self.text is None:  # (an empty text)
            self._text_array(size)
        if self.timing:
            self._marks.append(("upload", first, self._event(self.copy_stream)))
        if fresh and owners is not None:
            gpu.PACKED_TEXTS.keep(owners, packed)

    def _text_array(self, size: int) -> None:
        """The text on the GPU, one code a byte (whole 4-byte words: shared-mem stages it a
        word at a time); one to leave on the GPU takes no more than that."""
        if self._text_owners is not None:
            self.text = self.dev.empty(2 * size, np.uint8, "the text")
            self._held["text"] = (self.text, self.text)
        else:
            self.text = self._array("text", 2 * size, np.uint8, "the text")[:2 * size]
        self.text32 = self.text.view(np.uint32)

    def _wait_text(self, end: int) -> None:
        """Have the compute stream wait until the text's first ``end`` symbols are up."""
        i = bisect.bisect_left(self._ready_ends, min(end, self._ready_ends[-1]))
        if i > self._waited:
            with cuda_errors("waiting for the text"):
                self._ready[i].wait(self.stream)
            self._waited = i

    def _pieces(self, lo: int, hi: int) -> list[tuple[int, int]]:
        """[lo, hi) cut where the pieces of text not yet waited for end: the windows before a
        cut (of every length group) have all their text in the pieces before it."""
        m = max(g.m for g in self.groups)
        cuts = [e - m + 1 for e in self._ready_ends[self._waited + 1:-1]]
        edges = [lo] + [c for c in cuts if lo < c < hi] + [hi]
        return list(zip(edges[:-1], edges[1:]))

    # -- timing ---------------------------------------------------------------------------
    def _event(self, stream):
        with cuda_errors("timing the kernels"):
            event = cuda.event()
            event.record(stream)
        return event

    def _queue(self, phase: str, launch) -> None:
        """Queue ``launch()`` (kernels or copies on the compute stream); with timing, between
        two events, read at the next synchronisation."""
        if not self.timing:
            launch()
            return
        first = self._event(self.stream)
        launch()
        self._marks.append((phase, first, self._event(self.stream)))

    def _sync(self) -> None:
        self.dev.synchronize("running a kernel", self.stream)
        if not self._marks:
            return
        with cuda_errors("timing the kernels"):
            for phase, a, z in self._marks:
                z.synchronize()  # (the upload's may still be going on the copy stream)
                seconds = a.elapsed_time(z) / 1000
                self.phase_seconds[phase] += seconds
                if phase in self.KERNEL_PHASES:
                    self.kernel_seconds += seconds
        self._marks = []

    # -- launches -------------------------------------------------------------------------
    def _geometry(self, g: Group, lo: int, hi: int) -> Launch:
        """Tiles, regions and spill area of the launch over windows [lo, hi)."""
        start = lo - lo % g.align  # where the first tile starts
        tiles = -(-(hi - start) // g.tile)
        groups = -(-tiles // self.order_tpb)
        grid, extra = tiles, g.extra
        if self.variant == "block-thread":  # blocks take tiles in turn
            grid = min(tiles, 32 * self.dev.sms)
            extra = extra + (tiles,)
        # Each tile's region holds twice the hits a tile is expected to have, and more than
        # a handful (hits cluster); the spill area takes what a few tiles have beyond that.
        span = min(g.tile, hi - start)
        per_tile = min(int(2 * span * g.per_window) + 8, span * g.slots)
        regular = tiles * per_tile
        spill = max(g.spill, min(config.KMISMATCH_CUDA_MIN_HITS, self.max_hits // 4),
                    regular // 16)
        return Launch(lo, hi, tiles, groups, grid, extra, per_tile, regular, spill,
                      int((hi - lo) * g.per_window) + 1)

    def _launch(self, g: Group, p: Launch, found, tile_base, tile_hits, counters, columns,
                status) -> None:
        """Queue the search kernel, the ordering pass and the finish of one launch."""
        t = g.tables
        group_sums = counters[1:1 + p.groups]
        texts = tuple(getattr(self, name) for name in g.texts)
        args = texts + (self.offsets, p.lo, p.hi, g.m, g.table, g.valid, t.b, -(-65536 // t.b),
                        np.uint64((1 << t.b) - 1), np.uint64(t.bias), t.rpw) + p.extra + (
            found, p.per_tile, p.regular, counters, p.spill, group_sums, self.order_shift,
            tile_base, tile_hits)
        # Blocks enough for about ORDER_RUN hits a thread (several blocks a group of tiles).
        split = max(1, min(65535, -(-p.expected // (ORDER_RUN * p.groups * self.order_tpb))))
        s = self.stream
        self._queue("search", lambda: self.dev.launch(g.kernel, p.grid, g.tpb, g.shared, *args,
                                                      stream=s))
        self._queue("order", lambda: (
            self.dev.launch(order_hits, (p.groups, split), self.order_tpb, 16 * self.order_tpb,
                            tile_base, tile_hits, p.tiles, group_sums, found, p.lo, g.slot_code,
                            *columns, status, counters, p.spill, stream=s),
            self.dev.launch(finish_launch, 1, self.order_tpb, 8 * self.order_tpb, counters,
                            p.groups, p.spill, status, stream=s)))
        self.launches += 1

    def _status(self, G: int):
        """Page-locked (G, 4) int64 arrays for the status going up and coming back."""
        if self._status_out is None or self._status_out.shape[0] < G:
            self._status_out = gpu.pinned_empty(4 * G, np.int64).reshape(G, 4)
            self._status_in = gpu.pinned_empty(4 * G, np.int64).reshape(G, 4)
        return self._status_out[:G], self._status_in[:G]

    def run_batch(self, work) -> int | None:
        """Queue the launches of ``work`` ((group, [(lo, hi), ...]) for each group: window
        ranges in text order) on the compute stream, each after its text, with no host
        round trip between them; synchronise once, and run the batch again with the room
        asked for when a spill area overflowed. Returns the number of hits, in text order in
        ``pos``, ``code`` and ``mis`` [0, n) (several groups merged), or None when they could
        take more than the memory allowed for one batch."""
        gpu.tally_event("batches")  # (engine.gpu.tally: what tests and benchmarks check)
        G = len(work)
        while True:
            plans = [[self._geometry(g, a, z) for a, z in ranges] for g, ranges in work]
            bounds = [sum(p.bound for p in plan) for plan in plans]
            if sum(bounds) > self.max_hits:
                gpu.tally_event("oversized")
                return None
            every = [p for plan in plans for p in plan]
            found = self._array("found", max(p.bound for p in every), np.uint64,
                                "the hit buffer")
            tiles = max(p.tiles for p in every)
            tile_base = self._array("tile base", tiles, np.int64, "the tile table")
            tile_hits = self._array("tile hits", tiles, np.int64, "the tile table")
            counters = self._array("counters", 1 + max(p.groups for p in every), np.int64,
                                   "the hit counters")
            columns = self._columns("hits" if G == 1 else "stage", sum(bounds))
            status, rows = self._status_rows(G)
            out, back = self._status(G)
            out[:] = 0
            out[:, _BASE] = np.cumsum([0] + bounds[:-1])
            with cuda_errors("clearing the hit counters"):
                status.copy_to_device(out, stream=self.stream)
            self.dev.clear(counters, "clearing the hit counters", self.stream)
            if self.timing and not SIMULATOR:  # events then time the GPU, not the launches
                self.dev.launch(hold, 1, 1, 0, 200 + 150 * len(every), stream=self.stream)
            # Range by range, every group's launch over it (a group's launches stay in text
            # order): each waits for its own piece of text only.
            for r in range(max(len(plan) for plan in plans)):
                for gi, ((g, _), plan) in enumerate(zip(work, plans)):
                    if r < len(plan):
                        self._wait_text(plan[r].hi + g.m - 1)
                        self._launch(g, plan[r], found, tile_base, tile_hits, counters,
                                     columns, rows[gi])
            gpu.tally_event("downloads")
            with cuda_errors("running a kernel (copying its results back)"):
                status.copy_to_host(back, stream=self.stream)
            self._sync()
            need = back[:, _NEED].tolist()
            if not any(need):
                break
            # Again with the room the spilled tiles asked for, if the batch still fits.
            room = sum(p.regular + max(p.spill, int(x)) for plan, x in zip(plans, need)
                       for p in plan)
            if room > self.max_hits:
                gpu.tally_event("oversized")
                return None
            for (g, _), x in zip(work, need):
                g.spill = max(g.spill, int(x))
            self.reruns += 1
            gpu.tally_event("reruns")
        found_per_group = back[:, _COUNT].tolist()
        total = int(sum(found_per_group))
        for (g, ranges), n in zip(work, found_per_group):
            g.per_window = max(n / sum(z - a for a, z in ranges), 1e-4)
        if G == 1:
            self.pos, self.code, self.mis = columns
        elif total:
            self.pos, self.code, self.mis = merged = self._columns("hits", total)
            self._queue("order", lambda: self.dev.launch(
                merge_groups, -(-total // _PASS_THREADS), _PASS_THREADS, 0, *columns, status,
                total, *merged, stream=self.stream))
        return total

    @gpu.in_context
    def run(self, g: Group, lo: int, hi: int) -> int | None:
        """Find the hits of group g's windows starting in [lo, hi) of the flat text (windows
        that cross a record boundary are skipped) in one launch and leave them in text order
        in ``pos``, ``code`` and ``mis`` on the device (synchronised, unless several groups
        were merged last). Returns their number, or None when they would take more than the
        memory allowed for one launch."""
        if hi <= lo:
            return 0
        return self.run_batch([(g, [(lo, hi)])])

    @gpu.in_context
    def scan(self, lo: int, hi: int, out) -> int:
        """Append the hits of every length group's windows starting in [lo, hi) to ``out``
        (a HitBuffer of :attr:`dtypes`) in text order, count them on the GPU (``counts``),
        and return their number. One batch of launches (:meth:`run_batch`) per piece of
        text still on its way, so that a batch's hits go back while the next piece comes
        up (the two directions of the bus run at once); a batch whose hits would not fit
        in memory is halved."""
        pending = self._pieces(lo, hi)[::-1]
        added = 0
        span = (lo, hi, len(out))
        while pending:
            a, z = pending.pop()
            work = [(g, [(a, min(z, self.n_text - g.m + 1))]) for g in self.groups
                    if a < self.n_text - g.m + 1]
            if not work:
                continue
            n = self.run_batch(work)
            if n is None:  # too many hits for one batch: halve the range
                if z - a < 2:
                    raise CudaFailure("the hits of one text window do not fit in GPU memory")
                mid = (a + z) // 2
                pending += [(mid, z), (a, mid)]
                continue
            if n:
                self._deliver(n, out, z, span)
            added += n
        if self.counts is not None:  # the counts so far come back with the hits
            with cuda_errors("copying the hit counts back"):
                if self._tallies_host is None:
                    self._tallies_host = gpu.pinned_empty(self.tallies.shape[0], np.int64)
                gpu.tally_event("downloads")
                self.tallies.copy_to_host(self._tallies_host, stream=self.stream)
        self._sync()  # the last batch's copies
        return added

    def _deliver(self, n: int, out, done: int, span) -> None:
        """Queue the counting of hits [0, n) of the columns and their copy to the end of
        ``out`` (the next batch's launches queue behind them; :meth:`scan` waits for the
        last). ``done``: where the windows of the scan searched so far end; ``span``: the
        scan's (lo, hi, hits in ``out`` before it).

        When ``out`` must grow, it grows once for the whole scan's hits at the rate seen so
        far (a tenth more, unless the scan is done): growing again copies the hits in
        (T3x20 in three pieces grew twice, 3 ms)."""
        if len(out) + n > out.columns[0].shape[0]:
            lo, hi, before = span
            if len(out) > before:
                self._sync()  # (out's columns move: no copy may still be landing in them)
            found = len(out) - before + n
            if done < hi:
                found = max(found, int(found * (hi - lo) / max(1, done - lo) * 1.1))
            out.reserve(before + found)
        at = out.room(n)
        s = self.stream
        if self.counts is not None:
            P = self.pattern_hits.shape[0]
            shared = P <= _SHARED_PATTERNS
            self._queue("tally", lambda: self.dev.launch(
                tally_hits, -(-n // (TALLY_RUN * _PASS_THREADS)), _PASS_THREADS,
                4 * P if shared else 0, self.pos, self.code, n, self.offsets, self.shifts,
                self.bin_starts, self.pattern_hits, self.bins, shared, stream=s))

        def copy():
            with cuda_errors("copying the hits back"):
                for device, host in zip((self.pos, self.code, self.mis), out.columns):
                    gpu.tally_event("downloads")
                    device[:n].copy_to_host(host[at:at + n], stream=s)

        self._queue("copy back", copy)
        out.keep([(at, n)])

    @gpu.in_context
    def fetch_counts(self, counts) -> None:
        """Copy the GPU's hit counts (per pattern, per density bin) into ``counts``: those
        the last :meth:`scan` brought back with its hits (no copy, no wait), or (before any
        scan) the GPU's."""
        host = self._tallies_host
        if host is None:
            gpu.tally_event("downloads")
            with cuda_errors("copying the hit counts back"):
                host = self.tallies.copy_to_host(stream=self.stream)
            self._sync()
        P = counts.pattern_hits.shape[0]
        counts.pattern_hits[:] = host[:P]
        counts.bins[:] = host[P:]
