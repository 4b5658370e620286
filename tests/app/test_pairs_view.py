"""The Pairs view: its table is the engine's pair design, a click shows a pair's products,
the design runs on the worker thread and can be cancelled, pairs go to the library, and the
Demo menu opens the lambda vs E. coli pairs."""

from __future__ import annotations

import json
import threading
import time

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from PySide6.QtCore import Qt, QTimer

from engine.primers import export_pairs, pairs
from engine.primers.library import Library
from engine.sequences import Record, encode

from app import demo
from app import pairs as app_pairs
from tests.app.conftest import load_demo
from tests.strategies import examples

K = 3


def pairs_view(window):
    window.params.set_family("kdiff")
    view = window.view_titled("Pairs")
    assert view is not None
    return view


def slice_case(qtbot, window, values=None):
    """lambda 20,001-20,700 against E. coli 1-100,000 (regions of the demo files), k = 3."""
    view = pairs_view(window)
    load_demo(qtbot, window, "lambda-ecoli")
    window.input_panels["target"].set_region((20_001, 20_700))
    window.input_panels["background"].set_region((1, 100_000))
    window.params.set_param("k", K)
    window.params.set_param("strands", "both")
    view.set_values(values or {"product_ranges": "150-300", "num_return": 3})
    return view


def design(qtbot, view, timeout=600_000):
    failures = []
    view.runner.failed.connect(failures.append)
    with qtbot.waitSignal(view.designed, timeout=timeout, raising=False) as blocker:
        assert view.run(), view.error.text()
    assert not failures, failures
    assert blocker.signal_triggered, "the design did not end in time"
    return blocker.args[0]


def engine_pairs(window, view):
    inputs, choice = window.inputs(), window.params.choice()
    sel = choice.selection
    return pairs.solve(inputs["target"], inputs["background"], choice.params["k"],
                       view.design_settings(), variant=sel.variant,
                       backend=sel.backend, parallel=sel.parallel, flags=sel.flags,
                       threads=choice.threads)


def click_row(qtbot, table, proxy, model, item) -> None:
    row = next(r for r in range(model.rowCount()) if model.item(r) is item)
    index = proxy.mapFromSource(model.index(row, 1))
    table.scrollTo(index)
    qtbot.mouseClick(table.viewport(), Qt.MouseButton.LeftButton, pos=table.visualRect(index).center())


def test_pair_table_equals_the_engines_pair_design(qtbot, window, tmp_path, monkeypatch):
    view = slice_case(qtbot, window)
    window.params.set_param("gap_min", 25)  # (under Advanced; the pairs use it too)
    result = design(qtbot, view)
    assert view.job.params["gap_min"] == 25
    want = engine_pairs(window, view)
    assert result.info.complete and len(want.pairs) == 3
    assert view.model.rows() == list(export_pairs.rows(want))  # the CSV's rows, in rank order
    assert [(p.left, p.right, p.penalty, p.products) for p in result.pairs] == \
        [(p.left, p.right, p.penalty, p.products) for p in want.pairs]
    # The loaded record's numbering (a region keeps it), on the track too.
    assert all(20_001 <= p.left.start < p.right.end <= 20_700 for p in result.pairs)
    spec = want.specificity[0]
    assert view.fwd_curve.xData[0] == 20_001 and len(view.fwd_curve.xData) == 700
    np.testing.assert_array_equal(view.fwd_curve.yData, np.where(spec.left > 0, spec.left, np.nan))
    np.testing.assert_array_equal(view.rev_curve.yData, -np.where(spec.right > 0, spec.right, np.nan))
    # The first pair is selected: its sites and amplicon are drawn.
    first = result.pairs[0]
    assert view.amplicon.isVisible()
    assert view.amplicon.getRegion() == (first.left.start - 0.5, first.right.end + 0.5)
    assert list(view.f_site.xData) == [first.left.start, first.left.end]
    # Export writes the command line's CSV and BED.
    for fmt, text in (("csv", app_pairs.csv_text(want)), ("bed", export_pairs.bed_text(want))):
        path = tmp_path / f"pairs.{fmt}"
        monkeypatch.setattr(window.exports, "ask_path", lambda *a, p=path: str(p))
        view.export(fmt)
        assert path.read_text() == text


