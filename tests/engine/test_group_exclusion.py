"""The group search's exclusivity filter (engine.primers.group_exclusion) never misses a hit
that the unfiltered edit search finds (IUPAC codes and assembly gaps included), and its
pigeonhole needs every one of its e + 1 pieces."""

from __future__ import annotations

import itertools

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import edit, gaps
from engine.jobs import drive
from engine.primers import group_exclusion as gx
from engine.sequences import Record, decode, encode, reverse_complement

ACGT = "ACGT"
IUPAC = "RYSWKMBDHVN"


def unfiltered(primers, records, e):
    """[record, primer]: the edit search at e edits, both strands, no filter."""
    job = edit.make_job([Record(str(i), p) for i, p in enumerate(primers)], records,
                        mode="search", k=e, strands="both", report="hits", align=False,
                        profile=False, backend="serial")
    found = drive(edit.iter_solve(job))
    out = np.zeros((len(records), len(primers)), dtype=bool)
    out[np.asarray(found.hits.record, dtype=np.int64),
        np.asarray(found.hits.pattern, dtype=np.int64)] = True
    return out


def mutate(rng, s: str, edits: int) -> str:
    out = list(s)
    for _ in range(edits):
        op, at = rng.integers(0, 3), int(rng.integers(0, len(out)))
        if op == 0:
            out[at] = ACGT[(ACGT.index(out[at]) + 1) % 4] if out[at] in ACGT else "A"
        elif op == 1 and len(out) > 1:
            del out[at]
        else:
            out.insert(at, ACGT[int(rng.integers(0, 4))])
    return "".join(out)


@settings(deadline=None)
@given(seed=st.integers(0, 2**32 - 1), e=st.integers(0, 3), ambiguous=st.integers(0, 6),
       gap=st.booleans(), length=st.integers(24, 30))
def test_filter_finds_what_the_edit_search_finds(seed, e, ambiguous, gap, length):
    rng = np.random.default_rng(seed)
    primers = ["".join(rng.choice(list(ACGT), length)) for _ in range(6)]
    texts = []
    for r in range(3):
        t = list("".join(rng.choice(list(ACGT), 400)))
        # plant some primers, some strands, within 0..e+1 edits (e + 1: not a hit)
        for p in primers[r::2]:
            site = mutate(rng, p if rng.integers(0, 2) else decode(reverse_complement(encode(p))),
                          int(rng.integers(0, e + 2)))
            at = int(rng.integers(0, len(t) - len(site)))
            t[at:at + len(site)] = site
        for _ in range(ambiguous):   # ambiguity codes, maybe inside a planted site
            t[int(rng.integers(0, len(t)))] = IUPAC[int(rng.integers(0, len(IUPAC)))]
        if gap:                      # an assembly gap, maybe over a planted site
            at = int(rng.integers(0, len(t) - 12))
            t[at:at + 12] = "N" * 12
        texts.append("".join(t))
    records = gaps.as_background([Record(f"r{i}", encode(t)) for i, t in enumerate(texts)], 10)
    codes = [encode(p) for p in primers]
    assert all(gx.usable(c, e) for c in codes)
    want = unfiltered(codes, records, e)
    got = gx.hits(codes, records, e, threads=2)
    np.testing.assert_array_equal(got, want)


def test_chunks_overlap_so_a_hit_across_a_chunk_edge_is_found(monkeypatch):
    rng = np.random.default_rng(7)
    primer = "".join(rng.choice(list(ACGT), 24))
    text = list("".join(rng.choice(list(ACGT), 300)))
    monkeypatch.setattr(gx, "CHUNK", 64)
    for at in range(40, 90):
        t = text.copy()
        t[at:at + 24] = mutate(np.random.default_rng(at), primer, 2)
        rec = [Record("r", encode("".join(t)))]
        want = unfiltered([encode(primer)], rec, 2)
        assert want.all()
        np.testing.assert_array_equal(gx.hits([encode(primer)], rec, 2), want)


def test_every_piece_counts():
    """e edits, one in each of e pieces, placed every way: with e + 1 pieces one stays exact
    and the hit is found; a filter of e pieces (piece count off by one) misses some of these
    placements (checked: the test sees the hit vanish when ``pieces`` gives one fewer)."""
    rng = np.random.default_rng(3)
    m, e = 18, 2
    primer = "".join(rng.choice(list(ACGT), m))
    flank = "".join(rng.choice(list(ACGT), 60))
    placements = list(itertools.combinations(range(m), e))
    texts = []
    for where in placements:
        s = list(primer)
        for p in where:
            s[p] = ACGT[(ACGT.index(s[p]) + 2) % 4]
        texts.append(flank + "".join(s) + flank)
    records = [Record(f"r{i}", encode(t)) for i, t in enumerate(texts)]
    got = gx.hits([encode(primer)], records, e)
    assert got.all()
    # The same placements against a filter of e pieces: some are missed, so the test above
    # would fail with one piece fewer.
    fewer = gx.pieces

    def one_fewer(m_, e_):
        return fewer(m_, e_ - 1)

    try:
        gx.pieces = one_fewer
        missed = ~gx.hits([encode(primer)], records, e)
    finally:
        gx.pieces = fewer
    assert missed.any()


