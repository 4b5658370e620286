"""From a job to the flat arrays and the task table the kernels read.

- *Instances*: every pattern on every strand asked for (the reverse complement
  follows its pattern), concatenated with offsets.
- *Groups*: (instance, text record) pairs: all of them, or pattern i with
  record i when zipped. A group's answer is final once all its tasks are done.
- *Tasks*: one per group, except in search, where a record is cut into
  chunks so that every lane (two per thread, see cpu_driver) gets work. A
  chunk's hits are those ending in [own_lo, hi); it scans from
  own_lo - (m + min(k, m)) so that every hit within k is exact: an occurrence
  with d edits spans at most m + d text symbols, and d <= m always.
- *Profile* (search, when asked): per group, the record's end positions cut
  into at most PROFILE_BINS bins of equal width (the last one shorter), each
  holding min(C[m,j], T_CUT + 1) over its ends; flat over the groups. Chunks
  start on bin edges, so a bin belongs to one task.
"""

from __future__ import annotations

import numpy as np

from engine import config
from engine.edit import cpu_common as cc
from engine.sequences import reverse_complement

#: Most bins of a score profile (per pattern, strand and record).
PROFILE_BINS = 4096

#: Profile bin value before any column of it was scanned (-1 once handed out).
UNSEEN = cc.INF


def _concat(arrays) -> tuple[np.ndarray, np.ndarray]:
    lengths = np.fromiter((a.shape[0] for a in arrays), dtype=np.int64, count=len(arrays))
    offsets = np.zeros(len(arrays) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    if len(arrays) == 1:  # one record (a genome): read in place, the kernels never write it
        return np.ascontiguousarray(arrays[0], dtype=np.uint8), offsets
    return np.ascontiguousarray(np.concatenate(arrays), dtype=np.uint8), offsets


class Plan:
    """Everything the kernels read for one job."""

    def __init__(self, job, nlanes: int, min_chunk: int | None = None):
        """``nlanes``: workers to give search chunks to; ``min_chunk``: the shortest chunk
        (default config.EDIT_MIN_CHUNK_COLUMNS, sized for CPU threads)."""
        self.min_chunk = config.EDIT_MIN_CHUNK_COLUMNS if min_chunk is None else min_chunk
        params = job.params
        self.mode, self.k, self.report = params["mode"], params["k"], params["report"]
        self.profile = self.mode == "search" and params["profile"]
        self.patterns, self.texts = job.inputs["pattern"], job.inputs["text"]
        self.strands = ("+", "-") if params["strands"] == "both" else ("+",)
        S = len(self.strands)
        inst = []
        for rec in self.patterns:
            inst.append(rec.codes)
            if S == 2:
                inst.append(reverse_complement(rec.codes))
        self.pats, self.p_offs = _concat(inst)
        self.text, self.t_offs = _concat([r.codes for r in self.texts])
        P, R = len(self.patterns), len(self.texts)
        if params["pairing"] == "zip":
            pat_of, rec_of = np.arange(P), np.arange(P)
        else:
            pat_of, rec_of = np.repeat(np.arange(P), R), np.tile(np.arange(R), P)
        # Groups in output order: pattern, record, strand.
        self.g_inst = (pat_of[:, None] * S + np.arange(S)[None, :]).ravel().astype(np.int64)
        self.g_rec = np.repeat(rec_of, S).astype(np.int64)
        self.g_pattern = self.g_inst // S
        self.g_strand = self.g_inst % S
        self._build_tasks(nlanes)

    def _build_tasks(self, nlanes: int) -> None:
        lo = self.t_offs[self.g_rec]
        hi = self.t_offs[self.g_rec + 1]
        m = np.diff(self.p_offs)[self.g_inst]
        G = len(lo)
        # Profile cap - 1: k, or m (C[m,j] <= m, so no cap without k).
        self.g_cut = np.full(G, self.k, dtype=np.int64) if self.k is not None else m.astype(np.int64)
        if self.profile:
            self.binw = -(-(hi - lo) // PROFILE_BINS)
            nbins = -(-(hi - lo) // self.binw)
            self.prof_offs = np.zeros(G + 1, dtype=np.int64)
            np.cumsum(nbins, out=self.prof_offs[1:])
        else:
            self.binw = np.zeros(G, dtype=np.int64)
            self.prof_offs = np.zeros(G + 1, dtype=np.int64)
        # Chunk length per group (0: one task for the whole record), whole bins per chunk.
        chunk = np.full(G, self._chunk_columns(nlanes, int(np.sum(hi - lo))), dtype=np.int64)
        if self.profile:
            chunk = -(-chunk // self.binw) * self.binw
        count = np.where(chunk > 0, -(-(hi - lo) // np.maximum(chunk, 1)), 1)
        self.task_group = np.repeat(np.arange(G, dtype=np.int64), count)
        first_task = np.concatenate(([0], np.cumsum(count)[:-1]))
        index = np.arange(len(self.task_group)) - first_task[self.task_group]
        g = self.task_group
        tasks = np.zeros((len(g), cc.NTASK), dtype=np.int64)
        tasks[:, cc.T_PAT] = self.g_inst[g]
        tasks[:, cc.T_BEST] = cc.INF
        tasks[:, cc.T_END] = -1
        tasks[:, cc.T_REC_LO] = lo[g]
        tasks[:, cc.T_BINW] = self.binw[g]
        tasks[:, cc.T_PROF] = self.prof_offs[g]
        tasks[:, cc.T_CUT] = self.g_cut[g]
        tasks[:, cc.T_LEAD] = first_task[g]
        tasks[:, cc.T_SHARED] = -1
        if self.mode == "global":
            tasks[:, cc.T_SCAN_LO] = lo
            tasks[:, cc.T_OWN_LO] = hi  # nothing is recorded on the way
            tasks[:, cc.T_HI] = hi
            # k, or the first band of banded's doubling.
            tasks[:, cc.T_THRESH] = self.k if self.k is not None else \
                np.abs((hi - lo) - m) + config.EDIT_BAND_FIRST_SLACK
        else:
            own_lo = lo[g] + index * chunk[g]
            own_hi = np.where(chunk[g] > 0, np.minimum(hi[g], own_lo + chunk[g]), hi[g])
            overlap = m[g] + (np.minimum(self.k, m[g]) if self.k is not None else m[g])
            tasks[:, cc.T_SCAN_LO] = np.maximum(lo[g], own_lo - overlap)
            tasks[:, cc.T_OWN_LO] = own_lo
            tasks[:, cc.T_HI] = own_hi
            tasks[:, cc.T_THRESH] = self.k if self.k is not None else cc.INF
        self.tasks = tasks
        self.max_m = int(np.max(np.diff(self.p_offs)))
        self.columns = int(np.sum(tasks[:, cc.T_HI] - tasks[:, cc.T_SCAN_LO]))

    def _chunk_columns(self, nlanes: int, total: int) -> int:
        """Chunk length for search (0: no chunks), so that every lane gets work."""
        if self.mode == "global" or nlanes == 1:
            return 0
        return max(self.min_chunk, -(-total // (nlanes * config.EDIT_CHUNKS_PER_THREAD)))

    def mode_id(self) -> int:
        if self.mode == "global":
            return cc.MODE_GLOBAL
        return cc.MODE_HITS if self.report == "hits" else cc.MODE_BEST
