"""The k slider's redraw time on a 1 Mb landscape (issue #33: goal under 50 ms), offscreen.

A real main window shows a kdiff --all-k result whose landscape is 1 Mb of starts x k 1..K:
the target is benchmarks.data.synthetic_region(LENGTH) (M1's), the lengths are synthetic
(running a real 1 Mb landscape takes about half an hour of two free cores). They are shaped
like M1's first 20 kb: nearly every start has a candidate at every k (a small share has
none), lengths grow with k. The result goes through the run controller's own finish path
(the table, every view's show_result: the heatmap and each k's candidates made once), the
Landscape tab is shown, and the slider is moved MOVES times, cycling through the k.

Per move it prints two times: the slider's callback alone (LandscapeView.redraw_ms: the
results table, the specificity profile and the summary at the new k), and the move with the
event loop run after it (the repaint of what is visible: the Landscape tab, the table), also
in the GUI thread's CPU time (the machine's load and the GIL moving it less); then the moves
again with the results table hidden, to say how much of it the table's is, and with the
table shown once the primer annotations are over. A real run's end starts annotating its
candidates with Primer3 (minutes for a million), so the first moves happen while it runs,
as they do here: ``annotating_*`` are the moves made while the annotation runs (checked
before and after them), ANNOT_REPEATS passes of MOVES moves, after ANNOT_WARM_S seconds of
event loop (the annotation past its start), each pass's median and max wall and GUI-thread
CPU, and ``annotation_children``: the child processes annotating meanwhile (0: Primer3 in
this process, on a worker thread, holding the GIL in each call).

Run: ``QT_QPA_PLATFORM=offscreen python scripts/probe/landscape_slider.py [LENGTH [K [MOVES]]]``
(defaults 1,000,000 5 20); one JSON line. ``ANNOT_REPEATS`` (3) and ``ANNOT_WARM_S`` (3) in the
environment set the passes during the annotation. With ``LANDSCAPE_PROFILE=N`` the
first moves (table shown) run under cProfile and its N costliest functions (cumulative time)
go to stderr: where the move's time goes.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import numpy as np  # noqa: E402


def synthetic_landscape(length: int, K: int, seed: int = 33):
    """A Landscape of ``length`` starts of M1's target, lengths made up (see the docstring)."""
    from benchmarks import data
    from engine.kdiff.landscape_table import Landscape

    region = data.synthetic_region(length)
    rng = np.random.default_rng(seed)
    first = rng.integers(9, 16, length)  # k=1
    steps = rng.integers(2, 7, (length, K - 1))  # each further edit lengthens the candidate
    lengths = np.concatenate([first[:, None], first[:, None] + np.cumsum(steps, axis=1)], axis=1)
    lengths = np.minimum(lengths, length - np.arange(length)[:, None])  # within the record
    lengths[rng.random((length, K)) < 0.001] = 0  # a few starts without a candidate
    lengths[length - 64:] = 0  # the suffixes too short to differ
    land = Landscape(np.zeros(length, np.int32), np.arange(length), lengths.astype(np.int32),
                     target_ids=(region.id,), texts=(region.codes,))
    return land, region


def _moves(app, view, window, land, moves: int, profile: int = 0) -> dict:
    """``moves`` slider moves cycling through k 1..K, in ms each: ``callback`` (the slider's
    callback alone), ``whole`` (with the event loop run after it), ``cpu`` (that in the
    process's CPU time, every thread: the Primer3 worker's too) and ``main`` (in the GUI
    thread's CPU time: what the move itself costs, apart from the load of a shared machine
    and from waiting for the worker to let go of the GIL). ``profile``: print that many of
    cProfile's costliest functions of the moves to stderr."""
    if profile:
        import cProfile
        import pstats

        profiler = cProfile.Profile()
        profiler.enable()
        try:
            return _moves(app, view, window, land, moves)
        finally:
            profiler.disable()
            pstats.Stats(profiler, stream=sys.stderr).sort_stats("cumulative").print_stats(profile)
    K = len(land.k)
    out: dict[str, list] = {"callback": [], "whole": [], "cpu": [], "main": []}
    at = view.slider.value()
    for k in (k for _ in range(moves) for k in range(1, K + 1)):
        if len(out["whole"]) == moves:
            break
        if k == at:
            continue
        m0, c0, t0 = time.thread_time(), time.process_time(), time.perf_counter()
        view.set_k(k)
        app.processEvents()
        out["whole"].append(1000 * (time.perf_counter() - t0))
        out["cpu"].append(1000 * (time.process_time() - c0))
        out["main"].append(1000 * (time.thread_time() - m0))
        out["callback"].append(view.redraw_ms)
        at = k
        assert window.results.model.rowCount() == int(np.count_nonzero(land.length_at(k)))
    return out


def _median(times: list) -> float:
    return round(float(np.median(times)), 1)


