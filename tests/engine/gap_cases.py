"""Shared cases and oracles of the assembly-gap tests (issue #28): the CPU tests
(tests/engine/test_gaps.py) and the CUDA simulator's (tests/engine/gaps_cuda_cases.py).

The oracle of every family: the same inputs with each gap run replaced by a record break
(engine.gaps.split_at_gaps: the pieces keep their id and place), answered by the family's
reference (kdiff_reference, kmismatch_reference, edit.reference.search_hits). With k below
gap_min, a match can neither cross a gap nor gain from one, so the two must agree.
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from engine import gaps
from engine.edit.reference import search_hits
from engine.kdiff.reference import kdiff_reference
from engine.kmismatch.reference import kmismatch_reference
from engine.sequences import Record, reverse_complement

BASES = np.array([1, 2, 4, 8], dtype=np.uint8)


@st.composite
def gapped(draw, gap_min: int, pieces=(1, 4), piece_len=(0, 40)):
    """Encoded sequence: pieces of ACGT (a few IUPAC codes and short N runs among them) joined
    by N runs of gap_min..gap_min+12; it may begin or end with a gap."""
    out = []
    count = draw(st.integers(*pieces))
    if draw(st.booleans()):
        out.append(np.full(draw(st.integers(gap_min, gap_min + 12)), 15, np.uint8))
    for i in range(count):
        n = draw(st.integers(*piece_len))
        seed = draw(st.integers(0, 2**32 - 1))
        rng = np.random.default_rng(seed)
        piece = BASES[rng.integers(0, 4, n)]
        if n and draw(st.booleans()):  # some IUPAC codes and an N run shorter than a gap
            piece[rng.integers(0, n)] = rng.integers(1, 16)
            at = int(rng.integers(0, n))
            piece[at:at + gap_min - 1] = 15
        out.append(piece)
        if i < count - 1 or draw(st.booleans()):
            out.append(np.full(draw(st.integers(gap_min, gap_min + 12)), 15, np.uint8))
    codes = np.concatenate(out) if out else BASES[:1].copy()
    return codes if codes.size else BASES[:1].copy()


def planted(rng, background: np.ndarray, n: int) -> np.ndarray:
    """A target of ``n`` bases, mostly windows copied from the background's ACGT with a few
    substitutions (so candidates are longer than k and near-matches are common)."""
    plain = background[np.isin(background, BASES)]
    out = BASES[rng.integers(0, 4, n)]
    if plain.size > 8:
        for at in range(0, n, 12):
            lo = int(rng.integers(0, plain.size - 8))
            part = plain[lo:lo + min(12, n - at)].copy()
            part[rng.integers(0, part.size)] = BASES[rng.integers(0, 4)]
            out[at:at + part.size] = part
    return out


# -- oracles over the gaps as record breaks ------------------------------------------------

def kdiff_expected(target, background, k: int, gap_min: int, strands: str = "both"):
    """(target id, start, end) of every candidate, 1-based, with each gap a record break."""
    betas = [p.codes for p in gaps.split_at_gaps(background, gap_min)]
    if strands == "both":
        betas += [reverse_complement(b) for b in betas]
    out = []
    for piece in gaps.split_at_gaps(target, gap_min):
        out += [(piece.id, piece.offset + r + 1, piece.offset + r + length)
                for r, length in kdiff_reference(piece.codes, betas, k)]
    return sorted(out)


def kmismatch_expected(text, patterns, k: int, gap_min: int, strands: str = "both"):
    """(pattern id, record id, start, strand, mismatches) of every hit, gaps as breaks."""
    pieces = gaps.split_at_gaps(text, gap_min)
    hits = kmismatch_reference([p.codes for p in pieces], [p.codes for p in patterns], k, strands)
    return sorted((patterns[pi].id, pieces[r].id, pieces[r].offset + s + 1, "+-"[st], d)
                  for r, s, pi, st, d in hits)


def edit_expected(patterns, text, k: int, gap_min: int, strands: str = "both"):
    """(pattern id, record id, start, end, strand, distance) of every search hit, gaps as breaks."""
    out = []
    for piece in gaps.split_at_gaps(text, gap_min):
        for pattern in patterns:
            oriented = [("+", pattern.codes)]
            if strands == "both":
                oriented.append(("-", reverse_complement(pattern.codes)))
            for strand, query in oriented:
                for s, e, d, _ in search_hits(list(query), list(piece.codes), k):
                    out.append((pattern.id, piece.id, piece.offset + s, piece.offset + e, strand, d))
    return sorted(out)


def kdiff_rows(result):
    return sorted((c.target_id, c.start, c.end) for c in result.candidates)


def kmismatch_rows(result):
    return sorted((h.pattern_id, h.record_id, h.start, h.strand, h.mismatches)
                  for h in result.hits)


def edit_rows(result):
    return sorted((h.pattern_id, h.record_id, h.start, h.end, h.strand, h.distance)
                  for h in result.hits)


def records(codes: np.ndarray, name: str) -> list[Record]:
    return [Record(name, codes)]
