"""The k-mismatch family: many fixed-length patterns, at most k mismatches (Hamming).

Every (pattern, record, start, strand) whose window has Hamming distance <= k
to the pattern is a hit; a text symbol matches a pattern symbol when their
IUPAC base sets intersect. With both strands each pattern's reverse
complement is searched too; such hits are reported on '-' in forward
coordinates, with ``matched`` read on that strand. Patterns are grouped by
length; each group is one fixed-length problem for the chosen variant. No
window spans two text records. The variants thread, block-thread, shared-mem and
pair-tile run on the cuda backend (engine/kmismatch/cuda.py, imported only for
cuda jobs); the others on serial and multicore.

Examples
--------
>>> from engine.sequences import load
>>> res = solve(load("ACTTGTAC"), load("ACTG"), 1, strands="forward", backend="serial")
>>> [(h.start, h.end, h.strand, h.mismatches, h.matched) for h in res.hits]
[(1, 4, '+', 1, 'ACTT')]
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generator

import numpy as np

from engine import config, registry
from engine.jobs import (CancelToken, Job, Progress, RunInfo, SliceClock, check_int, check_threads,
                         drive, now)
from engine.kmismatch.hits import Hit, HitBuffer, HitDensity, HitTable
from engine.kmismatch.spec import SPEC
from engine.sequences import COMPLEMENT_TABLE, Record, concat_with_offsets

__all__ = ["Hit", "HitDensity", "HitTable", "KmismatchResult", "SPEC", "iter_solve", "make_job",
           "solve"]


@dataclass(frozen=True)
class KmismatchResult:
    """The hits, plus per-pattern counts and a hit-density profile per record for the GUI."""

    info: RunInfo
    k: int
    strands: str
    hits: HitTable
    pattern_ids: tuple[str, ...]
    pattern_lengths: tuple[int, ...]
    #: hits per pattern (both strands together), aligned with ``pattern_ids``.
    pattern_hits: np.ndarray
    #: one :class:`HitDensity` per text record.
    density: tuple[HitDensity, ...]
    #: text positions scanned (all of them unless cancelled).
    scanned: int


#: The CUDA methods (SPEC's variants with a cuda backend); pair-tile is the fastest.
CUDA_VARIANTS = tuple(v.name for v in SPEC.variants if v.backend("cuda"))
CUDA_FASTEST = "pair-tile"
#: Limits of the CUDA kernels' packed hits: 16 bits each for the slot and the mismatches.
CUDA_MAX_SLOTS = 1 << 16
CUDA_MAX_LENGTH = (1 << 16) - 1
#: Most threads a block of the shared-mem kernels.
SHARED_MEM_MAX_THREADS = 512


def make_job(text, patterns, k: int, *, variant=None, backend=None, strands: str = "both",
             threads: int | None = None, threads_per_block: int | None = None) -> Job:
    """Check every argument and return a :class:`~engine.jobs.Job` with defaults filled in.

    Parameters
    ----------
    text, patterns : sequence of :class:`~engine.sequences.Record`
        The text records and the patterns (one record each, any lengths).
    k : int
        Largest number of mismatches reported (k >= 0).
    variant : {'naive', 'shift-add', 'pmasm', 'thread', 'block-thread', 'shared-mem', 'pair-tile'}
        Default: pair-tile where a GPU is present (or the backend is cuda), else pmasm.
        The last four are the CUDA methods (cuda backend only).
    backend : {'serial', 'multicore', 'cuda'}, optional
        Default: the fastest available.
    strands : {'both', 'forward'}
        'both' also searches each pattern's reverse complement.
    threads : int, optional
        Threads for multicore.
    threads_per_block : int, optional
        CUDA thread, shared-mem and pair-tile only (default
        ``engine.config.KMISMATCH_CUDA_THREADS_PER_BLOCK``, for shared-mem
        ``KMISMATCH_CUDA_SHARED_MEM_THREADS_PER_BLOCK``); block-thread runs one thread
        per level.

    Raises
    ------
    ValueError
        On k < 0 or not an integer, an unknown strands value, an empty text or
        pattern set, or a variant/backend combination that does not exist.
    """
    k = check_int("k", k, 0)
    if strands not in ("both", "forward"):
        raise ValueError(f"strands must be 'both' or 'forward', got {strands!r}")
    threads = check_threads(threads)
    text, patterns = tuple(text), tuple(patterns)
    if not text:
        raise ValueError("no text records")
    if not patterns:
        raise ValueError("empty pattern set: give at least one pattern")
    for rec in text + patterns:
        if not isinstance(rec, Record):
            raise ValueError(f"expected engine.sequences.Record inputs, got {type(rec).__name__}")
        if len(rec) == 0:
            raise ValueError(f"record '{rec.id}' is empty")
    if variant is None and (backend == "cuda"
                            or backend is None and registry.backend_status("cuda")[0]):
        variant = CUDA_FASTEST
    sel = registry.resolve(SPEC, variant, backend, None, frozenset())
    params = {"k": int(k), "strands": strands}
    registry.check_backend_only(SPEC, sel.backend, threads_per_block=threads_per_block)
    if threads_per_block is not None:
        if sel.variant == "block-thread":
            raise ValueError("threads_per_block does not apply to block-thread (one thread per "
                             "pattern position)")
        params["threads_per_block"] = check_int("threads_per_block", threads_per_block, 1)
        if params["threads_per_block"] > 1024:
            raise ValueError(f"threads_per_block must be <= 1024, got {threads_per_block}")
        if sel.variant == "shared-mem" and params["threads_per_block"] > SHARED_MEM_MAX_THREADS:
            # Its kernels (eight windows a thread) need more registers than a block of 1024
            # threads has: the launch is refused (CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES on an H200).
            raise ValueError(f"threads_per_block of shared-mem must be <= {SHARED_MEM_MAX_THREADS}, "
                             f"got {threads_per_block}")
    if sel.backend == "cuda":
        _check_cuda_limits(patterns, strands)
    return Job(family="kmismatch", inputs={"text": text, "patterns": patterns},
               variant=sel.variant, backend=sel.backend, parallel=None, flags=frozenset(),
               params=params, threads=threads)


def _check_cuda_limits(patterns, strands: str) -> None:
    per_length: dict[int, int] = {}
    for rec in patterns:
        if len(rec) > CUDA_MAX_LENGTH:
            raise ValueError(f"pattern '{rec.id}' is {len(rec)} long; the cuda backend takes "
                             f"patterns of at most {CUDA_MAX_LENGTH} symbols (use a CPU backend)")
        per_length[len(rec)] = per_length.get(len(rec), 0) + (2 if strands == "both" else 1)
    for m, slots in per_length.items():
        if slots > CUDA_MAX_SLOTS:
            raise ValueError(f"{slots} patterns of length {m} (with both strands) exceed the cuda "
                             f"backend's {CUDA_MAX_SLOTS} per length (use a CPU backend)")


def solve(text, patterns, k: int, **options) -> KmismatchResult:
    """Run a kmismatch job to completion (see :func:`make_job` for the options)."""
    return drive(iter_solve(make_job(text, patterns, k, **options)))


@dataclass
class _Group:
    """Patterns of one length, compiled for the job's variant."""

    m: int
    model: object  # cpu_driver.Model, or cuda.Group on the GPU
    #: Hits a window, as seen so far (the first guess: one in 8 windows hits 8 slots).
    per_window: float = 1.0

    @property
    def slots(self) -> int:
        return self.model.slots


