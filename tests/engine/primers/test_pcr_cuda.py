"""pcr on the cuda backend: the default variant, the simulator run, and the CLI without a GPU."""

from __future__ import annotations

from pathlib import Path

from engine.primers import pcr
from engine.sequences import Record, encode
from tests.cuda_support import check_cli_without_a_gpu, run_simulator_cases

HERE = Path(__file__).resolve().parent


def test_kernels_in_the_cuda_simulator():
    run_simulator_cases(HERE / "cuda_sim_cases.py", "cuda")


def test_cli_without_a_gpu(tmp_path):
    check_cli_without_a_gpu(["pcr", "ACGTACGTAGGCATCG", "ACGTACGTAGGCATCGACGT"], tmp_path / "o.csv")


def test_search_job_variants():
    p = [Record("p", encode("ACGTACGTAGGCATCG"))]
    t = [Record("t", encode("ACGTACGTAGGCATCGAAAA"))]
    assert pcr.search_job(p, t, 2, backend="serial").variant == "myers"
    long = [Record("q", encode("ACGT" * 20))]
    assert pcr.search_job(long, t, 2, backend="serial").variant == "myers-blocked"