def test_pieces_cover_the_primer_without_overlap():
    for m in range(1, 70):
        for e in range(0, 6):
            ps = gx.pieces(m, e)
            assert len(ps) == e + 1
            assert ps[0][0] == 0 and sum(n for _, n in ps) == m
            assert all(a + n == b for (a, n), (b, _) in zip(ps, ps[1:]))


def test_usable():
    assert gx.usable(encode("ACGT" * 5), 2)
    assert not gx.usable(encode("ACGTN" * 4), 2)       # an ambiguity code in the primer
    assert not gx.usable(encode("ACGT" * 4), 2)        # pieces of 5 < SEED_MIN
    assert not gx.usable(encode("ACGT" * 17), 0)       # longer than one Myers word


def windows(primers, records, e):
    gen = gx.iter_windows(primers, records, e)
    while True:
        try:
            next(gen)
        except StopIteration as stop:
            return stop.value


def site_rows(primers, records, settings, owner=None):
    """pcr's sites as sorted (primer, record, strand, start, end, edits, 3' edits) tuples;
    ``owner``: each record's index among the full records (windows)."""
    from engine.primers import pcr
    from engine.primers.pcr_columns import SITE_DTYPES
    from engine.slices import Meter

    prims = [Record(str(i), p) for i, p in enumerate(primers)]
    search = pcr.search_job(prims, records, settings.max_edits, backend="serial")
    job = pcr.sites_job(prims, records, settings, search)
    from engine.jobs import CancelToken

    sites = drive(pcr.iter_sites(job, Meter(job), CancelToken(), "sites"))
    cols = {c: np.asarray(getattr(sites, c)).tolist() for c in SITE_DTYPES}
    if owner is not None:
        cols["record"] = [int(owner[r]) for r in cols["record"]]
    return sorted(zip(*(cols[c] for c in SITE_DTYPES)))


@settings(deadline=None, max_examples=40)
@given(seed=st.integers(0, 2**32 - 1), j=st.integers(0, 2), ambiguous=st.integers(0, 4),
       gap=st.booleans())
def test_pcr_in_the_seeded_windows_finds_the_sites_of_the_whole_records(seed, j, ambiguous,
                                                                         gap):
    """Inclusivity reads only iter_windows' windows (engine.primers.group): the sites there,
    mapped back to their records, are the sites of the whole records."""
    from engine.primers import pcr

    rng = np.random.default_rng(seed)
    primers = ["".join(rng.choice(list(ACGT), 20)) for _ in range(4)]
    texts = []
    for _ in range(2):
        t = list("".join(rng.choice(list(ACGT), 500)))
        for p in primers:
            for _ in range(2):
                site = mutate(rng, p if rng.integers(0, 2) else
                              decode(reverse_complement(encode(p))), int(rng.integers(0, j + 2)))
                at = int(rng.integers(0, len(t) - len(site)))
                t[at:at + len(site)] = site
        for _ in range(ambiguous):
            t[int(rng.integers(0, len(t)))] = IUPAC[int(rng.integers(0, len(IUPAC)))]
        if gap:
            at = int(rng.integers(0, len(t) - 12))
            t[at:at + 12] = "N" * 12
        texts.append("".join(t))
    records = gaps.as_background([Record(f"r{i}", encode(t)) for i, t in enumerate(texts)], 10)
    codes = [encode(p) for p in primers]
    s = pcr.PcrSettings(max_edits=j, max_3prime_edits=0, three_prime_window=3, min_product=1,
                        max_product=1000)
    whole = site_rows(codes, records, s)
    where, owner = gx.regions(records, windows(codes, records, j))
    seeded = site_rows(codes, where, s, owner) if where else []
    assert seeded == whole


def test_windows_grow_when_a_chunk_holds_more(monkeypatch):
    rng = np.random.default_rng(11)
    primer = "".join(rng.choice(list(ACGT), 20))
    text = "".join(mutate(rng, primer, 1) + "".join(rng.choice(list(ACGT), 60))
                   for _ in range(30))
    records = [Record("r", encode(text))]
    roomy = windows([encode(primer)], records, 1)
    monkeypatch.setattr(gx, "WINDOWS_START", 1)
    tight = windows([encode(primer)], records, 1)
    assert len(roomy[0][0]) > 1
    np.testing.assert_array_equal(roomy[0][0], tight[0][0])
    np.testing.assert_array_equal(roomy[0][1], tight[0][1])