def _slot_groups(patterns, strands: str):
    """(m, slot patterns (R, m), slot codes (R,)) per pattern length, shortest first: the
    patterns of that length and, with both strands, each one's reverse complement."""
    by_length: dict[int, list[int]] = {}
    for index, rec in enumerate(patterns):
        by_length.setdefault(len(rec), []).append(index)
    ns = 2 if strands == "both" else 1
    out = []
    for m in sorted(by_length):
        members = by_length[m]
        rows = []
        for index in members:
            codes = patterns[index].codes
            rows.append(codes)
            if ns == 2:
                rows.append(COMPLEMENT_TABLE[codes[::-1]])
        slot_patterns = np.array(rows, dtype=np.uint8).reshape(len(rows), m)
        # A hit reports 2 * pattern + strand, so hits sort by pattern then strand.
        slot_code = (2 * np.repeat(np.array(members, dtype=np.int32), ns)
                     + np.tile(np.arange(ns, dtype=np.int32), len(members)))
        out.append((m, slot_patterns, slot_code))
    return out


def _groups(patterns, strands: str, k: int, variant: str) -> list[_Group]:
    from engine.kmismatch import cpu_driver

    out = []
    for m, slot_patterns, slot_code in _slot_groups(patterns, strands):
        model = cpu_driver.build_model(variant, slot_patterns, k, slot_code)
        out.append(_Group(m, model, min(model.slots, 8) / 8))
    return out


