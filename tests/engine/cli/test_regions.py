"""--<input>-region on every compute subcommand: results in the loaded record's numbering."""

from __future__ import annotations

import subprocess
import sys

import pytest

from engine import kdiff, kmismatch
from engine.sequences import load

LAMBDA = "resources/demo/lambda_NC_001416.fa"


def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "engine.cli", *args, "--no-progress"],
                          capture_output=True, text=True, timeout=300)


def test_kdiff_target_region_keeps_the_records_numbering():
    done = run_cli("kdiff", LAMBDA, "ACGTACGTTTGACCA", "-k", "3", "--strands", "forward",
                   "--target-region", "1,001-1,012")
    assert done.returncode == 0, done.stderr
    rows = [line.split(",") for line in done.stdout.splitlines()[1:]]
    lam = load(LAMBDA)[0]
    whole = kdiff.solve([lam.region(1001, 1012)], load("ACGTACGTTTGACCA"), 3, strands="forward")
    assert rows and rows[0][:3] == ["NC_001416.1", "1001", str(whole.candidates[0].end)]
    assert [(int(r[1]), int(r[2])) for r in rows] == [(c.start, c.end) for c in whole.candidates]
    # The same substring given as a literal is numbered from 1: the offset is the region's.
    seq = lam.region(1001, 1012).codes
    assert int(rows[0][1]) - 1000 == 1 and len(seq) == 12


def test_kmismatch_text_region_hits_in_record_coordinates():
    done = run_cli("kmismatch", LAMBDA, "GGATCC", "-k", "0", "--text-region", "5000-48502")
    full = run_cli("kmismatch", LAMBDA, "GGATCC", "-k", "0")
    assert done.returncode == 0 and full.returncode == 0
    inside = [row for row in full.stdout.splitlines()[1:] if int(row.split(",")[2]) >= 5000]
    assert done.stdout.splitlines()[1:] == inside and inside


@pytest.mark.parametrize("args, message", [
    (("kdiff", LAMBDA, "ACGT", "-k", "2", "--target-region", "10-5"), "START <= END"),
    (("kdiff", LAMBDA, "ACGT", "-k", "2", "--target-region", "60000-60010"), "lies outside"),
    (("nw", "ACGT", "ACGT", "--a-region", "x"), "region must be START-END"),
])
def test_bad_regions_are_one_line_errors(args, message):
    done = run_cli(*args)
    assert done.returncode == 2 and message in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_kmismatch_api_region_shift():
    lam = load(LAMBDA)[0]
    res = kmismatch.solve([lam.region(20001, 30000)], load("GGATCC"), 0, strands="forward")
    assert all(20001 <= h.start <= 30000 for h in res.hits)
