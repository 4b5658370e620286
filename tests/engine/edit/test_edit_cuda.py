"""edit's cuda backend seen from the normal test process (numba running natively).

The kernels themselves run in numba's CUDA simulator, which must be switched on
before numba is first imported: test_kernels_in_the_cuda_simulator runs
cuda_sim_cases.py in a subprocess with NUMBA_ENABLE_CUDASIM=1. The real-GPU
checks are in test_edit_cuda_gpu.py (marked gpu).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cuda_support import (check_cli_without_a_gpu, numba_cuda_modules_loaded_by,
                                 run_simulator_cases)
from engine import edit, registry
from engine.edit.spec import SPEC
from engine.sequences import load

HERE = Path(__file__).resolve().parent


def test_the_registry_offers_the_gpu_variants_on_cuda_only():
    backends = {v.name: [b.name for b in v.backends] for v in SPEC.variants}
    assert backends["task"] == ["cuda"] and backends["cooperative"] == ["cuda"]
    for name in ("dp", "myers", "myers-blocked", "banded"):
        assert "cuda" not in backends[name]
    assert SPEC.fastest_variant == "myers-blocked"  # defaults stay on the CPU
    words = SPEC.param("words_per_thread")
    assert (words.kind, words.minimum, words.maximum, words.backends) == ("int", 1, 8, ("cuda",))
    tpb = SPEC.param("threads_per_block")
    assert (tpb.kind, tpb.backends) == ("int", ("cuda",))


def test_importing_and_running_on_cpu_never_loads_numba_cuda():
    code = ("from engine import edit, registry\n"
            "from engine.sequences import load\n"
            "registry.families(); registry.backend_status('cuda')\n"
            "edit.solve(load('ACGT'), load('TTACGATT'), mode='search', k=1, backend='serial')\n"
            "import benchmarks.edit, benchmarks.edit_cuda, engine.edit.cuda_options\n")
    assert numba_cuda_modules_loaded_by(code) == []


def test_cuda_options_need_the_cuda_backend():
    for option in ({"threads_per_block": 64}, {"words_per_thread": 2}):
        with pytest.raises(ValueError, match="applies to the cuda backend only"):
            edit.make_job(load("ACGT"), load("ACGT"), backend="serial", **option)
    job = edit.make_job(load("ACGT"), load("ACGT"), backend="serial")
    assert "threads_per_block" not in job.params and "words_per_thread" not in job.params


@pytest.mark.skipif(registry.backend_status("cuda")[0], reason="a GPU (or the simulator) is present")
def test_cli_without_a_gpu_says_so_in_one_line(tmp_path):
    check_cli_without_a_gpu(["edit", "ACGTACGT", "ACGTTT", "--variant", "cooperative"], tmp_path / "out.csv")


@pytest.mark.parametrize("part", ["zipped or stripes", "not zipped and not stripes"])
def test_kernels_in_the_cuda_simulator(part):
    """Every CUDA variant and parameter against the oracle, in numba's simulator (see
    cuda_sim_cases.py); in two complementary parts so that pytest-xdist can share them."""
    run_simulator_cases(HERE / "cuda_sim_cases.py", part)
