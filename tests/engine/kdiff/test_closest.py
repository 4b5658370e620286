"""The closest-match search (engine.kdiff.closest) against the slow oracle."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine import kdiff
from engine.jobs import CancelToken, drive
from engine.kdiff.closest import window_matrix
from engine.kdiff.reference import closest_reference, longest_prefix_within, semi_global_matrix
from engine.sequences import IUPAC_CODES, Record, decode, encode, reverse_complement
from tests.strategies import codes


def _texts(background, strands):
    texts = [r.codes for r in background]
    return texts + [reverse_complement(t) for t in texts] if strands == "both" else texts


def _where(background, strands, t, end):
    """The oracle's (record id, strand, end or start) in the ClosestMatch's forward coordinates."""
    n = len(background)
    record = background[t % n]
    if t < n:
        return record.id, "+", ("end", end + 1)
    return record.id, "-", ("start", len(record) - end)


def _check_match(match, pattern, background, strands, expected):
    distance, t, end = expected
    record_id, strand, (name, value) = _where(background, strands, t, end)
    assert (match.distance, match.record_id, match.strand) == (distance, record_id, strand)
    assert getattr(match, name) == value
    window = encode(match.window) if match.window else np.zeros(0, np.uint8)
    assert np.array_equal(match.matrix, semi_global_matrix(pattern, window))
    assert match.matrix[-1, -1] == distance
    # The alignment spells the candidate and the window's tail, with `distance` edits.
    top, bottom = match.aligned_candidate, match.aligned_background
    assert top.replace("-", "") == decode(pattern)
    assert bottom.replace("-", "") == match.window[match.match_start_on_strand - match.window_offset:]
    edits = sum(a == "-" or b == "-" or not (IUPAC_CODES[a] & IUPAC_CODES[b]) for a, b in zip(top, bottom))
    assert edits == distance
    assert match.path[0][0] == 0 and match.path[-1] == (len(pattern), len(window))


@given(pattern=codes(1, 30), texts=st.lists(codes(1, 60), min_size=1, max_size=3),
       strands=st.sampled_from(["forward", "both"]))
def test_smallest_distance_matches_the_oracle(pattern, texts, strands):
    background = [Record(f"bg{i}", t) for i, t in enumerate(texts)]
    match = kdiff.closest_match(pattern, background, strands=strands)
    _check_match(match, pattern, background, strands, closest_reference(pattern, _texts(background, strands)))


@given(pattern=codes(1, 30), texts=st.lists(codes(1, 60), min_size=1, max_size=3),
       k=st.integers(1, 8), strands=st.sampled_from(["forward", "both"]))
def test_with_k_the_first_window_within_k_matches_the_oracle(pattern, texts, k, strands):
    background = [Record(f"bg{i}", t) for i, t in enumerate(texts)]
    match = kdiff.closest_match(pattern, background, k, strands=strands)
    expected = closest_reference(pattern, _texts(background, strands), within=k)
    if expected is None:
        assert match is None
    else:
        _check_match(match, pattern, background, strands, expected)


def test_iupac_codes_match_what_they_stand_for():
    background = [Record("bg", encode("TTTTTTGGGACSYATGCTTTTTT"))]
    match = kdiff.closest_match("GGGNCCCATGNN", background, strands="forward")
    assert (match.distance, match.start, match.end) == (0, 7, 18)
    assert match.aligned_background == "GGGACSYATGCT"
    _check_match(match, encode("GGGNCCCATGNN"), background, "forward",
                 closest_reference(encode("GGGNCCCATGNN"), _texts(background, "forward")))


def test_real_candidates_are_exactly_k_from_the_background(lambda_record, ecoli_record):
    k = 3
    target = [lambda_record.slice(1000, 1040)]
    background = [ecoli_record.slice(0, 300), ecoli_record.slice(1_000_000, 1_000_200)]
    result = kdiff.solve(target, background, k, backend="serial")
    assert result.candidates
    texts = _texts(background, "both")
    for c in result.candidates[::7]:
        pattern = encode(c.sequence)
        match = kdiff.closest_match(c.sequence, background, k)
        assert match.distance == k
        _check_match(match, pattern, background, "both", closest_reference(pattern, texts, within=k))
        assert closest_reference(pattern, texts)[0] == k  # nothing closer anywhere


def test_window_matrix_and_closest_match_agree_with_the_oracle():
    rng = np.random.default_rng(7)
    background = Record("bg", rng.choice(np.array([1, 2, 4, 8], dtype=np.uint8), 3000))
    pattern = background.codes[1200:1230].copy()
    pattern[[3, 17]] = np.where(pattern[[3, 17]] == 1, 2, 1)  # two substitutions
    match = kdiff.closest_match(pattern, [background], 2, strands="forward")
    assert match.distance == 2 and match.strand == "+"
    assert 1199 <= match.start - 1 <= 1203 and match.end == 1230
    # The window's bottom-right cell is the semi-global distance; the oracle agrees that
    # nothing in the background is closer (the whole pattern occurs within 2, not within 1).
    D = window_matrix(pattern, encode(match.window))
    assert D[-1, -1] == 2
    assert longest_prefix_within(pattern, [background.codes], 3) == len(pattern)
    assert longest_prefix_within(pattern, [background.codes], 2) < len(pattern)


def test_closest_match_on_the_reverse_strand_reports_forward_coordinates():
    forward = encode("TTTTTTTTTTGGGACCCATGCAAAAAAAAAA")
    record = Record("r", forward)
    probe = reverse_complement(forward[10:23])  # positions 11..23 as read on the other strand
    match = kdiff.closest_match(probe, [record])  # a window at 1 edit comes first
    assert (match.strand, match.start, match.end, match.distance) == ("-", 11, 23, 0)


def test_progress_cancel_and_bad_arguments():
    background = [Record("bg", encode("ACGT" * 50))]
    fractions = []
    match = drive(kdiff.iter_closest_match("GATTACA", background, strands="both"), fractions.append)
    assert match is not None and fractions and fractions[-1] == 1.0
    token = CancelToken()
    token.cancel()
    assert drive(kdiff.iter_closest_match("GATTACA", background, cancel=token)) is None
    for args, kwargs, message in [(("", background), {}, "empty"), (("ACGT", []), {}, "no background"),
                                  (("ACGT", background), {"strands": "reverse"}, "strands"),
                                  (("ACGT", background, 0), {}, "k")]:
        with pytest.raises(ValueError, match=message):
            kdiff.iter_closest_match(*args, **kwargs)
