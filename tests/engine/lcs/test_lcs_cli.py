"""``primerscope lcs A B``: CSV and JSON output, and bad input (exit 2, one line, no file)."""

from __future__ import annotations

import csv
import gzip
import io
import json
import subprocess
import sys

import pytest

from engine import lcs
from engine.lcs import reference
from engine.sequences import encode, load
from tests.conftest import ROOT


def _cli(*args, cwd=ROOT):
    return subprocess.run([sys.executable, "-m", "engine.cli", "lcs", *map(str, args),
                           "--no-progress"], capture_output=True, text=True, cwd=cwd, timeout=300)


def test_csv_lists_the_pairs_with_their_symbols(tmp_path):
    fasta = tmp_path / "a.fa"
    fasta.write_text(">first\nACCGGTT\n>second\nTTTT\n")  # only the first record is used
    out = _cli(fasta, "ACGTAGT", "--backend", "serial")
    assert out.returncode == 0, out.stderr
    rows = list(csv.reader(io.StringIO(out.stdout)))
    assert rows[0] == ["a_pos", "b_pos", "symbol"]
    body = [(int(i), int(j), s) for i, j, s in rows[1:]]
    assert len(body) == reference.lcs(encode("ACCGGTT"), encode("ACGTAGT"))[0] == 5
    assert all("ACCGGTT"[i - 1] == s == "ACGTAGT"[j - 1] for i, j, s in body)


def test_json_has_length_lcs_and_metadata(tmp_path):
    gz = tmp_path / "b.fa.gz"
    gz.write_bytes(gzip.compress(b">b\nTTGCANNA\n"))
    out = _cli("ACGTRA", gz, "--json", "--variant", "wavefront", "--backend", "multicore",
               "--threads", "2")
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)
    assert got["family"] == "lcs" and got["variant"] == "wavefront" and got["backend"] == "multicore"
    assert got["length"] == len(got["lcs"]) == reference.lcs(encode("ACGTRA"), encode("TTGCANNA"))[0]
    assert got["complete"] is True and got["cells"] > 0 and got["seconds"] >= 0


def test_length_task_and_output_file(tmp_path, demo_dir):
    target = tmp_path / "out.csv"
    out = _cli(demo_dir / "msx2_mrna_homologs.fa", demo_dir / "yeast_someORF.fa", "--task", "length",
               "-o", target)
    assert out.returncode == 0 and out.stdout == ""
    lines = target.read_text().splitlines()
    # The exact length, from the API with another variant (the CLI's default is bitparallel).
    a, b = load(demo_dir / "msx2_mrna_homologs.fa")[0], load(demo_dir / "yeast_someORF.fa")[0]
    expected = lcs.solve(a, b, task="length", variant="rows", backend="serial").length
    assert lines == ["length", str(expected)] and expected > 0


@pytest.mark.parametrize("make_args,needle", [
    (lambda d: [d / "missing.fa", "ACGT"], "no such file"),
    (lambda d: [d / "empty.fa", "ACGT"], "empty"),
    (lambda d: [d / "bad.fa", "ACGT"], "position 3"),
    (lambda d: [d / "protein.fa", "ACGT"], "protein"),
    (lambda d: ["ACGT", "ACGT", "--backend", "cuda"], "cuda"),
    (lambda d: ["ACGT", "ACGT", "--threads", "0"], "threads"),
    (lambda d: ["ACGT", "ACGT", "--variant", "diagonal"], "variant"),
    (lambda d: ["ACGT", "ACGT", "--task", "path"], "task"),
    (lambda d: ["ACGT"], "required"),
])
def test_bad_input_exits_2_with_one_line(tmp_path, make_args, needle):
    (tmp_path / "empty.fa").write_text("")
    (tmp_path / "bad.fa").write_text(">r1\nAC-T\n")
    (tmp_path / "protein.fa").write_text(">p\nMKLLPQEF\n")
    target = tmp_path / "out.csv"
    out = _cli(*make_args(tmp_path), "-o", target)
    assert out.returncode == 2
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0] and "Traceback" not in out.stderr
    assert not target.exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".primerscope")] == []
