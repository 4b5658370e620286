"""``primerscope check``: the sites, products and dimers of a primer set in one report, equal
to what ``pcr`` and ``panel`` report on the same primers and background (it is their
work, not a copy of it), in CSV and JSON."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys

import pytest

from engine.primers import export_check, panel
from engine.primers.primer_sets import load_primers
from engine.sequences import Record, encode
from tests.engine.primers import brute

PRIMERS = "F1=GGCGTTTCAGACGTGCTGTT,R1=CCTGACCGACAAGAAGCTGA,F2=ATGACGTTCGAGCCGAAAGT"


def _cli(*args):
    done = subprocess.run([sys.executable, "-m", "engine.cli", *args, "--no-progress"],
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.fixture(scope="module")
def background(lambda_record, tmp_path_factory):
    path = tmp_path_factory.mktemp("check") / "bg.fa"
    path.write_text(f">{lambda_record.id}\n{lambda_record.text}\n")
    return path


def test_check_equals_pcr_and_panel(background):
    got = json.loads(_cli("check", PRIMERS, str(background), "--max-edits", "2", "--json"))
    pcr = json.loads(_cli("pcr", PRIMERS, str(background), "--max-edits", "2", "--json"))
    pan = json.loads(_cli("panel", PRIMERS, str(background), "--max-edits", "2", "--json"))
    assert got["sites"] == pcr["sites"] and got["products"] == pcr["products"]
    assert got["dimers"] == pan["pairs"] and got["primers"] == pan["primers"]
    assert got["products"] == pan["products"]
    by_name = {s["primer"]: s for s in got["summary"]}
    for name in ("F1", "R1", "F2"):
        assert by_name[name]["sites"] == sum(s["primer"] == name for s in got["sites"])
    table = list(csv.reader(io.StringIO(_cli("check", PRIMERS, str(background), "--max-edits", "2"))))
    assert tuple(table[0]) == export_check.COLUMNS
    kinds = [r[0] for r in table[1:]]
    assert kinds.count("site") == len(got["sites"]) and kinds.count("dimer") == 6
    assert kinds.count("product") == len(got["products"])


def test_sites_are_real_matches(lambda_record):
    """Each reported site is within the edits on its strand (edlib-free brute check)."""
    primers = load_primers(PRIMERS)
    bg = [Record("bg", encode(lambda_record.text[:30_000]))]
    result = panel.solve(primers, bg, panel.PanelSettings())
    seqs = dict(result.primers)
    sites = export_check.site_dicts(result)
    assert sites
    for s in sites:
        window = lambda_record.text[s["start"] - 1:s["end"]]
        if s["strand"] == "-":
            window = brute.rc(window)
        assert brute.occurs_within(seqs[s["primer"]], window, s["edits"])


def test_csv_escapes_names_but_not_strands(lambda_record):
    """Only user-given text gets the spreadsheet escape: a ``-`` strand was written ``'-``."""
    text = lambda_record.text[:3000]
    primers = [Record("=F1", encode(text[1000:1020])),
               Record("-R1", encode(brute.rc(text[1500:1520])))]
    bg = [Record("bg", encode(text))]
    result = panel.solve(primers, bg, panel.PanelSettings())
    buf = io.StringIO()
    export_check.write_csv(result, buf)
    table = list(csv.DictReader(io.StringIO(buf.getvalue())))
    sites = [r for r in table if r["kind"] == "site"]
    assert {r["strand"] for r in sites} == {"+", "-"}
    assert {r["primer"] for r in sites} == {"'=F1", "'-R1"}
    assert all(r["strand"] == "" for r in table if r["kind"] != "site")
