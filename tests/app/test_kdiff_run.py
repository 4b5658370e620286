"""kdiff from the GUI on a slice of the demo: the table is the engine's answer, the CSV the CLI's."""

from __future__ import annotations

import subprocess
import sys

from engine import kdiff

from tests.app.conftest import load_demo, run, write_fasta


def test_demo_slice_table_and_csv_equal_engine_and_cli(qtbot, window, tmp_path):
    load_demo(qtbot, window, "lambda-ecoli")
    window.input_panels["target"].set_region((101, 260))
    window.input_panels["background"].set_region((1, 30_000))
    window.params.set_selection(variant="bitparallel", backend="serial")
    window.params.set_param("k", 4)
    window.params.set_param("strands", "both")
    inputs = window.inputs()
    assert [r.id for r in inputs["target"]] == ["gi|9626243|ref|NC_001416.1|[100:260]"]
    assert len(inputs["background"][0]) == 30_000

    result = run(qtbot, window)
    assert result.info.complete and result.info.backend == "serial"

    expected = kdiff.solve(inputs["target"], inputs["background"], 4, variant="bitparallel",
                           backend="serial", strands="both")
    rows = [(c.target_id, c.start, c.end, c.length, c.sequence) for c in expected.candidates]
    assert rows, "the slice should have candidates"
    assert window.results.model.rows() == rows

    gui_csv = window.export_csv(str(tmp_path / "gui.csv"))
    target = write_fasta(tmp_path / "target.fa", inputs["target"])
    background = write_fasta(tmp_path / "background.fa", inputs["background"])
    cli_csv = tmp_path / "cli.csv"
    done = subprocess.run([sys.executable, "-m", "engine.cli", "kdiff", target, background, "-k", "4",
                           "--variant", "bitparallel", "--backend", "serial", "--strands", "both",
                           "-o", str(cli_csv)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert open(gui_csv).read() == cli_csv.read_text()


def test_candidate_view_shows_closest_match_at_distance_k(qtbot, window):
    load_demo(qtbot, window, "lambda-ecoli")
    window.input_panels["target"].set_region((1, 120))
    window.input_panels["background"].set_region((1, 20_000))
    window.params.set_selection(variant="bitparallel", backend="serial")
    window.params.set_param("k", 3)
    result = run(qtbot, window)
    assert window.select_best()
    candidate_view = window.views[0].views[1]
    qtbot.waitUntil(candidate_view.has_data, timeout=60_000)
    match = candidate_view.match
    best = window.adapter.best_item(result)
    # A candidate's closest background window is exactly k edits away (its prefix is within k-1).
    assert match.distance == 3
    assert match.matrix.shape[0] == best.length + 1
    assert match.aligned_candidate.replace("-", "") == best.sequence
    assert window.alignment_text()
