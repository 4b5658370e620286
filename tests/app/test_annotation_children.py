"""Primer3 annotations of a run's candidates run in child processes (issue #33): never in
the window's process, whose repaints (the k slider's) Primer3 would hold up, since
primer3-py holds Python's lock for the whole of each call. Results arrive complete after
slider moves made meanwhile; a new run or closing the window ends the child."""

from __future__ import annotations

import multiprocessing
import threading
import time

import primer3
import pytest

from engine.jobs import CancelToken
from engine.kdiff import Candidate
from engine.primers import Conditions, annotate

from engine.primers import annotate_children as annotations
from engine.primers.annotate_children import annotate_in_children, annotation_columns, annotations_from
from tests.app.test_kdiff_landscape_view import _synthetic_every_k_run

PRIMER3_CALLS = ("calc_tm", "calc_hairpin", "calc_homodimer", "calc_end_stability")


@pytest.fixture
def primer3_here(monkeypatch):
    """The threads of this process that call Primer3 (each call's thread name)."""
    calls: list[str] = []
    for name in PRIMER3_CALLS:
        real = getattr(primer3, name)

        def spy(*args, _real=real, **kwargs):
            calls.append(threading.current_thread().name)
            return _real(*args, **kwargs)

        monkeypatch.setattr(primer3, name, spy)
    return calls


def _until(qtbot, condition, timeout_s: float = 60.0) -> None:
    end = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < end, "timed out"
        qtbot.wait(5)


def test_annotations_run_in_children_and_arrive_complete_after_slider_moves(
        qtbot, window, primer3_here, monkeypatch):
    # several rounds of two children for 400 candidates, whatever the machine's cores
    monkeypatch.setattr(annotations, "BATCH", 75)
    monkeypatch.setattr(annotations, "CHILD_MIN", 50)
    monkeypatch.setattr(annotations, "children", lambda: 2)
    tools = window.results.tools
    # The moves below come 20 ms apart; on a loaded machine one wait can outlast the k
    # slider's settle time, whose annotation of the new k would cancel this one (new
    # children). The moves never rest here, so the settle never fires.
    tools._k_settle.setInterval(600_000)
    children = set()
    with qtbot.waitSignal(tools.annotated, timeout=120_000):
        land, view = _synthetic_every_k_run(window)
        assert tools.runner.running
        moves = 0
        while tools.runner.running:  # the slider moves while Primer3 works
            children.update(p.pid for p in multiprocessing.active_children())
            view.set_k(1 + moves % 4)
            moves += 1
            qtbot.wait(20)
    assert primer3_here == []  # no thread of the window's process called Primer3
    assert moves >= 5 and len(children) == 2, (moves, children)  # two children, every round
    candidates = land.candidates(4)  # the run's k: what the annotation is of
    distinct = {c.sequence for c in candidates}
    assert distinct <= set(tools._notes)
    for seq in distinct:
        assert tools.annotation(seq) == annotate(seq, tools.conditions), seq
    assert multiprocessing.active_children() == []


def test_another_k_gets_its_own_annotations_and_keeps_the_runs(qtbot, window, primer3_here):
    """The k slider: the candidates at another k are annotated too (only the sequences new
    there), once the slider rests; the run's k's stay."""
    tools = window.results.tools
    with qtbot.waitSignal(tools.annotated, timeout=120_000):
        land, view = _synthetic_every_k_run(window, n=300)
    run_k = {c.sequence for c in land.candidates(4)}
    other = {c.sequence for c in land.candidates(2)}
    assert other - run_k  # (shorter candidates: sequences the run's annotation has not)
    assert not any(tools.annotation(seq) for seq in other - run_k)
    with qtbot.waitSignal(tools.annotated, timeout=60_000):
        view.set_k(3)
        view.set_k(2)  # (within the settle time: one annotation, of k=2's candidates)
    assert primer3_here == []  # (before the checks below call Primer3 here)
    for seq in run_k | other:
        assert tools.annotation(seq) == annotate(seq, tools.conditions), seq
    _until(qtbot, lambda: not multiprocessing.active_children(), 5.0)


def test_a_new_run_and_closing_the_window_end_the_annotating_child(qtbot, window, primer3_here):
    tools = window.results.tools
    _synthetic_every_k_run(window, n=4000)  # ~4,000 sequences: seconds of Primer3
    _until(qtbot, lambda: multiprocessing.active_children())
    first = multiprocessing.active_children()
    land, _ = _synthetic_every_k_run(window, n=300)  # a new result: its own annotations
    _until(qtbot, lambda: not any(p.is_alive() for p in first), 5.0)
    with qtbot.waitSignal(tools.annotated, timeout=120_000):
        pass
    assert set(tools._notes) == {c.sequence for c in land.candidates(4)}
    _synthetic_every_k_run(window, n=4000)
    _until(qtbot, lambda: multiprocessing.active_children())
    working = multiprocessing.active_children()
    started = time.monotonic()
    window.close()  # (the dialogs fixture answers its question)
    assert not window.isVisible()
    assert not any(p.is_alive() for p in working) and multiprocessing.active_children() == []
    assert time.monotonic() - started < 5.0
    assert not tools.runner.running and primer3_here == []


