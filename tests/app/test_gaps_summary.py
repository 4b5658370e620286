"""The GUI's kdiff result summary names the background's assembly gaps and ambiguity codes
(issue #28), and the run panel offers the registry's gap setting."""

from __future__ import annotations

from app.families.kdiff import KdiffAdapter
from engine import gaps, kdiff
from engine.sequences import Record, encode


def test_the_summary_says_gaps_and_ambiguity_codes_and_warns_once():
    target = [Record("t", encode("ACGTTGCAAGGCTTAGCGGATCCAATTGG"))]
    background = [Record("b", encode("ACGTAGCAAG" + "N" * 40 + "GCCTTRGCGG" + "N" * 20 + "ATC"))]
    adapter = KdiffAdapter()
    now = adapter.summary(kdiff.solve(target, background, 2))
    assert now.endswith("; background: 2 gaps (60 bases, runs of >= 10 N), 1 ambiguity code")
    old = adapter.summary(kdiff.solve(target, background, 2, gap_min=30))
    assert "1 gap (40 bases, runs of >= 30 N), 21 ambiguity codes" in old
    assert old.endswith("(warning: 1 N run of 18-29 bases (shorter than --gap-min 30) matches "
                        "any primer that fits and can hide candidates)")
    clean = adapter.summary(kdiff.solve(target, [Record("c", encode("ACGTAGCAAG"))], 2))
    assert "background" not in clean


def test_gap_min_is_a_setting_of_every_family_with_a_background():
    from engine import edit, kmismatch

    for spec in (kdiff.SPEC, kmismatch.SPEC, edit.SPEC):
        assert gaps.GAP_MIN_PARAM in spec.params