def main(length: int = 1_000_000, K: int = 5, moves: int = 20) -> dict:
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QApplication

    from app.views.kdiff import LandscapeView
    from app.window import MainWindow
    from engine import kdiff
    from engine.sequences import load

    app = QApplication.instance() or QApplication([])
    settings = QSettings(str(Path(tempfile.mkdtemp()) / "settings.ini"),
                         QSettings.Format.IniFormat)
    window = MainWindow(settings)
    window.resize(1280, 800)
    window.show()
    window.params.set_family("kdiff")
    assert window.adapter.name == "kdiff", window.adapter.name
    land, region = synthetic_landscape(length, K)
    # A real all-k result's metadata (a tiny run), with the 1 Mb landscape in it.
    template = kdiff.solve(load("ACGTTGCAAC"), load("ACGTAGCAAC"), K, backend="serial",
                           all_k=True)
    result = replace(template, candidates=land.candidates(K), landscape=land,
                     profiles={region.id: np.maximum(land.length_at(K) - 1, 0)},
                     settled={region.id: length})
    t0 = time.perf_counter()
    window.controller._finish_run(result)  # the run controller's own path for a finished run
    app.processEvents()
    shown_s = time.perf_counter() - t0
    view = next(v for v in window.family_views if isinstance(v, LandscapeView))
    page = next(window.tabs.widget(i) for i in range(window.tabs.count())
                if window.tabs.tabText(i) == view.title)
    window.tabs.setCurrentWidget(page)
    app.processEvents()
    assert view.slider.isEnabled() and view.slider.maximum() == K
    from app.views.primers import PrimerTools

    tools = next(v for v in window.family_views if isinstance(v, PrimerTools))
    # While the annotation runs (as after a real run): past its start, then passes of moves.
    import multiprocessing

    warm_until = time.perf_counter() + float(os.environ.get("ANNOT_WARM_S", "3"))
    while time.perf_counter() < warm_until:
        app.processEvents()
        time.sleep(0.01)
    with open("/proc/loadavg") as fh:
        load_before = " ".join(fh.read().split()[:3])
    annotating = tools.runner.running
    children = len(multiprocessing.active_children())
    passes = []
    for _ in range(int(os.environ.get("ANNOT_REPEATS", "3"))):
        passes.append(_moves(app, view, window, land, moves))
    still = tools.runner.running
    during = {key: [t for p in passes for t in p[key]] for key in passes[0]}
    profile = int(os.environ.get("LANDSCAPE_PROFILE", "0"))
    shown = _moves(app, view, window, land, moves, profile)
    # Where the repaint goes: the same moves with the results table hidden.
    window.results.hide()
    app.processEvents()
    no_table = _moves(app, view, window, land, moves)
    # And once the annotations are over (here: stopped), the table shown again.
    window.results.show()
    tools.runner.cancel()
    while tools.runner.running:
        app.processEvents()
        time.sleep(0.01)
    after = _moves(app, view, window, land, moves)
    window.hide()  # (closing asks about unsaved results: a modal question)
    with open("/proc/loadavg") as fh:
        load_avg = " ".join(fh.read().split()[:3])
    return {"starts": length, "K": K, "moves": len(shown["whole"]),
            "candidates_per_k": [int(np.count_nonzero(land.length_at(k))) for k in land.k],
            "annotating_during_moves": annotating and still,
            "annotation_children": children,
            "annotating_wall_ms_median": _median(during["whole"]),
            "annotating_wall_ms_max": round(max(during["whole"]), 1),
            "annotating_main_cpu_ms_median": _median(during["main"]),
            "annotating_process_cpu_ms_median": _median(during["cpu"]),
            "annotating_passes_wall_ms_median": [_median(p["whole"]) for p in passes],
            "annotating_passes_wall_ms_max": [round(max(p["whole"]), 1) for p in passes],
            "annotating_passes_main_cpu_ms_median": [_median(p["main"]) for p in passes],
            "callback_ms_median": _median(shown["callback"]),
            "with_repaint_ms_median": _median(shown["whole"]),
            "with_repaint_ms_max": round(max(shown["whole"]), 1),
            "with_repaint_cpu_ms_median": _median(shown["cpu"]),
            "with_repaint_main_cpu_ms_median": _median(shown["main"]),
            "no_table_with_repaint_ms_median": _median(no_table["whole"]),
            "no_table_with_repaint_main_cpu_ms_median": _median(no_table["main"]),
            "no_annotating_callback_ms_median": _median(after["callback"]),
            "no_annotating_with_repaint_ms_median": _median(after["whole"]),
            "no_annotating_with_repaint_main_cpu_ms_median": _median(after["main"]),
            "callback_ms": [round(t, 1) for t in shown["callback"]],
            "with_repaint_ms": [round(t, 1) for t in shown["whole"]],
            "first_show_s": round(shown_s, 2), "load_before": load_before, "load": load_avg}


if __name__ == "__main__":
    print(json.dumps(main(*map(int, sys.argv[1:4]))), flush=True)
    os._exit(0)  # (the window's teardown at exit only adds Qt's warnings)
