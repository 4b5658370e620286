"""Every primer output is a primer input: ``pairs -o`` CSV and JSON and the library's CSV
export feed ``pcr`` and ``panel`` (both primers of each pair, each once, named as the Pairs
view names them); a design that finds nothing says why on standard error."""

from __future__ import annotations

import csv
import json
import subprocess
import sys

import pytest

from engine.primers.primer_sets import load_primers, pair_primers


def _cli(*args, ok=True):
    quiet = ("--no-progress",) if args[0] != "library" and "--help" not in args else ()
    done = subprocess.run([sys.executable, "-m", "engine.cli", *args, *quiet],
                          capture_output=True, text=True, timeout=900)
    if ok:
        assert done.returncode == 0, done.stderr
    return done


@pytest.fixture(scope="module")
def designed(tmp_path_factory, demo_dir):
    out = tmp_path_factory.mktemp("pairs")
    lam = str(demo_dir / "lambda_NC_001416.fa")
    common = (lam, lam, "--target-region", "20001-20700", "--background-region", "1-15000", "-k", "3",
              "--num-return", "4", "--product-size", "100-300", "--min-3prime-distance", "off")
    _cli("pairs", *common, "-o", str(out / "pairs.csv"))
    _cli("pairs", *common, "--json", "-o", str(out / "pairs.json"))
    return out, lam


def _want(path):
    with open(path) as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 4
    return pair_primers((r["target"], int(r["left_start"]), r["left_sequence"], int(r["right_end"]),
                         r["right_sequence"]) for r in rows), rows


def test_pairs_csv_and_json_are_primer_sets(designed):
    out, _ = designed
    want, rows = _want(out / "pairs.csv")
    # pairs share primers here (3' distance off): each sequence once
    assert len(want) == len({r["left_sequence"] for r in rows} | {r["right_sequence"] for r in rows})
    for name in ("pairs.csv", "pairs.json"):
        got = [(p.id, p.text) for p in load_primers(str(out / name))]
        assert got == want
    first = rows[0]
    assert (f"NC_001416.1_{first['left_start']}F", first["left_sequence"]) in want


@pytest.mark.parametrize("output", ["pairs.csv", "pairs.json"])
def test_pcr_and_panel_read_pairs_output(designed, output):
    out, lam = designed
    want, rows = _want(out / "pairs.csv")
    pcr = json.loads(_cli("pcr", str(out / output), lam, "--background-region", "20001-20700",
                          "--json").stdout)
    assert [(p["name"], p["sequence"]) for p in pcr["primers"]] == want
    products = {(p["forward"], p["reverse"], p["start"], p["end"]) for p in pcr["products"]}
    for r in rows:  # each pair amplifies its own amplicon from the target itself
        f, rv = f"NC_001416.1_{r['left_start']}F", f"NC_001416.1_{r['right_end']}R"
        assert (f, rv, int(r["left_start"]), int(r["right_end"])) in products
    panel = json.loads(_cli("panel", str(out / output), "--json").stdout)
    assert [(p["name"], p["sequence"]) for p in panel["primers"]] == want
    assert len(panel["pairs"]) == len(want) * (len(want) + 1) // 2  # each dimer once


def test_library_export_is_a_primer_set(designed, tmp_path):
    out, lam = designed
    want, _ = _want(out / "pairs.csv")
    db = tmp_path / "lib.sqlite"
    for name, seq in want:
        _cli("library", "--library", str(db), "add", "--name", name, "--sequence", seq)
    _cli("library", "--library", str(db), "export", "-o", str(tmp_path / "lib.csv"))
    _cli("library", "--library", str(db), "list", "--json", "-o", str(tmp_path / "lib.json"))
    for name in ("lib.csv", "lib.json"):
        assert [(p.id, p.text) for p in load_primers(str(tmp_path / name))] == want
        done = _cli("pcr", str(tmp_path / name), lam, "--background-region", "20001-20700", "--json")
        assert len(json.loads(done.stdout)["primers"]) == len(want)


def test_a_header_only_pairs_csv_is_refused(tmp_path):
    path = tmp_path / "none.csv"
    path.write_text("target,rank,penalty,product_size,left_sequence,left_start,left_end,left_tm,"
                    "left_gc_percent,right_sequence,right_start,right_end\n")
    done = _cli("pcr", str(path), "ACGTACGTAGCTAGCTAGCATCGATCAGCATCGACT", ok=False)
    assert done.returncode == 2 and "no pairs in it" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_no_pair_says_why_on_stderr(demo_dir):
    lam = str(demo_dir / "lambda_NC_001416.fa")
    done = _cli("pairs", lam, lam, "--target-region", "20001-20600", "-k", "2")
    assert done.stdout.count("\n") == 1  # the header alone
    assert "no pair found: NC_001416.1 has 0 forward and 0 reverse 5' ends" in done.stderr
    assert "Primer3's primer counts: left considered" in done.stderr


def test_pcr_help_names_the_variant_a_run_uses():
    text = " ".join(_cli("pcr", "--help").stdout.split())
    assert "default: myers for primers of up to 64 nt, else myers-" in text
    assert "task, cooperative: --backend cuda only" in text
