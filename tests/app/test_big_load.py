"""Issue 14: loading a 100 Mb FASTA keeps the window responsive, shows that it is loading, and
Cancel drops it (the panel keeps what it held)."""

from __future__ import annotations

import time

import numpy as np
import pytest
from PySide6.QtCore import QTimer

from engine.sequences import Record, encode

MAX_STALL_S = 0.5
SIZE = 100_000_000


@pytest.fixture(scope="module")
def big_fasta(tmp_path_factory):
    """One record of random ACGT, 100 Mb, 100-letter lines, written in blocks."""
    path = tmp_path_factory.mktemp("big") / "big.fa"
    rng = np.random.default_rng(14)
    letters = np.frombuffer(b"ACGT", np.uint8)
    with open(path, "wb") as fh:
        fh.write(b">big random ACGT\n")
        for _ in range(SIZE // 1_000_000):
            block = letters[rng.integers(0, 4, 1_000_000)].reshape(-1, 100)
            lines = np.hstack([block, np.full((len(block), 1), ord("\n"), np.uint8)])
            fh.write(lines.tobytes())
    return str(path)


def _ticking():
    ticks: list[float] = []
    timer = QTimer()
    timer.setInterval(10)
    timer.timeout.connect(lambda: ticks.append(time.perf_counter()))
    return timer, ticks


@pytest.mark.alone
@pytest.mark.slow
def test_big_fasta_loads_with_the_window_responsive(qtbot, window, big_fasta):
    timer, ticks = _ticking()
    busy = []
    timer.timeout.connect(lambda: busy.append((window.progress_bar.maximum() == 0,
                                               window.cancel_action.isEnabled())))
    timer.start()
    with qtbot.waitSignal(window.inputs_loaded, timeout=120_000):
        window.load_files("target", [big_fasta])
        assert "Loading big.fa" in window.state_label.text()
    timer.stop()
    gaps = [b - a for a, b in zip(ticks, ticks[1:])]
    print(f"\n100 Mb FASTA: {len(ticks)} ticks, maximum stall {(max(gaps) - 0.010) * 1000:.0f} ms")
    assert len(ticks) > 20
    assert busy and busy[0] == (True, True)  # a busy bar and Cancel while it loads
    records = window.input_panels["target"].state().records
    assert len(records) == 1 and len(records[0]) == SIZE
    assert window.progress_bar.maximum() == 1000 and not window.cancel_action.isEnabled()
    assert "Loaded 1 record(s), 100,000,000 bp" in window.state_label.text()
    assert max(gaps) - 0.010 < MAX_STALL_S


@pytest.mark.slow
def test_cancel_drops_the_load_and_keeps_the_records(qtbot, window, big_fasta):
    panel = window.input_panels["target"]
    small = [Record("small", encode("ACGTACGTAC"), "", "test")]
    panel.set_records(small, "test")
    loaded = []
    window.inputs_loaded.connect(lambda: loaded.append(1))
    window.load_files("target", [big_fasta])
    window.load_files("background", [big_fasta])  # waiting its turn: dropped too
    qtbot.wait(100)
    assert window.cancel_action.isEnabled()
    window.cancel_action.trigger()
    assert "cancelled" in window.state_label.text().lower()
    assert not window.cancel_action.isEnabled() and window.progress_bar.maximum() == 1000
    qtbot.waitUntil(lambda: not window.loads.running, timeout=120_000)
    qtbot.wait(100)
    assert not loaded
    assert [r.id for r in panel.state().records] == ["small"]
    # The queue still works after a cancel.
    with qtbot.waitSignal(window.inputs_loaded, timeout=30_000):
        window.load_files("target", [str(_small_file(big_fasta))])
    assert [r.id for r in panel.state().records] == ["tiny"]


def _small_file(big_fasta):
    from pathlib import Path

    path = Path(big_fasta).with_name("tiny.fa")
    path.write_text(">tiny\nACGTACGTACGT\n")
    return path
