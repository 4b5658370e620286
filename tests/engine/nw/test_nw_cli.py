"""``primerscope nw``: pairwise text, CSV of columns, JSON, and one-line errors with exit 2."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys

import pytest

from engine import nw
from engine.nw.reference import rescore
from engine.sequences import load


def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "engine.cli", "nw", *map(str, args)],
                          capture_output=True, text=True)


def test_stdout_is_pairwise_text_and_json_has_the_answer(tmp_path):
    out = run_cli("GATTACAGATTACA", "GATCACAGTTACA", "--backend", "serial")
    assert out.returncode == 0, out.stderr
    assert "# Score: 11" in out.stdout and "|||" in out.stdout
    js = run_cli("GATTACAGATTACA", "GATCACAGTTACA", "--json", "--match", "2", "--mismatch", "-1",
                 "--gap", "-2", "--variant", "prefix", "--backend", "multicore", "--threads", "2")
    assert js.returncode == 0, js.stderr
    payload = json.loads(js.stdout)
    assert payload["family"] == "nw" and payload["variant"] == "prefix"
    assert {"score", "aligned_a", "aligned_b", "cigar", "identity"} <= payload.keys()
    expected = nw.solve(load("GATTACAGATTACA"), load("GATCACAGTTACA"), match=2, mismatch=-1,
                        gap=-2)
    assert payload["score"] == expected.score
    assert rescore(payload["aligned_a"], payload["aligned_b"], 2, -1, -2) == payload["score"]


def test_output_file_format_follows_the_suffix(tmp_path, demo_dir):
    msx2 = demo_dir / "msx2_mrna_homologs.fa"
    other = tmp_path / "b.fa"
    other.write_text(">second\n" + load(msx2)[2].text[:300] + "\n>third\nACGT\n")
    txt, table = tmp_path / "out.txt", tmp_path / "out.csv"
    assert run_cli(msx2, other, "-o", txt).returncode == 0
    assert run_cli(msx2, other, "-o", table).returncode == 0
    text = txt.read_text()
    assert text.startswith("####") and "# 1: NM_002449.4" in text and "# 2: second" in text
    rows = list(csv.reader(io.StringIO(table.read_text())))
    assert rows[0] == ["column", "a_pos", "b_pos", "a", "b", "op"]
    res = nw.solve(load(msx2), load(other))
    assert len(rows) - 1 == res.alignment.columns
    assert "".join(r[3] for r in rows[1:]) == res.alignment.aligned_a


@pytest.mark.parametrize("args, message", [
    (("ACGT", "ACGT", "--gap", "x"), "--gap"),
    (("ACGT", "ACGT", "--match", "1.5"), "--match"),
    (("ACGT", "ACGT", "--mismatch", "1e9"), "--mismatch"),
    (("ACGT", "ACGT", "--gap", "-5000"), "gap"),
])
def test_bad_scores_exit_2_in_one_line(tmp_path, args, message):
    out_file = tmp_path / "out.csv"
    out = run_cli(*args, "-o", out_file)
    assert out.returncode == 2
    assert out.stderr.count("\n") == 1 and message in out.stderr
    assert "Traceback" not in out.stderr and not out_file.exists() and out.stdout == ""


@pytest.mark.parametrize("content, message, side", [
    (">p\nMEEPQSDPSVEPPLSQ\n", "invalid character 'E'", "a"),
    (">s1\nAC--GT\n", "invalid character '-'", "b"),
    (">s1\nACG7T\n", "invalid character '7'", "a"),
    (">nothing\n>s2\nACGT\n", "empty", "b"),
    ("", "empty", "a"),
])
def test_bad_sequences_exit_2_in_one_line(tmp_path, content, message, side):
    bad = tmp_path / "bad.fa"
    bad.write_text(content)
    out_file = tmp_path / "out.txt"
    args = (bad, "ACGT") if side == "a" else ("ACGT", bad)
    out = run_cli(*args, "-o", out_file)
    assert out.returncode == 2, out.stderr
    assert out.stderr.count("\n") == 1 and message in out.stderr and str(bad) in out.stderr
    assert "Traceback" not in out.stderr and not out_file.exists() and out.stdout == ""