def _flat_text(records) -> tuple[np.ndarray, np.ndarray]:
    """All records end to end (no copy for a single record) and the record offsets."""
    if len(records) == 1:
        text = np.ascontiguousarray(records[0].codes, dtype=np.uint8)
        return text, np.array([0, text.shape[0]], dtype=np.int64)
    return concat_with_offsets(list(records))


def _chunks(offsets: np.ndarray, lo: int, hi: int, m: int, pieces: int):
    """Window-start ranges of length-m windows that start in [lo, hi), one record each.

    With ``pieces`` > 1 the ranges are cut further, to about ``pieces`` chunks
    of at least ``KMISMATCH_MIN_CHUNK`` windows (multicore).
    """
    first = int(np.searchsorted(offsets, lo, side="right")) - 1
    last = int(np.searchsorted(offsets, hi, side="left"))
    rec_lo = offsets[first:last]
    rec_hi = offsets[first + 1:last + 1]
    los = np.maximum(rec_lo, lo)
    his = np.minimum(rec_hi - m + 1, hi)
    keep = los < his
    los, his = los[keep], his[keep]
    if pieces > 1 and los.size:
        lengths = his - los
        target = max(config.KMISMATCH_MIN_CHUNK, -(-int(lengths.sum()) // pieces))
        cuts = -(-lengths // target)
        starts = np.repeat(los, cuts)
        step = np.repeat(-(-lengths // cuts), cuts)
        within = np.arange(int(cuts.sum())) - np.repeat(np.cumsum(cuts) - cuts, cuts)
        new_lo = starts + within * step
        new_hi = np.minimum(new_lo + step, np.repeat(his, cuts))
        los, his = new_lo, new_hi
    return los, his


def _warm_up(variant: str, backend: str) -> None:
    """Compile (or load from cache) the kernels the job uses, on a tiny input."""
    from engine.kmismatch import cpu_driver

    text = np.tile(np.array([1, 2, 4, 8], dtype=np.uint8), 16)
    model = cpu_driver.build_model(variant, np.array([[1, 2, 4]], dtype=np.uint8), 1)
    out = HitBuffer(pattern_ids=("p",), pattern_lengths=(3,), record_ids=("t",), text=text,
                    offsets=np.array([0, 64]))
    counts = cpu_driver.Counts([64], 1, 16)
    cpu_driver.scan(model, text, np.array([0]), np.array([62]), backend, np.zeros(1, np.uint8), out,
                    0.5, counts)
    counts.recount(out)


def iter_solve(job: Job, cancel: CancelToken | None = None
               ) -> Generator[Progress, None, KmismatchResult]:
    """Yield :class:`Progress` about every 100 ms; return a :class:`KmismatchResult`.

    The text is scanned in slices of adaptive size (progress counts text
    positions; ``cells`` counts positions x patterns searched, a reverse
    complement counting as one more pattern; ``comparisons`` the symbol
    comparisons these Hamming distances stand for). ``Progress.partial`` is a
    :class:`HitTable` of the hits so far, which grows by appending. After
    ``cancel.cancel()`` the generator returns at the next check with
    ``info.complete = False`` and the hits of the slices finished before it.
    """
    from engine.kmismatch import cpu_driver

    cancel = cancel or CancelToken()
    k, strands = job.params["k"], job.params["strands"]
    records: tuple[Record, ...] = job.inputs["text"]
    patterns: tuple[Record, ...] = job.inputs["patterns"]
    total = sum(len(r) for r in records)
    on_gpu = job.backend == "cuda"
    if on_gpu:  # CPU jobs never import numba.cuda
        from engine.kmismatch import cuda as kcuda

        tpb = job.params.get("threads_per_block")
        slot_groups = _slot_groups(patterns, strands)
        if not kcuda.compiled(job.variant, slot_groups, k, tpb):
            yield Progress(0, total, 0, 0, 0.0, phase="compiling", message="compiling kernels…")
            kcuda.warm_up(job.variant, slot_groups, k, tpb)
    else:
        if job.backend == "multicore":
            cpu_driver.set_threads(job.threads)
        if not cpu_driver.compiled(job.variant, job.backend):
            yield Progress(0, total, 0, 0, 0.0, phase="compiling", message="compiling kernels…")
            _warm_up(job.variant, job.backend)

    t0 = now()
    text, offsets = _flat_text(records)
    search = None
    if on_gpu:
        search = kcuda.CudaSearch(job.variant, text, offsets, slot_groups, k, tpb, cancel.flag)
        groups = [_Group(g.m, g) for g in search.groups]
    else:
        groups = _groups(patterns, strands, k, job.variant)
    slots = sum(g.slots for g in groups)
    pieces = 1  # chunks a slice is cut into
    if job.backend == "multicore":
        import numba

        pieces = config.KMISMATCH_CHUNKS_PER_THREAD * numba.get_num_threads()
    pattern_ids = tuple(p.id for p in patterns)
    pattern_lengths = tuple(len(p) for p in patterns)
    found = HitBuffer(pattern_ids=pattern_ids, pattern_lengths=pattern_lengths,
                      record_ids=tuple(r.id for r in records), text=text, offsets=offsets,
                      shifts=[r.offset for r in records])
    counts = cpu_driver.Counts([len(r) for r in records], len(patterns),
                               config.KMISMATCH_DENSITY_BINS)
    first_cells = (config.KMISMATCH_CUDA_FIRST_SLICE_CELLS if on_gpu
                   else config.KMISMATCH_FIRST_SLICE_CELLS.get(job.variant, 1 << 24))
    clock = SliceClock(first=max(4096, first_cells // slots), maximum=total)
    elapsed = now() - t0
    cells = comparisons = 0
    done = 0
    complete = True
    while done < total:
        if cancel.cancelled:
            complete = False
            break
        t_slice = now()
        lo, hi = done, min(total, done + clock.size)
        counted = _scan_slice(groups, text, offsets, lo, hi, job.backend, pieces, cancel.flag,
                              found, counts, search)
        if counted is None:
            complete = False  # a kernel saw the cancel flag mid-slice: drop that slice
            counts.recount(found)
            break
        slice_cells, slice_comparisons = counted
        if not lo and hi < total:  # room for the whole text's hits at the first slice's rate
            found.reserve(int(len(found) * (total / hi) * 1.2) + 1024)
        dt = now() - t_slice
        elapsed += dt
        clock.update(hi - lo, dt)
        done = hi
        cells += slice_cells
        comparisons += slice_comparisons
        yield Progress(done, total, cells, comparisons, elapsed, partial=found.view())

    t_end = now()
    hits = found.view()
    edges = counts.bin_starts.tolist()
    profile = tuple(HitDensity(rec.id, len(rec), 1 << shift, counts.bins[a:z])
                    for rec, shift, a, z in zip(records, counts.shifts.tolist(), edges[:-1],
                                                edges[1:]))
    elapsed += now() - t_end
    info = RunInfo("kmismatch", job.variant, job.backend, None, (), elapsed, cells, comparisons,
                   complete, job.threads)
    return KmismatchResult(info, k, strands, hits, pattern_ids, pattern_lengths,
                           counts.pattern_hits, profile, done)


def _scan_slice(groups, text, offsets, lo, hi, backend, pieces, abort, found: HitBuffer, counts,
                search=None):
    """Add the hits of windows starting in text[lo:hi] to ``found``, in (record, start,
    pattern, strand) order, and count them. Returns (cells, comparisons), or None when
    aborted (then ``found`` is unchanged). ``search`` (a cuda.CudaSearch) runs cuda jobs:
    one launch per length group, which skips the windows that cross records itself."""
    from engine.kmismatch import cpu_driver

    cells = comparisons = 0
    # One length group's hits come out in order; several groups are merged.
    merge = [HitBuffer() for _ in groups] if len(groups) > 1 else [found]
    for group, out in zip(groups, merge):
        los, his = _chunks(offsets, lo, hi, group.m, pieces)
        if not los.size:
            continue
        if search is not None:
            added = search.scan(group.model, int(los[0]), int(his[-1]), out, counts)
        else:
            added = cpu_driver.scan(group.model, text, los, his, backend, abort, out,
                                    1.5 * group.per_window, counts)
        if added is None:
            return None
        windows = int((his - los).sum())
        group.per_window = max(added / windows, 0.01)
        cells += windows * group.slots
        comparisons += windows * group.slots * group.m
    if len(groups) > 1:
        pos, code, mis = (np.concatenate([b.columns[i][:len(b)] for b in merge])
                          for i in range(3))
        order = np.lexsort((code, pos))
        found.append(pos[order], code[order], mis[order])
    return cells, comparisons
