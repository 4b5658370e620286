"""Primer tools for kdiff in the GUI: annotations, filters, inline errors, off-targets, regions.

Every check compares the GUI with the engine or the CLI on a small slice of the demo
(lambda 101-260 against E. coli 1-30,000, k = 4).
"""

from __future__ import annotations

import random
import subprocess
import sys
import time
from types import SimpleNamespace

import primer3
import pytest
from PySide6.QtCore import QTimer

from engine import edit
from engine.jobs import drive
from engine.kdiff import Candidate
from engine.primers.export_kdiff import region_row
from engine.primers import Conditions, Filters, annotate, merge_candidates, passes
from engine.primers import offtarget
from engine.sequences import Record, encode

from app.table import SORT_ROLE
from app.views.offtarget import OffTargetView
from app.worker import JobRunner
from tests.app.conftest import cut, load_demo, run, write_fasta

K = 4
COMPLEMENT = str.maketrans("ACGT", "TGCA")


def run_slice(qtbot, window):
    """Run kdiff on the slice and wait for the annotations; (result, tools)."""
    load_demo(qtbot, window, "lambda-ecoli")
    cut(window, "target", 101, 260)  # numbered from 1, as the CLI numbers a FASTA of it
    window.input_panels["background"].set_region((1, 30_000))
    window.params.set_selection(variant="bitparallel", backend="serial")
    window.params.set_param("k", K)
    window.params.set_param("strands", "both")
    tools = window.results.tools
    with qtbot.waitSignal(tools.annotated, timeout=120_000):
        result = run(qtbot, window)
    assert result.info.complete and len(result.candidates) > 50
    return result, tools