def test_clicking_a_pair_shows_its_products(qtbot, window):
    """The background holds a copy of the target with a substitution every 13 bases: every
    primer is specific at k = 1, and a pair whose 3′ ends miss the substitutions amplifies it."""
    view = pairs_view(window)
    lam = demo.records("lambda")[0]
    text = lam.text[30_000:30_600]
    copy = "".join({"A": "C", "C": "G", "G": "T", "T": "A"}[c] if i % 13 == 6 else c
                   for i, c in enumerate(text))
    background = Record("bg", encode(lam.text[10_000:12_000] + copy + lam.text[40_000:41_000]))
    window.input_panels["target"].set_records([lam], "test")
    window.input_panels["target"].set_region((30_001, 30_600))
    window.input_panels["background"].set_records([background], "test")
    window.params.set_param("k", 1)
    view.set_values({"product_ranges": "100-300", "num_return": 6, "max_edits": 3})
    result = design(qtbot, view)
    with_products = [p for p in result.pairs if p.products]
    without = [p for p in result.pairs if not p.products]
    assert with_products, [p.offtarget_products for p in result.pairs]
    for pair in with_products[-1:] + without[:1]:
        click_row(qtbot, view.table, view.proxy, view.model, pair)
        assert view.products_model.rows() == app_pairs.product_rows(pair.products)
        assert view.amplicon.getRegion() == (pair.left.start - 0.5, pair.right.end + 0.5)
        label = view.products_label.text()
        assert f"Pair {pair.rank}:" in label
        if pair.products:
            closest = pair.closest_offtarget
            assert f"{len(pair.products)} product" in label and f"{closest.length} bp" in label
            # the copy: the product starts where the target's does, 2,000 bases in
            assert closest.start == 2_000 + pair.left.start - 30_000
        else:
            assert "No product in the background" in label


def test_cancel_keeps_the_window_responsive(qtbot, window):
    """Cancel during the specificity scan (kdiff releases the GIL): the window keeps drawing,
    the job ends soon with no pairs, and the next design starts."""
    view = pairs_view(window)
    load_demo(qtbot, window, "lambda-ecoli")
    window.input_panels["target"].set_region((1, 20_000))
    window.input_panels["background"].set_region((1, 1_000_000))
    window.params.set_param("k", 5)
    ticks: list[float] = []
    timer = QTimer()
    timer.setInterval(20)
    timer.timeout.connect(lambda: ticks.append(time.perf_counter()))
    timer.start()
    assert view.run()
    qtbot.waitUntil(lambda: view.progress.value() > 0 and view.status.text().startswith("Specificity"),
                    timeout=300_000)
    scanning = len(ticks)
    qtbot.wait(500)
    assert len(ticks) - scanning >= 5  # the GUI thread runs while the scan does
    with qtbot.waitSignal(view.designed, timeout=60_000) as blocker:
        asked = time.perf_counter()
        view.cancel()
        assert view.status.text().startswith("Cancelling")
    latency = time.perf_counter() - asked
    timer.stop()
    result = blocker.args[0]
    assert not result.info.complete and result.pairs == ()
    assert view.status.text().startswith("Cancelled") and latency < 30
    assert view.design_button.isEnabled() and not view.cancel_button.isEnabled()
    assert not window.controller.busy()
    assert view.run()  # and it starts again
    with qtbot.waitSignal(view.designed, timeout=60_000):
        view.cancel()


