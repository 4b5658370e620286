"""Soft-masked repeats (issue #28): the mask read from FASTA case and from a store, and
``--avoid-masked`` in kdiff and pairs, checked against the case of the text itself."""

from __future__ import annotations

import os
import tempfile

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import kdiff, store
from engine.cli import main as cli_main
from engine.sequences import SequenceError, load
from engine.softmask import THREE_PRIME_BASES, three_prime_masked
from tests.engine.test_store_gaps import _as_format_1
from tests.strategies import examples

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LAMBDA = os.path.join(ROOT, "resources", "demo", "lambda_NC_001416.fa")


def _masked_text(draw, text):
    """``text`` with random stretches put in lower case."""
    chars = list(text)
    for _ in range(draw(st.integers(0, 6))):
        lo = draw(st.integers(0, len(chars) - 1))
        hi = draw(st.integers(lo + 1, min(len(chars), lo + 25)))
        chars[lo:hi] = [c.lower() for c in chars[lo:hi]]
    return "".join(chars)


def _clean(text, start1, end1, reverse=False):
    """Whether the 3'-most bases of the site [start1, end1] (1-based, inclusive) of ``text``
    are upper case, read from the text itself."""
    lo, hi = start1 - 1, end1
    tail = text[lo:min(hi, lo + THREE_PRIME_BASES)] if reverse else \
        text[max(lo, hi - THREE_PRIME_BASES):hi]
    return tail == tail.upper()


@pytest.fixture(scope="module")
def lambda_text():
    return load(LAMBDA)[0].text


@settings(max_examples=examples(25))
@given(st.data())
def test_kdiff_avoid_masked_drops_exactly_the_masked_3_prime_ends(lambda_text, data):
    """Every candidate kept has an upper-case 3' 5 nt, and every candidate of the plain run
    that has one is kept (target read from FASTA and from a store)."""
    at = data.draw(st.integers(0, 40_000))
    target_text = _masked_text(data.draw, lambda_text[at:at + data.draw(st.integers(40, 150))])
    background_text = lambda_text[at + 3000:at + 6000] + lambda_text[at:at + 30]
    k = data.draw(st.integers(2, 4))
    with tempfile.TemporaryDirectory() as tmp:
        fa = os.path.join(tmp, "t.fa")
        with open(fa, "w") as fh:
            fh.write(f">t\n{target_text}\n")
        store.build(fa, os.path.join(tmp, "t.psg"))
        background = load(background_text)
        plain = kdiff.solve(load(fa), background, k, backend="serial")
        want = [(c.start, c.end) for c in plain.candidates if _clean(target_text, c.start, c.end)]
        for target in (load(fa), load(os.path.join(tmp, "t.psg"))):
            got = kdiff.solve(target, background, k, backend="serial", avoid_masked=True)
            assert [(c.start, c.end) for c in got.candidates] == want


def test_three_prime_ends_by_strand():
    rec = load(LAMBDA)[0]
    from engine.sequences import Record

    masked = Record("m", rec.codes[:40], soft_mask=(np.array([10, 30]), np.array([12, 31])))
    starts, ends = np.array([0, 0, 12, 25, 31, 26]), np.array([12, 10, 20, 32, 40, 30])
    fwd = three_prime_masked(masked, starts, ends)
    rev = three_prime_masked(masked, starts, ends, reverse=True)
    # forward 3' ends: [7,12) [5,10) [15,20) [27,32) [35,40) [26,30)
    assert fwd.tolist() == [True, False, False, True, False, False]
    # reverse 3' ends: [0,5) [0,5) [12,17) [25,30) [31,36) [26,30)
    assert rev.tolist() == [False, False, False, False, False, False]
    assert three_prime_masked(masked, [8], [20], reverse=True).tolist() == [True]
    assert three_prime_masked(Record("u", rec.codes[:40]), starts, ends).tolist() == [False] * 6


