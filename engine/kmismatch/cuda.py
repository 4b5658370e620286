"""kmismatch on CUDA: the host side of the four methods (imported lazily, only for cuda jobs).

:class:`CudaSearch` is what ``engine.kmismatch.driver`` drives for a cuda
job. It uploads the text (the records end to end) and the record offsets once,
each length group's counters and look-up memory once, and for a range of
window starts launches the method's kernel, puts the hits in text order on the
GPU and appends them to a :class:`~engine.kmismatch.hits.HitBuffer`: only the
hits cross back to the host (kernels: engine/kmismatch/cuda_search.py).

**The hit buffer.** Each tile (a block's windows) writes its hits into its own
region, sized from the hits per window seen so far (at first, what random DNA
would give); tiles that find more spill into an area after the regions. When
that area overflows, the tiles that did not fit write nothing, but the spill
counter counts them all: the launch runs again with exactly the room they need.
A launch whose hits would not fit in ``KMISMATCH_CUDA_MEMORY_FRACTION`` of the
GPU's free memory is split in two. No hit is ever dropped.

Every CUDA failure (out of memory, a launch the device refuses, a fault in a
kernel) becomes a one-line :class:`~engine.gpu.CudaFailure`; the CPU backends
keep working.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numba import cuda

from engine import config, gpu
from engine.gpu import CudaFailure, cuda_errors, register_cap
from engine.kmismatch.cpu_pmasm import counter_bits, fb_vectors
from engine.kmismatch.cuda_search import (ORDER_RUN, PAIR_SWIZZLE, SHARED_WINDOWS,
                                          block_thread_kernel, block_thread_shared_bytes, hold,
                                          order_hits, pair_tile_kernel, pair_tile_shared_bytes,
                                          shared_mem_kernel, shared_mem_shared_bytes,
                                          window_kernel, window_shared_bytes)

METHODS = ("thread", "block-thread", "shared-mem", "pair-tile")
#: Bytes a hit takes on the GPU: packed (8), then unpacked (position 8, code 4, mismatches 4).
#: (Regions sized for twice the expected hits make room in the first buffer count double.)
HIT_BYTES = 24

_WARMED: set = set()  # kernel sets compiled (or loaded) in this process


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
    texts: tuple       # the text as the kernel takes it (bytes, and words for the window kernels)
    #: Tiles start at multiples of this from lo rounded down to one (shared-mem: 4, so that it
    #: stages whole text words; the windows before lo are masked out).
    align: int = 1
    #: Hits a window, as seen so far (the first guess: expected_per_window).
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


def kernel_key(variant: str, m: int, words: int, tpb: int):
    """What tells the compiled kernels of one length group apart (and the launch size)."""
    unrolled = m <= config.KMISMATCH_CUDA_UNROLL_MAX
    if variant == "block-thread":
        return variant, 0, 0
    if variant == "pair-tile":
        return variant, (m + 1) // 2 if unrolled else 0, words == 1, tpb
    if variant == "shared-mem":
        staged = 128 * m * words <= config.KMISMATCH_CUDA_LUT_BYTES
        return (variant, m if unrolled else 0, words == 1, staged, tpb,
                shared_mem_registers(tpb, words, staged))
    return variant, m if unrolled else 0, words == 1, tpb


class CudaSearch:
    """A cuda kmismatch job's GPU: text, record offsets and length groups uploaded once;
    :meth:`scan` finds the hits of a range of window starts in one group.

    ``groups`` holds (m, slot_patterns (R, m) uint8, slot_code (R,) int32) per length.
    With ``timing``, :attr:`kernel_seconds` adds up the GPU time of every kernel (CUDA
    events), :attr:`phase_seconds` splits it into the search kernel's (``search``) and the
    ordering pass's (``order``), and :attr:`launches` counts the search kernel's launches
    (reruns included).
    """

    def __init__(self, variant: str, text: np.ndarray, offsets: np.ndarray, groups, k: int,
                 threads_per_block: int | None = None, abort: np.ndarray | None = None,
                 timing: bool = False):
        if variant not in METHODS:
            raise ValueError(f"kmismatch has no CUDA method {variant!r}")
        self.variant = variant
        self.tpb = default_threads(variant, threads_per_block)
        self.dev = gpu.Device(self.tpb, abort)
        if text.shape[0] >= 1 << 32:
            raise CudaFailure("the text is longer than 2^32 symbols, too long for the CUDA "
                              "kernels' 32-bit window numbers; use a CPU backend")
        self.timing = timing
        self.kernel_seconds = 0.0
        self.phase_seconds = {"search": 0.0, "order": 0.0}
        self.launches = 0
        # Ordering blocks take a power of two of tiles (tiles are summed per group by a shift).
        order = min(config.KMISMATCH_CUDA_ORDER_THREADS, self.dev.max_block)
        self.order_shift = order.bit_length() - 1
        self.order_tpb = 1 << self.order_shift
        self.max_hits = self.dev.scratch_budget(config.KMISMATCH_CUDA_MEMORY_FRACTION) // HIT_BYTES
        # Whole 4-byte words (zeros after the end): shared-mem stages the text a word at a time.
        n = text.shape[0]
        self.text = self.dev.empty(-(-n // 4) * 4, np.uint8, "the text")
        with cuda_errors("copying the text to the GPU", n):
            self.text[:n].copy_to_device(np.ascontiguousarray(text, dtype=np.uint8))
            if self.text.shape[0] > n:
                self.text[n:].copy_to_device(np.zeros(self.text.shape[0] - n, np.uint8))
        self.text32 = self.text.view(np.uint32)
        self.offsets = self.dev.upload(np.asarray(offsets, dtype=np.int64), "the record offsets")
        self.groups = [self._group(m, pats, codes, k) for m, pats, codes in groups]
        # The hit counters: what spilled, then the hits of each group of ordering blocks' tiles.
        self.counters = self.found = self.tile_base = self.tile_hits = None
        self.pos = self.code = self.mis = None

    def _group(self, m: int, slot_patterns, slot_code, k: int) -> Group:
        pairs = self.variant == "pair-tile"
        tables = build_tables(slot_patterns, k, pairs)
        if tables.fb.shape[0] >= 1 << 32:  # the window kernels index it with 32 bits
            raise CudaFailure(f"the look-up memory of {tables.slots} patterns of length {m} is "
                              "too large for the CUDA kernels; use a CPU backend")
        unrolled = m <= config.KMISMATCH_CUDA_UNROLL_MAX
        one_word = tables.words == 1
        tpb, tile, extra, texts, align = self.tpb, self.tpb, (), (self.text,), 1
        if self.variant == "thread":
            kernel = window_kernel(m if unrolled else 0, one_word)
            shared = window_shared_bytes(tpb)
        elif self.variant == "shared-mem":
            # The look-up memory goes to shared memory too when it fits the budget.
            table_staged = 128 * m * tables.words <= config.KMISMATCH_CUDA_LUT_BYTES
            kernel = shared_mem_kernel(m if unrolled else 0, one_word, table_staged,
                                       shared_mem_registers(tpb, tables.words,
                                                            table_staged))
            texts = (self.text32,)
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
        table = tables.lut if pairs else tables.fb
        return Group(m, tables.slots, tables,
                     self.dev.upload(np.asarray(slot_code, dtype=np.int32), "the slot codes"),
                     self.dev.upload(table, "the look-up memory"),
                     self.dev.upload(tables.valid, "the counter masks"), kernel, tpb, tile, shared,
                     extra, texts, align, expected_per_window(m, min(k, m), tables.slots))

    # -- buffers --------------------------------------------------------------------------
    def _room(self, name: str, size: int, dtype, what: str):
        """The device array ``name``, grown (to at least twice its size) to hold ``size``."""
        have = getattr(self, name)
        if have is None or have.shape[0] < size:
            grown = max(size, 2 * (0 if have is None else have.shape[0]))
            setattr(self, name, None)  # free the old one first
            have = self.dev.empty(grown, dtype, what)
            setattr(self, name, have)
        return have

    def _zero(self, array, n: int) -> None:
        with cuda_errors("clearing the hit counters"):
            array[:n].copy_to_device(np.zeros(n, dtype=array.dtype))

    def _timed(self, what: str, steps) -> None:
        """Run the ``(phase, launch)`` steps in order (each queues a kernel); with timing,
        add up the GPU time of each (CUDA events between them) by phase."""
        if not self.timing:
            for _, launch in steps:
                launch()
            return
        if not gpu.SIMULATOR:  # (the simulator has no sleep, and no timings anyway)
            self.dev.launch(hold, 1, 1, 0, 300)
        with cuda_errors(what):
            marks = [cuda.event()]
            marks[0].record()
        for phase, launch in steps:
            launch()
            with cuda_errors(what):
                marks.append(cuda.event())
                marks[-1].record()
        with cuda_errors(what):
            marks[-1].synchronize()
            for (phase, _), a, z in zip(steps, marks, marks[1:]):
                seconds = a.elapsed_time(z) / 1000
                self.phase_seconds[phase] += seconds
                self.kernel_seconds += seconds

    # -- one launch -----------------------------------------------------------------------
    def run(self, g: Group, lo: int, hi: int) -> int | None:
        """Find the hits of the windows starting in [lo, hi) of the flat text (windows that
        cross a record boundary are skipped) and leave them in text order in ``pos``,
        ``code`` and ``mis`` on the device. Returns their number, or None when they would
        take more than the memory allowed for one launch."""
        windows = hi - lo
        if windows <= 0:
            return 0
        start = lo - lo % g.align  # where the first tile starts
        tiles = -(-(hi - start) // g.tile)
        groups = -(-tiles // self.order_tpb)
        grid, extra = tiles, g.extra
        if self.variant == "block-thread":  # blocks take tiles in turn
            grid = min(tiles, 32 * self.dev.sms)
            extra = extra + (tiles,)
        tile_base = self._room("tile_base", tiles, np.int64, "the tile table")
        tile_hits = self._room("tile_hits", tiles, np.int64, "the tile table")
        counters = self._room("counters", 1 + groups, np.int64, "the hit counters")
        group_sums = counters[1:1 + groups]
        # Each tile's region holds twice the hits a tile is expected to have, and more than
        # a handful (hits cluster); the spill area takes what a few tiles have beyond that.
        span = min(g.tile, hi - start)
        per_tile = min(int(2 * span * g.per_window) + 8, span * g.slots)
        regular = tiles * per_tile
        spill = max(g.spill, min(config.KMISMATCH_CUDA_MIN_HITS, self.max_hits // 4),
                    regular // 16)
        if regular + spill > self.max_hits:
            return None
        found = self._room("found", regular + spill, np.uint64, "the hit buffer")
        t = g.tables
        while True:
            self._zero(counters, 1 + groups)
            args = g.texts + (self.offsets, lo, hi, g.m, g.table, g.valid, t.b, -(-65536 // t.b),
                              np.uint64((1 << t.b) - 1), np.uint64(t.bias), t.rpw) + extra + (
                found, per_tile, regular, counters, spill, group_sums, self.order_shift,
                tile_base, tile_hits)
            self._timed("running the search kernel", (
                ("search", lambda args=args: self.dev.launch(g.kernel, grid, g.tpb, g.shared,
                                                             *args)),))
            self.launches += 1
            counts = self.dev.fetch(counters[:1 + groups])
            spilled, total = int(counts[0]), int(counts[1:].sum())
            if spilled <= spill:
                break
            if regular + spilled > self.max_hits:
                return None
            spill = g.spill = spilled  # exactly the room the spilled tiles need
            self.found = None
            found = self._room("found", regular + spill, np.uint64, "the hit buffer")
        g.per_window = max(total / windows, 1e-4)
        if total:
            pos = self._room("pos", total, np.int64, "the hit columns")
            code = self._room("code", total, np.int32, "the hit columns")
            mis = self._room("mis", total, np.int32, "the hit columns")
            # Blocks enough for about ORDER_RUN hits a thread (several blocks a group of tiles).
            split = max(1, min(65535, -(-total // (ORDER_RUN * groups * self.order_tpb))))
            self._timed("putting the hits in order", (("order", lambda: self.dev.launch(
                order_hits, (groups, split), self.order_tpb, 16 * self.order_tpb, tile_base,
                tile_hits, tiles, group_sums, found, lo, g.slot_code, pos, code, mis)),))
        return total

    def scan(self, g: Group, lo: int, hi: int, out, counts) -> int:
        """Append the hits of windows starting in [lo, hi) to ``out`` (a HitBuffer) in text
        order and count them in ``counts`` (driver.Counts); returns their number."""
        pending = [(lo, hi)]
        added = 0
        while pending:
            a, z = pending.pop()
            n = self.run(g, a, z)
            if n is None:  # too many hits for one launch: halve the range
                if z - a < 2:
                    raise CudaFailure("the hits of one text window do not fit in GPU memory")
                mid = (a + z) // 2
                pending += [(mid, z), (a, mid)]
                continue
            if n:
                at = out.room(n)
                with cuda_errors("copying the hits back"):
                    for device, host in zip((self.pos, self.code, self.mis), out.columns):
                        device[:n].copy_to_host(host[at:at + n])
                out.keep([(at, n)])
                counts.add(out, at, at + n)
            added += n
        return added


def counter_words(m: int, slots: int, k: int) -> int:
    """64-bit words of counters that ``slots`` patterns of length m take at k mismatches."""
    b, _ = counter_layout(m, min(k, m))
    return -(-slots // (64 // b))


def _keys(variant: str, groups, k: int, threads_per_block: int | None):
    tpb = default_threads(variant, threads_per_block)
    return {kernel_key(variant, m, counter_words(m, len(codes), k), tpb) for m, _, codes in groups}


def compiled(variant: str, groups, k: int, threads_per_block: int | None) -> bool:
    """Have the kernels of these length groups (as CudaSearch takes them) been compiled?"""
    return _keys(variant, groups, k, threads_per_block) <= _WARMED


def warm_up(variant: str, groups, k: int, threads_per_block: int | None) -> None:
    """Compile (or load from the disk cache) the kernels of these length groups, on a tiny
    text."""
    n = max(m for m, _, _ in groups) + 64
    text = np.resize(np.array([1, 2, 4, 8], dtype=np.uint8), n)
    search = CudaSearch(variant, text, np.array([0, n]), groups, k, threads_per_block)
    for g in search.groups:
        search.run(g, 0, n - g.m + 1)
    _WARMED.update(_keys(variant, groups, k, threads_per_block))