def test_the_design_runs_on_the_worker_thread(qtbot, window, monkeypatch):
    view = slice_case(qtbot, window, {"product_ranges": "150-300", "num_return": 1})
    threads = {}
    real_make, real_iter = pairs.make_job, pairs.iter_solve

    def make_job(*a, **kw):
        threads["make_job"] = threading.current_thread()
        return real_make(*a, **kw)

    def iter_solve(*a, **kw):
        threads["iter_solve"] = threading.current_thread()
        return (yield from real_iter(*a, **kw))

    monkeypatch.setattr(pairs, "make_job", make_job)
    monkeypatch.setattr(pairs, "iter_solve", iter_solve)
    design(qtbot, view)
    assert set(threads) == {"make_job", "iter_solve"}
    assert all(t is not threading.main_thread() for t in threads.values())


def test_pairs_go_to_the_library(qtbot, window, tmp_path):
    view = slice_case(qtbot, window)
    # Before a design: a note where the track will be, not placeholder axes.
    assert view.track_stack.currentWidget() is view.track_empty
    result = design(qtbot, view)
    assert view.track_stack.currentWidget() is view.widget
    dock = window.library_dock
    view.table.selectAll()
    with qtbot.waitSignal(dock.added, timeout=60_000) as blocker:
        assert view.add_to_library()
    names = blocker.args[0]
    assert len(names) == 2 * len(result.pairs) and dock.isVisible()
    with Library(tmp_path / "library.sqlite") as lib:
        stored = {e.name: e for e in lib.entries()}
    for p in result.pairs:
        f, r = app_pairs.primer_names(p)
        for name, site, orientation in ((f, p.left, "forward"), (r, p.right, "reverse")):
            e = stored[name]
            assert (e.sequence, e.orientation, e.target_id, e.target_start, e.target_end, e.k) == \
                (site.sequence, orientation, p.target_id, site.start, site.end, K)
            assert e.tm == round(site.tm, 2) and "NC_008253.1:1-100000" in e.background


def test_demo_menu_opens_the_lambda_pairs(qtbot, window):
    window.params.set_family("lcs")  # the demo belongs to kdiff: the window switches
    with qtbot.waitSignal(window.inputs_loaded, timeout=60_000):
        window.demo_actions["lambda-pairs"].trigger()
    assert window.params.family == "kdiff"
    view = window.view_titled("Pairs")
    assert window.current_view() is view and view.runner.running
    target, background = window.inputs()["target"], window.inputs()["background"]
    assert (target[0].offset + 1, target[0].offset + len(target[0])) == demo.PAIRS_TARGET
    assert demo.PAIRS_BACKGROUND is None  # the whole genome, as its specificity needs
    assert background[0].offset == 0 and len(background[0]) == len(demo.records("ecoli")[0])
    with qtbot.waitSignal(view.designed, timeout=600_000) as blocker:
        pass
    result = blocker.args[0]
    assert result.info.complete and len(result.pairs) == 5
    assert view.model.rowCount() == 5 and view.amplicon.isVisible()


def test_bad_settings_and_missing_inputs_are_explained(qtbot, window):
    view = pairs_view(window)
    assert not view.run()  # nothing loaded
    assert not view.error.isHidden() and "nothing loaded" in view.error.text()
    load_demo(qtbot, window, "lambda-ecoli")
    window.input_panels["target"].set_region((20_001, 20_300))
    window.input_panels["background"].set_region((1, 20_000))
    view.set_values({"product_ranges": "300-100"})
    assert not view.run()  # refused before anything starts, in the window's words
    assert "inverted" in view.error.text() and not view.runner.running
    assert view.design_button.isEnabled() and view.result is None


def _primer_tools(window):
    return next(v for v in window.family_views if v.title == "Primers")