def test_soft_mask_follows_slices_regions_and_reverse_complement():
    from engine.sequences import reverse_complement_record

    text = "ACGTacgtACGTTTGGccAAAA"
    with tempfile.TemporaryDirectory() as tmp:
        fa = os.path.join(tmp, "t.fa")
        with open(fa, "w") as fh:
            fh.write(f">t\n{text[:10]}\n{text[10:]}\n")
        rec = load(fa)[0]
    assert [a.tolist() for a in rec.soft_mask] == [[4, 16], [8, 18]]
    assert [a.tolist() for a in rec.slice(6, 17).soft_mask] == [[0, 10], [2, 11]]
    assert [a.tolist() for a in rec.region(6, 20).soft_mask] == [[0, 11], [3, 13]]
    assert rec.region(1, 3).soft_mask is None
    rc = reverse_complement_record(rec)
    flags = [c.islower() for c in text[::-1]]
    edges = np.flatnonzero(np.diff(np.array(flags, dtype=np.int8), prepend=0, append=0))
    assert [a.tolist() for a in rc.soft_mask] == [edges[0::2].tolist(), edges[1::2].tolist()]
    assert load("acgtACGT")[0].soft_mask is None  # a typed literal's case is not masking


def test_format_1_store_is_refused_with_avoid_masked(tmp_path, capsys):
    fa = tmp_path / "t.fa"
    fa.write_text(">t\nACGTACGTTGCAacgtaACGTGGCATTACG\n")
    store.build(fa, tmp_path / "new.psg")
    _as_format_1(tmp_path / "new.psg", tmp_path / "old.psg")
    old = load(tmp_path / "old.psg")
    with pytest.raises(SequenceError, match="no soft-mask table"):
        kdiff.make_job(old, load("ACGTTTTT"), 2, avoid_masked=True)
    kdiff.make_job(old, load("ACGTTTTT"), 2)  # without the option it runs
    code = cli_main(["kdiff", str(tmp_path / "old.psg"), "ACGGGATTTACC", "-k", "2",
                     "--avoid-masked", "--backend", "serial"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and err.count("\n") == 0 and "rebuild it with primerscope index" in err


def test_cli_kdiff_avoid_masked(tmp_path, capsys):
    text = "GGATCCTTAAGGCTTACGcatgcaTTGACCTGAGGCATCGATTGCAAGTCCacgtgTTAGC"
    fa = tmp_path / "t.fa"
    fa.write_text(f">t\n{text}\n")
    args = ["kdiff", str(fa), "TTTTGGGGCCCCAAAATTTTGGGG", "-k", "3", "--backend", "serial"]
    assert cli_main(args) == 0
    plain = capsys.readouterr().out.splitlines()[1:]
    assert cli_main(args + ["--avoid-masked"]) == 0
    kept = capsys.readouterr().out.splitlines()[1:]
    rows = [r.split(",") for r in plain]
    assert kept == [r for r, f in zip(plain, rows) if _clean(text, int(f[1]), int(f[2]))]
    assert len(kept) < len(plain)


def test_pairs_avoid_masked(lambda_text):
    """Designed pairs: no primer's 3' 5 nt is lower case, and every pair of the plain run
    whose primers are clean is still returned (pairs are ranked the same way, so a clean
    pair among the plain run's best N is among the best N clean ones)."""
    from engine.primers import pairs
    from engine.primers.primer3_design import DesignSettings

    text = lambda_text[20_000:20_300]
    chars = list(text)
    for lo, hi in ((40, 60), (118, 121), (200, 215), (250, 253)):
        chars[lo:hi] = [c.lower() for c in chars[lo:hi]]
    text = "".join(chars)
    with tempfile.TemporaryDirectory() as tmp:
        fa = os.path.join(tmp, "t.fa")
        with open(fa, "w") as fh:
            fh.write(f">t\n{text}\n")
        target = load(fa)
    background = load(lambda_text[30_000:33_000])
    # Pairs may share primers here: with a 3' distance, a masked pair's removal may let a
    # pair it blocked take a clean pair's place, which this property does not cover.
    design = DesignSettings(product_ranges=((100, 250),), num_return=12,
                            min_three_prime_distance=-1)

    def run(avoid):
        settings = pairs.PairSettings(design, avoid_masked=avoid)
        result = pairs.solve(target, background, 2, settings, backend="serial")
        return [(p.left.start, p.left.end, p.right.start, p.right.end) for p in result.pairs]

    plain, avoided = run(False), run(True)
    assert avoided
    for ls, le, rs, re_ in avoided:
        assert _clean(text, ls, le) and _clean(text, rs, re_, reverse=True)
    clean_plain = [p for p in plain
                   if _clean(text, p[0], p[1]) and _clean(text, p[2], p[3], reverse=True)]
    assert clean_plain != plain  # the mask took some of the plain run's pairs
    assert avoided[:len(clean_plain)] == clean_plain
