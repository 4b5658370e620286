"""From a job to the flat arrays and the task table the kernels read.

- *Instances*: every pattern on every strand asked for (the reverse complement
  follows its pattern), concatenated with offsets.
- *Groups*: (instance, text record) pairs: all of them, or pattern i with
  record i when zipped. A group's answer is final once all its tasks are done.
- *Tasks*: one per group, except in multicore search, where a record is cut
  into chunks. A chunk's hits are those ending in [own_lo, hi); it scans from
  own_lo - (m + min(k, m)) so that every hit within k is exact: an occurrence
  with d edits spans at most m + d text symbols, and d <= m always.
"""

from __future__ import annotations

import numpy as np

from engine import config
from engine.edit import cpu_common as cc
from engine.sequences import reverse_complement


def _concat(arrays) -> tuple[np.ndarray, np.ndarray]:
    lengths = np.fromiter((a.shape[0] for a in arrays), dtype=np.int64, count=len(arrays))
    offsets = np.zeros(len(arrays) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    return np.ascontiguousarray(np.concatenate(arrays), dtype=np.uint8), offsets


class Plan:
    """Everything the kernels read for one job."""

    def __init__(self, job, nslots: int):
        params = job.params
        self.mode, self.k, self.report = params["mode"], params["k"], params["report"]
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
        self._build_tasks(nslots)

    def _build_tasks(self, nslots: int) -> None:
        lo = self.t_offs[self.g_rec]
        hi = self.t_offs[self.g_rec + 1]
        m = np.diff(self.p_offs)[self.g_inst]
        G = len(lo)
        chunk = self._chunk_columns(nslots, int(np.sum(hi - lo)))
        count = -(-(hi - lo) // chunk) if chunk else np.ones(G, dtype=np.int64)
        self.task_group = np.repeat(np.arange(G, dtype=np.int64), count)
        first_task = np.concatenate(([0], np.cumsum(count)[:-1]))
        index = np.arange(len(self.task_group)) - first_task[self.task_group]
        g = self.task_group
        tasks = np.zeros((len(g), cc.NTASK), dtype=np.int64)
        tasks[:, cc.T_PAT] = self.g_inst[g]
        tasks[:, cc.T_BEST] = cc.INF
        tasks[:, cc.T_END] = -1
        if self.mode == "global":
            tasks[:, cc.T_SCAN_LO] = lo
            tasks[:, cc.T_OWN_LO] = hi  # nothing is recorded on the way
            tasks[:, cc.T_HI] = hi
            # k, or the first band of banded's doubling.
            tasks[:, cc.T_THRESH] = self.k if self.k is not None else \
                np.abs((hi - lo) - m) + config.EDIT_BAND_FIRST_SLACK
        else:
            own_lo = lo[g] + index * chunk if chunk else lo[g]
            own_hi = np.minimum(hi[g], own_lo + chunk) if chunk else hi[g]
            overlap = m[g] + (np.minimum(self.k, m[g]) if self.k is not None else m[g])
            tasks[:, cc.T_SCAN_LO] = np.maximum(lo[g], own_lo - overlap)
            tasks[:, cc.T_OWN_LO] = own_lo
            tasks[:, cc.T_HI] = own_hi
            tasks[:, cc.T_THRESH] = self.k if self.k is not None else cc.INF
        self.tasks = tasks
        self.max_m = int(np.max(np.diff(self.p_offs)))
        self.columns = int(np.sum(tasks[:, cc.T_HI] - tasks[:, cc.T_SCAN_LO]))

    def _chunk_columns(self, nslots: int, total: int) -> int:
        """Chunk length for multicore search (0: no chunks)."""
        if self.mode == "global" or nslots == 1:
            return 0
        return max(config.EDIT_MIN_CHUNK_COLUMNS, -(-total // (nslots * config.EDIT_CHUNKS_PER_THREAD)))

    def mode_id(self) -> int:
        if self.mode == "global":
            return cc.MODE_GLOBAL
        return cc.MODE_HITS if self.report == "hits" else cc.MODE_BEST
