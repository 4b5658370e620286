"""Regions keep their record's numbering in pcr and pairs (``Record.region``: the GUI's
*Only positions* and the CLI's ``--<input>-region``), as in every family."""

from __future__ import annotations

import dataclasses

from engine.primers import pairs, pcr
from engine.primers.primer3_design import DesignSettings
from engine.sequences import Record, encode
from tests.engine.primers.brute import rc


def test_pcr_on_a_region_reports_the_records_coordinates(lambda_record):
    text = lambda_record.text
    primers = [Record("F", encode(text[20_100:20_120])), Record("R", encode(rc(text[20_380:20_400])))]
    settings = pcr.PcrSettings(with_sequence=True)
    whole = pcr.solve(primers, [lambda_record], settings)
    part = pcr.solve(primers, [lambda_record.region(20_001, 22_000)], settings)
    assert [(p.start, p.end) for p in whole.products] == [(20_101, 20_400)]
    assert part.products == whole.products
    assert part.sites == whole.sites
    assert part.products[0].sequence == text[20_100:20_400]


def test_pairs_on_a_region_keep_the_records_numbering(lambda_record, ecoli_record):
    region = lambda_record.region(20_001, 20_700)
    plain = Record("t", region.codes.copy())  # the same bases, numbered from 1
    background = [ecoli_record.slice(0, 100_000)]
    settings = pairs.PairSettings(DesignSettings(product_ranges=((150, 300),), num_return=3),
                                  explain=True)
    got = pairs.solve([region], background, 3, settings, backend="serial")
    base = pairs.solve([plain], background, 3, settings, backend="serial")
    assert got.pairs and len(got.pairs) == len(base.pairs)
    text = lambda_record.text
    for p, q in zip(got.pairs, base.pairs):
        assert p.target_id == region.id
        for a, b in ((p.left, q.left), (p.right, q.right)):
            assert (a.start, a.end) == (b.start + 20_000, b.end + 20_000)
            assert dataclasses.replace(a, start=b.start, end=b.end) == b
        assert text[p.left.start - 1:p.left.end] == p.left.sequence
        assert rc(text[p.right.start - 1:p.right.end]) == p.right.sequence
        assert p.product_size == p.right.end - p.left.start + 1 == q.product_size
    assert len(got.rejected) == len(base.rejected) > 0
    for r, s in zip(got.rejected, base.rejected):
        assert (r.start, r.end, r.sequence, r.reason) == (s.start + 20_000, s.end + 20_000,
                                                          s.sequence, s.reason)