def cli(tmp_path, window, *options) -> subprocess.CompletedProcess:
    inputs = window.inputs()
    target = write_fasta(tmp_path / "target.fa", inputs["target"])
    background = write_fasta(tmp_path / "background.fa", inputs["background"])
    done = subprocess.run([sys.executable, "-m", "engine.cli", "kdiff", target, background, "-k", str(K),
                           "--variant", "bitparallel", "--backend", "serial", "--strands", "both",
                           *options], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return done


def expected_annotation(seq: str, salts: dict) -> tuple:
    """primer3-py called directly, in the table's column order."""
    tm = primer3.calc_tm(seq, **salts)
    hairpin = primer3.calc_hairpin(seq, temp_c=37.0, **salts)
    dimer = primer3.calc_homodimer(seq, temp_c=37.0, **salts)
    tail = seq[-5:]
    end = primer3.calc_end_stability(tail, tail.translate(COMPLEMENT)[::-1], temp_c=37.0, **salts)
    run = best = 1
    for a, b in zip(seq, seq[1:]):
        run = run + 1 if a == b else 1
        best = max(best, run)
    return (100.0 * sum(ch in "GC" for ch in seq) / len(seq), tm, hairpin.dg / 1000.0, hairpin.tm,
            dimer.dg / 1000.0, dimer.tm, end.dg / 1000.0, sum(ch in "GC" for ch in tail), best)


def test_annotation_columns_equal_primer3(qtbot, window):
    result, tools = run_slice(qtbot, window)
    model = window.results.model
    first = len(model.columns)
    assert [c.title for c in model.columns] == ["target", "start", "end", "length (bp)", "sequence"]
    assert [c.title for c in model.computed][:2] == ["GC %", "Tm (°C)"]  # headers with units
    salts = {"mv_conc": 35.0, "dv_conc": 2.5, "dntp_conc": 0.8, "dna_conc": 250.0}
    with qtbot.waitSignal(tools.annotated, timeout=60_000):
        tools.set_values(conditions=salts)
    assert tools.conditions == Conditions(**salts)
    moved = nones = 0
    for row in range(model.rowCount()):
        seq = model.item(row).sequence
        values = tuple(model.data(model.index(row, first + j), SORT_ROLE) for j in range(9))
        expected = expected_annotation(seq, salts)
        assert values == expected, seq
        shown = model.data(model.index(row, first + 1))
        assert shown == f"{expected[1]:.4g}"
        moved += values[1] != primer3.calc_tm(seq)  # the conditions reach Primer3
        # A structure Primer3 did not find (Tm at or below 0 °C) reads "none", ΔG and Tm.
        for dg, tm in ((2, 3), (4, 5)):
            want = ["none"] * 2 if expected[tm] <= 0 else [f"{expected[dg]:.4g}",
                                                           f"{expected[tm]:.4g}"]
            nones += want[0] == "none"
            assert [model.data(model.index(row, first + j)) for j in (dg, tm)] == want, seq
    assert moved == model.rowCount() and nones > 0
    assert model.rows()[0] == (result.candidates[0].target_id, result.candidates[0].start,
                               result.candidates[0].end, result.candidates[0].length,
                               result.candidates[0].sequence)  # the standard columns unchanged


def test_filter_keeps_exactly_what_passes_keeps(qtbot, window):
    result, tools = run_slice(qtbot, window)
    proxy = window.results.proxy
    assert proxy.visible_items() == list(result.candidates)  # the filter is off by default

    tools.set_values(filter=True)  # Primer3's defaults
    notes = {c.sequence: annotate(c.sequence) for c in result.candidates}
    expected = [c for c in result.candidates if passes(notes[c.sequence], Filters())]
    assert 0 < len(expected) < len(result.candidates)
    assert proxy.visible_items() == expected

    bounds = {"tm_min": 55.0, "tm_max": 61.5, "gc_min": 35.0, "min_gc_clamp": 2,
              "max_end_stability": 8.5}
    tools.set_values(bounds=bounds, enabled={"min_gc_clamp": True, "max_end_stability": True,
                                             "max_poly_x": False, "len_max": False})
    flt = Filters(len_max=None, max_poly_x=None, **bounds)
    assert tools.filters == flt
    expected = [c for c in result.candidates if passes(notes[c.sequence], flt)]
    assert proxy.visible_items() == expected
    assert window.results.count.text().startswith(f"{len(expected):,} of")

    window.results.clear_filters()  # Clear filters switches the primer filter off too
    assert not tools.filter_box.isChecked()
    assert proxy.visible_items() == list(result.candidates)


def test_bad_conditions_and_windows_show_an_inline_message(qtbot, window, dialogs):
    result, tools = run_slice(qtbot, window)
    tools.set_values(filter=True)
    proxy = window.results.proxy
    before = proxy.visible_items()
    assert tools.error.isHidden()

    tools.condition_spins["mv_conc"].setValue(-1.0)  # as a person's edit: the spin box's signal
    assert not tools.error.isHidden() and tools.error.objectName() == "error"
    assert "Na⁺/K⁺ must not be negative" in tools.error.text()
    assert tools.conditions == Conditions() and not tools.runner.running  # nothing re-annotated
    assert proxy.visible_items() == before

    tools.set_values(conditions={"mv_conc": 50.0}, bounds={"tm_min": 65.0})
    assert "Tm min (65) is greater than Tm max (63)" in tools.error.text()
    assert tools.filters == Filters()  # the previous valid filter stays applied
    assert proxy.visible_items() == before

    tools.set_values(bounds={"tm_min": 57.0})
    assert tools.error.isHidden()
    assert not dialogs


def test_offtarget_sites_equal_the_engine_for_the_same_job(qtbot, window):
    result, _ = run_slice(qtbot, window)
    view = next(v for v in window.family_views if isinstance(v, OffTargetView))
    assert window.select_best()
    best = window.adapter.best_item(result)
    background = window.inputs()["background"]

    view.max_edits.setValue(K - 1)  # kdiff keeps every candidate >= k edits from the background
    with qtbot.waitSignal(view.searched, timeout=120_000):
        assert view.run()
    assert view.sites == () and "raise Max edits" in view.status.text()

    view.max_edits.setValue(K + 1)
    with qtbot.waitSignal(view.searched, timeout=120_000):
        assert view.run()
    assert view.report.job.backend == "serial"  # the backend chosen for kdiff
    job = offtarget.make_job(Record("primer", encode(best.sequence)), background, K + 1,
                             backend="serial")
    expected = offtarget.sites_from_result(best.sequence, drive(edit.iter_solve(job)))
    assert expected and list(view.sites) == expected
    assert view.model.rowCount() == len(expected)
    assert {s.strand for s in expected} <= {"+", "-"}
    shown = view.alignment.toPlainText()
    assert expected[0].primer_line in shown and expected[0].site_line in shown
    assert window.exports.alignment_text().count("primer 5′") >= len(expected)

    view.max_edits.setValue(len(best.sequence))  # every position would be a site
    view.run()
    qtbot.waitUntil(lambda: not view.error.isHidden(), timeout=60_000)
    assert "must be smaller than the primer length" in view.error.text()


def test_offtarget_search_can_be_cancelled(qtbot):
    # The whole E. coli genome, both strands, 6 edits: about half a second of search.
    from app import demo

    view = OffTargetView(lambda: ("serial", None, None))
    qtbot.addWidget(view)
    lam = demo.records("lambda")[0]
    view.reset(SimpleNamespace(inputs={"background": list(demo.records("ecoli"))}, params={"k": 5}))
    view.select(Candidate(lam.id, 101, 122, lam.text[100:122]))
    view.max_edits.setValue(6)
    with qtbot.waitSignal(view.runner.progress, timeout=120_000):
        assert view.run()
    assert view.cancel_button.isEnabled() and not view.run_button.isEnabled()
    with qtbot.waitSignal(view.searched, timeout=10_000) as blocker:
        view.cancel()
    assert not blocker.args[0].complete
    assert view.status.text().startswith("Cancelled")
    assert view.run_button.isEnabled() and not view.cancel_button.isEnabled()
    assert view.runner.shutdown()


def test_merged_regions_and_exports_equal_the_cli(qtbot, window, tmp_path):
    result, tools = run_slice(qtbot, window)
    tools.set_values(merge=True)
    regions = merge_candidates(result.candidates)
    assert window.results.model.rows() == [region_row(r) for r in regions]
    tools.export_regions(str(tmp_path / "gui.csv"))
    tools.export_bed(str(tmp_path / "gui.bed"))
    cli(tmp_path, window, "--merge", "--bed", str(tmp_path / "cli.bed"), "-o", str(tmp_path / "cli.csv"))
    assert (tmp_path / "gui.csv").read_text() == (tmp_path / "cli.csv").read_text()
    assert (tmp_path / "gui.bed").read_text() == (tmp_path / "cli.bed").read_text()

    # With the primer filters: only the candidates that pass are merged, as with --filter.
    tools.set_values(filter=True, conditions={"dv_conc": 2.0})
    qtbot.waitUntil(lambda: tools.has_data(), timeout=60_000)
    kept = [c for c in result.candidates if passes(annotate(c.sequence, tools.conditions), Filters())]
    assert window.results.model.rows() == [region_row(r) for r in merge_candidates(kept)]
    tools.export_regions(str(tmp_path / "gui-f.csv"))
    tools.export_bed(str(tmp_path / "gui-f.bed"))
    with qtbot.waitSignal(tools.exported, timeout=60_000):
        tools.export_annotated(str(tmp_path / "gui-a.csv"))
    cli(tmp_path, window, "--filter", "--dv-conc", "2", "--merge", "--bed", str(tmp_path / "cli-f.bed"),
        "-o", str(tmp_path / "cli-f.csv"))
    cli(tmp_path, window, "--annotate", "--filter", "--dv-conc", "2", "-o", str(tmp_path / "cli-a.csv"))
    assert (tmp_path / "gui-f.csv").read_text() == (tmp_path / "cli-f.csv").read_text()
    assert (tmp_path / "gui-f.bed").read_text() == (tmp_path / "cli-f.bed").read_text()
    annotated = (tmp_path / "gui-a.csv").read_text()
    assert annotated == (tmp_path / "cli-a.csv").read_text()
    assert annotated.startswith("target_id,start,end,length,sequence,gc_percent,tm,")

    tools.set_values(merge=False)  # back to the candidates, filtered
    assert window.results.model.rows() == [(c.target_id, c.start, c.end, c.length, c.sequence)
                                           for c in result.candidates]
    assert window.results.proxy.visible_items() == kept


@pytest.mark.alone  # a latency bound: run it with -n 0, not beside other workers
def test_annotated_export_of_an_every_k_run_writes_the_candidates(qtbot, window, tmp_path):
    """An every-k run's annotated export holds its candidates, not the landscape table."""
    for view in window.family_views:
        if hasattr(view, "every_k"):
            view.every_k.setChecked(True)
    result, tools = run_slice(qtbot, window)
    assert result.landscape is not None
    with qtbot.waitSignal(tools.exported, timeout=60_000):
        tools.export_annotated(str(tmp_path / "a.csv"))
    lines = (tmp_path / "a.csv").read_text().splitlines()
    assert lines[0].startswith("target_id,start,end,length,sequence,gc_percent")
    assert len(lines) == 1 + len(result.candidates)


def test_annotating_thousands_of_candidates_leaves_the_window_responsive(qtbot, window):
    # Synthetic candidates, all different: only their sequences matter to the annotations.
    rng = random.Random(7)
    candidates = [Candidate("t", i + 1, i + 22, "".join(rng.choices("ACGT", k=22)))
                  for i in range(3000)]
    tools = window.results.tools
    ticks: list[float] = []
    timer = QTimer()
    timer.setInterval(10)
    timer.timeout.connect(lambda: ticks.append(time.perf_counter()))
    timer.start()
    started = time.perf_counter()
    with qtbot.waitSignal(tools.annotated, timeout=120_000):
        tools.show_result(SimpleNamespace(candidates=candidates))
        assert time.perf_counter() - started < 0.5  # the work is on the worker thread
    timer.stop()
    assert len(ticks) >= 3  # the event loop ran while Primer3 worked
    assert tools.has_data()
    assert tools.annotation(candidates[0].sequence) == annotate(candidates[0].sequence)


def test_back_to_back_searches_leave_the_worker_threads_intact(qtbot):
    """Run after run (as Run pressed again and again on a small background): each worker thread
    is dropped only once it has stopped (it used to be deleted twice: a segfault)."""
    runner = JobRunner()
    ends: list = []

    def job(cancel):
        yield 0.5
        return "done"

    def failing(cancel):
        raise ValueError("max_edits must be smaller than the primer length")
        yield

    def again(*_):
        ends.append(1)
        if len(ends) < 400:
            runner.start(job if len(ends) % 2 else failing)

    runner.finished.connect(again)
    runner.failed.connect(again)
    runner.start(job)
    qtbot.waitUntil(lambda: len(ends) >= 400, timeout=60_000)
    assert runner.shutdown() and not runner._alive


def test_offtarget_and_panel_runs_take_the_dask_scheduler():
    """The run panel's Dask scheduler reaches the off-target search and the panel's
    cross-product search (their jobs carry it; nothing runs here)."""
    from app.panel import PanelRequest, check_run
    from app.primers import offtarget_run
    from engine.jobs import CancelToken

    address = "tcp://127.0.0.1:1"
    background = (Record("bg", encode("ACGTTGCAAGGCTTACCGATAGGCTTACGATCGATCGGATCCA")),)
    candidate = SimpleNamespace(target_id="t", start=1, end=12, sequence="GGCTTACCGATA")
    started = next(offtarget_run(candidate, background, 2, backend="dask", threads=None,
                                 cancel=CancelToken(), scheduler=address))
    assert started.job.backend == "dask" and started.job.params["scheduler"] == address
    request = PanelRequest((("a", "GGCTTACCGATA"), ("b", "TCGATCGATCGT")), "test", background)
    started = next(check_run(request, "dask", None, CancelToken(), address))
    assert started.job.params["search"].params["scheduler"] == address
