"""``python -m engine.cli edit``: output formats, and bad input (exit 2, one line, no file left)."""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]


def _cli(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "engine.cli", "edit", *args], capture_output=True,
                          text=True, cwd=cwd or ROOT, timeout=300)


def test_search_csv_to_file(tmp_path):
    out = tmp_path / "hits.csv"
    run = _cli("ACGTAC", "TTACGGTACGTTT", "--mode", "search", "-k", "1", "--strands", "both",
               "--backend", "serial", "-o", str(out))
    assert run.returncode == 0, run.stderr
    rows = list(csv.reader(io.StringIO(out.read_text())))
    assert rows[0] == ["pattern_id", "record_id", "start", "end", "strand", "distance", "cigar",
                       "matched"]
    assert ["literal", "literal", "6", "11", "-", "0", "6=", "ACGTAC"] in rows
    assert ["literal", "literal", "3", "9", "+", "1", "3=1D3=", "ACGGTAC"] in rows


def test_formula_like_ids_get_a_quote_in_the_csv(tmp_path):
    """Ids from FASTA headers that a spreadsheet would run (CSV injection) get a leading
    quote, in search and global mode; a '-' strand stays a strand, the JSON keeps the ids."""
    from engine.spreadsheet import unquoted_cell

    text = tmp_path / "text.fa"
    text.write_text('>=HYPERLINK("x")\nTTACGGTACGTTT\n>@SUM(A1)\nGGACGTACGG\n')
    pattern = tmp_path / "pattern.fa"
    pattern.write_text(">-1+2\nACGTAC\n")
    ids = {'=HYPERLINK("x")', "@SUM(A1)"}
    run = _cli(str(pattern), str(text), "--mode", "search", "-k", "1", "--strands", "both",
               "--backend", "serial")
    assert run.returncode == 0, run.stderr
    rows = list(csv.reader(io.StringIO(run.stdout)))[1:]
    assert rows and all(r[0] == "'-1+2" for r in rows)
    assert {r[1] for r in rows} == {"'" + i for i in ids}
    assert {r[4] for r in rows} == {"+", "-"}
    assert {unquoted_cell(r[1]) for r in rows} == ids
    run = _cli(str(pattern), str(text), "--backend", "serial")  # global: one row per pair
    assert run.returncode == 0, run.stderr
    rows = list(csv.reader(io.StringIO(run.stdout)))[1:]
    assert [r[:2] for r in rows] == [["'-1+2", '\'=HYPERLINK("x")'], ["'-1+2", "'@SUM(A1)"]]
    run = _cli(str(pattern), str(text), "--backend", "serial", "--json")
    assert {p[1] for p in json.loads(run.stdout)["pairs"]} == ids


def test_json_global_and_search(demo_dir):
    run = _cli("ACGTACGT", "ACGGTACGTTT", "--json", "--variant", "dp", "--backend", "serial")
    assert run.returncode == 0, run.stderr
    payload = json.loads(run.stdout)
    assert payload["family"] == "edit" and payload["variant"] == "dp"
    assert payload["distance"] == 3 and payload["pairs"] == [["literal", "literal", 3, None]]
    assert payload["seconds"] >= 0 and payload["cells"] == 8 * 11
    msx2 = str(demo_dir / "msx2_mrna_homologs.fa")
    run = _cli("GGCCGGGGCCACCCTGCGGCCA", msx2, "--mode", "search", "-k", "2", "--json", "--threads", "2")
    assert run.returncode == 0, run.stderr
    payload = json.loads(run.stdout)
    assert payload["best"] == 0 and payload["best"] == min(h[2] for h in payload["hits"])
    assert len(payload["details"]) == len(payload["hits"])
    assert all(start <= end for start, end, _ in payload["hits"])