def test_conditions_and_filter_bounds_reach_primer3(qtbot, window):
    """Non-default reaction conditions and primer filters: every primer of every pair is one
    that primer3-py's own listing accepts on the same template and settings, with its Tm;
    the bounds hold; and the Tm is not what the default conditions give."""
    import primer3

    view = slice_case(qtbot, window, {"product_ranges": "120-300", "num_return": 4,
                                      "tm_opt": 61.0, "max_tm_diff": 3.0})
    tools = _primer_tools(window)
    tools.filter_box.setChecked(True)
    for name, value in (("len_min", 19), ("len_max", 24), ("tm_min", 58.5), ("tm_max", 64.0),
                        ("gc_min", 40.0), ("gc_max", 65.0), ("max_poly_x", 4)):
        tools.bounds[name][1].setValue(value)
    for name, value in (("mv_conc", 100.0), ("dv_conc", 3.0), ("dntp_conc", 0.8), ("dna_conc", 250.0)):
        tools.condition_spins[name].setValue(value)
    result = design(qtbot, view)
    assert result.info.complete and result.pairs
    assert "Na⁺ 100 mM, Mg²⁺ 3 mM" in view.used.text() and "length 19–24" in view.used.text()
    target = window.inputs()["target"][0]
    listing = primer3.bindings.design_primers(
        {"SEQUENCE_ID": "t", "SEQUENCE_TEMPLATE": target.text},
        {"PRIMER_TASK": "pick_primer_list", "PRIMER_NUM_RETURN": 100_000,
         "PRIMER_MIN_SIZE": 19, "PRIMER_OPT_SIZE": 20, "PRIMER_MAX_SIZE": 24,
         "PRIMER_MIN_TM": 58.5, "PRIMER_OPT_TM": 61.0, "PRIMER_MAX_TM": 64.0,
         "PRIMER_MIN_GC": 40.0, "PRIMER_MAX_GC": 65.0, "PRIMER_MAX_POLY_X": 4,
         # the filter bar's hairpin, dimer and 3′ stability bounds are switched off
         "PRIMER_MAX_HAIRPIN_TH": 1000.0, "PRIMER_MAX_SELF_ANY_TH": 1000.0,
         "PRIMER_MAX_SELF_END_TH": 1000.0, "PRIMER_MAX_END_STABILITY": 1000.0,
         "PRIMER_SALT_MONOVALENT": 100.0, "PRIMER_SALT_DIVALENT": 3.0,
         "PRIMER_DNTP_CONC": 0.8, "PRIMER_DNA_CONC": 250.0,
         "PRIMER_PRODUCT_SIZE_RANGE": [[120, 300]]})
    accepted = {}
    for side in ("LEFT", "RIGHT"):
        for i in range(listing[f"PRIMER_{side}_NUM_RETURNED"]):
            accepted[listing[f"PRIMER_{side}_{i}_SEQUENCE"]] = listing[f"PRIMER_{side}_{i}_TM"]
    for p in result.pairs:
        assert abs(p.left.tm - p.right.tm) <= 3.0 and 120 <= p.product_size <= 300
        for site in (p.left, p.right):
            assert site.sequence in accepted, site
            assert site.tm == pytest.approx(accepted[site.sequence], abs=1e-9)
            assert 19 <= site.length <= 24 and 40 <= site.gc_percent <= 65
            assert 58.5 <= site.tm <= 64.0
            default_tm = primer3.calc_tm(site.sequence)  # Primer3's default conditions
            assert abs(site.tm - default_tm) > 0.5


def _cli_pairs(*args):
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "engine.cli", "pairs", *args, "--json",
                           "--no-progress"], capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)["pairs"]


