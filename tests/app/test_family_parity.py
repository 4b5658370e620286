"""kmismatch, lcs, edit and nw from the GUI get what kdiff has (issue 20, test suite): the table
equals the engine's answer for the same job, and the CSV the GUI exports equals the one the
command line writes for the same inputs and options, byte for byte."""

from __future__ import annotations

import subprocess
import sys

import pytest

from engine import edit, kmismatch, lcs, nw
from tests.app.conftest import load_demo, run, write_fasta


def _blank(value):
    return "" if value is None else value


def _kmismatch(inputs, params, variant):
    res = kmismatch.solve(inputs["patterns"], inputs["text"], params["k"], variant=variant,
                          backend="serial", strands=params["strands"])
    rows = [(h.pattern_id, h.record_id, h.start, h.end, h.strand, h.mismatches, h.matched)
            for h in (res.hits[i] for i in range(len(res.hits)))]
    cli = [("text", "text"), ("patterns", "patterns")], ["-k", str(params["k"]), "--strands",
                                                          params["strands"]]
    return rows, cli


def _lcs(inputs, params, variant):
    res = lcs.solve(inputs["a"][0], inputs["b"][0], variant=variant, backend="serial",
                    task=params["task"])
    rows = [(i, j, s) for (i, j), s in zip(res.pairs.tolist(), res.lcs)]
    return rows, ([("a", "a"), ("b", "b")], ["--task", params["task"]])


def _edit(inputs, params, variant):
    res = edit.solve(inputs["pattern"], inputs["text"], mode=params["mode"], k=params["k"],
                     variant=variant, backend="serial", strands=params["strands"],
                     pairing=params["pairing"], report=params["report"])
    rows = [(h.pattern_id, h.record_id, _blank(h.start), h.end, h.strand, h.distance, _blank(h.cigar),
             _blank(h.matched)) for h in res.hits]
    options = ["--mode", params["mode"], "-k", str(params["k"]), "--strands", params["strands"],
               "--pairs", params["pairing"], "--report", params["report"]]
    return rows, ([("pattern", "pattern"), ("text", "text")], options)


def _nw(inputs, params, variant):
    res = nw.solve(inputs["a"][0], inputs["b"][0], match=params["match"], mismatch=params["mismatch"],
                   gap=params["gap"], variant=variant, backend="serial")
    al, rows, i, j = res.alignment, [], 0, 0
    for column, (x, y) in enumerate(zip(al.aligned_a, al.aligned_b), start=1):
        i += x != "-"
        j += y != "-"
        op = "D" if y == "-" else "I" if x == "-" else "=" if x == y else "X"
        rows.append((column, i if x != "-" else "", j if y != "-" else "", x, y, op))
    options = ["--match", str(params["match"]), "--mismatch", str(params["mismatch"]),
               "--gap", str(params["gap"])]
    return rows, ([("a", "a"), ("b", "b")], options)


CASES = {"kmismatch": _kmismatch, "lcs": _lcs, "edit": _edit, "nw": _nw}


@pytest.mark.parametrize("family", list(CASES))
def test_table_equals_engine_and_csv_equals_cli(qtbot, window, tmp_path, family):
    window.params.set_family(family)
    load_demo(qtbot, window, "msx2")
    window.params.set_selection(backend="serial")
    state = window.params.state()
    variant, params = state["variant"], dict(state["params"])
    result = run(qtbot, window)
    assert result.info.complete and result.info.backend == "serial"
    inputs = window.inputs()

    rows, (files, options) = CASES[family](inputs, params, variant)
    assert rows, "the demo should give rows to compare"
    assert window.results.model.rows() == rows

    gui_csv = window.exports.export_csv(str(tmp_path / "gui.csv"), rows="all")
    paths = [write_fasta(tmp_path / f"{name}.fa", inputs[role]) for role, name in files]
    out = tmp_path / "cli.csv"
    done = subprocess.run([sys.executable, "-m", "engine.cli", family, *paths, *options,
                           "--variant", variant, "--backend", "serial", "-o", str(out)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert open(gui_csv, "rb").read() == out.read_bytes()


#: (role given a region, table column of its positions) per family.
REGION_COLUMNS = {"kmismatch": ("text", 2), "lcs": ("a", 0), "edit": ("text", 3), "nw": ("a", 1)}


@pytest.mark.parametrize("family", list(REGION_COLUMNS))
def test_a_region_keeps_the_records_coordinates(qtbot, window, family):
    """Only positions 101..: the table counts from 101, under the record's own id, and the
    views still draw (their matrices are indexed from the region's first base)."""
    role, column = REGION_COLUMNS[family]
    window.params.set_family(family)
    load_demo(qtbot, window, "msx2")
    window.params.set_selection(backend="serial")
    panel = window.input_panels[role]
    ids = [r.id for r in panel.state().selected()]
    panel.set_region((101, 900))
    assert [r.id for r in window.inputs()[role]] == ids
    result = run(qtbot, window)
    positions = [row[column] for row in window.results.model.rows() if row[column] != ""]
    assert positions and 101 <= min(positions) and max(positions) <= 900
    qtbot.waitUntil(lambda: all(v.has_data() for v in window.family_views), timeout=60_000)
    assert result.info.complete
