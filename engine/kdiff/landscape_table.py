"""The uniqueness landscape of ``kdiff --all-k K`` (issue #33): for every start of every
target record and every k in 1..K, the candidate length at that k, or none.

One scan at the largest k gives them all (the kernels' levels, engine/kdiff/driver.py);
this module holds the answer as columns and reads it out: the candidates at one k (what
a plain kdiff run at that k gives), a pandas frame, JSON rows and bedGraph tracks (one
per k, in genome coordinates). Lengths are stored as int32 with 0 for none (a candidate
is never empty).
"""

from __future__ import annotations

import io

import numpy as np

from engine.columns import categorical, labels
from engine.kdiff.candidates import CandidateTable

BEDGRAPH_TRACK = "primerscope_k{k}"


class Landscape:
    """Columns ``target`` (index into ``target_ids``), ``start0`` (0-based start in its
    target's codes) and ``lengths`` (rows x K: the candidate length at k = column + 1,
    0 where none), one row per start, in target then start order."""

    def __init__(self, target, start0, lengths, *, target_ids, texts, shifts=None):
        self.target = np.asarray(target, dtype=np.int32)
        self.start0 = np.asarray(start0, dtype=np.int64)
        # column-major: one k's lengths are contiguous (the k slider reads one column)
        self.lengths = np.asfortranarray(lengths, dtype=np.int32)
        self._at: dict[int, CandidateTable] = {}
        self.target_ids = tuple(target_ids)
        self._texts = tuple(texts)
        self._shifts = np.zeros(len(self.target_ids), dtype=np.int64) if shifts is None \
            else np.asarray(shifts, dtype=np.int64)

    @property
    def k(self) -> list[int]:
        return list(range(1, self.lengths.shape[1] + 1))

    def __len__(self) -> int:
        return int(self.start0.shape[0])

    def __repr__(self) -> str:
        return f"<Landscape: {len(self):,} starts x k 1..{self.lengths.shape[1]}>"

    @property
    def start(self) -> np.ndarray:
        """1-based starts in the loaded records' coordinates."""
        return self.start0 + 1 + self._shifts[self.target]

    def length_at(self, k: int) -> np.ndarray:
        """The candidate length of every start at ``k`` (0 where none)."""
        if not 1 <= k <= self.lengths.shape[1]:
            raise ValueError(f"k must be within 1..{self.lengths.shape[1]}, got {k}")
        return self.lengths[:, k - 1]

    def candidates(self, k: int) -> CandidateTable:
        """The candidates at ``k``: what a separate kdiff run at that k finds (made once per
        k, then kept: the GUI's k slider shows them again without copying)."""
        if k not in self._at:
            lengths = self.length_at(k)
            rows = np.flatnonzero(lengths)
            self._at[k] = CandidateTable(self.target[rows], self.start0[rows],
                                         lengths[rows].astype(np.int64),
                                         target_ids=self.target_ids, texts=self._texts,
                                         shifts=self._shifts)
        return self._at[k]

    def drop_masked(self, targets) -> "Landscape":
        """The landscape with no length where that k's candidate has a soft-masked base among
        its 3'-most bases (``--avoid-masked``, as engine.softmask drops a run's candidates)."""
        from engine.softmask import three_prime_masked

        lengths = np.array(self.lengths)
        for t in np.unique(self.target).tolist():
            rows = np.flatnonzero(self.target == t)
            start0 = self.start0[rows]
            for col in range(lengths.shape[1]):
                lens = lengths[rows, col].astype(np.int64)
                bad = (lens > 0) & three_prime_masked(targets[t], start0, start0 + lens)
                lengths[rows[bad], col] = 0
        return Landscape(self.target, self.start0, lengths, target_ids=self.target_ids,
                         texts=self._texts, shifts=self._shifts)

    def rows(self) -> list[list]:
        """``[target_id, start, len_k1, ..., len_kK]`` per start (1-based), None where none
        (the JSON contract's rows)."""
        cols = [labels(self.target_ids, self.target), self.start.tolist()]
        for k in self.k:
            lens = self.length_at(k)
            cols.append([None if x == 0 else x for x in lens.tolist()])
        return [list(r) for r in zip(*cols)]

    def frame_columns(self) -> dict:
        cols = {"target_id": categorical(self.target, self.target_ids), "start": self.start}
        for k in self.k:
            cols[f"len_k{k}"] = self.length_at(k)
        return cols

    def to_pandas(self):
        """One row per start: ``target_id``, ``start`` (1-based) and ``len_k1 .. len_kK``,
        nullable integers (``<NA>`` where none). Needs the ``pandas`` extra."""
        import pandas as pd

        return pd.DataFrame({name: pd.arrays.IntegerArray(values.astype(np.int32), values == 0)
                             if name.startswith("len_k") else values
                             for name, values in self.frame_columns().items()})

    # -- tracks ------------------------------------------------------------------------------
    def intervals(self, k: int):
        """The bedGraph intervals at ``k``: (chrom, start, end, value) arrays, 0-based
        half-open, one run of equal lengths on consecutive starts per interval; starts
        without a candidate are left out. Chromosomes in name order (as ``sort -k1,1``
        and bedGraphToBigWig want), positions ascending, never overlapping."""
        lens = self.length_at(k)
        pos = self.start0 + self._shifts[self.target]
        chroms, starts, ends, values = [], [], [], []
        for t in sorted(range(len(self.target_ids)), key=lambda i: self.target_ids[i]):
            rows = np.flatnonzero((self.target == t) & (lens > 0))
            if rows.size == 0:
                continue
            p, v = pos[rows], lens[rows]
            # A new interval where the start is not the one after, or the length changes.
            cut = np.flatnonzero((np.diff(p) != 1) | (np.diff(v) != 0)) + 1
            first = np.concatenate(([0], cut))
            last = np.concatenate((cut, [p.size])) - 1
            chroms.append(np.full(first.size, t))
            starts.append(p[first])
            ends.append(p[last] + 1)
            values.append(v[first])
        if not starts:
            empty = np.zeros(0, dtype=np.int64)
            return [], empty, empty, empty
        chrom = [self.target_ids[i] for i in np.concatenate(chroms).tolist()]
        return chrom, np.concatenate(starts), np.concatenate(ends), np.concatenate(values)

    def bedgraph_text(self, k: int) -> str:
        """The bedGraph track of the candidate length at ``k``, with its track line."""
        buf = io.StringIO()
        buf.write(f'track type=bedGraph name={BEDGRAPH_TRACK.format(k=k)} '
                  f'description="primerscope kdiff candidate length at k={k}"\n')
        chrom, lo, hi, val = self.intervals(k)
        buf.writelines(f"{c}\t{a}\t{b}\t{v}\n"
                       for c, a, b, v in zip(chrom, lo.tolist(), hi.tolist(), val.tolist()))
        return buf.getvalue()

    def bedgraph_files(self, prefix: str) -> dict[str, str]:
        """``{PREFIX.k1.bedGraph: text, ...}``: one track per k."""
        return {f"{prefix}.k{k}.bedGraph": self.bedgraph_text(k) for k in self.k}

    def chrom_sizes(self) -> list[tuple[str, int]]:
        """(record id, length known) per target: its loaded offset plus its codes."""
        sizes: dict[str, int] = {}
        for i, name in enumerate(self.target_ids):
            size = int(self._shifts[i]) + int(self._texts[i].shape[0])
            sizes[name] = max(size, sizes.get(name, 0))
        return sorted(sizes.items())

    def write_bigwigs(self, prefix: str) -> list[str]:
        """``PREFIX.k1.bigWig`` ... through pyBigWig (the optional ``bigwig`` extra)."""
        import pyBigWig

        paths = []
        for k in self.k:
            path = f"{prefix}.k{k}.bigWig"
            bw = pyBigWig.open(path, "w")
            try:
                bw.addHeader(self.chrom_sizes())
                chrom, lo, hi, val = self.intervals(k)
                if chrom:
                    bw.addEntries(chrom, lo.tolist(), ends=hi.tolist(),
                                  values=val.astype(float).tolist())
            finally:
                bw.close()
            paths.append(path)
        return paths


def have_pybigwig() -> bool:
    try:
        import pyBigWig  # noqa: F401
    except ImportError:
        return False
    return True
