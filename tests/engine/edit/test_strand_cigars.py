"""A hit's CIGAR aligns the pattern 5'->3' against ``matched`` (the text as read on the hit's
strand), on both strands, every variant and backend (SPEC: strands, ``matched``, CIGAR).

The oracle is the slow obvious one: the pattern against the reverse complement of a ``-``
hit's window, and a replay of the CIGAR over the pattern and ``matched``.
"""

from __future__ import annotations

import re

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import edit
from engine.edit import reference as ref
from engine.primers import offtarget
from engine.sequences import Record, decode, encode, reverse_complement
from tests.engine.edit._support import combos, tiny_tunables
from tests.strategies import codes, examples, mutate


def _replay(cigar: str, pattern: str, matched: str) -> tuple[str, str, int]:
    """The two gapped rows a CIGAR makes of (pattern, matched), and the edits it spends."""
    top, bottom, edits, i, j = [], [], 0, 0, 0
    for count, op in re.findall(r"(\d+)([=XID])", cigar):
        for _ in range(int(count)):
            top.append("-" if op == "D" else pattern[i])
            bottom.append("-" if op == "I" else matched[j])
            i, j, edits = i + (op != "D"), j + (op != "I"), edits + (op != "=")
    assert "".join(re.findall(r"\d+[=XID]", cigar)) == cigar, cigar
    return "".join(top), "".join(bottom), edits


def _check(hit, pattern_codes, text_codes) -> None:
    window = text_codes[hit.start - 1:hit.end]
    on_strand = window if hit.strand == "+" else reverse_complement(window)
    assert hit.matched == decode(on_strand)
    pattern = decode(pattern_codes)
    top, bottom, edits = _replay(hit.cigar, pattern, hit.matched)
    assert top.replace("-", "") == pattern and bottom.replace("-", "") == hit.matched, hit
    assert edits == hit.distance == ref.global_distance(list(pattern_codes), list(on_strand)), hit
    assert ref.cigar_cost(hit.cigar, list(pattern_codes), list(on_strand)) == hit.distance, hit


@settings(max_examples=examples(25))
@given(codes(min_size=1, max_size=40), codes(min_size=0, max_size=40),
       codes(min_size=0, max_size=40), st.integers(0, 2 ** 32 - 1), st.sampled_from((0, 1, 3)),
       st.sampled_from(("hits", "best")))
def test_cigars_replay_over_pattern_and_matched(pattern, left, right, seed, k, report):
    """Every hit on both strands: replaying its CIGAR gives back the pattern and ``matched``
    with ``distance`` edits, and that is the distance of the pattern to the window on the
    hit's strand (for ``-``: the window's reverse complement). The text holds the pattern's
    reverse complement with up to k edits, so that ``-`` hits with edits occur."""
    site = mutate(np.random.default_rng(seed), pattern, k)
    text = np.concatenate([left, reverse_complement(site), right]).astype(np.uint8)
    with tiny_tunables():
        for variant, backend, flags in combos(len(pattern)):
            res = edit.solve([Record("p", pattern)], [Record("t", text)], mode="search", k=k,
                             strands="both", report=report, variant=variant, backend=backend,
                             flags=flags)
            for hit in res.hits:
                _check(hit, pattern, text)


def test_qa_examples_in_lambda(lambda_record):
    """The QA report's two primers: the mismatch and the unmatched base lie at the pattern's
    3' and 5' ends, as ``offtarget`` reports them."""
    text = lambda_record.codes
    for primer, want in (("TTTTCAGAGGGTATTTTAC", {(91, 109, 1, "18=1X")}),
                         ("TTTTCAGAGGGTATTTTAA", {(91, 108, 1, "1I18="), (91, 109, 0, "19="),
                                                  (91, 110, 1, "1D19=")})):
        for variant, backend, flags in combos(len(primer)):
            res = edit.solve(primer, [lambda_record], mode="search", k=1, variant=variant,
                             backend=backend, flags=flags)
            assert {(h.start, h.end, h.distance, h.cigar) for h in res.hits
                    if h.strand == "-"} == want, (primer, variant, backend, flags)
            for hit in res.hits:
                _check(hit, encode(primer), text)
    site, = offtarget.find_offtargets("TTTTCAGAGGGTATTTTAC", lambda_record, 1, backend="serial")
    assert (site.strand, site.cigar, site.edits_3prime) == ("-", "18=1X", 1)
