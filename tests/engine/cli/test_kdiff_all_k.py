"""``primerscope kdiff --all-k K`` (issue #33): CSV and JSON per the contract, each k's
lengths equal to ``-k`` runs, the bedGraph tracks, and one-line refusals (exit 2)."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys

import pytest

from engine.kdiff.landscape_table import have_pybigwig

TARGET, BACKGROUND = "ACTGACGTTAGCATTGACCA", "AGCAAGACGTTTAGCAATGAC"


def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "engine.cli", *map(str, args)],
                          capture_output=True, text=True)


def _candidates(k):
    out = run_cli("kdiff", TARGET, BACKGROUND, "-k", k, "--json", "--backend", "serial")
    assert out.returncode == 0, out.stderr
    return {start: end - start + 1 for _, start, end in json.loads(out.stdout)["candidates"]}


def test_json_and_csv_hold_every_k(tmp_path):
    out = run_cli("kdiff", TARGET, BACKGROUND, "--all-k", 3, "--json", "--backend", "serial",
                  "--bedgraph", tmp_path / "t")
    assert out.returncode == 0, out.stderr
    land = json.loads(out.stdout)["landscape"]
    assert land["k"] == [1, 2, 3]
    assert [row[1] for row in land["rows"]] == list(range(1, len(TARGET) + 1))
    for k in (1, 2, 3):
        want = _candidates(k)
        got = {row[1]: row[1 + k] for row in land["rows"] if row[1 + k] is not None}
        assert got == want, k
        lines = (tmp_path / f"t.k{k}.bedGraph").read_text().splitlines()
        assert lines[0].startswith("track type=bedGraph")
        per_base = {p + 1: int(v) for _, a, b, v in (ln.split("\t") for ln in lines[1:])
                    for p in range(int(a), int(b))}
        assert per_base == want
    csv_out = run_cli("kdiff", TARGET, BACKGROUND, "--all-k", 3, "--backend", "serial")
    rows = list(csv.reader(io.StringIO(csv_out.stdout)))
    assert rows[0] == ["target_id", "start", "len_k1", "len_k2", "len_k3"]
    assert [[r[0], int(r[1])] + [None if x == "" else int(x) for x in r[2:]] for r in rows[1:]] \
        == land["rows"]


@pytest.mark.parametrize("args, message", [
    (("--all-k", 2, "-k", 2), "give -k K or --all-k K, not both"),
    ((), "kdiff needs -k K (or --all-k K)"),
    (("--all-k", 0), "--all-k must be >= 1, got 0"),
    (("-k", 2, "--bedgraph", "x"), "--bedgraph needs --all-k K"),
    (("--all-k", 2, "--merge"), "--merge works on the candidates of one k"),
    (("--all-k", 2, "--variant", "alternative", "--parallel", "coarse+fine"),
     "kdiff --all-k does not run with --parallel coarse+fine"),
])
def test_refusals_are_one_line(args, message):
    out = run_cli("kdiff", "ACTG", "AGCA", *args)
    assert out.returncode == 2
    assert out.stderr.strip().splitlines() == [f"primerscope: error: {message}"] or \
        (len(out.stderr.strip().splitlines()) == 1 and message in out.stderr)


@pytest.mark.skipif(have_pybigwig(), reason="pyBigWig is installed")
def test_bigwig_without_pybigwig_is_refused():
    out = run_cli("kdiff", "ACTG", "AGCA", "--all-k", 2, "--bigwig", "x")
    assert out.returncode == 2 and "--bigwig needs pyBigWig" in out.stderr