def test_json_global_keeps_every_patterns_distance(tmp_path):
    """Several patterns: ``distance`` is the smallest (SPEC's one number), ``pairs`` the CSV's
    rows, so no pattern's distance is lost."""
    patterns = tmp_path / "patterns.fa"
    patterns.write_text(">p1\nACGTTGCA\n>p2\nACGTAGCAT\n>p3\nTTTTTTTT\n")
    for extra in ([], ["-k", "2", "--align"]):
        args = (str(patterns), "ACGTAGCA", "--backend", "serial", *extra)
        rows = list(csv.reader(io.StringIO(_cli(*args).stdout)))[1:]
        payload = json.loads(_cli(*args, "--json").stdout)
        assert [[str("" if c is None else c) for c in pair] for pair in payload["pairs"]] == rows
        assert [pair[2] for pair in payload["pairs"]] == ([1, 1, 7] if not extra else [1, 1, None])
        assert payload["distance"] == 1


def test_zip_batch_global_csv(demo_dir):
    msx2 = str(demo_dir / "msx2_mrna_homologs.fa")
    run = _cli(msx2, msx2, "--pairs", "zip", "--variant", "banded", "-k", "0")
    assert run.returncode == 0, run.stderr
    rows = list(csv.reader(io.StringIO(run.stdout)))
    assert rows[0] == ["pattern_id", "record_id", "distance", "cigar"]
    assert len(rows) == 9 and all(r[2] == "0" for r in rows[1:])


BAD = [  # (name, arguments, a distinctive part of the one-line error)
    ("search without k", ["ACGT", "ACGTT", "--mode", "search"], "--mode search needs -k K"),
    ("negative k", ["ACGT", "ACGTT", "-k", "-1"], "k must be >= 0, got -1"),
    ("bad character", ["ACGTXQ", "ACGTT"], "position 5: invalid character 'X'"),
    ("missing file", ["missing.fa", "ACGTT"], "missing.fa: no such file"),
    ("myers over 64", ["A" * 65, "ACGTT", "--variant", "myers"], "up to 64 symbols"),
    ("zip needs equal counts", ["ACGT", "{msx2}", "--pairs", "zip"],
     "needs as many patterns as text records (1 patterns, 8 text records)"),
    ("both strands in global", ["ACGT", "ACGTT", "--strands", "both"],
     "strands='both' applies to search mode only"),
    ("no cuda backend", ["ACGT", "ACGTT", "--backend", "cuda"], "cuda backend is not available"),
    ("empty file", ["{empty}", "ACGTT"], "empty.fa: no fasta sequence records found"),
]


def test_bad_input_exits_2_with_one_line_and_no_file(tmp_path, demo_dir, monkeypatch):
    monkeypatch.delenv("NUMBA_ENABLE_CUDASIM", raising=False)  # the simulator would accept cuda
    empty = tmp_path / "empty.fa"
    empty.write_text("")
    subs = {"{msx2}": str(demo_dir / "msx2_mrna_homologs.fa"), "{empty}": str(empty)}

    def run(case):
        name, args, needle = case
        out = tmp_path / f"{name.replace(' ', '_')}.csv"
        args = [subs.get(a, a) for a in args] + ["-o", str(out)]
        return name, needle, out, _cli(*args, cwd=tmp_path)

    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(run, BAD))
    for name, needle, out, proc in results:
        assert proc.returncode == 2, (name, proc.stderr)
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("primerscope: error:"), (name, proc.stderr)
        assert needle in lines[0], (name, proc.stderr)
        assert "Traceback" not in proc.stderr
        assert not out.exists(), name
    assert not [p for p in os.listdir(tmp_path) if p.startswith(".primerscope-")]


@pytest.mark.parametrize("args", [["--mode", "search", "-k", "1", "--report", "best"]])
def test_unwritable_output_is_bad_input(tmp_path, args):
    run = _cli("ACGT", "ACGTT", *args, "-o", str(tmp_path / "no" / "such" / "dir.csv"))
    lines = run.stderr.strip().splitlines()
    assert run.returncode == 2 and len(lines) == 1
    assert lines[0].startswith("primerscope: error:") and "cannot write output" in lines[0], run.stderr
