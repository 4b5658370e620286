"""edit on CUDA: the host side of the ``task`` and ``cooperative`` variants (imported lazily,
only for cuda jobs).

- :class:`GpuPairs` holds a text and its patterns on the GPU and runs batches of
  (pattern, text range) pairs through one variant's kernels: the match tables,
  the ordering of pairs into threads or warps, and the launches (see
  cuda_myers.py). It also serves the read-verification benchmark directly.
- :class:`CudaRunner` is the GPU twin of engine.edit.driver.CpuLanes: the job's
  tasks (pairs of a batch, or overlapping chunks of long records) go to the
  GPU in slices, read from the plan's fields (never its task table, the CPU
  kernels' rows), and their answers land in the runner's arrays, which
  engine.edit.driver.Collector turns into hits and distances as on the CPU.
  Starts and CIGARs of the reported hits (``align=True``) are traced by the CPU
  path stage (cpu_align), which every backend shares; the GPU computes the
  distances and ends.

Every CUDA failure (out of memory, a launch the device refuses, a fault in a
kernel) becomes a one-line :class:`~engine.gpu.CudaFailure`; the CPU backends
stay usable.
"""

from __future__ import annotations

import time
from types import SimpleNamespace

import numpy as np
from numba import cuda

from engine import config, gpu
from engine.edit import cpu_align
from engine.edit import cpu_common as cc
from engine.edit import cuda_myers as ck
from engine.edit.plan import UNSEEN, Plan, align_items, search_overlap
from engine.gpu import CudaFailure, cuda_errors, register_cap
from engine.sequences import SeqColumns


#: Under numba's CUDA simulator, where every GPU thread is a Python thread, a text longer
#: than this has its lookups packed by numpy instead of pack_kernel (the same words): a
#: genome would take minutes. A GPU always packs on the device.
SIMULATOR_PACK_LIMIT = 1 << 16


