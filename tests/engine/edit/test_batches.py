"""Several patterns and records, both strands, and zipped (query, region) batches, against the oracle."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import edit
from engine.edit import reference as ref
from engine.sequences import Record, decode, reverse_complement
from tests.engine.edit._support import combos, tiny_tunables
from tests.strategies import codes, examples


def _expected_hits(patterns, texts, k, strands, pairs):
    """Oracle hits in the result's order: pattern, record, end, then '+' before '-'."""
    out = []
    for p, r in pairs:
        for strand in strands:
            codes_ = patterns[p].codes if strand == "+" else reverse_complement(patterns[p].codes)
            for start, end, d, cigar in ref.search_hits(list(codes_), list(texts[r].codes), k):
                window = texts[r].codes[start - 1:end]
                matched = decode(window if strand == "+" else reverse_complement(window))
                out.append((p, r, end, strand != "+",
                            (patterns[p].id, texts[r].id, strand, start, end, d, cigar, matched)))
    return [row[-1] for row in sorted(out, key=lambda row: row[:4])]


def _got(res):
    return [(h.pattern_id, h.record_id, h.strand, h.start, h.end, h.distance, h.cigar, h.matched)
            for h in res.hits]


records = st.lists(codes(min_size=1, max_size=70), min_size=1, max_size=3)


@settings(max_examples=examples(25))
@given(records, records, st.sampled_from((0, 1, 2)), st.sampled_from(("forward", "both")))
def test_all_pairs_both_strands(pats, txts, k, strands):
    patterns = [Record(f"p{i}", c) for i, c in enumerate(pats)]
    texts = [Record(f"t{i}", c) for i, c in enumerate(txts)]
    pairs = [(p, r) for p in range(len(patterns)) for r in range(len(texts))]
    want = _expected_hits(patterns, texts, k, ("+", "-") if strands == "both" else ("+",), pairs)
    with tiny_tunables():
        for variant, backend, flags in combos(max(len(p) for p in patterns)):
            res = edit.solve(patterns, texts, mode="search", k=k, strands=strands, variant=variant,
                             backend=backend, flags=flags)
            assert _got(res) == want, (variant, backend, flags)


@settings(max_examples=examples(25))
@given(st.lists(st.tuples(codes(min_size=1, max_size=70), codes(min_size=1, max_size=90)),
                min_size=1, max_size=4),
       st.sampled_from((None, 0, 3)))
def test_zipped_batch_best_and_global(batch, k):
    queries = [Record(f"q{i}", q) for i, (q, _) in enumerate(batch)]
    regions = [Record(f"r{i}", r) for i, (_, r) in enumerate(batch)]
    want_best = []
    for q, r in zip(queries, regions):
        found = ref.best_hit(list(q.codes), list(r.codes), k)
        if found:
            want_best.append((q.id, r.id) + found)
    want_global = []
    for q, r in zip(queries, regions):
        d = ref.global_distance(list(q.codes), list(r.codes))
        want_global.append((q.id, r.id, d if k is None or d <= k else None))
    with tiny_tunables():
        for variant, backend, flags in combos(max(len(q) for q in queries)):
            res = edit.verify(queries, regions, k, variant=variant, backend=backend, flags=flags)
            got = [(h.pattern_id, h.record_id, h.start, h.end, h.distance, h.cigar) for h in res.hits]
            assert got == want_best, (variant, backend, flags)
            res = edit.solve(queries, regions, k=k, pairing="zip", variant=variant, backend=backend,
                             flags=flags)
            got = [(d.pattern_id, d.record_id, d.distance) for d in res.distances]
            assert got == want_global, (variant, backend, flags)


def test_long_global_alignment_with_checkpoints():
    """700 x 690 with tiny tunables: the traceback recomputes sqrt-spaced segments."""
    rng = np.random.default_rng(3)
    a = rng.choice(np.array([1, 2, 4, 8], np.uint8), 700)
    b = a.copy()
    b[::37] = 15 - b[::37]  # some mismatches, some IUPAC codes
    b = np.delete(b, np.arange(5, 700, 91))
    d = ref.global_distance(list(a), list(b))
    want = ref.cigar(list(a), list(b))
    with tiny_tunables():
        for variant, backend, flags in combos(700):
            res = edit.solve([Record("a", a)], [Record("b", b)], align=True, variant=variant,
                             backend=backend, flags=flags)
            got = (res.distances[0].distance, res.distances[0].cigar)
            assert got == (d, want), (variant, backend, flags)


def test_hits_on_minus_strand_use_forward_coordinates():
    text = Record("t", np.array([8, 8, 1, 2, 4, 8, 1, 1], np.uint8))  # TTACGTAA
    primer = Record("p", np.array([1, 2, 4, 8], np.uint8))            # ACGT, its own reverse complement
    res = edit.solve([primer], [text], mode="search", k=0, strands="both", backend="serial")
    assert [(h.strand, h.start, h.end, h.matched) for h in res.hits] == \
        [("+", 3, 6, "ACGT"), ("-", 3, 6, "ACGT")]
    gat = Record("g", np.array([4, 1, 8], np.uint8))                  # GAT; reverse complement ATC
    text2 = Record("t2", np.array([2, 1, 8, 2, 4], np.uint8))        # CATCG
    res = edit.solve([gat], [text2], mode="search", k=0, strands="both", backend="serial")
    assert [(h.strand, h.start, h.end, h.cigar, h.matched) for h in res.hits] == \
        [("-", 2, 4, "3=", "GAT")]
