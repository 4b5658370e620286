"""An alignment as a column list: aligned strings, CIGAR, identity and the matrix path.

Columns are coded ``OP_M`` (a base of each), ``OP_D`` (a base of A against a
gap) and ``OP_I`` (a gap against a base of B); the kernels produce these codes. The CIGAR reads A as the
reference, as in SAM: ``=`` bases match (their IUPAC sets intersect), ``X``
they do not, ``D`` a base of A is missing from B, ``I`` B has an extra base.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.sequences import DECODE_TABLE

#: Column operations: both bases; a base of A against '-'; '-' against a base of B.
OP_M, OP_D, OP_I = 0, 1, 2

_GAP = ord("-")


@dataclass(frozen=True)
class Alignment:
    """One optimal global alignment of A (matrix rows) and B (matrix columns).

    ``path`` holds the matrix cells the alignment walks through, (0, 0) to
    (len A, len B), one more than there are columns; the GUI draws it over the
    score heatmap.
    """

    aligned_a: str
    aligned_b: str
    cigar: str
    matches: int
    mismatches: int
    gaps: int
    #: One code per column: 0 '=', 1 'X', 2 'D', 3 'I' (``CIGAR_LETTERS[code]``).
    codes: np.ndarray
    path: np.ndarray
    #: Bases of the loaded records before A's and B's first (``Record.offset``): positions
    #: in the exports are in the records' coordinates; ``path`` stays in matrix cells.
    a_offset: int = 0
    b_offset: int = 0

    @property
    def columns(self) -> int:
        return len(self.aligned_a)

    @property
    def identity(self) -> float:
        """Matching columns / alignment columns (0 for an empty alignment)."""
        return self.matches / self.columns if self.columns else 0.0


CIGAR_LETTERS = "=XDI"


def build(a: np.ndarray, b: np.ndarray, ops: np.ndarray) -> Alignment:
    """The :class:`Alignment` of encoded ``a`` and ``b`` along the column operations ``ops``."""
    ops = np.ascontiguousarray(ops, dtype=np.uint8)
    takes_a = ops != OP_I
    takes_b = ops != OP_D
    ia = np.cumsum(takes_a) - 1
    ib = np.cumsum(takes_b) - 1
    if int(takes_a.sum()) != len(a) or int(takes_b.sum()) != len(b):
        raise RuntimeError("internal error: the traceback does not cover both sequences")
    ra = np.full(ops.shape[0], _GAP, dtype=np.uint8)
    rb = np.full(ops.shape[0], _GAP, dtype=np.uint8)
    ra[takes_a] = DECODE_TABLE[a[ia[takes_a]]]
    rb[takes_b] = DECODE_TABLE[b[ib[takes_b]]]
    aligned_a = ra.tobytes().decode("ascii")
    aligned_b = rb.tobytes().decode("ascii")
    codes = np.where(ops == OP_D, 2, np.where(ops == OP_I, 3, 0)).astype(np.uint8)
    both = takes_a & takes_b
    codes[both & ((a[ia] & b[ib]) == 0)] = 1
    path = np.zeros((ops.shape[0] + 1, 2), dtype=np.int64)
    path[1:, 0] = np.cumsum(takes_a)
    path[1:, 1] = np.cumsum(takes_b)
    return Alignment(aligned_a, aligned_b, cigar_of(codes), int((codes == 0).sum()),
                     int((codes == 1).sum()), int((codes >= 2).sum()), codes, path)


def cigar_of(codes: np.ndarray) -> str:
    """Run-length CIGAR of column codes (0 '=', 1 'X', 2 'D', 3 'I')."""
    if codes.shape[0] == 0:
        return ""
    cuts = np.flatnonzero(codes[1:] != codes[:-1]) + 1
    starts = np.concatenate(([0], cuts))
    lengths = np.diff(np.concatenate((starts, [codes.shape[0]])))
    return "".join(f"{n}{CIGAR_LETTERS[c]}" for n, c in zip(lengths.tolist(), codes[starts].tolist()))
