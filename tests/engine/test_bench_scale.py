"""``primerscope bench scale``: S1 (CPU) and S2 (GPU) listed, S2 skipped with its reason
where there is no GPU (before any data is made), and S2's CLI run read back right."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys

import pytest

import benchmarks
from benchmarks import Skip, scale
from engine import kdiff, registry
from engine.sequences import load

S1 = ("index", "open", "kdiff/multicore", "kdiff/dask")
S2 = ("kdiff/cuda", "kdiff/dask-cuda", "pcr/cuda")


@pytest.fixture
def tiny(monkeypatch, tmp_path):
    """A 30 kb store and a 300 bp target, kept in tmp_path; no GPU, no simulator."""
    monkeypatch.setenv("PRIMERSCOPE_BENCH_DATA", str(tmp_path / "data"))
    monkeypatch.setenv("PRIMERSCOPE_SCALE_MB", "0.03")
    monkeypatch.setenv("PRIMERSCOPE_SCALE_TARGET", "300")
    monkeypatch.delenv("NUMBA_ENABLE_CUDASIM", raising=False)
    return tmp_path / "data"


def _gpu(monkeypatch, present: bool) -> None:
    status = registry.backend_status
    monkeypatch.setattr(registry, "backend_status", lambda name: (
        (True, "") if present else (False, "no NVIDIA GPU driver (libcuda) found on this machine"))
        if name == "cuda" else status(name))


def test_the_runner_lists_s1_and_s2():
    done = subprocess.run([sys.executable, "-m", "benchmarks", "scale", "--list"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    listed = [line.split()[1:3] for line in done.stdout.splitlines()]
    assert listed == [["S1", n] for n in S1] + [["S2", n] for n in S2]
    assert "goal <= 60 s" in done.stdout and "goal <= 120 s" in done.stdout


def test_without_a_gpu_the_s2_rows_are_skipped_before_any_data_is_made(tiny, monkeypatch, tmp_path):
    _gpu(monkeypatch, False)
    out = tmp_path / "s2.json"
    args = benchmarks.build_parser().parse_args(["scale", "--workload", "S2", "--json-out",
                                                 str(out)])
    assert benchmarks.run(args) == 0
    rows = json.loads(out.read_text())["rows"]
    assert [r["name"] for r in rows] == list(S2)
    for row in rows:
        assert row["seconds"] is None and row["error"] == (
            "skipped: no NVIDIA GPU driver (libcuda) found on this machine")
    assert not tiny.exists()  # nothing generated for a skipped row


def test_dask_cuda_is_skipped_without_dask_cuda_and_gpu_rows_under_the_simulator(
        tiny, monkeypatch):
    _gpu(monkeypatch, True)
    status = registry.backend_status  # (dask installed, as far as the case can tell)
    monkeypatch.setattr(registry, "backend_status",
                        lambda name: (True, "") if name == "dask" else status(name))
    find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "dask_cuda" else find_spec(name, *a))
    total, target = scale.sizes()
    with pytest.raises(Skip, match="dask_cuda is not installed"):
        scale._kdiff_dask_cuda_case(total, target)
    monkeypatch.setenv("NUMBA_ENABLE_CUDASIM", "1")
    with pytest.raises(Skip, match="simulator"):
        scale._kdiff_cuda_case(total, target)
    with pytest.raises(Skip, match="simulator"):
        scale._pcr_cuda_case(total)
    assert not tiny.exists()


def test_the_cli_run_reports_wall_solve_rss_and_the_candidates_of_the_in_memory_job(tiny):
    """S2's kdiff run read back (on multicore: no GPU here): its candidates are the
    in-memory job's against the same store, and the data files are made once."""
    total, target = scale.sizes()
    row = scale._cli_kdiff(total, target, "multicore")
    assert row["backend"] == "multicore"
    assert row["seconds"] > row["solve_s"] > 0 and row["warmup_s"] > 0
    assert row["peak_rss_MB"] > 20  # a Python process with numpy and numba
    result = kdiff.solve(load(str(scale.target_fasta(target))),
                         load(str(scale.synthetic_store(total))), scale.K, strands="both",
                         backend="multicore")
    ours = [[c.target_id, c.start, c.end] for c in result.candidates]
    assert ours and scale._candidates["multicore"] == ours and row["candidates"] == len(ours)
    made = {p.name: p.stat().st_mtime_ns for p in tiny.iterdir()}
    assert {f"target-{target}-seed17.fa", "warmup-20000-seed17.fa", "kdiff-multicore.json",
            scale.fasta_path(total).name, scale.synthetic_store(total).name} <= set(made)
    assert not [name for name in made if name.endswith(".part")]
    scale.target_fasta(target)
    scale.warmup_fasta()
    assert {p.name: p.stat().st_mtime_ns for p in tiny.iterdir()} == made  # reused
