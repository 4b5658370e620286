"""Off-target report: sites equal a brute-force edlib check on both strands."""

from __future__ import annotations

import json
import subprocess
import sys

import edlib
import numpy as np
import pytest

from engine import edit
from engine.primers.offtarget import find_offtargets, make_job, sites_from_result
from engine.jobs import drive
from engine.sequences import Record, decode, reverse_complement
from tests.strategies import mutate


def _brute_force_ends(pattern: str, text: str, k: int) -> dict[int, int]:
    """1-based end -> smallest distance of ``pattern`` ending exactly there (<= k)."""
    out = {}
    rp = pattern[::-1]
    m = len(pattern)
    for end in range(1, len(text) + 1):
        window = text[max(0, end - m - k):end][::-1]
        r = edlib.align(rp, window, mode="SHW", task="distance", k=k)
        if r["editDistance"] != -1:
            out[end] = r["editDistance"]
    return out


@pytest.fixture(scope="module")
def scene(lambda_record, ecoli_record):
    rng = np.random.default_rng(11)
    primer = lambda_record.slice(12_000, 12_022)
    parts = [ecoli_record.slice(100_000, 103_000).codes]
    for edits in (0, 1, 2, 3, 2):
        copy = mutate(rng, primer.codes, edits)
        if rng.random() < 0.5:
            copy = reverse_complement(copy)
        spacer_at = int(rng.integers(0, 4_000_000))
        parts += [copy, ecoli_record.codes[spacer_at:spacer_at + 400]]
    background = [Record("bg", np.concatenate(parts)), lambda_record.slice(11_500, 12_500)]
    return primer, background


@pytest.mark.parametrize("backend", ["serial", "multicore"])
def test_sites_equal_brute_force_both_strands(scene, backend):
    primer, background = scene
    k = 3
    result = drive(edit.iter_solve(make_job(primer, background, k, backend=backend)))
    sites = sites_from_result(primer.text, result)
    for rec in background:
        text = rec.text
        for strand, pattern in (("+", primer.text), ("-", decode(reverse_complement(primer.codes)))):
            expected = _brute_force_ends(pattern, text, k)
            got = {h.end: h.distance for h in result.hits
                   if h.record_id == rec.id and h.strand == strand}
            assert got == expected, (rec.id, strand)
            mine = [s for s in sites if s.record_id == rec.id and s.strand == strand]
            # Every best location edlib reports lies inside a site with that many edits.
            best = edlib.align(pattern, text, mode="HW", task="locations", k=k)
            for start0, end0 in best["locations"] if best["editDistance"] != -1 else []:
                assert any(s.start <= start0 + 1 and end0 + 1 <= s.end + len(pattern)
                           and s.edits == best["editDistance"] for s in mine)
            # Each site's edit count is the smallest distance among its ends.
            for s in mine:
                inside = [d for e, d in expected.items() if s.start <= e <= s.end + k]
                assert s.edits == min(inside)
    assert any(s.edits == 0 and s.record_id == background[1].id for s in sites)
    assert {s.strand for s in sites} == {"+", "-"}


def test_alignment_and_three_prime_edits(scene):
    primer, background = scene
    for s in find_offtargets(primer, background, 3, backend="serial"):
        assert s.primer_line.replace("-", "") == primer.text
        cols = list(zip(s.primer_line, s.bars, s.site_line))
        assert sum(1 for a, bar, b in cols if bar != "|") == s.edits
        assert all((bar == "|") == (a == b) for a, bar, b in cols)
        tail = 0
        bases = 0
        for a, bar, _site in reversed(cols):  # walk back from the 3' end over the last 5 bases
            if a != "-":
                bases += 1
                if bases > 5:
                    break
            if bar != "|" and not (a == "-" and bases == 5):
                tail += 1
        assert s.edits_3prime == tail


def test_cli_offtarget(tmp_path, scene):
    primer, background = scene
    bg = tmp_path / "bg.fa"
    bg.write_text("".join(f">{r.id}\n{r.text}\n" for r in background))
    done = subprocess.run([sys.executable, "-m", "engine.cli", "offtarget", primer.text, str(bg),
                           "--max-edits", "2", "--json"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    payload = json.loads(done.stdout)
    assert payload["family"] == "edit" and payload["sites"]
    assert all(site[4] <= 2 for site in payload["sites"])
    # Checked against edlib, independently, on both strands: each site's span aligns to the
    # primer (in its orientation) with exactly its edits, and per record and strand the best
    # site and every best location of edlib's HW search agree.
    texts = {r.id: r.text for r in background}
    patterns = {"+": primer.text, "-": decode(reverse_complement(primer.codes))}
    for rec_id, start, end, strand, edits, _, _ in payload["sites"]:
        span = texts[rec_id][start - 1:end]
        assert edlib.align(patterns[strand], span, mode="NW", task="distance")["editDistance"] == edits
    for rec in background:
        for strand, pattern in patterns.items():
            mine = [x for x in payload["sites"] if x[0] == rec.id and x[3] == strand]
            best = edlib.align(pattern, rec.text, mode="HW", task="locations", k=2)
            if best["editDistance"] == -1:
                assert mine == [], (rec.id, strand)
                continue
            assert min(x[4] for x in mine) == best["editDistance"], (rec.id, strand)
            for start0, end0 in best["locations"]:
                assert any(x[1] <= start0 + 1 and end0 + 1 <= x[2] + len(pattern)
                           and x[4] == best["editDistance"] for x in mine), (rec.id, strand)
    assert {x[3] for x in payload["sites"]} == {"+", "-"}
    bad = subprocess.run([sys.executable, "-m", "engine.cli", "offtarget", primer.text, str(bg),
                          "--max-edits", "-1"], capture_output=True, text=True)
    assert bad.returncode == 2 and "max_edits must be >= 0, got -1" in bad.stderr


def test_cli_csv_defuses_formula_like_record_ids(tmp_path, scene):
    """Background records named like formulas (CSV injection) get a leading quote in the CSV;
    a '-' strand stays a strand and the other cells are the JSON's."""
    import csv
    import io

    from engine.spreadsheet import unquoted_cell

    primer, background = scene
    names = ('=HYPERLINK("x")', "-1+2", "@SUM(A1)")
    rc = decode(reverse_complement(primer.codes))
    texts = (background[1].text, "ACGT" * 30 + rc + "TTGA" * 30, primer.text + "GATC" * 40)
    bg = tmp_path / "bg.fa"
    bg.write_text("".join(f">{n}\n{t}\n" for n, t in zip(names, texts)))
    args = [sys.executable, "-m", "engine.cli", "offtarget", primer.text, str(bg),
            "--max-edits", "1", "--backend", "serial"]
    done = subprocess.run(args, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    rows = list(csv.reader(io.StringIO(done.stdout)))[1:]
    assert {r[0] for r in rows} == {"'" + n for n in names}
    assert {r[3] for r in rows} == {"+", "-"}
    sites = json.loads(subprocess.run(args + ["--json"], capture_output=True,
                                      text=True).stdout)["sites"]
    assert [[unquoted_cell(r[0]), *r[1:7]] for r in rows] == [
        [str(v) for v in s] for s in sites]