def text_bytes(n: int) -> tuple[int, int]:
    """(bytes of the padded codes, bytes with their lookups after them) of a text of ``n``
    symbols on the GPU (:func:`upload_text`)."""
    total = -(-(ck.PAD + n + ck.PAD + 32) // 16) * 16
    return total, total + total // 2


def text_views(raw, n: int):
    """(lookups, codes) of a text of ``n`` symbols in its device allocation ``raw``."""
    total, both = text_bytes(n)
    return raw[total:both].view(np.uint64), raw[:total]


def upload_text(dev: gpu.Device, codes: np.ndarray, into=None):
    """(lookups, codes) of a text on the GPU as the kernels read them, ``PAD`` symbols in.

    The codes are copied once, straight from the host array into a zeroed device buffer
    (no host copy of a large batch's regions); their lookups (cuda_myers.LOOKUP, 16 per
    uint64) are packed after them (:func:`text_views`) by ``pack_kernel``. Both run on for
    at least PAD + 32 symbols past the end, so that lanes may read ahead. ``into``: a
    uint8 device array of at least ``text_bytes(n)[1]`` bytes to hold them (default: a
    new one): one allocation, which GpuPairs may leave on the GPU for the next job.
    """
    codes = np.ascontiguousarray(codes, dtype=np.uint8)
    n = codes.shape[0]
    if into is None:
        into = dev.empty(text_bytes(n)[1], np.uint8, "the text")
    lookups_d, padded_d = text_views(into, n)
    dev.clear(padded_d, "the text")
    if n:
        with cuda_errors("copying the text to the GPU", n):
            padded_d[ck.PAD:ck.PAD + n].copy_to_device(codes)
    if gpu.SIMULATOR and n > SIMULATOR_PACK_LIMIT:
        nibbles = ck.PACK_LOOKUP[padded_d.copy_to_host()]
        lookups_d.copy_to_device((nibbles[0::2] | (nibbles[1::2] << 4)).view(np.uint64))
        return lookups_d, padded_d
    tpb = dev.threads_per_block
    words = lookups_d.shape[0]
    dev.launch(ck.pack_kernel, -(-words // tpb), tpb, 0, padded_d, lookups_d)
    return lookups_d, padded_d


class _EditTexts:
    """Marks the texts edit leaves on the GPU (engine.gpu.DEVICE_TEXTS is keyed by owner
    objects; another family may key its own text, in another layout, by the same array)."""


_EDIT_TEXTS = _EditTexts()


class GpuPairs:
    """A text and patterns on the GPU, and one variant's kernels over batches of pairs.

    Parameters
    ----------
    dev : engine.gpu.Device
    variant : {"task", "cooperative"}
    text : uint8 codes (all records, flat)
    pats, p_offs : the patterns, flat, with offsets
    mode : cpu_common.MODE_GLOBAL, MODE_HITS or MODE_BEST
    profile : bool
        Search: lower score-profile bins (``prof`` of :meth:`run`).
    words : int
        cooperative: words per thread.
    text_owner : the caller's own array that ``text`` is (None: the text is the job's own)
        The text is left on the GPU for it while it lives (engine.gpu.DEVICE_TEXTS, as
        kmismatch leaves its texts): the next batch of regions of the same genome takes it
        as it is, with no upload nor packing.

    Device memory comes from engine.gpu.SPARES and goes back there (:meth:`borrow`): a
    batch's arrays when :meth:`run` has its results, the text and patterns at
    :meth:`close`. Allocating and freeing them anew cost a driver call each, and numba's
    deferred frees, flushed in the middle of a later call, wait for the device.
    """

    def __init__(self, dev: gpu.Device, variant: str, text: np.ndarray, pats: np.ndarray,
                 p_offs: np.ndarray, mode: int, profile: bool = False, words: int = 1,
                 text_owner=None):
        self.dev, self.variant, self.mode, self.profile = dev, variant, mode, bool(profile)
        self.words = int(words)
        self.columns = int(config.EDIT_CUDA_COLUMNS_PER_STEP)
        if not 1 <= self.columns <= ck.MAX_COLUMNS or 16 % self.columns:
            raise ValueError("EDIT_CUDA_COLUMNS_PER_STEP must be 1, 2 or 4")
        self.max_lanes = int(config.EDIT_CUDA_MAX_LANES)
        self.tpb = dev.threads_per_block
        if variant == "cooperative":
            need = ck.cooperative_shared_bytes(self.words, self.tpb)
            if need > dev.max_shared:
                raise CudaFailure(
                    f"cooperative/cuda with {self.words} words per thread and {self.tpb} threads "
                    f"per block needs {need} bytes of shared memory per block, more than "
                    f"{dev.name} allows ({dev.max_shared}); use fewer threads per block or words "
                    "per thread")
        self.p_offs = np.ascontiguousarray(p_offs, dtype=np.int64)
        self.lengths = np.diff(self.p_offs)
        self._held, self._batch = [], []  # (key, raw) borrowed from SPARES (see borrow)
        self._failed = False  # a batch failed: the device is not asked again (it may be lost)
        self._events = []  # (start, stop) of the kernels timed but not yet read (_timed)
        # Transfers of page-locked host arrays are queued on the legacy default stream, which
        # Device.launch's stream 0 is (behind the kernels, as launches are), rather than
        # waited for (numba's stream 0 is synchronous).
        with cuda_errors("starting CUDA"):
            self._stream = 0 if gpu.SIMULATOR else cuda.legacy_default_stream()
        self._text_raw, self._text_owners = None, None  # the text's allocation, if ours
        owners = None if text_owner is None else (text_owner, _EDIT_TEXTS)
        n = text.shape[0]
        resident = None if owners is None else gpu.DEVICE_TEXTS.get(owners, dev.id)
        if resident is not None and resident.shape[0] >= text_bytes(n)[1]:
            self.text_d, self.codes_d = text_views(resident, n)
        else:
            self._text_raw = dev.spare("edit text", text_bytes(n)[1], "the text")
            self._text_owners = owners
            self.text_d, self.codes_d = upload_text(dev, text, self._text_raw)
        self.pats_d, self.p_offs_d = self._upload_many("the patterns", True, (pats, np.uint8),
                                                       self.p_offs)
        self.kernel_seconds = 0.0
        self.launched = {}  # key -> kernel, of the distance kernels launched

    # -- device memory ------------------------------------------------------------------------
    def borrow(self, shape, dtype, what: str, keep: bool = False):
        """A device array of ``shape``, from engine.gpu.SPARES under ``edit <what>`` when it
        has one; it goes back there at :meth:`close` (``keep``) or when the batch that
        borrowed it is done (:meth:`run`)."""
        dtype = np.dtype(dtype)
        count = int(np.prod(shape))
        key = f"edit {what}"
        raw = self.dev.spare(key, max(1, count) * dtype.itemsize, what)
        (self._held if keep else self._batch).append((key, raw))
        return raw[:count * dtype.itemsize].view(dtype).reshape(shape)

    def _upload_many(self, what: str, keep: bool, *parts) -> list:
        """Device.upload_many into a spare allocation (see :meth:`borrow`)."""
        kept = {}
        views = self.dev.upload_many(what, *parts, keep=kept, spare=f"edit {what}")
        (self._held if keep else self._batch).append((f"edit {what}", kept[what]))
        return views

    def _idle(self) -> bool:
        """Wait for this object's work (all of it on the default stream; other jobs' streams
        go on); False when the device failed (its memory is then freed, not reused)."""
        try:
            self.dev.synchronize("finishing", stream=None if gpu.SIMULATOR else self._stream)
        except CudaFailure:
            return False
        return True

    def _give_back(self, borrowed: list, idle: bool = False) -> None:
        """Give ``borrowed`` arrays to engine.gpu.SPARES once the device is done with them
        (``idle``: it is, a batch's results are in)."""
        items = list(borrowed)
        borrowed.clear()
        if items and (idle or self._idle()):
            for key, raw in items:
                gpu.SPARES.give(key, raw)

    def close(self) -> None:
        """Leave the text on the GPU for its owner, or give it back with the patterns for
        the next job (the object runs no more)."""
        self.text_d = self.codes_d = self.pats_d = self.p_offs_d = None
        text, self._text_raw = self._text_raw, None
        if text is not None:
            self._held.append(("edit text", text))
        if self._failed or not self._idle():  # (the packing is done before the text is kept)
            self._held.clear()
            return
        if text is not None and self._text_owners is not None and \
                self.dev.keep_text(self._text_owners, text):
            self._held.pop()
        self._give_back(self._held, idle=True)

    # -- which kernels ------------------------------------------------------------------------
    def _kernel(self, key):
        variant, mode, profile, registers = key[:4]
        if variant == "cooperative":
            return ck.cooperative_kernel(key[4], key[5], mode, profile, key[6], registers)
        return ck.task_kernel(key[4], mode, profile, registers)

    # -- a batch ------------------------------------------------------------------------------
    def run(self, inst: np.ndarray, jobs: np.ndarray, prof_d=None, hit_cap: int = 1):
        """Run the pairs of a job table (:func:`new_jobs`; ``inst[i]`` is pair i's pattern).
        Returns (out, hits): out per pair (cuda_myers.O_* columns), hits (end, distance,
        id) rows in hits mode (else None); None when cancelled.

        The table's J_PEQ and J_CARRY fields are filled in here.
        """
        inst = np.ascontiguousarray(inst, dtype=np.int64)
        if jobs.shape[1] == 0:
            return np.zeros((0, ck.NO), dtype=np.int64), np.zeros((0, 3), dtype=np.int64)
        idle = False
        try:
            done = self._run(inst, jobs, prof_d, hit_cap)
            self._settle()
            idle = done is not None  # (its results are in: every copy and kernel is done)
            return done
        except BaseException:
            # The device failed (or the call was interrupted): its memory is freed, not
            # reused, and nothing more is asked of it (a lost device fails every call).
            self._failed = True
            self._batch.clear()
            raise
        finally:
            self._events.clear()  # (those of a batch that failed)
            self._give_back(self._batch, idle)

    def _run(self, inst, jobs, prof_d, hit_cap):
        dev = self.dev
        if prof_d is None:
            prof_d = self.borrow(1, np.int64, "the score profile")
            dev.clear(prof_d, "the score profile")
        if self.variant == "cooperative":
            launch = self._plan_cooperative(inst, jobs)
        else:
            launch = self._plan_task(inst, jobs)
        hits_mode = self.mode == cc.MODE_HITS
        while True:
            if dev.cancelled():
                return None
            cap = max(1, hit_cap) if hits_mode else 1
            hits_d = self.borrow((cap, 3), np.int64, "hits")
            count_d = self.borrow(1, np.int64, "the hit count")
            if hits_mode:  # (the kernels touch neither outside hits mode)
                dev.clear(count_d, "the hit count")
            out = launch(hits_d, count_d, prof_d)
            if out is None:
                return None
            if not hits_mode:
                return out, None
            count = int(dev.fetch(count_d)[0])
            if count <= cap:
                break
            hit_cap = count  # every hit again, with room for all of them
        return out, dev.fetch(hits_d)[:count]

    def _upload_jobs(self, jobs: np.ndarray):
        """The job table on the GPU (see new_jobs), its copy queued on the default stream: a
        page-locked table (job_rows') is read from there while the host goes on (it lives
        until the batch's results are in); any other is copied at once. A synchronous copy
        queued after it would wait for it: it is the batch's last copy before its kernels."""
        jobs_d = self.borrow(jobs.shape, np.int64, "the pairs")
        with cuda_errors("copying the pairs to the GPU", jobs.nbytes):
            jobs_d.copy_to_device(np.ascontiguousarray(jobs), stream=self._stream)
        return jobs_d

    def _fetch(self, out_d) -> np.ndarray:
        """The results, copied straight into page-locked pool memory (engine.gpu.pinned_empty;
        it goes back to the pool when the array is dropped): Device.fetch would copy them
        through its staging buffer and out again, 4.8 MB for 200,000 pairs. The copy waits
        for the kernels."""
        host = gpu.pinned_empty(out_d.size, out_d.dtype).reshape(out_d.shape)
        with cuda_errors("running a kernel (copying its results back)"):
            out_d.copy_to_host(host)
        return host

    def _tables(self, inst: np.ndarray, nwp: np.ndarray) -> tuple[np.ndarray, object]:
        """Match tables (4 words per padded word) of the batch's patterns, built on the GPU
        once per pattern (``nwp``: each pattern's padded words); returns each pair's table
        offset and the table."""
        used = np.zeros(len(self.lengths), dtype=bool)
        used[inst] = True
        u_inst = np.flatnonzero(used)
        u_nwp = nwp[u_inst]
        woff = np.zeros(len(u_inst) + 1, dtype=np.int64)
        np.cumsum(u_nwp, out=woff[1:])
        total = int(woff[-1])
        slot = np.zeros(len(self.lengths), dtype=np.int64)
        slot[u_inst] = woff[:-1]
        owner = np.repeat(np.arange(len(u_inst)), u_nwp)
        word_inst = u_inst[owner]
        word_index = np.arange(total, dtype=np.int64) - woff[owner]
        word_dummy = (u_nwp * 64 - self.lengths[u_inst])[owner]
        table_d = self.borrow(4 * max(1, total), np.uint64, "match words")
        tpb = self.tpb
        plan_d = self._upload_many("match-table plan", False, word_inst, word_index, word_dummy)
        self._timed(ck.peq_kernel, -(-total // tpb), tpb, 0, self.pats_d, self.p_offs_d,
                    *plan_d, self.mode != cc.MODE_GLOBAL, table_d)
        return 4 * slot[inst], table_d

    def _timed(self, kernel, blocks, tpb, shared, *args) -> None:
        """Launch between two CUDA events, whose interval :meth:`_settle` adds to
        ``kernel_seconds`` once the batch's results are in: waiting for each kernel here
        would keep the host from queuing the next copy and launch behind it."""
        if blocks <= 0:
            return
        if gpu.SIMULATOR:  # no device timers there
            t0 = time.perf_counter()
            self.dev.launch(kernel, blocks, tpb, shared, *args)
            self.kernel_seconds += time.perf_counter() - t0
            return
        with cuda_errors("timing a kernel"):
            start, stop = cuda.event(), cuda.event()
            start.record()
        self.dev.launch(kernel, blocks, tpb, shared, *args)
        with cuda_errors("timing a kernel"):
            stop.record()
        self._events.append((start, stop))

    def _settle(self) -> None:
        """Add the intervals of the kernels timed so far to ``kernel_seconds`` (their batch
        is done: the events are, and reading them waits for nothing)."""
        events, self._events = self._events, []
        with cuda_errors("running a kernel"):
            for start, stop in events:
                stop.synchronize()
                self.kernel_seconds += start.elapsed_time(stop) / 1e3

    # task: one thread per pair, grouped by register tier
    def _plan_task(self, inst, jobs):
        tiers = tuple(sorted(config.EDIT_CUDA_TASK_TIERS))
        n = jobs[ck.J_N]
        # Per pattern (its words depend on its length alone), then per pair.
        words = (self.lengths + 63) // 64
        ranks = np.searchsorted(np.array(tiers), words)  # len(tiers): words in global memory
        tiered = np.append(np.array(tiers), 0)[ranks]
        nwp = np.where(tiered > 0, tiered, words)
        rank, tier, nw = ranks[inst], tiered[inst], words[inst]
        # A tier at a time, long texts first within it (threads of a warp end together).
        order = _order(rank * (int(n.max()) + 1) + (int(n.max()) - n))
        ranks = rank if order is None else rank[order]
        bounds = np.flatnonzero(np.diff(ranks)) + 1
        parts = np.split(np.arange(len(n)) if order is None else order, bounds)

        def launch(hits_d, count_d, prof_d):
            jobs[ck.J_PEQ], table_d = self._tables(inst, nwp)
            parts_d = self._upload_many("the order of the pairs", False, *parts)
            jobs_d = self._upload_jobs(jobs)  # (last: no copy that waits for it follows)
            out_d = self.borrow((jobs.shape[1], ck.NO), np.int64, "the results")
            for rows, rows_d in zip(parts, parts_d):
                if self.dev.cancelled():
                    return None
                t = int(tier[rows[0]])
                if t > 0:
                    spv = smv = self.borrow((1, 1), np.uint64, "scratch")
                else:
                    words = int(nw[rows].max())
                    spv = self.borrow((words, len(rows)), np.uint64, "the pairs' Pv words")
                    smv = self.borrow((words, len(rows)), np.uint64, "the pairs' Mv words")
                key = (self.variant, self.mode, self.profile, register_cap(self.tpb), t)
                kernel = self.launched[key] = self._kernel(key)
                self._timed(kernel, -(-len(rows) // self.tpb), self.tpb, 0, self.text_d,
                            self.codes_d, table_d, jobs_d, rows_d, out_d, hits_d, count_d, prof_d,
                            spv, smv)
            return self._fetch(out_d)

        return launch

    # cooperative: pairs side by side in warps, a few lanes each
    def _plan_cooperative(self, inst, jobs):
        W, C, maxl = self.words, self.columns, self.max_lanes
        n = jobs[ck.J_N]
        N = len(n)
        # Per pattern (its shape depends on its length alone): lanes of W words, in stripes
        # of at most maxl lanes; its kind, stripes * (maxl + 1) + lanes per stripe.
        lanes = -(-((self.lengths + 63) // 64) // W)
        stripes = -(-lanes // maxl)
        per_stripe = np.where(stripes > 1, maxl, lanes)
        nwp = stripes * per_stripe * W
        kinds = stripes * (maxl + 1) + per_stripe
        # Pairs of one kind a warp at a time, long texts first within it (patterns of one
        # length, as a batch of reads: one kind, no per-pair kinds).
        kind = int(kinds[0]) if kinds.min() == kinds.max() else kinds[inst]
        longest = int(n.max())
        # (regions of one length too, as a batch of reads' candidates: in order, and every
        # warp takes the same steps)
        uniform = np.ndim(kind) == 0 and int(n.min()) == longest
        order = None if uniform else _order(kind * (longest + 1) + (longest - n))

        def take(a):
            return a if order is None else a[order]

        ns = take(n)
        # Runs [lo, hi) of the ordered pairs of one kind; a warp of them at a time.
        if np.ndim(kind):
            kind = take(kind)
            bounds = (np.flatnonzero(kind[1:] != kind[:-1]) + 1).tolist()
            runs = zip([0, *bounds], [*bounds, N], kind[[0, *bounds]].tolist())
        else:
            runs = [(0, N, kind)]
        # Warps of one stripe and of several run in kernels of their own (no carry code in
        # the former's loop): (first pair, pairs, lanes, stripes, steps) of each.
        warps, carry_rows = ([], []), None
        for lo, hi, run_kind in runs:
            S, L = divmod(run_kind, maxl + 1)
            firsts = np.arange(lo, hi, ck.WARP // L, dtype=np.int64)
            run = np.empty((len(firsts), 5), dtype=np.int64)
            run[:, 0] = firsts
            run[:, 1] = np.minimum(ck.WARP // L, hi - firsts)
            run[:, 2] = L
            run[:, 3] = S
            most = longest if uniform else np.maximum.reduceat(ns, firsts)
            run[:, 4] = -(-most // C) + L - 1  # steps
            warps[S > 1].append(run)
            if S > 1:  # two carry rows of a text's length per pair of several stripes
                if carry_rows is None:
                    carry_rows = np.zeros(N, dtype=np.int64)
                carry_rows[lo:hi] = 2 * ns[lo:hi]
        parts = [np.concatenate(w) if w else np.zeros((0, 5), dtype=np.int64) for w in warps]
        common = (self.variant, self.mode, self.profile, register_cap(self.tpb), W, C)

        def launch(hits_d, count_d, prof_d):
            jobs[ck.J_PEQ], table_d = self._tables(inst, nwp)
            ordered = jobs if order is None else _pinned_columns(jobs, order)
            if carry_rows is None:  # (no pair of several stripes)
                ordered[ck.J_CARRY] = 0
            else:
                ordered[ck.J_CARRY, 0] = 0
                np.cumsum(carry_rows[:-1], out=ordered[ck.J_CARRY, 1:])
            carried = 0 if carry_rows is None else int(carry_rows.sum())
            carry_d = self.borrow(max(1, carried), np.uint8, "stripe carries")
            out_d = self.borrow((N, ck.NO), np.int64, "the results")
            parts_d = self._upload_many("the warps", False, *parts)
            jobs_d = self._upload_jobs(ordered)  # (last: no copy that waits for it follows)
            for striped, part, part_d in zip((False, True), parts, parts_d):
                if self.dev.cancelled():
                    return None
                if not len(part):
                    continue
                key = common + (striped,)
                threads = len(part) * ck.WARP
                self.launched[key] = self._kernel(key)
                self._timed(self.launched[key], -(-threads // self.tpb), self.tpb,
                            ck.cooperative_shared_bytes(W, self.tpb), self.text_d, self.codes_d,
                            table_d, jobs_d, part_d, out_d, hits_d, count_d, prof_d, carry_d)
            if order is None:
                return self._fetch(out_d)
            out = np.empty((N, ck.NO), dtype=np.int64)
            out[order] = self._fetch(out_d)
            return out

        return launch

def new_jobs(count: int, pinned: bool = False) -> np.ndarray:
    """An empty job table for ``count`` pairs: cuda_myers.J_* fields x pairs (field-major,
    so that filling a field and the kernels' reads of it are contiguous), zeroed.

    ``pinned``: uninitialised, in page-locked memory that is reused from job to job
    (engine.gpu.pinned_empty; the caller fills every field), which the GPU reads straight
    from: a batch of 200,000 pairs has a table of 19 MB, which would otherwise be zeroed
    in fresh pages and copied to a staging buffer first."""
    if pinned:
        return gpu.pinned_empty(ck.NJ * count, np.int64).reshape(ck.NJ, count)
    return np.zeros((ck.NJ, count), dtype=np.int64)


def _pinned_columns(jobs: np.ndarray, order: np.ndarray) -> np.ndarray:
    """The job table's columns in ``order``, in page-locked memory (see new_jobs)."""
    out = new_jobs(len(order), pinned=True)
    np.take(jobs, order, axis=1, out=out)
    return out


def _text_owner(plan: Plan, pieces) -> np.ndarray | None:
    """The caller's array that the plan's text is, if it is one and read-only (the codes of
    SeqColumns regions: a genome that batch after batch of candidate regions are ranges
    of), for GpuPairs to leave it on the GPU for; None for a text made for the job (records
    end to end, whose copy dies with the job; a streamed chunk), and for a writable array,
    which the caller may change in place between batches (the GPU's copy would be stale)."""
    texts = plan.texts
    if pieces is None and isinstance(texts, SeqColumns) and texts.records is None \
            and plan.text is texts.codes and not plan.text.flags.writeable:
        return plan.text
    return None


def _order(key: np.ndarray):
    """A stable order of the pairs by ``key``, or None when they are in that order already
    (a batch of one read length needs no sort nor copy)."""
    if len(key) < 2 or bool(np.all(key[1:] >= key[:-1])):
        return None
    return np.argsort(key, kind="stable")


def job_rows(plan: Plan, lengths: np.ndarray, a: int, b: int) -> tuple[np.ndarray, np.ndarray]:
    """(pattern per row, job table) of the plan's tasks a .. b-1, from the plan's fields
    (Plan.fields: an array per task, or one value for all) rather than the task table's
    strided columns: a batch's table is tens of MB, and each column read would cross it."""
    fields = plan.fields

    def field(f):
        value = fields[f]
        return value[a:b] if np.ndim(value) else value

    scan = field(cc.T_SCAN_LO)
    inst = field(cc.T_PAT)
    jobs = new_jobs(b - a, pinned=True)
    jobs[ck.J_SCAN] = scan
    np.subtract(field(cc.T_HI), scan, out=jobs[ck.J_N])
    np.subtract(field(cc.T_OWN_LO), scan, out=jobs[ck.J_OWN])
    if lengths.size and lengths.min() == lengths.max():  # (one read length: no gather)
        jobs[ck.J_M] = lengths[0]
    else:
        np.take(lengths, inst, out=jobs[ck.J_M])
    jobs[ck.J_THRESH] = np.minimum(field(cc.T_THRESH), cc.INF)
    jobs[ck.J_ID] = np.arange(a, b)
    if plan.profile:
        binw = field(cc.T_BINW)
        lo = field(cc.T_REC_LO)
        bin_ = (field(cc.T_OWN_LO) - lo) // np.maximum(binw, 1)
        jobs[ck.J_BINW] = binw
        jobs[ck.J_BIN] = field(cc.T_PROF) + bin_
        jobs[ck.J_EDGE] = lo + (bin_ + 1) * binw - scan
        jobs[ck.J_CAP] = field(cc.T_CUT) + 1
    else:
        jobs[[ck.J_BINW, ck.J_BIN, ck.J_EDGE, ck.J_CAP]] = 0
    jobs[ck.J_PEQ] = jobs[ck.J_CARRY] = 0  # (GpuPairs.run fills what its variant reads)
    return inst, jobs


class CudaRunner:
    """Runs a job's tasks on the GPU in slices; the same methods as engine.edit.driver.CpuLanes."""

    def __init__(self, job, abort: np.ndarray, pieces=None):
        """``pieces``: a streamed chunk's (engine.edit.driver.Pieces), uploaded here."""
        self.job, self.abort = job, abort
        params = job.params
        tpb = int(params.get("threads_per_block") or config.EDIT_CUDA_THREADS_PER_BLOCK)
        if job.variant == "cooperative" and tpb % ck.WARP:
            raise ValueError(f"threads_per_block of the cooperative variant must be a multiple "
                             f"of {ck.WARP}, got {tpb}")
        words = int(params.get("words_per_thread") or config.EDIT_CUDA_WORDS_PER_THREAD)
        self.dev = gpu.Device(tpb, abort)
        # A chunk re-scans m + min(k, m) columns of the one before: keep that a small part.
        min_chunk = max(config.EDIT_CUDA_MIN_CHUNK_COLUMNS,
                        config.EDIT_CUDA_CHUNK_OVERLAP_RATIO * search_overlap(job))
        self.plan = plan = Plan(job, self.dev.resident_threads(), min_chunk, pieces=pieces)
        self.mode = plan.mode_id()
        self.lengths = np.diff(plan.p_offs)
        self.uniform_m = bool(self.lengths.min() == self.lengths.max())  # (one read length)
        self.pairs = GpuPairs(self.dev, job.variant, plan.text, plan.pats, plan.p_offs, self.mode,
                              plan.profile, words, _text_owner(plan, pieces))
        self.widths = plan.widths
        self.ends = np.cumsum(self.widths)
        # Each task's answers (Collector reads them): those the CPU kernels leave in the
        # plan's task table, which a GPU job never makes.
        count = len(plan.task_group)
        self.best = np.full(count, cc.INF, dtype=np.int64)
        self.end = np.full(count, -1, dtype=np.int64)
        self.done = np.zeros(count, dtype=bool)
        self.next = 0
        self.min_tasks = max(1, int(config.EDIT_CUDA_MIN_SLICE_TASKS
                                    or self.dev.resident_threads()))
        self._columns = 0
        self._cells = 0
        self._hits = []
        bins = int(plan.prof_offs[-1])
        self.prof_d = self.pairs.borrow(max(1, bins), np.int64, "the score profile", keep=True)
        with cuda_errors("copying the score profile to the GPU", 8 * bins):
            self.prof_d.copy_to_device(np.full(max(1, bins), UNSEEN, dtype=np.int64))
        self._prof = None  # the profile, read once the job is done (its memory goes back)
        self.align_kernel = cpu_align.align_parallel

    def first_slice(self) -> int:
        """Text columns of the first slice: enough to fill the GPU."""
        if config.EDIT_CUDA_FIRST_SLICE_COLUMNS is not None:
            return int(config.EDIT_CUDA_FIRST_SLICE_COLUMNS)
        return 256 * self.dev.resident_threads()

    def scan_slice(self, budget: int) -> None:
        """The next tasks, about ``budget`` text columns of them (at least ``min_tasks``)."""
        a = self.next
        start = self.ends[a - 1] if a else 0
        b = int(np.searchsorted(self.ends, start + max(1, budget), side="right"))
        b = min(len(self.widths), max(a + self.min_tasks, b))
        inst, jobs = job_rows(self.plan, self.lengths, a, b)
        columns = int(self.widths[a:b].sum())
        cap = max(1, min(config.EDIT_CUDA_HIT_BUFFER, columns)) if self.mode == cc.MODE_HITS else 1
        done = self.pairs.run(inst, jobs, self.prof_d, cap)
        if done is None:  # cancelled between launches
            return
        out, hits = done
        best, end = self.best[a:b], self.end[a:b]
        if self.mode == cc.MODE_GLOBAL:
            best[:] = out[:, ck.O_SCORE]
        else:  # (written in place: no temporaries of the batch's size)
            np.copyto(best, out[:, ck.O_BEST])
            np.add(jobs[ck.J_SCAN], out[:, ck.O_END], out=end)
            missed = best > jobs[ck.J_THRESH]
            np.copyto(best, cc.INF, where=missed)
            np.copyto(end, -1, where=missed)
        self.done[a:b] = True
        if hits is not None and len(hits):
            self._hits.append(hits)
        self._columns += columns
        m = jobs[ck.J_M]
        self._cells += columns * int(m[0]) if self.uniform_m else \
            int(np.dot(self.widths[a:b], m))
        self.next = b
        if self.finished():  # (the profile is read first: its device memory goes back too)
            self._prof = self.prof
            self.pairs.close()

    def finished(self) -> bool:
        return self.next >= len(self.widths)

    def columns(self) -> int:
        return self._columns

    def cells(self) -> int:
        return self._cells

    def comparisons(self) -> int:
        return 0  # bit-parallel: match words are looked up, symbols never compared

    def answers(self):
        """(done, best, end) per task (as engine.edit.driver.CpuLanes.answers)."""
        return self.done, self.best, self.end

    def take_hits(self) -> np.ndarray:
        rows = np.concatenate(self._hits) if self._hits else np.zeros((0, 3), dtype=np.int64)
        self._hits = []
        return rows

    def align(self, items: np.ndarray):
        return align_items(self.plan, self.align_kernel, self.abort, items)

    @property
    def prof(self) -> np.ndarray:
        """The score profile bins (UNSEEN where no column was scanned)."""
        if self._prof is not None:
            return self._prof
        bins = int(self.plan.prof_offs[-1])
        return self.dev.fetch(self.prof_d)[:bins] if bins else np.zeros(0, dtype=np.int64)


def verify_arrays(dev: gpu.Device, variant: str, text: np.ndarray, starts: np.ndarray,
                  ends: np.ndarray, queries: np.ndarray, q_offs: np.ndarray, pair_query: np.ndarray,
                  k: int | None = None, mode: str = "search", words: int | None = None):
    """Read verification straight from arrays: query ``pair_query[i]`` against
    ``text[starts[i]:ends[i]]`` for every pair i, on the GPU.

    Returns (best, end): search mode, the smallest distance over the region's end
    positions (-1 when above k) and its first end (1-based, inclusive, in the region;
    -1 when none); global mode, the edit distance (end -1). Regions are ranges of one
    text (a genome), so candidate regions are never copied. The pairs' kernel time is
    added to ``GpuPairs.kernel_seconds`` of the returned batch's ``pairs`` attribute.
    """
    mode_id = cc.MODE_GLOBAL if mode == "global" else cc.MODE_BEST
    pairs = GpuPairs(dev, variant, text, queries, q_offs, mode_id, False,
                     words or config.EDIT_CUDA_WORDS_PER_THREAD)
    starts = np.asarray(starts, dtype=np.int64)
    n = np.asarray(ends, dtype=np.int64) - starts
    if np.any(n <= 0):
        raise ValueError("every region must be non-empty")
    pair_query = np.asarray(pair_query, dtype=np.int64)
    jobs = new_jobs(len(starts))
    jobs[ck.J_SCAN] = starts
    jobs[ck.J_N] = n
    jobs[ck.J_M] = np.diff(np.asarray(q_offs, dtype=np.int64))[pair_query]
    jobs[ck.J_THRESH] = cc.INF if k is None else k
    out = pairs.run(pair_query, jobs)[0]
    pairs.close()
    if mode_id == cc.MODE_GLOBAL:
        best, end = out[:, ck.O_SCORE], np.full(len(out), -1, dtype=np.int64)
    else:
        found = out[:, ck.O_BEST] <= jobs[ck.J_THRESH]
        best = np.where(found, out[:, ck.O_BEST], -1)
        end = np.where(found, out[:, ck.O_END], -1)
    return SimpleNamespace(best=best, end=end, pairs=pairs)

