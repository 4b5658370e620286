"""Several patterns and records, both strands, and zipped (query, region) batches (as Records and
as columns, engine.sequences.SeqColumns), against the oracle."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import edit
from engine.columns import Ids
from engine.edit import reference as ref
from engine.sequences import Record, SeqColumns, SequenceError, decode, encode, reverse_complement
from tests.engine.edit._support import combos, tiny_tunables
from tests.strategies import codes, examples, mutate, random_codes


def _expected_hits(patterns, texts, k, strands, pairs):
    """Oracle hits in the result's order: pattern, record, end, then '+' before '-'."""
    out = []
    for p, r in pairs:
        for strand in strands:
            codes_ = patterns[p].codes if strand == "+" else reverse_complement(patterns[p].codes)
            for start, end, d, cigar in ref.search_hits(list(codes_), list(texts[r].codes), k):
                window = texts[r].codes[start - 1:end]
                matched = decode(window if strand == "+" else reverse_complement(window))
                cigar = cigar if strand == "+" else ref.reverse_cigar(cigar)
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


# -- the columnar batch (engine.sequences.SeqColumns) --------------------------------------------
def _best_rows(res):
    return [(h.pattern_id, h.record_id, h.start, h.end, h.distance, h.cigar, h.matched)
            for h in res.hits]


def _oracle_rows(pairs, k):
    """Oracle best hits of (query id, codes, region id, codes) pairs, in pair order."""
    out = []
    for qid, q, rid, r in pairs:
        found = ref.best_hit(list(q), list(r), k)
        if found:
            start, end = found[0], found[1]
            out.append((qid, rid) + found + (decode(r[start - 1:end]),))
    return out


def _forms(queries, regions):
    """One batch three ways, with its pairs: Records; columns end to end (one buffer and
    offsets each); ranges of shared buffers (regions backwards in one text with spacers,
    each distinct query stored once and named per pair) plus pair 0 once more and query 0
    less its last symbol (a range of the same start) against region 0."""
    n = len(queries)
    names_q, names_r = [f"q{i}" for i in range(n)], [f"r{i}" for i in range(n)]
    pairs = list(zip(names_q, queries, names_r, regions))
    records = ([Record(a, q) for a, q in zip(names_q, queries)],
               [Record(b, r) for b, r in zip(names_r, regions)])
    offsets = (SeqColumns.from_offsets(np.concatenate(queries), _offsets(queries), names_q),
               SeqColumns.from_offsets(np.concatenate(regions), _offsets(regions), names_r))
    spacer = np.array([15, 1], dtype=np.uint8)  # (never read: ranges stop before it)
    text, starts = [], []
    at = 0
    for r in reversed(regions):
        starts.append(at)
        text += [r, spacer]
        at += len(r) + 2
    starts = np.array(starts[::-1] + starts[-1:] * 2)
    ends = starts + np.array([len(r) for r in regions] + [len(regions[0])] * 2)
    distinct = {}
    for q in queries:
        distinct.setdefault(q.tobytes(), len(distinct))
    stored = [np.frombuffer(b, dtype=np.uint8) for b in distinct]
    q_offs = _offsets(stored)
    slot = np.array([distinct[q.tobytes()] for q in queries] + [distinct[queries[0].tobytes()]] * 2)
    q_starts, q_ends = q_offs[slot], q_offs[slot + 1]
    q_ends[-1] -= len(queries[0]) > 1
    ranges = (SeqColumns.from_ranges(np.concatenate(stored), q_starts, q_ends,
                                     names_q + ["q0", "q0-"]),
              SeqColumns.from_ranges(np.concatenate(text), starts, ends, names_r + ["r0", "r0"]))
    short = queries[0][:max(1, len(queries[0]) - 1)]
    return {"records": (records, pairs), "offsets": (offsets, pairs),
            "ranges": (ranges, pairs + pairs[:1] + [("q0-", short, "r0", regions[0])])}


def _offsets(parts):
    return np.concatenate(([0], np.cumsum([len(p) for p in parts]))).astype(np.int64)


@settings(max_examples=examples(15))
@given(st.lists(st.tuples(codes(min_size=1, max_size=70), codes(min_size=1, max_size=90)),
                min_size=1, max_size=4),
       st.sampled_from((None, 0, 1, 3, 200)))
