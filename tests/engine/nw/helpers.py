"""Shared pieces of the nw tests: every variant x backend, small tiles, result checks."""

from __future__ import annotations

import contextlib
from unittest import mock

from engine import config, nw
from engine.nw.reference import cigar_from_strings, rescore
from engine.sequences import Record, decode

COMBOS = [(v, b) for v in ("rows", "diagonal", "prefix") for b in ("serial", "multicore")]


@contextlib.contextmanager
def small_pieces(full_matrix_cells: int = 48, snapshot_side: int | None = None):
    """Tiny tiles, bands and Hirschberg base cases, so small inputs take every code path
    (several wavefront tiles, several bands, Hirschberg splits, downsampled snapshots)."""
    values = dict(NW_TILE_ROWS=5, NW_TILE_COLUMNS=7, NW_MIN_TILE=2, NW_FIRST_SLICE_CELLS=40,
                  NW_PREFIX_LANES=3,
                  NW_FULL_MATRIX_CELLS=full_matrix_cells)
    if snapshot_side is not None:
        values["SNAPSHOT_MAX_SIDE"] = snapshot_side
    with mock.patch.multiple(config, **values):
        yield


def rec(codes, name="s") -> Record:
    return Record(name, codes)


def check_alignment(result, a_codes, b_codes, match, mismatch, gap):
    """The alignment is valid, complete, re-scores to the score and has a matching CIGAR."""
    al = result.alignment
    assert al is not None
    assert al.aligned_a.replace("-", "") == decode(a_codes)
    assert al.aligned_b.replace("-", "") == decode(b_codes)
    assert len(al.aligned_a) == len(al.aligned_b)
    assert rescore(al.aligned_a, al.aligned_b, match, mismatch, gap) == result.score
    assert al.cigar == cigar_from_strings(al.aligned_a, al.aligned_b)
    assert al.matches + al.mismatches + al.gaps == al.columns
    assert al.identity == al.matches / al.columns
    path = al.path
    assert tuple(path[0]) == (0, 0) and tuple(path[-1]) == (len(a_codes), len(b_codes))
    steps = path[1:] - path[:-1]
    assert ((steps == 0) | (steps == 1)).all() and (steps.sum(axis=1) >= 1).all()


def solve_all(a_codes, b_codes, match=1, mismatch=0, gap=-1, traceback=True, **options):
    """{(variant, backend): result} for every combination."""
    return {(v, b): nw.solve(rec(a_codes, "a"), rec(b_codes, "b"), match=match, mismatch=mismatch,
                             gap=gap, variant=v, backend=b, traceback=traceback, threads=2,
                             **options)
            for v, b in COMBOS}