@pytest.mark.parametrize("workers", [1, 3])
def test_the_columns_give_back_engine_annotations(monkeypatch, workers):
    """Every kind of answer survives the trip: plain, ambiguous (no thermodynamics), too long
    for Primer3's alignments (a note), a repeat (annotated once); with one child or three."""
    monkeypatch.setattr(annotations, "children", lambda: workers)
    monkeypatch.setattr(annotations, "CHILD_MIN", 1)
    seqs = ["ACGTTGCAGGCTAGCATCGA", "ACGTNACGTACGTAGGA", "A" * 23, "GC" * 40, "ACG",
            "ACGTTGCAGGCTAGCATCGA"]
    conditions = Conditions(mv_conc=35.0, dv_conc=2.5)
    expected = [annotate(s, conditions) for s in seqs]
    assert annotations_from(annotation_columns(seqs, conditions)) == expected
    assert expected[1].tm is None and expected[3].note
    cands = [Candidate("t", i + 1, i + len(s), s) for i, s in enumerate(seqs)]
    started = annotations.ChildPool.started
    gen = annotate_in_children(cands, conditions, CancelToken(), batch=2)
    fractions = []
    try:
        while True:
            fractions.append(next(gen))
    except StopIteration as stop:
        done = stop.value
    assert done == dict(zip(seqs, expected)) and len(done) == 5
    assert fractions == sorted(fractions) and fractions[-1] == 1.0
    # batches of 2: one child does three rounds; three children share the five in one
    assert annotations.ChildPool.started - started == workers
    assert len(fractions) == (3 if workers == 1 else 1)


def test_the_annotated_export_is_written_from_the_tables_annotations(qtbot, window, primer3_here,
                                                                     tmp_path, monkeypatch):
    """The annotations in the table are the export's: no Primer3 again (minutes for a million
    candidates), no child; where some are missing, a child annotates those alone."""
    tools = window.results.tools
    with qtbot.waitSignal(tools.annotated, timeout=120_000):
        land, _ = _synthetic_every_k_run(window, n=300)
    monkeypatch.setattr(annotations, "WRITE_ROWS", 64)  # (several steps for 300 rows)
    steps = []
    tools.runner.progress.connect(steps.append)
    children = annotations.ChildPool.started
    with qtbot.waitSignal(tools.exported, timeout=120_000):
        assert tools.export_annotated(str(tmp_path / "a.csv"))
    assert primer3_here == [] and annotations.ChildPool.started == children
    from dataclasses import replace

    from engine.primers.export_kdiff import csv_text

    result = replace(window.controller.result, landscape=None)
    rows = len(result.candidates)
    assert steps == sorted(steps) and len(steps) == -(-rows // 64) > 2 and steps[-1] == 1.0
    expected = csv_text(result, annotate=True, conditions=tools.conditions)
    assert (tmp_path / "a.csv").read_text() == expected
    # With the primer filter on: the rows it keeps, as the command line writes them.
    tools.filter_box.setChecked(True)
    with qtbot.waitSignal(tools.exported, timeout=120_000):
        assert tools.export_annotated(str(tmp_path / "f.csv"))
    assert (tmp_path / "f.csv").read_text() == csv_text(
        result, annotate=True, conditions=tools.conditions, filters=tools.filters)
    tools.filter_box.setChecked(False)

    # Annotations missing (a failed batch, say): a child makes those, each once, equal again.
    missing = {c.sequence for c in result.candidates[7:12]}
    for seq in missing:
        tools._notes.pop(seq)
    del primer3_here[:]  # (the expected files above called Primer3 here)
    sent = []
    run = annotations.ChildPool.run

    def counting(self, calls, cancel, progress):
        sent.extend(s for _, _, args in calls for s in args[0])
        return run(self, calls, cancel, progress)

    monkeypatch.setattr(annotations.ChildPool, "run", counting)
    with qtbot.waitSignal(tools.exported, timeout=120_000):
        assert tools.export_annotated(str(tmp_path / "c.csv"))
    assert annotations.ChildPool.started == children + 1
    assert sorted(sent) == sorted(missing)
    assert (tmp_path / "c.csv").read_text() == expected
    assert primer3_here == []  # (the missing ones were annotated in a child)
    monkeypatch.setattr(annotations.ChildPool, "run", run)

    # A new run while the export runs: its child ends, nothing is written.
    assert tools.export_annotated(str(tmp_path / "b.csv"))
    _until(qtbot, lambda: multiprocessing.active_children())
    tools.reset(None)  # (what a new run's start does)
    _until(qtbot, lambda: not tools.runner.running and not multiprocessing.active_children(), 5.0)
    qtbot.wait(50)
    assert not (tmp_path / "b.csv").exists()
