"""``primerscope kmismatch`` as scripts use it: CSV, JSON, exit codes and one-line errors."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys

import pytest

from engine import kmismatch
from engine.sequences import load


def run_cli(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "engine.cli", "kmismatch", *map(str, args)],
                          capture_output=True, text=True, cwd=cwd)


def test_literal_csv_both_strands():
    out = run_cli("ACTTGTACCAGTAAGT", "ACTG", "-k", "1", "--backend", "serial")
    assert out.returncode == 0, out.stderr
    assert out.stdout == ("pattern_id,record_id,start,end,strand,mismatches,matched\n"
                          "literal,literal,1,4,+,1,ACTT\n"
                          "literal,literal,9,12,-,0,ACTG\n"
                          "literal,literal,13,16,-,1,ACTT\n")


def test_forward_strand_and_comma_separated_literals():
    out = run_cli("ACTTGTACCAGTAAGT", "ACTG,CCAG", "-k", "1", "--strands", "forward",
                  "--variant", "shift-add", "--backend", "multicore", "--threads", "2")
    assert out.returncode == 0, out.stderr
    rows = list(csv.reader(io.StringIO(out.stdout)))[1:]
    assert rows == [["literal1", "literal", "1", "4", "+", "1", "ACTT"],
                    ["literal2", "literal", "8", "11", "+", "0", "CCAG"]]


def test_files_csv_and_json_agree_with_the_engine(tmp_path, demo_dir, lambda_record):
    patterns = tmp_path / "primers.fa"
    patterns.write_text(">fwd\n" + lambda_record.text[100:118] + "\n>rev\n"
                        + lambda_record.text[4000:4015] + "\n>short\nGATTACA\n")
    text = demo_dir / "lambda_NC_001416.fa"
    out_csv = tmp_path / "hits.csv"
    done = run_cli(text, patterns, "-k", "2", "--variant", "naive", "-o", out_csv)
    assert done.returncode == 0, done.stderr
    expected = kmismatch.solve(load(patterns), load(text), 2, backend="serial")
    rows = list(csv.reader(io.StringIO(out_csv.read_text())))
    assert rows[0] == ["pattern_id", "record_id", "start", "end", "strand", "mismatches", "matched"]
    assert [tuple(r) for r in rows[1:]] == [tuple(map(str, r)) for r in expected.hits.tuples()]
    assert ("fwd", load(text)[0].id, "101", "118", "+", "0", lambda_record.text[100:118]) in [
        tuple(r) for r in rows]
    js = run_cli(text, patterns, "-k", "2", "--json")
    assert js.returncode == 0, js.stderr
    payload = json.loads(js.stdout)
    assert payload["family"] == "kmismatch" and payload["variant"] == "pmasm"
    assert payload["seconds"] >= 0 and payload["cells"] > 0
    assert payload["hits"] == [[r[0], r[1], int(r[2]), int(r[3]), r[4], int(r[5])]
                               for r in rows[1:]]


def test_formula_like_ids_get_a_quote_in_the_csv(tmp_path):
    """Ids from FASTA headers that a spreadsheet would run (CSV injection) get a leading
    quote; a '-' strand stays a strand, the JSON keeps the ids as they are."""
    from engine.spreadsheet import unquoted_cell

    text = tmp_path / "text.fa"
    text.write_text('>=HYPERLINK("x")\nACTTGTACCAGTAAGT\n>@SUM(A1)\nGGACTGGG\n')
    patterns = tmp_path / "patterns.fa"
    patterns.write_text(">-1+2\nACTG\n")
    out = run_cli(text, patterns, "-k", "1", "--backend", "serial")
    assert out.returncode == 0, out.stderr
    rows = list(csv.reader(io.StringIO(out.stdout)))[1:]
    assert rows and all(r[0] == "'-1+2" for r in rows)
    assert {r[1] for r in rows} == {"'=HYPERLINK(\"x\")", "'@SUM(A1)"}
    assert {r[4] for r in rows} == {"+", "-"}
    assert {unquoted_cell(r[1]) for r in rows} == {'=HYPERLINK("x")', "@SUM(A1)"}
    js = run_cli(text, patterns, "-k", "1", "--backend", "serial", "--json")
    assert {h[1] for h in json.loads(js.stdout)["hits"]} == {'=HYPERLINK("x")', "@SUM(A1)"}


def test_pattern_longer_than_the_text_is_not_an_error():
    out = run_cli("ACGTAC", "ACGTACGTACGT", "-k", "1")
    assert out.returncode == 0, out.stderr
    assert out.stdout == "pattern_id,record_id,start,end,strand,mismatches,matched\n"


@pytest.fixture()
def bad_inputs(tmp_path):
    files = {name: tmp_path / f"{name}.fa" for name in ("empty", "protein", "gaps", "blank_record")}
    files["empty"].write_text("")
    files["protein"].write_text(">p53\nMEEPQSDPSVEPPLSQETFSDLWKLL\n")
    files["gaps"].write_text(">s1\nACGT\n>s2\nAC--GT\n")
    files["blank_record"].write_text(">nothing\n>s2\nACGT\n")
    return files


@pytest.mark.parametrize("case", [
    "empty_pattern_file", "empty_pattern_literal", "negative_k", "protein_patterns", "gap_in_text",
    "bad_literal_in_list", "blank_pattern_record", "non_numeric_k", "missing_text",
])
def test_bad_input_exits_2_with_one_line_and_no_output_file(case, bad_inputs, tmp_path):
    out_csv = tmp_path / "out.csv"
    args, needle = {
        "empty_pattern_file": (("ACGTACGT", bad_inputs["empty"], "-k", "1"),
                               "empty.fa: no fasta sequence records found"),
        "empty_pattern_literal": (("ACGTACGT", "", "-k", "1"), "empty pattern set"),
        "negative_k": (("ACGTACGT", "ACG", "-k", "-1"), "k must be >= 0, got -1"),
        "protein_patterns": (("ACGTACGT", bad_inputs["protein"], "-k", "1"),
                             "record 'p53' position 2: invalid character 'E'"),
        "gap_in_text": ((bad_inputs["gaps"], "ACG", "-k", "1"),
                        "record 's2' position 3: invalid character '-'"),
        "bad_literal_in_list": (("ACGTACGT", "ACG,AC1G", "-k", "1"),
                                "record 'literal2' position 3: invalid character '1'"),
        "blank_pattern_record": (("ACGTACGT", bad_inputs["blank_record"], "-k", "1"),
                                 "record 'nothing' is empty"),
        "non_numeric_k": (("ACGTACGT", "ACG", "-k", "two"), "argument -k: invalid int value: 'two'"),
        "missing_text": ((tmp_path / "nowhere.fa", "ACG", "-k", "1"), "nowhere.fa: no such file"),
    }[case]
    done = run_cli(*args, "-o", out_csv)
    assert done.returncode == 2, (done.stdout, done.stderr)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("primerscope: error:"), done.stderr
    assert needle in lines[0], done.stderr
    assert "Traceback" not in done.stderr
    assert not out_csv.exists()
    assert list(tmp_path.glob(".primerscope-*")) == []


def test_bad_character_message_names_record_and_position(bad_inputs):
    done = run_cli("ACGTACGT", bad_inputs["gaps"], "-k", "1")
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1
    assert "'s2' position 3" in done.stderr and "'-'" in done.stderr
