"""lcs's cuda backend seen from the normal test process (numba running natively).

The kernels themselves run in numba's CUDA simulator, which must be switched on
before numba is first imported: test_kernels_in_the_cuda_simulator runs
cuda_sim_cases.py in a subprocess with NUMBA_ENABLE_CUDASIM=1. The real-GPU
checks are in test_lcs_cuda_gpu.py (marked gpu).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cuda_support import (check_cli_without_a_gpu, numba_cuda_modules_loaded_by,
                                 run_simulator_cases)
from engine import lcs, registry
from engine.lcs.spec import SPEC

HERE = Path(__file__).resolve().parent


def test_the_registry_offers_cuda_for_wavefront_and_bitparallel():
    cuda = {v.name: v.backend("cuda") for v in SPEC.variants}
    assert cuda["rows"] is None
    assert cuda["wavefront"].parallel == ("tiled", "diagonal")
    assert cuda["bitparallel"] is not None and cuda["bitparallel"].parallel == ()
    for v in SPEC.variants:  # the CPU backends keep no parallel forms
        assert all(not b.parallel for b in v.backends if b.name != "cuda")
    tpb = SPEC.param("threads_per_block")
    assert tpb.kind == "int" and tpb.minimum == 1 and tpb.maximum == 1024


def test_importing_and_running_on_cpu_never_loads_numba_cuda():
    code = ("from engine import lcs, registry\n"
            "registry.families(); registry.backend_status('cuda')\n"
            "assert lcs.solve('ACCGGTT', 'ACGTAGT', backend='serial').length == 5\n"
            "assert lcs.length('ACCGGTT', 'ACGTAGT', variant='wavefront', backend='multicore') == 5\n"
            "import benchmarks.lcs, benchmarks.lcs_cuda, engine.lcs.cuda_options\n")
    assert numba_cuda_modules_loaded_by(code) == []


@pytest.mark.parametrize("kwargs,message", [
    ({"backend": "serial", "threads_per_block": 64}, "applies to the cuda backend only"),
    ({"backend": "multicore", "parallel": "tiled"}, "no parallel forms"),
    ({"variant": "rows", "backend": "cuda"}, "no cuda backend|not available"),
])
def test_cuda_options_need_the_cuda_backend(kwargs, message):
    with pytest.raises(ValueError, match=message):
        lcs.make_job("ACGT", "ACGT", **kwargs)
    assert set(lcs.make_job("ACGT", "ACGT", backend="serial").params) == {"task"}


def test_cuda_option_checks(monkeypatch):
    from engine.lcs.cuda_options import cuda_params

    assert cuda_params("bitparallel", "cuda", None, 64) == {"threads_per_block": 64}
    assert cuda_params("bitparallel", "cuda", None, 5) == {"threads_per_block": 5}
    assert cuda_params("wavefront", "cuda", "diagonal", 48) == {"threads_per_block": 48}
    assert cuda_params("wavefront", "cuda", "tiled", None) == {}
    for args, message in ((("bitparallel", "cuda", None, 48), "multiple of 32"),
                          (("wavefront", "cuda", "tiled", 100), "multiple of 32")):
        with pytest.raises(ValueError, match=message):
            cuda_params(*args)
    # The range and the type are the registry's (make_job checks them before the backend).
    for value, message in ((2048, "<= 1024"), (0, ">= 1"), (32.0, "integer")):
        with pytest.raises(ValueError, match=f"threads_per_block must be .*{message}"):
            lcs.make_job("ACGT", "ACGT", threads_per_block=value)


@pytest.mark.skipif(registry.backend_status("cuda")[0], reason="a GPU (or the simulator) is present")
def test_cli_without_a_gpu_says_so_in_one_line(tmp_path):
    check_cli_without_a_gpu(["lcs", "ACGTACGT", "ACGTTT"], tmp_path / "out.csv")


@pytest.mark.parametrize("part", ["oracle or launch or one_symbol",
                                  "not (oracle or launch or one_symbol)"])
def test_kernels_in_the_cuda_simulator(part):
    """Every CUDA variant and form against the oracle, in numba's simulator (see
    cuda_sim_cases.py); in two complementary parts so that pytest-xdist can share them."""
    run_simulator_cases(HERE / "cuda_sim_cases.py", part)