@settings(max_examples=examples(2), suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(amplify=st.integers(20_250, 20_450), width=st.integers(0, 30),
       exclude=st.integers(20_001, 20_650))
def test_regions_dragged_on_the_track_equal_the_cli(qtbot, window, demo_dir, amplify, width,
                                                    exclude):
    view = slice_case(qtbot, window, {"product_ranges": "100-300", "num_return": 3})
    view.clear_regions()
    view.add_region("amplify").setRegion((amplify - 0.5, amplify + width + 0.5))  # as a drag ends
    view.add_region("exclude").setRegion((exclude - 0.3, exclude + 20.4))  # between bases: rounded
    assert view.regions() == [("amplify", amplify, amplify + width), ("exclude", exclude, exclude + 20)]
    assert f"amplify {amplify:,}–{amplify + width:,}" in view.regions_label.text()
    result = design(qtbot, view)
    for p in result.pairs:
        assert p.left.end < amplify and amplify + width < p.right.start
        assert all(not (s.start <= exclude + 20 and exclude <= s.end) for s in (p.left, p.right))
    got = _cli_pairs(str(demo_dir / "lambda_NC_001416.fa"), str(demo_dir / "ecoli536_NC_008253.fna.gz"),
                     "--target-region", "20001-20700", "--background-region", "1-100000",
                     "-k", str(K), "--product-size", "100-300", "--num-return", "3",
                     "--amplify", f"{amplify}-{amplify + width}",
                     "--exclude-region", f"{exclude}-{exclude + 20}")
    assert [(g["left"]["sequence"], g["right"]["sequence"], g["left"]["tm"]) for g in got] == \
        [(p.left.sequence, p.right.sequence, p.left.tm) for p in result.pairs]


def test_cancelled_redesign_keeps_the_previous_pairs(qtbot, window):
    view = slice_case(qtbot, window)
    first = design(qtbot, view)
    rows = view.model.rows()
    assert first.pairs
    with qtbot.waitSignal(view.designed, timeout=120_000) as blocker:
        assert view.run()
        qtbot.waitUntil(lambda: view.status.text().startswith(("Specificity", "Primer3")),
                        timeout=120_000)
        view.cancel()
    assert not blocker.args[0].info.complete
    assert view.result is first and view.model.rows() == rows
    assert "previous design's 3 pairs are kept" in view.status.text()


@pytest.mark.alone
def test_design_leaves_the_event_loop_free(qtbot, window):
    """The longest stall of the window's event loop during a whole pair design (kdiff,
    Primer3 on 2 kb, the in-silico PCR) stays under 100 ms."""
    view = slice_case(qtbot, window, {"product_ranges": "100-300", "num_return": 5})
    window.input_panels["target"].set_region((20_001, 22_000))
    design(qtbot, view)  # compiled and warm: what is measured is the design itself
    ticks: list[float] = []
    timer = QTimer()
    timer.setInterval(5)
    timer.timeout.connect(lambda: ticks.append(time.perf_counter()))
    timer.start()
    result = design(qtbot, view)
    timer.stop()
    assert result.info.complete and result.pairs
    stalls = np.diff(ticks)
    assert len(ticks) > 20 and stalls.max() < 0.100, f"longest stall {stalls.max() * 1000:.0f} ms"


def test_check_primers_dialog_equals_the_cli(qtbot, window, tmp_path, demo_dir):
    """Pasted primers (and the library's selected ones) checked against the loaded background:
    the tables hold ``primerscope check``'s findings on the same input."""
    import subprocess
    import sys

    from engine.primers import export_check

    view = slice_case(qtbot, window)
    window.input_panels["background"].set_records(list(demo.records("lambda")), "test")
    window.input_panels["background"].set_region((20_001, 40_000))  # the primers' own sites
    text = "F1 GGCGTTTCAGACGTGCTGTT\nR1=CCTGACCGACAAGAAGCTGA\nATGACGTTCGAGCCGAAAGT"
    dialog = view.open_check(text)
    with qtbot.waitSignal(dialog.runner.finished, timeout=300_000):
        assert dialog.run(), dialog.status.text()
    done = subprocess.run([sys.executable, "-m", "engine.cli", "check",
                           "F1=GGCGTTTCAGACGTGCTGTT,R1=CCTGACCGACAAGAAGCTGA,primer3=ATGACGTTCGAGCCGAAAGT",
                           str(demo_dir / "lambda_NC_001416.fa"), "--background-region", "20001-40000",
                           "--json", "--no-progress"], capture_output=True, text=True, timeout=600)
    want = json.loads(done.stdout)
    assert dialog.models["sites"].rows() == [tuple(s[f] for f in ("primer", "record", "strand", "start",
                                                                   "end", "edits", "edits_3prime"))
                                             for s in want["sites"]]
    assert len(dialog.models["sites"].rows()) >= 1
    assert [r[0] for r in dialog.models["summary"].rows()] == ["F1", "R1", "primer3"]
    assert [r[:3] for r in dialog.models["dimers"].rows()] == \
        [(d["primer_a"], d["primer_b"], d["dimer_dg"]) for d in want["dimers"]]
    assert dialog.models["products"].rowCount() == len(want["products"])
    assert export_check.COLUMNS == tuple(pairs_csv_header(dialog))
    # from the library: its selected primers fill the box
    window.library_dock.open_library(str(tmp_path / "lib.sqlite"))
    from engine.primers.library import LibraryEntry

    with qtbot.waitSignal(window.library_dock.added, timeout=60_000):
        window.library_dock.add_entries([LibraryEntry("L1", "ACGTTGCATGCATGCAAGTC")], "test")
    window.library_dock.table.selectAll()
    assert dialog.from_library() and dialog.box.toPlainText() == "L1 ACGTTGCATGCATGCAAGTC"


def pairs_csv_header(dialog):
    return app_pairs.check_csv_text(dialog.result).splitlines()[0].split(",")


def test_export_results_writes_the_pairs_on_the_pairs_tab(qtbot, window, tmp_path):
    view = slice_case(qtbot, window)
    window.show_view(view)
    assert not window.export_action.isEnabled()  # nothing designed, no run
    result = design(qtbot, view)
    assert window.export_action.isEnabled()
    path = window.exports.export_csv(str(tmp_path / "out.csv"))
    assert path and (tmp_path / "out.csv").read_text() == app_pairs.csv_text(result)


def test_dimer_tm_without_a_dimer_reads_none(qtbot, window):
    """Primer3's 0 (no structure) and a dimer melting below 0 °C show "none"; the rows (the
    CSV's) keep the numbers."""
    view = slice_case(qtbot, window)
    view.check_dialog = None
    dialog = view.open_check("A AAAAAAAAAAAAAAAAAAAA\nB GGCGTTTCAGACGTGCTGTT")
    window.input_panels["background"].set_region((1, 20_000))
    with qtbot.waitSignal(dialog.runner.finished, timeout=300_000):
        assert dialog.run(), dialog.status.text()
    model = dialog.models["dimers"]
    col = [c.title for c in model.columns].index("dimer Tm (°C)")
    shown = [model.data(model.index(r, col)) for r in range(model.rowCount())]
    values = [model.rows()[r][col] for r in range(model.rowCount())]
    assert len(values) == 3 and any(v is not None and v <= 0 for v in values)
    for text, value in zip(shown, values):
        assert text == ("none" if value is not None and value <= 0 else f"{value:.4g}")


def test_a_primer_shared_by_pairs_is_one_library_entry(qtbot, window):
    """With pairs allowed to share primers, adding them stores each oligo once, linked to
    every pair; the default 3′ distance returns pairs that share none."""
    view = slice_case(qtbot, window, {"product_ranges": "150-300", "num_return": 5,
                                      "min_three_prime_distance": -1})
    shared = design(qtbot, view)
    sequences = [s.sequence for p in shared.pairs for s in (p.left, p.right)]
    assert len(set(sequences)) < len(sequences)  # this design shares a primer
    entries = app_pairs.library_entries(shared.pairs, K)
    assert sorted(e.sequence for e in entries) == sorted(set(sequences))
    assert len({e.name for e in entries}) == len(entries)
    dock = window.library_dock
    view.table.selectAll()
    with qtbot.waitSignal(dock.added, timeout=120_000):
        assert view.add_to_library()
    held = dock.library.entries()
    assert sorted(e.sequence for e in held) == sorted(set(sequences))
    names = {e.sequence: e.name for e in held}
    assert dock.library.pairs() == [(names[p.left.sequence], names[p.right.sequence],
                                     p.product_size) for p in shared.pairs]
    order = dock.library.order_sheet_text().splitlines()[1:]
    assert len(order) == len(set(sequences))
    view.set_values({"product_ranges": "150-300", "num_return": 5, "min_three_prime_distance": 3})
    distinct = design(qtbot, view)
    again = [s.sequence for p in distinct.pairs for s in (p.left, p.right)]
    assert len(set(again)) == len(again) == 10


def test_the_sequence_tab_draws_the_chosen_pair_and_a_click_selects_one(qtbot, window):
    """Issue 32, item 2: the target's bases with the chosen pair's primers on their strands
    and its amplicon, every pair's primers as marks (a click selects that pair), the regions."""
    view = slice_case(qtbot, window)
    result = design(qtbot, view)
    seq = view.sequence
    target = window.inputs()["target"][0]
    assert (seq.record_id, seq.text, seq.offset) == (target.id, target.text, target.offset)
    first, other = result.pairs[0], result.pairs[-1]
    forward, reverse = seq.pair
    assert (forward.start, forward.end, forward.strand) == (first.left.start, first.left.end, "+")
    assert (reverse.start, reverse.end, reverse.strand) == (first.right.start, first.right.end, "-")
    assert seq.amplicon.isVisible() and seq.amplicon.getRegion() == (first.left.start - 0.5,
                                                                       first.right.end + 0.5)
    assert sorted((m.start, m.strand) for m in seq.candidates) == sorted(
        [(p.left.start, "+") for p in result.pairs] + [(p.right.start, "-") for p in result.pairs])
    view.track_tabs.setCurrentWidget(seq)
    qtbot.wait(20)
    seq.click_at((other.right.start + other.right.end) / 2, -1.7)  # the other pair's reverse
    assert view._selected is other and view.products_label.text().startswith(f"Pair {other.rank}:")
    assert seq.pair[1].start == other.right.start
    view.add_region("exclude", (20_101, 20_120))
    assert seq.intervals["exclude"] == [(20_101, 20_120)]


def test_a_design_that_finds_nothing_says_why(qtbot, window):
    """Issue 32, item 12: no pair (products longer than the 200 bp target) is explained in
    the window as ``pairs`` explains it on standard error, not an empty table alone."""
    from engine.primers.export_pairs import why_none

    view = slice_case(qtbot, window, {"product_ranges": "290-300", "num_return": 3})
    window.input_panels["target"].set_region((20_001, 20_200))
    result = design(qtbot, view)
    assert result.info.complete and not result.pairs and view.model.rowCount() == 0
    status = view.status.text()
    assert status.startswith("No pair found: NC_001416.1 has ") and "Widen the product sizes" in status
    assert why_none(result)[len("no pair found"):].split(". Widen")[0] in status
    assert "No pair" in view.products_label.text()


def test_copied_primer_names_are_escaped_for_a_spreadsheet(window, monkeypatch):
    """Copy puts "name<TAB>sequence" lines on the clipboard; a primer name made from a target
    id a spreadsheet would run as a formula is escaped as the CSV exports write it."""
    from types import SimpleNamespace

    from PySide6.QtWidgets import QApplication

    view = pairs_view(window)
    pair = SimpleNamespace(target_id="=HYPERLINK(1)",
                           left=SimpleNamespace(start=10, end=29, sequence="ACGTACGTACGTACGTACGT"),
                           right=SimpleNamespace(start=200, end=219, sequence="TTGGCCAATTGGCCAATTGG"))
    monkeypatch.setattr(view, "chosen_pairs", lambda: [pair])
    QApplication.clipboard().clear()
    view.copy_selection()
    forward, reverse = app_pairs.primer_names(pair)
    assert forward.startswith("=")
    assert QApplication.clipboard().text().splitlines() == [
        f"'{forward}\tACGTACGTACGTACGTACGT", f"'{reverse}\tTTGGCCAATTGGCCAATTGG"]
