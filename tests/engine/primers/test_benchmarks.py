"""The pcr and pairs benchmarks: listed by the runner, peers parsed, a missing peer skipped."""

from __future__ import annotations

import subprocess
import sys

import pytest

from benchmarks import pcr_workload as pw


def test_listed_by_the_runner():
    done = subprocess.run([sys.executable, "-m", "benchmarks", "pcr", "pairs", "--list"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "ipcress (CLI)" in done.stdout and "pairs/multicore" in done.stdout
    assert "PCR1000x20" not in done.stdout  # the GPU workload runs with --backend cuda only
    done = subprocess.run([sys.executable, "-m", "benchmarks", "pcr", "--backend", "cuda",
                           "--list"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "primerscope pcr cuda (CLI)" in done.stdout and "PCR20 " not in done.stdout


def test_ipcress_output_is_read_as_1_based_products():
    pairs = (("pair1", "A" * 20, "C" * 22),)
    out = ("ipcress: g1:filter(unmasked) pair1 400 A 100 0 B 478 1 forward\n"
           "ipcress: g1:filter(unmasked) pair1 300 B 10 0 A 290 0 revcomp\n"
           "-- completed ipcress analysis\n")
    assert pw.ipcress_products(out, pairs) == {
        ("g1", "pair1", "pair1.F", "pair1.R", 101, 500),
        ("g1", "pair1", "pair1.R", "pair1.F", 11, 310)}


def test_a_missing_peer_is_a_skipped_row(monkeypatch, tmp_path):
    monkeypatch.setattr(pw.shutil, "which", lambda name: None)
    monkeypatch.setattr(pw, "PEERS", tmp_path / "peers")  # no carried copy either
    pw.ipcress.cache_clear()
    pw.primersearch.cache_clear()
    with pytest.raises(ImportError, match="exonerate"):
        pw.ipcress(pw.Workload("tiny", 1, (20, 20)))
    with pytest.raises(ImportError, match="emboss"):
        pw.primersearch(pw.Workload("tiny", 1, (20, 20)))
    pw.ipcress.cache_clear()
    pw.primersearch.cache_clear()


def test_the_carried_ipcress_runs_with_its_own_libraries(monkeypatch, tmp_path):
    """Without a system ipcress, the one in .gl/peers is run with .gl/peers/lib on
    LD_LIBRARY_PATH."""
    bin_dir = tmp_path / "peers" / "bin"
    bin_dir.mkdir(parents=True)
    (bin_dir / "ipcress").write_text("#!/bin/sh\n")
    monkeypatch.setattr(pw.shutil, "which", lambda name: None)
    monkeypatch.setattr(pw, "PEERS", tmp_path / "peers")
    monkeypatch.setenv("LD_LIBRARY_PATH", "/elsewhere")
    exe, env = pw.ipcress_command()
    assert exe == str(bin_dir / "ipcress")
    assert env["LD_LIBRARY_PATH"] == f"{tmp_path / 'peers' / 'lib'}:/elsewhere"
    # The same when .gl/peers/bin is on PATH; a system ipcress runs as it is.
    monkeypatch.setattr(pw.shutil, "which", lambda name: str(bin_dir / "ipcress"))
    assert pw.ipcress_command()[1]["LD_LIBRARY_PATH"].startswith(str(tmp_path / "peers" / "lib"))
    monkeypatch.setattr(pw.shutil, "which", lambda name: "/usr/bin/ipcress")
    assert pw.ipcress_command() == ("/usr/bin/ipcress", None)


def test_extrapolation_counts_the_fixed_part_once():
    assert pw.extrapolate({1: 5.0, 2: 8.0}, 20) == pytest.approx(5.0 + 19 * 3.0)
    assert pw.extrapolate({4: 14.0, 1: 5.0}, 20) == pytest.approx(5.0 + 19 * 3.0)


def test_the_pcr20_primers_are_those_of_the_published_figures():
    """PCR20 keeps its primers (README's figures) now that workloads share one builder."""
    from benchmarks.pcr import PCR20

    import hashlib

    pairs = pw.primer_pairs(PCR20)
    assert len(pairs) == 20 and all(len(f) == len(r) == 20 for _, f, r in pairs)
    # The digest of the pairs that benchmarks/pcr.py drew before the builder was shared.
    assert hashlib.md5(repr(pairs).encode()).hexdigest() == "c4693e68984373e106835f2215f50e28"
    w = pw.primer_pairs(pw.Workload("PCR1000x20", pairs=500, lengths=(18, 25), copies=20))
    assert len(w) == 500 and {len(f) for _, f, _ in w} | {len(r) for _, _, r in w} == set(
        range(18, 26))
