"""kdiff's candidates as columns (issue #16): target, start and length per candidate, the
sequence read from the target only when a row is made."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.columns import ColumnTable, categorical, labels
from engine.sequences import DECODE_TABLE


@dataclass(frozen=True)
class Candidate:
    """A candidate primer region, 1-based with an inclusive end (as in GenBank)."""

    target_id: str
    start: int
    end: int
    sequence: str

    @property
    def length(self) -> int:
        return self.end - self.start + 1


def windows(texts, target: np.ndarray, start0: np.ndarray, length: np.ndarray) -> list[str]:
    """``texts[target][start0:start0 + length]`` decoded, per row, gathered with numpy."""
    out: list[str] = [""] * int(target.shape[0])
    present = np.unique(target).tolist()
    for t in present:
        rows = np.flatnonzero(target == t) if len(present) > 1 else np.arange(len(out))
        lens = length[rows]
        ends = np.cumsum(lens)
        pos = np.arange(int(ends[-1]) if lens.size else 0) + np.repeat(start0[rows] - (ends - lens),
                                                                      lens)
        letters = DECODE_TABLE[texts[t][pos]].tobytes().decode("ascii")
        bounds = [0] + ends.tolist()
        for n, row in enumerate(rows.tolist()):
            out[row] = letters[bounds[n]:bounds[n + 1]]
    return out


class CandidateTable(ColumnTable):
    """A read-only sequence of :class:`Candidate` over columns, in target then start order.

    Columns: ``target`` (index into ``target_ids``), ``start0`` (0-based start in its
    target's codes) and ``length`` (c + 1); ``start``/``end`` are 1-based and inclusive in
    the loaded record's coordinates (plus ``shifts``: each target's ``Record.offset``).
    """

    COLUMNS = ("target_id", "start", "end", "length", "sequence")
    INTERVAL = ("target_id", "start", "end")
    NUMERIC = ("start", "end", "length")
    ID_ATTRIBUTES = ("target_ids",)

    def __init__(self, target, start0, length, *, target_ids, texts, shifts=None):
        self.target = target
        self.start0 = start0
        self.length = length
        self.target_ids = tuple(target_ids)
        self._texts = tuple(texts)  # the targets' codes, read for the sequences
        self._shifts = np.zeros(len(self.target_ids), dtype=np.int64) if shifts is None \
            else np.asarray(shifts, dtype=np.int64)

    def __len__(self) -> int:
        return int(self.start0.shape[0])

    def take(self, index) -> "CandidateTable":
        return CandidateTable(self.target[index], self.start0[index], self.length[index],
                              target_ids=self.target_ids, texts=self._texts, shifts=self._shifts)

    def _shift(self, sl=slice(None)):
        return self._shifts[self.target[sl]] if self._shifts.any() else 0

    @property
    def start(self) -> np.ndarray:
        return self.start0 + 1 + self._shift()

    @property
    def end(self) -> np.ndarray:
        return self.start0 + self.length + self._shift()

    def sequences(self, lo: int = 0, hi: int | None = None) -> list[str]:
        sl = slice(lo, hi)
        return windows(self._texts, self.target[sl], self.start0[sl], self.length[sl])

    def block(self, lo: int, hi: int) -> list:
        sl = slice(lo, hi)
        s0 = self.start0[sl] + self._shift(sl)
        return [labels(self.target_ids, self.target[sl]), s0 + 1, s0 + self.length[sl],
                self.length[sl], self.sequences(lo, hi)]

    def make_row(self, cells: tuple) -> Candidate:
        return Candidate(cells[0], cells[1], cells[2], cells[4])

    def frame_columns(self) -> dict:
        return {"target_id": categorical(self.target, self.target_ids), "start": self.start,
                "end": self.end, "length": self.length,
                "sequence": np.array(self.sequences(), dtype=object)}
