"""Every variant x backend against edlib and RapidFuzz on real DNA from resources/demo.

edlib's traceback prefers I, then D, then the diagonal, and reports the
smallest start, as the edit family does; so distances, ends, starts and CIGARs
must all agree. IUPAC codes are given to edlib as extra equalities (every pair
of codes whose base sets intersect).
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import edit
from engine.edit import reference as ref
from engine.sequences import IUPAC_CODES, Record, decode, reverse_complement
from tests.engine.edit._support import combos
from tests.strategies import codes, examples, mutate

edlib = pytest.importorskip("edlib")

EQUAL = [(a, b) for a, b in itertools.product(IUPAC_CODES, repeat=2)
         if a != b and IUPAC_CODES[a] & IUPAC_CODES[b]]


def _edlib(query, target, mode, k=-1):
    return edlib.align(decode(query), decode(target), mode=mode, task="path", k=k,
                       additionalEqualities=EQUAL)


@pytest.fixture(scope="module")
def reads(ecoli_record):
    """60 reads of 150 bp with up to 12 edits, each with its true region (+-30) or a decoy."""
    rng = np.random.default_rng(7)
    genome, k = ecoli_record.codes, 30
    queries, regions = [], []
    for q in range(60):
        at = int(rng.integers(k, 1_000_000))
        read = mutate(rng, genome[at:at + 150], int(rng.integers(0, 13)))
        start = at - k if q % 3 else int(rng.integers(0, 1_000_000))
        queries.append(Record(f"r{q}", read))
        regions.append(Record(f"c{q}", genome[start:start + 150 + 2 * k]))
    return queries, regions, k


def test_read_verification_matches_edlib(reads):
    queries, regions, k = reads
    want = []
    for q, r in zip(queries, regions):
        found = _edlib(q.codes, r.codes, "HW", k)
        if found["editDistance"] >= 0:
            s, e = found["locations"][0]
            want.append((q.id, s + 1, e + 1, found["editDistance"], found["cigar"]))
    assert 20 <= len(want) < 60
    for variant, backend, flags in combos(150):
        res = edit.verify(queries, regions, k, variant=variant, backend=backend, flags=flags)
        got = [(h.pattern_id, h.start, h.end, h.distance, h.cigar) for h in res.hits]
        assert got == want, (variant, backend, flags)


def test_primer_search_in_lambda_matches_edlib(lambda_record):
    rng = np.random.default_rng(11)
    text = lambda_record
    primers = []
    for p in range(4):
        at = int(rng.integers(0, len(text) - 30))
        primers.append(Record(f"p{p}", mutate(rng, text.codes[at:at + 22], p % 3)))
    reference = None
    for variant, backend, flags in combos(30):
        res = edit.solve(primers, [text], mode="search", k=3, strands="both", variant=variant,
                         backend=backend, flags=flags)
        got = [(h.pattern_id, h.strand, h.start, h.end, h.distance, h.cigar) for h in res.hits]
        if reference is None:
            reference = got
            for primer in primers:
                for strand in "+-":
                    query = primer.codes if strand == "+" else reverse_complement(primer.codes)
                    found = _edlib(query, text.codes, "HW", 3)
                    mine = [g for g in got if g[0] == primer.id and g[1] == strand]
                    if found["editDistance"] < 0:
                        assert not mine
                        continue
                    best = min(g[4] for g in mine)
                    assert best == found["editDistance"]
                    assert [(g[2], g[3], g[5]) for g in mine if g[4] == best][:1] == \
                        [(found["locations"][0][0] + 1, found["locations"][0][1] + 1,
                          found["cigar"] if strand == "+" else ref.reverse_cigar(found["cigar"]))]
                    assert sorted(g[3] for g in mine if g[4] == best) == \
                        sorted(e + 1 for _, e in found["locations"])
            assert any(g[4] == 0 for g in got)
        assert got == reference, (variant, backend, flags)


def test_msx2_homologs_global_match_edlib_and_rapidfuzz(msx2_records):
    from rapidfuzz.distance import Levenshtein

    a = list(msx2_records[:-1])
    b = list(msx2_records[1:])
    want = []
    for x, y in zip(a, b):
        found = _edlib(x.codes, y.codes, "NW")
        want.append((found["editDistance"], found["cigar"]))
        if 15 not in x.codes and 15 not in y.codes:  # RapidFuzz compares letters, not base sets
            assert Levenshtein.distance(decode(x.codes), decode(y.codes)) == found["editDistance"]
    for variant, backend, flags in combos(3000):
        res = edit.solve(a, b, pairing="zip", align=True, variant=variant, backend=backend,
                         flags=flags)
        assert [(d.distance, d.cigar) for d in res.distances] == want, (variant, backend, flags)


@settings(max_examples=examples(30))
@given(codes(min_size=1, max_size=140), codes(min_size=1, max_size=160), st.sampled_from((2, 8)))
def test_iupac_codes_match_edlib_with_equalities(query, target, k):
    found = _edlib(query, target, "NW")
    res = edit.solve([Record("q", query)], [Record("t", target)], align=True, backend="serial")
    assert (res.distances[0].distance, res.distances[0].cigar) == (found["editDistance"], found["cigar"])
    found = _edlib(query, target, "HW", k)
    res = edit.verify([Record("q", query)], [Record("t", target)], k, backend="serial")
    if found["editDistance"] >= 0 and found["locations"][0][1] < 0:
        # edlib may end an occurrence before the text's first symbol (all of the query
        # inserted, when m <= k); hits here end on a text symbol. Both cost m then.
        assert res.hits[0].distance == found["editDistance"] == len(query)
        return
    if found["editDistance"] < 0:
        assert res.hits == ()
    else:
        s, e = found["locations"][0]
        h = res.hits[0]
        assert (h.start, h.end, h.distance, h.cigar) == (s + 1, e + 1, found["editDistance"],
                                                         found["cigar"])
