"""The pcr and pairs benchmarks: listed by the runner, peers parsed, a missing peer skipped."""

from __future__ import annotations

import subprocess
import sys

import pytest

from benchmarks import pcr as bench


def test_listed_by_the_runner():
    done = subprocess.run([sys.executable, "-m", "benchmarks", "pcr", "pairs", "--list"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "ipcress (CLI)" in done.stdout and "pairs/multicore" in done.stdout


def test_ipcress_output_is_read_as_1_based_products():
    pairs = (("pair1", "A" * 20, "C" * 22),)
    out = ("ipcress: g1:filter(unmasked) pair1 400 A 100 0 B 478 1 forward\n"
           "ipcress: g1:filter(unmasked) pair1 300 B 10 0 A 290 0 revcomp\n"
           "-- completed ipcress analysis\n")
    assert bench._ipcress_products(out, pairs) == {
        ("pair1", "pair1.F", "pair1.R", 101, 500), ("pair1", "pair1.R", "pair1.F", 11, 310)}


def test_a_missing_peer_is_a_skipped_row(monkeypatch):
    monkeypatch.setattr(bench.shutil, "which", lambda name: None)
    bench.ipcress.cache_clear()
    bench.primersearch.cache_clear()
    with pytest.raises(ImportError, match="exonerate"):
        bench.ipcress()
    with pytest.raises(ImportError, match="emboss"):
        bench.primersearch()
    bench.ipcress.cache_clear()
    bench.primersearch.cache_clear()
