"""Panel check: the dimer matrices are primer3-py's, 3'-end dimers flagged, cross-products
equal the in-silico PCR of the set."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import primer3
import pytest

from engine.primers import panel, pcr
from engine.sequences import Record, encode
from tests.engine.primers.brute import rc

PRIMERS = {
    "A": "ACGTTGCAAGGCTTAGCATG",
    "B": "GGCATCGATCGGCTAGCTAG",
    "C": "TTTTTTTTTTCATGCTAAGC",   # its 3' end pairs with A's 3' end: an extendable dimer
    "D": "GATCNNATCGGCTAGCTAGA",   # ambiguity codes: no thermodynamic values
}


def _records(d):
    return [Record(n, encode(s)) for n, s in d.items()]


def test_matrices_are_primer3s_and_end_dimers_flagged():
    res = panel.solve(_records(PRIMERS))
    names = list(PRIMERS)
    for i, a in enumerate(names):
        for j, b in enumerate(names):
            if "D" in (a, b):
                assert np.isnan(res.dimer_dg[i, j]) and not res.end_dimer[i, j]
                continue
            het = primer3.calc_heterodimer(PRIMERS[a], PRIMERS[b])
            assert res.dimer_dg[i, j] == pytest.approx(het.dg / 1000.0)
            assert res.dimer_tm[i, j] == pytest.approx(het.tm)
            end = primer3.calc_end_stability(PRIMERS[a], PRIMERS[b]).dg / 1000.0
            assert res.end_dg[i, j] == pytest.approx(end)
    assert np.array_equal(res.dimer_dg, res.dimer_dg.T, equal_nan=True)
    a, c = names.index("A"), names.index("C")
    assert res.end_dimer[a, c] and res.end_dimer[c, a]
    assert res.end_dg[a, c] <= -5.0
    assert not res.end_dimer[names.index("A"), names.index("B")]
    assert res.products == () and not res.has_background


def test_cross_products_with_a_background(lambda_record, ecoli_record):
    lam = lambda_record.text
    primers = {"F1": lam[1000:1020], "R1": rc(lam[1400:1420]), "F2": lam[2000:2020],
               "R2": rc(lam[2600:2620])}
    # Pair 1's product, and F2 facing R1: a cross-product between two pairs.
    bg = (ecoli_record.text[50_000:50_500] + lam[1000:1420] + ecoli_record.text[60_000:60_300]
          + primers["F2"] + ecoli_record.text[70_000:70_400] + rc(primers["R1"]))
    background = [Record("bg", encode(bg))]
    res = panel.solve(_records(primers), background, backend="serial")
    direct = pcr.solve(_records(primers), background, backend="serial")
    assert res.products == direct.products
    assert {(p.forward, p.reverse) for p in res.products} == {("F1", "R1"), ("F2", "R1")}
    assert len(res.products_between("R1", "F2")) == 1


def test_cli_panel(tmp_path):
    table = tmp_path / "panel.csv"
    table.write_text("name,sequence\n" + "".join(f"{n},{s}\n" for n, s in PRIMERS.items()))
    done = subprocess.run([sys.executable, "-m", "engine.cli", "panel", str(table), "--json"],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    payload = json.loads(done.stdout)
    assert [p["name"] for p in payload["primers"]] == list(PRIMERS)
    assert len(payload["dimer_dg"]) == 4 and payload["dimer_dg"][3][3] is None
    assert payload["end_dimer"][0][2] is True and payload["products"] is None
    assert len(payload["pairs"]) == 10
    done = subprocess.run([sys.executable, "-m", "engine.cli", "panel", str(table), "--matrix", "dg"],
                          capture_output=True, text=True, timeout=600)
    rows = done.stdout.splitlines()
    assert rows[0] == ",A,B,C,D" and len(rows) == 5 and rows[4].startswith("D,,")


def test_cli_panel_background_region(tmp_path, lambda_record, capsys):
    """--background-region, as the other primer tools take it: the cross-products of that
    region alone (those of the region cut out by hand), in the record's own numbering."""
    from engine.cli import main

    lam = lambda_record.text
    primers = tmp_path / "p.csv"
    primers.write_text(f"name,sequence\nF1,{lam[1000:1020]}\nR1,{rc(lam[1400:1420])}\n"
                       f"F2,{lam[30000:30020]}\nR2,{rc(lam[30400:30420])}\n")
    background = tmp_path / "lambda.fa"
    background.write_text(f">{lambda_record.id}\n{lam}\n")
    assert main(["panel", str(primers), str(background), "--background-region", "20001-40000",
                 "--json", "--backend", "serial", "--no-progress"]) == 0
    products = json.loads(capsys.readouterr().out)["products"]
    assert [(p["forward"], p["reverse"], p["start"]) for p in products] == [("F2", "R2", 30001)]
    assert main(["panel", str(primers), "--background-region", "1-5"]) == 2
    assert capsys.readouterr().err == "primerscope: error: --background-region needs a BACKGROUND\n"
