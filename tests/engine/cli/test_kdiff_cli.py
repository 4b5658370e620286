"""``primerscope kdiff`` as scripts use it: CSV, JSON, exit codes and one-line errors."""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys

import pytest

from engine import kdiff
from engine.sequences import load


def run_cli(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "engine.cli", *map(str, args)],
                          capture_output=True, text=True, cwd=cwd)


def test_seed_example_csv():
    out = run_cli("kdiff", "ACTG", "AGCAAG", "-k", "2", "--strands", "forward", "--backend", "serial")
    assert out.returncode == 0, out.stderr
    assert out.stdout == ("target_id,start,end,length,sequence\n"
                          "literal,1,3,3,ACT\nliteral,2,4,3,CTG\n")


def test_json_and_file_output_agree_with_the_engine(tmp_path, demo_dir):
    target, background = demo_dir / "msx2_mrna_homologs.fa", tmp_path / "bg.fa"
    background.write_text(">bg\n" + load(demo_dir / "yeast_someORF.fa")[0].text[:3000] + "\n")
    out_csv = tmp_path / "out.csv"
    done = run_cli("kdiff", target, background, "-k", "3", "-o", out_csv, "--variant", "alternative",
                   "--backend", "multicore", "--parallel", "fine", "--opt", "opt2", "--opt", "opt3",
                   "--threads", "2")
    assert done.returncode == 0, done.stderr
    expected = kdiff.solve(load(target), load(background), 3)
    rows = list(csv.reader(io.StringIO(out_csv.read_text())))
    assert rows[0] == ["target_id", "start", "end", "length", "sequence"]
    assert [(r[0], int(r[1]), int(r[2])) for r in rows[1:]] == [
        (c.target_id, c.start, c.end) for c in expected.candidates]
    js = run_cli("kdiff", target, background, "-k", "3", "--json")
    payload = json.loads(js.stdout)
    assert payload["family"] == "kdiff" and payload["variant"] == "bitparallel"
    assert payload["seconds"] >= 0 and payload["cells"] > 0
    assert payload["candidates"] == [[c.target_id, c.start, c.end] for c in expected.candidates]


@pytest.fixture()
def bad_files(tmp_path):
    files = {}
    files["protein"] = tmp_path / "protein.fa"
    files["protein"].write_text(">p53\nMEEPQSDPSVEPPLSQETFSDLWKLL\n")
    files["gaps"] = tmp_path / "aln.fa"
    files["gaps"].write_text(">s1\nACGT\n>s2\nAC--GT\n")
    files["empty_record"] = tmp_path / "empty.fa"
    files["empty_record"].write_text(">nothing\n>s2\nACGT\n")
    files["missing"] = tmp_path / "missing.fa"
    files["unreadable"] = tmp_path  # a directory cannot be read as a file
    return files


@pytest.mark.parametrize("case,pattern", [
    ("protein", r"protein.fa: record 'p53' position 2: invalid character 'E'"),
    ("gaps", r"aln.fa: record 's2' position 3: invalid character '-'"),
    ("empty_record", r"empty.fa: record 'nothing' is empty"),
    ("missing", r"missing.fa: no such file"),
    ("unreadable", r"is a directory"),
])
def test_bad_input_exit_2_one_line_no_partial_output(tmp_path, bad_files, case, pattern):
    out_csv = tmp_path / "result.csv"
    done = run_cli("kdiff", bad_files[case], "ACGTACGT", "-k", "2", "-o", out_csv)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr
    import re
    assert re.search(pattern, lines[0]), lines[0]
    assert not out_csv.exists()
    assert not [p for p in os.listdir(tmp_path) if p.startswith(".primerscope-")]


@pytest.mark.parametrize("args,pattern", [
    (["-k", "0"], "k must be >= 1, got 0"),
    (["-k", "-3"], "k must be >= 1, got -3"),
    (["-k", "two"], "invalid int value"),
    (["-k", "2", "-o", "/nonexistent-dir/out.csv"], "cannot write output"),
    (["-k", "2", "--variant", "bitparallel", "--parallel", "fine", "--backend", "multicore"],
     "no parallel form"),
    (["-k", "2", "--backend", "serial", "--opt", "opt3"], "does not apply"),
])
def test_bad_options_exit_2(args, pattern):
    done = run_cli("kdiff", "ACGTACGT", "ACGGT", *args)
    assert done.returncode == 2
    assert pattern in done.stderr and len(done.stderr.strip().splitlines()) == 1


def test_output_path_that_is_a_directory(tmp_path):
    done = run_cli("kdiff", "ACGTACGT", "ACGGT", "-k", "2", "-o", tmp_path)
    assert done.returncode == 2 and "is a directory" in done.stderr


def test_app_launcher_routes_compute_commands_without_qt():
    code = ("import sys; from app.launcher import main; rc = main(['kdiff','ACTG','AGCAAG','-k','2',"
            "'--strands','forward']); assert not [m for m in sys.modules if m.startswith('PySide6')];"
            "sys.exit(rc)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "literal,1,3,3,ACT" in done.stdout


def test_bench_lists_the_issue_workloads():
    done = subprocess.run([sys.executable, "-m", "benchmarks", "kdiff", "--list"],
                          capture_output=True, text=True)
    assert done.returncode == 0
    for name in ("W1", "W2", "W3", "edlib binary search"):
        assert name in done.stdout


def test_a_run_without_a_candidate_says_why(tmp_path, capsys):
    """The CSV of a finished run without a candidate is a header alone: stderr says why (the
    target lies within k-1 edits of the background); with candidates it says nothing."""
    from engine.cli import main

    seq = tmp_path / "t.fa"
    seq.write_text(">t\nACGTTGCAGGCTAGCATCGATTACGGACTAG\n")
    assert main(["kdiff", str(seq), str(seq), "-k", "3", "--no-progress"]) == 0
    out, err = capsys.readouterr()
    assert out == "target_id,start,end,length,sequence\n"
    assert err == ("primerscope: warning: no candidate: from every start, the rest of the target "
                   "lies within 2 edits of the background (nothing in it is 3 edits away); lower "
                   "-k, or check that the background does not hold the target\n")
    other = tmp_path / "o.fa"
    other.write_text(">o\nTTTTTTTTTTTTTTTTTTTTTTTTT\n")
    assert main(["kdiff", str(seq), str(other), "-k", "3", "--no-progress"]) == 0
    out, err = capsys.readouterr()
    assert len(out.splitlines()) > 1 and err == ""


def test_json_names_the_command_besides_its_family(capsys):
    """--json's metadata: ``command`` is the subcommand (offtarget runs the edit family, so its
    ``family`` alone could not tell a script which command wrote the object)."""
    from engine.cli import main

    assert main(["offtarget", "ACGTTGCAGGCTAGCA", "ACGTTGCAGGCTAGCATTTT", "--json",
                 "--no-progress"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert (payload["command"], payload["family"]) == ("offtarget", "edit")
    assert main(["kdiff", "ACGTTGCA", "TTTTTTTT", "-k", "1", "--json", "--no-progress"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert (payload["command"], payload["family"]) == ("kdiff", "kdiff")