def test_columns_verify_as_records_do_and_as_the_oracle(batch, k):
    """Every CPU variant and backend: the columnar batch (end to end, or ranges of shared
    buffers with a query read once for several pairs) gives the oracle's best hits, with
    starts, CIGARs and matched text, as the Records do; zipped global distances too."""
    forms = _forms([q for q, _ in batch], [r for _, r in batch])
    want = {name: _oracle_rows(pairs, k) for name, (_, pairs) in forms.items()}
    distances = {name: [(qid, rid, d if k is None or d <= k else None) for qid, q, rid, r in pairs
                        for d in [ref.global_distance(list(q), list(r))]]
                 for name, (_, pairs) in forms.items()}
    with tiny_tunables():
        for variant, backend, flags in combos(max(len(q) for q, _ in batch)):
            opts = dict(variant=variant, backend=backend, flags=flags)
            for name, ((queries, regions), _) in forms.items():
                assert _best_rows(edit.verify(queries, regions, k, **opts)) == want[name], \
                    (name, variant, backend, flags)
                res = edit.solve(queries, regions, k=k, pairing="zip", **opts)
                assert [(d.pattern_id, d.record_id, d.distance) for d in res.distances] == \
                    distances[name], (name, variant, backend, flags)


def test_columns_real_reads_against_candidate_regions(lambda_record):
    """Reads of 17 to 129 bases from lambda with edits and IUPAC codes, each against three
    candidate regions of the genome (its origin, a neighbour, one far off): the columnar
    batch (regions as ranges of the genome, each read stored once) equals the Records batch
    and the oracle, serial and multicore, with and without alignments."""
    rng = np.random.default_rng(16)
    genome = lambda_record.codes
    reads, starts, ends, read_of = [], [], [], []
    for i, m in enumerate((17, 63, 64, 65, 100, 129, 64)):
        origin = int(rng.integers(200, len(genome) - 400))
        read = mutate(rng, genome[origin:origin + m], int(rng.integers(0, 5)))[:m]
        read[rng.random(len(read)) < 0.03] = 15  # N
        reads.append(read)
        for lo in (origin - 10, origin + m // 2, int(rng.integers(0, len(genome) - 300))):
            starts.append(lo)
            ends.append(lo + m + m // 5 + 20)
            read_of.append(i)
    read_of = np.array(read_of)
    offs = _offsets(reads)
    queries = SeqColumns.from_ranges(np.concatenate(reads), offs[read_of], offs[read_of + 1],
                                     Ids.numbered("read", len(read_of), read_of))
    regions = SeqColumns.from_ranges(genome, starts, ends, "cand")
    q_records = [Record(f"read{i}", reads[i]) for i in read_of]
    r_records = [Record(f"cand{j}", genome[a:b]) for j, (a, b) in enumerate(zip(starts, ends))]
    pairs = [(q.id, q.codes, r.id, r.codes) for q, r in zip(q_records, r_records)]
    k = 12
    want = _oracle_rows(pairs, k)
    assert 7 <= len(want) < len(pairs)
    for variant in ("myers-blocked", "banded", "dp"):
        for backend in ("serial", "multicore"):
            opts = dict(variant=variant, backend=backend)
            got = edit.verify(queries, regions, k, **opts)
            assert _best_rows(got) == want, (variant, backend)
            assert _best_rows(edit.verify(q_records, r_records, k, **opts)) == want
            bare = edit.verify(queries, regions, k, align=False, **opts).hits
            assert isinstance(bare.pattern_ids, Ids) and isinstance(bare.record_ids, Ids)
            assert (bare.record.tolist(), bare.end.tolist(), bare.distance.tolist()) == (
                got.hits.record.tolist(), got.hits.end.tolist(), got.hits.distance.tolist())


def test_columns_search_all_records_and_hits_mode():
    """Columns are any job's input: every hit of each pattern (both strands) in texts given
    as ranges of one buffer, and a zipped batch's every hit within k, as from Records."""
    rng = np.random.default_rng(5)
    text = random_codes(rng, 300, 0.03)
    pats = [text[40:60].copy(), mutate(rng, text[200:231], 2), random_codes(rng, 9)]
    patterns = SeqColumns.from_offsets(np.concatenate(pats), _offsets(pats), "p")
    texts = SeqColumns.from_ranges(text, [0, 150, 30], [160, 300, 90], ["a", "b", "c"])
    as_records = ([Record(f"p{i}", p) for i, p in enumerate(pats)],
                  [Record(n, text[a:b]) for n, a, b in zip("abc", (0, 150, 30), (160, 300, 90))])
    for backend in ("serial", "multicore"):
        got = edit.solve(patterns, texts, mode="search", k=2, strands="both", backend=backend)
        want = edit.solve(*as_records, mode="search", k=2, strands="both", backend=backend)
        assert len(want.hits) > 3 and list(got.hits) == list(want.hits)
        assert [p.values.tolist() for p in got.profiles] == [p.values.tolist() for p in want.profiles]
        got = edit.solve(patterns, texts, mode="search", k=3, pairing="zip", backend=backend)
        want = edit.solve(*as_records, mode="search", k=3, pairing="zip", backend=backend)
        assert len(want.hits) and list(got.hits) == list(want.hits)


@pytest.mark.parametrize("make,message", [
    (lambda c: SeqColumns.from_offsets(c, [0, 3, 9]), r"codes \(8\), got 0..9"),
    (lambda c: SeqColumns.from_offsets(c, [1, 3, 8]), "offsets must run from 0"),
    (lambda c: SeqColumns.from_offsets(c, [0, 5, 3, 8]), r"offsets\[2\] is below the one before"),
    (lambda c: SeqColumns.from_offsets(c, [[0, 8]]), "offsets must be a 1-D integer array"),
    (lambda c: SeqColumns.from_offsets(c, [0.0, 8.0]), "offsets must be a 1-D integer array"),
    (lambda c: SeqColumns.from_ranges(c, [0, 2], [4]), r"1 ends for 2 sequences \(one each\)"),
    (lambda c: SeqColumns.from_ranges(c, [0, 6], [4, 9]), r"sequence 1 \('seq1'\): \[6, 9\) is not"),
    (lambda c: SeqColumns.from_ranges(c, [3], [2]), "is not a range"),
    (lambda c: SeqColumns.from_ranges(c, [-1], [2]), "is not a range"),
    (lambda c: SeqColumns.from_ranges(c, [0], [2], ["a", "b"]), "2 ids for 1 sequences"),
    (lambda c: SeqColumns.from_ranges(c, [0], [2], shifts=[0, 1]), "2 shifts for 1 sequences"),
    (lambda c: SeqColumns.from_offsets(c, []), "offsets must run from 0 .* got nothing"),
    (lambda c: SeqColumns.from_offsets(c.astype(np.int64), [0, 8]), "codes must be a 1-D uint8"),
    (lambda c: SeqColumns.from_offsets(np.frombuffer(b"ACGTACGT", np.uint8), [0, 8]),
     "found 65 at index 0"),
    (lambda c: SeqColumns.from_offsets(np.append(c[:7], 16).astype(np.uint8), [0, 8]),
     "found 16 at index 7"),
    (lambda c: SeqColumns.from_ranges(np.append(c, [1, 70, 2]).astype(np.uint8), [2, 8], [4, 11]),
     "found 70 at index 9"),
])
def test_bad_columns_raise_one_line_value_errors(make, message):
    codes_ = encode("ACGTNACG")
    with pytest.raises(ValueError, match=message) as err:
        make(codes_)
    assert "\n" not in str(err.value)


def test_columns_check_only_the_codes_their_sequences_read():
    """Codes before the first start and past the last end are never read: a batch of a few
    reads of a large buffer checks those reads only."""
    codes_ = np.concatenate(([16, 65], encode("ACGTNACG"), [16])).astype(np.uint8)
    batch = SeqColumns.from_ranges(codes_, [2, 6], [6, 10])
    assert batch[1].text == "NACG"
    with pytest.raises(ValueError, match="found 16 at index 10"):
        SeqColumns.from_ranges(codes_, [2], [11])


def test_bad_batches_raise_value_errors():
    both = SeqColumns.encode(["ACGT", "GGCA"], ids="q")
    one = SeqColumns.encode(["ACGTT"], ids="r")
    with pytest.raises(ValueError, match=r"as many patterns as text records \(2 patterns, 1 text"):
        edit.verify(both, one, 1, backend="serial")
    with pytest.raises(ValueError, match="as many patterns as text records"):
        edit.verify([Record("a", encode("ACGT"))], both, 1, backend="serial")
    gap = SeqColumns.from_offsets(encode("ACGTGG"), [0, 4, 4, 6], ["a", "b", "c"])
    with pytest.raises(ValueError, match="pattern record 'b' is empty"):
        edit.verify(gap, SeqColumns.encode(["A", "C", "G"]), 1, backend="serial")
    with pytest.raises(ValueError, match="text record 'seq1' is empty"):
        edit.verify(SeqColumns.encode(["A", "C", "G"]), gap.take([0, 1, 2]).__class__.from_ranges(
            gap.codes, [0, 4, 4], [4, 4, 6]), 1, backend="serial")
    with pytest.raises(ValueError, match="no pattern records"):
        edit.verify(both.take([]), one.take([]), 1, backend="serial")
    with pytest.raises(TypeError, match="patterns must be a sequence string"):  # (engine.api)
        edit.verify([42], [Record("r", encode("ACGT"))], 1, backend="serial")
    with pytest.raises(SequenceError, match=r"sequence 1 \('q1'\) position 3: invalid character 'X'"):
        SeqColumns.encode(["ACGT", "ACXT"], ids="q")
