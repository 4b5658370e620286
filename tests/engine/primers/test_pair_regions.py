"""Primer3's regions in pair design: with hypothesis-placed regions no primer overlaps an
excluded region, every product contains every amplify region, primers lie in the included
region; the command line gives the same pairs as the engine; bad regions exit 2."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from hypothesis import given, settings, strategies as st

from engine.primers import pairs
from engine.primers.primer3_design import DesignSettings, Regions
from tests.strategies import examples

K = 2
OFFSET = 30_000  # the target is lambda 30,001-30,800, in lambda's own numbering
LENGTH = 800


@pytest.fixture(scope="module")
def region_case(lambda_record, ecoli_record):
    """The target, a background, and the specificity profile of a design on them (the kdiff
    part is the same for every region: only Primer3's part is run again per example)."""
    target = lambda_record.region(OFFSET + 1, OFFSET + LENGTH)
    background = [ecoli_record.slice(0, 50_000)]
    result = pairs.solve([target], background, K, backend="serial")
    return target, background, result.specificity[0]


def _span(draw, lo, hi, longest):
    start = draw(st.integers(lo, hi))
    return start, min(hi, start + draw(st.integers(0, longest)))


@st.composite
def region_sets(draw):
    first, last = OFFSET + 1, OFFSET + LENGTH
    amplify = tuple(_span(draw, first + 150, last - 250, 40) for _ in range(draw(st.integers(0, 2))))
    exclude = tuple(_span(draw, first, last, 60) for _ in range(draw(st.integers(0, 3))))
    include = None
    if draw(st.booleans()):
        lo = draw(st.integers(first, first + 100))
        include = (lo, draw(st.integers(lo + 500, last)))
        if any(not (include[0] <= a and b <= include[1]) for a, b in amplify):
            include = None
    return Regions(amplify, exclude, include)


def _overlaps(site, region):
    return site.start <= region[1] and region[0] <= site.end


@settings(max_examples=examples(8))
@given(regions=region_sets(), distance=st.sampled_from([-1, 3]))
def test_regions_hold_for_every_pair(region_case, regions, distance):
    target, _, spec = region_case
    design = DesignSettings(product_ranges=((100, 400),), num_return=4,
                            min_three_prime_distance=distance)
    settings_ = pairs.PairSettings(design, regions=regions)
    regions.check([target])
    best, _, _ = pairs.design_record(target, spec, settings_, K)
    found = [(pairs._site(left, target.offset), pairs._site(right, target.offset))
             for _, left, right, _ in best]
    for left, right in found:
        for site in (left, right):
            assert not any(_overlaps(site, r) for r in regions.exclude), (site, regions)
            if regions.include:
                assert regions.include[0] <= site.start and site.end <= regions.include[1]
        for a, b in regions.amplify:  # the product: left.start .. right.end
            assert left.end < a and b < right.start, (left, right, regions.amplify)
    if distance >= 0:  # no primer twice
        assert len({l.sequence for l, _ in found}) == len(found)
        assert len({r.sequence for _, r in found}) == len(found)
    if not regions:  # nothing asked: the same pairs as no regions at all
        assert len(found) == 4


def test_regions_change_the_pairs(region_case):
    """Without regions the best pair overlaps what is then excluded: the regions do work."""
    target, _, spec = region_case
    plain, _, _ = pairs.design_record(target, spec,
                                      pairs.PairSettings(), K)
    left = pairs._site(plain[0][1], target.offset)
    regions = Regions(exclude=((left.start, left.end),))
    again, _, _ = pairs.design_record(target, spec,
                                      pairs.PairSettings(regions=regions), K)
    assert again and all(not _overlaps(pairs._site(l, target.offset), (left.start, left.end))
                         for _, l, _, _ in again)


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "engine.cli", *args], capture_output=True,
                          text=True, timeout=900)


def test_cli_regions_equal_the_engine(region_case, tmp_path, demo_dir):
    target, background, _ = region_case
    bg = tmp_path / "bg.fa"
    bg.write_text(f">{background[0].id}\n{background[0].text}\n")
    regions = Regions(((30_400, 30_420),), ((30_300, 30_330), (30_500, 30_520)), (30_050, 30_750))
    want = pairs.solve([target], background, K, pairs.PairSettings(regions=regions),
                       backend="serial")
    done = _cli("pairs", str(demo_dir / "lambda_NC_001416.fa"), str(bg), "-k", str(K),
                "--target-region", f"{OFFSET + 1}-{OFFSET + LENGTH}", "--amplify", "30400-30420",
                "--exclude-region", "30300-30330", "--exclude-region", "30500-30520",
                "--include-region", "30050-30750", "--json", "--no-progress", "--backend", "serial")
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout)["pairs"]
    assert [(p["left"]["start"], p["right"]["end"]) for p in got] == \
        [(p.left.start, p.right.end) for p in want.pairs]
    assert want.pairs


@pytest.mark.parametrize("extra,message", [
    (["--amplify", "10-5"], "--amplify: region must have 1 <= START <= END"),
    (["--amplify", "1-50"], "amplify region 1-50 lies in no target record"),
    (["--exclude-region", "x"], "--exclude-region: region must be"),
    (["--amplify", "NC_001416.1:30100-30200"], "--amplify takes START-END in the target record's"),
    (["--include-region", "30001-30100", "--amplify", "30200-30210"], "is not inside the included"),
])
def test_bad_regions_exit_2(extra, message, demo_dir):
    done = _cli("pairs", str(demo_dir / "lambda_NC_001416.fa"), "ACGTAGCATCGATCGATCGA", "-k", "2",
                "--target-region", "30001-30800", "--no-progress", *extra)
    assert done.returncode == 2, done.stderr
    assert message in done.stderr and len(done.stderr.strip().splitlines()) == 1
