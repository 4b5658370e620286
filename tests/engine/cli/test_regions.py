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
    (("kdiff", LAMBDA, "ACGT", "-k", "2", "--target-region", "10-5"),
     "--target-region: region must have 1 <= START <= END"),
    (("kdiff", LAMBDA, "ACGT", "-k", "2", "--target-region", "60000-60010"),
     "--target-region: region 60,000-60,010 lies outside"),
    (("kdiff", "ACGT", LAMBDA, "-k", "2", "--background-region", "60000-60010"),
     "--background-region: region 60,000-60,010 lies outside"),
    (("nw", "ACGT", "ACGT", "--a-region", "x"), "--a-region: region must be [RECORD:]START-END"),
])
def test_bad_regions_are_one_line_errors(args, message):
    done = run_cli(*args)
    assert done.returncode == 2 and message in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_kmismatch_api_region_shift():
    lam = load(LAMBDA)[0]
    res = kmismatch.solve(load("GGATCC"), [lam.region(20001, 30000)], 0, strands="forward")
    assert all(20001 <= h.start <= 30000 for h in res.hits)


def test_a_region_names_its_record_in_a_multi_record_input(tmp_path):
    """Issue 28, deliverable 7: ``chr2:START-END`` selects a region of one record of many
    (the other records are left out, a longer START than another record's length is fine);
    the plain form is refused on several records, in one line, and kept for one."""
    lam = load(LAMBDA)[0].text
    genome = tmp_path / "g.fa"
    genome.write_text(f">chr1\n{lam[:3000]}\n>chr2\n{lam}\n>odd:name\n{lam[:9000]}\n")
    site = lam.index("GGATCC", 20000)
    region = f"chr2:{site - 99:,}-{site + 200}"
    done = run_cli("kmismatch", str(genome), "GGATCC", "-k", "0", "--strands", "forward",
                   "--text-region", region)
    assert done.returncode == 0, done.stderr
    rows = [line.split(",") for line in done.stdout.splitlines()[1:]]
    assert rows and all(r[1] == "chr2" and site - 99 <= int(r[2]) <= site + 200 for r in rows)
    assert ["chr2", str(site + 1)] in [r[1:3] for r in rows]
    colon = run_cli("kmismatch", str(genome), "GGATCC", "-k", "0", "--strands", "forward",
                    "--text-region", "odd:name:1-9000")
    assert colon.returncode == 0 and {r.split(",")[1] for r in colon.stdout.splitlines()[1:]} \
        == {"odd:name"}
    for bad, message in (("1-2000", "is ambiguous: the input has 3 records (chr1, chr2, "
                                    "odd:name); name one, as chr1:1-2000"),
                         ("chr9:1-10", "has no record 'chr9'"),
                         ("chr1:5000-6000", "lies outside chr1")):
        done = run_cli("kmismatch", str(genome), "GGATCC", "-k", "0", "--text-region", bad)
        assert done.returncode == 2 and message in done.stderr, done.stderr
        assert len(done.stderr.strip().splitlines()) == 1
    # One record: the plain form and the named form are the same region.
    plain = run_cli("kmismatch", LAMBDA, "GGATCC", "-k", "0", "--text-region", "5000-48502")
    named = run_cli("kmismatch", LAMBDA, "GGATCC", "-k", "0", "--text-region",
                    "NC_001416.1:5000-48502")
    assert plain.returncode == 0 and plain.stdout == named.stdout


def test_parse_region_forms():
    from engine.sequences import Region, parse_region

    assert parse_region("1,001-1,500") == Region(1001, 1500)
    assert parse_region(" chr2 : 1000 - 5,000 ") == Region(1000, 5000, "chr2")
    assert parse_region("HLA:A*01:1-10") == Region(1, 10, "HLA:A*01")
    for bad in ("x", ":1-10", "chr1:10", "chr1:1-2-3"):
        with pytest.raises(ValueError, match="region must be"):
            parse_region(bad)


@pytest.mark.parametrize("args, option", [
    (("kmismatch", LAMBDA, "GGATCC", "-k", "0", "--text-region", "48001-49000"), "--text-region 48001-49000"),
    (("nw", "ACGTACGTAC", "ACGTTT", "--b-region", "2-9"), "--b-region 2-9"),
])
def test_a_region_past_the_records_end_is_said_not_clamped_silently(args, option):
    """Issue 32: the region is cut at the record's end, and the command says so in one line."""
    done = run_cli(*args)
    assert done.returncode == 0, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("primerscope: warning: " + option), lines
    assert "ends after" in lines[0] and lines[0].endswith(("48,001-48,502", "2-6"))
