"""kdiff from the GUI on a slice of the demo: the table is the engine's answer, the CSV the CLI's."""

from __future__ import annotations

import logging
import subprocess
import sys

import pytest

from app import demo
from engine import kdiff

from tests.app.conftest import cut, load_demo, run, write_fasta


def _cli(tmp_path, target, background, *options) -> str:
    out = tmp_path / "cli.csv"
    done = subprocess.run([sys.executable, "-m", "engine.cli", "kdiff", target, background, "-k", "4",
                           "--variant", "bitparallel", "--backend", "serial", "--strands", "both",
                           "-o", str(out), *options], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return out.read_text()


def test_demo_slice_table_and_csv_equal_engine_and_cli(qtbot, window, tmp_path):
    load_demo(qtbot, window, "lambda-ecoli")
    cut(window, "target", 101, 260)
    window.input_panels["background"].set_region((1, 30_000))
    window.params.set_selection(variant="bitparallel", backend="serial")
    window.params.set_param("k", 4)
    window.params.set_param("strands", "both")
    inputs = window.inputs()
    assert [r.id for r in inputs["target"]] == ["NC_001416.1"]
    assert len(inputs["background"][0]) == 30_000

    result = run(qtbot, window)
    assert result.info.complete and result.info.backend == "serial"

    expected = kdiff.solve(inputs["target"], inputs["background"], 4, variant="bitparallel",
                           backend="serial", strands="both")
    rows = [(c.target_id, c.start, c.end, c.length, c.sequence) for c in expected.candidates]
    assert rows, "the slice should have candidates"
    assert window.results.model.rows() == rows

    gui_csv = window.exports.export_csv(str(tmp_path / "gui.csv"), rows="all")
    target = write_fasta(tmp_path / "target.fa", inputs["target"])
    background = write_fasta(tmp_path / "background.fa", inputs["background"])
    assert open(gui_csv).read() == _cli(tmp_path, target, background)


def test_only_positions_give_the_loaded_records_coordinates(qtbot, window, tmp_path):
    """Defect 3: a region keeps the record's accession and numbering in the table, the profile,
    the CSV and the BED; the Description column shows the description."""
    load_demo(qtbot, window, "lambda-ecoli")
    panel = window.input_panels["target"]
    assert panel.tree.topLevelItem(0).text(0) == "NC_001416.1"
    assert panel.tree.topLevelItem(0).text(2) == "Enterobacteria phage lambda, complete genome"
    panel.set_region((1001, 1160))
    window.input_panels["background"].set_region((1, 30_000))
    window.params.set_selection(variant="bitparallel", backend="serial")
    window.params.set_param("k", 4)
    window.params.set_param("strands", "both")
    result = run(qtbot, window)
    lam = demo.records("lambda")[0]
    plain = kdiff.solve([lam.slice(1000, 1160)], window.inputs()["background"], 4,
                        variant="bitparallel", backend="serial", strands="both")
    assert [(c.start + 1000, c.end + 1000, c.sequence) for c in plain.candidates] == \
        [(c.start, c.end, c.sequence) for c in result.candidates]
    assert {c.target_id for c in result.candidates} == {"NC_001416.1"}
    first = window.results.model.rows()[0]
    assert first[0] == "NC_001416.1" and first[1] >= 1001
    profile = window.family_views[0].views[0]
    lo, hi = profile.plot.viewRange()[0]
    assert 990 < lo < 1001 and 1160 <= hi < 1170
    csv = open(window.exports.export_csv(str(tmp_path / "gui.csv"), rows="all")).read()
    assert csv.splitlines()[1].startswith("NC_001416.1,1001,")
    tools = window.results.tools
    qtbot.waitUntil(tools.has_data, timeout=120_000)
    bed = (tmp_path / "gui.bed")
    tools.export_bed(str(bed))
    chrom, start, *_ = bed.read_text().splitlines()[-1].split("\t")
    assert chrom == "NC_001416.1" and int(start) >= 1000

    # The command line's --target-region / --background-region give the same file.
    target = write_fasta(tmp_path / "target.fa", [lam])
    background = write_fasta(tmp_path / "background.fa", [demo.records("ecoli")[0]])
    assert csv == _cli(tmp_path, target, background, "--target-region", "1001-1160",
                       "--background-region", "1-30000")


def test_candidate_view_shows_closest_match_at_distance_k(qtbot, window):
    load_demo(qtbot, window, "lambda-ecoli")
    window.input_panels["target"].set_region((1, 120))
    window.input_panels["background"].set_region((1, 20_000))
    window.params.set_selection(variant="bitparallel", backend="serial")
    window.params.set_param("k", 3)
    result = run(qtbot, window)
    assert window.select_best()
    candidate_view = window.family_views[0].views[1]
    qtbot.waitUntil(candidate_view.has_data, timeout=60_000)
    match = candidate_view.match
    best = window.adapter.best_item(result)
    # A candidate's closest background window is exactly k edits away (its prefix is within k-1).
    assert match.distance == 3
    assert match.matrix.shape[0] == best.length + 1
    assert match.aligned_candidate.replace("-", "") == best.sequence
    assert window.exports.alignment_text()


def test_the_dask_backend_and_its_scheduler_field_run_from_the_gui(qtbot, window):
    """The registry's dask backend and its scheduler field (a text parameter) reach the job: the
    run goes to the cluster at that address and the table is the serial engine's answer."""
    distributed = pytest.importorskip("distributed")
    load_demo(qtbot, window, "lambda-ecoli")
    cut(window, "target", 101, 260)
    window.input_panels["background"].set_region((1, 30_000))
    window.params.set_param("k", 4)
    window.params.set_param("strands", "both")
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                                  dashboard_address=":0", silence_logs=logging.ERROR) as cluster:
        window.params.set_selection(backend="dask")
        window.params.set_param("scheduler", cluster.scheduler_address)
        result = run(qtbot, window)
    assert result.info.complete and result.info.backend == "dask" and result.info.threads == 1
    inputs = window.inputs()
    expected = kdiff.solve(inputs["target"], inputs["background"], 4, backend="serial")
    assert window.results.model.rows() == [(c.target_id, c.start, c.end, c.length, c.sequence)
                                           for c in expected.candidates]
