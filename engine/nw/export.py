"""nw writers, shared by the CLI and the GUI: EMBOSS-style pairwise text, a CSV of columns, JSON.

Pairwise text follows EMBOSS needle's ``pair`` format: a ``#`` header with the
lengths, identity, gaps and score, then blocks of 60 columns. Each block shows
A, a markup line and B; sequence lines carry the 1-based positions of their
first and last residue (when a line holds only gaps, both numbers are the
position before it, as EMBOSS prints them). Markup: ``|`` for a match (the
IUPAC base sets intersect), ``.`` for a mismatch, a space for a gap.

The CSV has one row per alignment column: ``column,a_pos,b_pos,a,b,op`` with
1-based positions (empty where the column holds a gap) and ``op`` one of
``= X D I`` (A as the reference: D is a gap in B, I a gap in A).
"""

from __future__ import annotations

import csv
from typing import Iterator

import numpy as np

from engine.nw.alignment import CIGAR_LETTERS, Alignment

CSV_COLUMNS = ("column", "a_pos", "b_pos", "a", "b", "op")

#: Layouts of :func:`write_csv`: the CSV of alignment columns, or the pairwise text.
LAYOUTS = ("columns", "pairwise")


def _positions(aligned: str, offset: int = 0) -> np.ndarray:
    """1-based residue number of every column (the previous number at gaps), plus ``offset``."""
    return offset + np.cumsum(np.frombuffer(aligned.encode("ascii"), dtype=np.uint8) != ord("-"))


def column_rows(alignment: Alignment) -> Iterator[tuple]:
    """Rows of the column CSV, in :data:`CSV_COLUMNS` order."""
    pa = _positions(alignment.aligned_a, alignment.a_offset)
    pb = _positions(alignment.aligned_b, alignment.b_offset)
    for k, (x, y, code) in enumerate(zip(alignment.aligned_a, alignment.aligned_b,
                                         alignment.codes.tolist())):
        yield (k + 1, "" if x == "-" else int(pa[k]), "" if y == "-" else int(pb[k]), x, y,
               CIGAR_LETTERS[code])


def write_columns_csv(alignment: Alignment, fh) -> None:
    writer = csv.writer(fh, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    writer.writerows(column_rows(alignment))


def markup(alignment: Alignment) -> str:
    """The match line: '|' match, '.' mismatch, ' ' gap."""
    table = np.frombuffer(b"|.  ", dtype=np.uint8)
    return table[alignment.codes].tobytes().decode("ascii")


def _percent(count: int, total: int) -> str:
    return f"{count}/{total} ({100.0 * count / total if total else 0.0:.1f}%)"


def pairwise_text(alignment: Alignment, *, a_id: str, b_id: str, score: int, match: int,
                  mismatch: int, gap: int, width: int = 60) -> str:
    """The alignment as EMBOSS ``pair`` text (header, then blocks of ``width`` columns)."""
    cols = alignment.columns
    lines = [
        "########################################",
        "# Program: primerscope nw (Needleman-Wunsch, linear gaps)",
        "########################################",
        "",
        "#=======================================",
        "#",
        "# Aligned_sequences: 2",
        f"# 1: {a_id}",
        f"# 2: {b_id}",
        f"# Scores: match {match}, mismatch {mismatch}, gap {gap} per column "
        "(IUPAC codes match when their base sets intersect)",
        "#",
        f"# Length: {cols}",
        f"{'# Identity:':<16}{_percent(alignment.matches, cols)}",
        f"{'# Gaps:':<16}{_percent(alignment.gaps, cols)}",
        f"# Score: {score}",
        "#",
        "#=======================================",
        "",
    ]
    pa = _positions(alignment.aligned_a, alignment.a_offset)
    pb = _positions(alignment.aligned_b, alignment.b_offset)
    bars = markup(alignment)

    def sequence_line(name: str, aligned: str, pos: np.ndarray, lo: int, hi: int) -> str:
        before = int(pos[lo - 1]) if lo else int(pos[0]) - (aligned[0] != "-")
        end = int(pos[hi - 1])
        start = before + 1 if end > before else before
        return f"{name[:13]:<13} {start:>6} {aligned[lo:hi]} {end:>6}"

    for lo in range(0, cols, width):
        hi = min(cols, lo + width)
        lines += [sequence_line(a_id, alignment.aligned_a, pa, lo, hi), " " * 21 + bars[lo:hi],
                  sequence_line(b_id, alignment.aligned_b, pb, lo, hi), ""]
    lines += ["", "#---------------------------------------",
              "#---------------------------------------", ""]
    return "\n".join(lines)


def result_text(result) -> str:
    """The pairwise text of a finished :class:`engine.nw.NwResult` with an alignment."""
    sc = result.scores
    return pairwise_text(result.alignment, a_id=result.a_id, b_id=result.b_id, score=result.score,
                         match=sc.match, mismatch=sc.mismatch, gap=sc.gap)


def write_csv(result, fh, *, layout: str = "columns") -> None:
    """The alignment of a finished result in ``layout`` (one of :data:`LAYOUTS`)."""
    if layout == "columns":
        write_columns_csv(result.alignment, fh)
    elif layout == "pairwise":
        fh.write(result_text(result))
    else:
        raise ValueError(f"layout must be one of {', '.join(LAYOUTS)}, got {layout!r}")


def to_json(result) -> dict:
    al = result.alignment
    return {"a_id": result.a_id, "b_id": result.b_id, "match": result.scores.match,
            "mismatch": result.scores.mismatch, "gap": result.scores.gap, "score": result.score,
            "aligned_a": al.aligned_a, "aligned_b": al.aligned_b, "cigar": al.cigar,
            "identity": al.identity}
