"""nw's cuda backend seen from the normal test process (numba running natively).

The kernels themselves run in numba's CUDA simulator, which must be switched on
before numba is first imported: test_kernels_in_the_cuda_simulator runs
cuda_sim_cases.py in a subprocess with NUMBA_ENABLE_CUDASIM=1. The real-GPU
checks are in test_nw_cuda_gpu.py (marked gpu).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from engine import nw, registry
from engine.nw.cuda_options import FORMS, form_of
from engine.nw.spec import SPEC
from engine.sequences import load
from tests.cuda_support import (
    check_cli_without_a_gpu,
    numba_cuda_modules_loaded_by,
    run_simulator_cases,
)
from tests.engine.nw.cuda_support import cuda_forms, label

HERE = Path(__file__).resolve().parent


def test_the_registry_offers_the_study_forms_and_the_tiled_flag():
    cuda = {v.name: v.backend("cuda") for v in SPEC.variants}
    assert cuda["rows"] is None
    assert cuda["diagonal"].parallel == cuda["prefix"].parallel == ("multi-block", "one-block")
    assert cuda["diagonal"].flags == ("tiled",) and cuda["prefix"].flags == ()
    assert registry.valid_flags(SPEC, "diagonal", "cuda", "one-block") == ()
    assert registry.valid_flags(SPEC, "diagonal", "cuda", "multi-block") == ("tiled",)
    assert {p.name for p in SPEC.params} >= {"threads_per_block", "blocks"}
    # Each combination the registry offers is one distinct form.
    assert sorted(label(c) for c in cuda_forms()) == sorted(FORMS)
    assert form_of("diagonal", "multi-block", None) == "per-launch"
    for v in SPEC.variants:  # the CPU backends keep no forms or flags
        for b in v.backends:
            if b.name != "cuda":
                assert b.parallel == () and b.flags == ()


def test_importing_and_running_on_cpu_never_loads_numba_cuda():
    code = ("from engine import nw, registry\n"
            "from engine.sequences import load\n"
            "registry.families(); registry.backend_status('cuda')\n"
            "nw.solve(load('GATTACA'), load('GCATGCT'), backend='serial')\n"
            "nw.solve(load('GATTACA'), load('GCATGCT'), variant='prefix', backend='multicore')\n"
            "import benchmarks.nw, benchmarks.nw_cuda, engine.nw.cuda_options, engine.nw.cli\n")
    assert numba_cuda_modules_loaded_by(code) == []


def test_cuda_options_need_the_cuda_backend():
    for option in ({"threads_per_block": 64}, {"blocks": 2}):
        with pytest.raises(ValueError, match="applies to the cuda backend only"):
            nw.make_job(load("ACGT"), load("ACGT"), backend="serial", **option)
    with pytest.raises(ValueError, match="does not apply"):
        nw.make_job(load("ACGT"), load("ACGT"), backend="multicore", flags={"tiled"})
    with pytest.raises(ValueError, match="no parallel forms"):
        nw.make_job(load("ACGT"), load("ACGT"), backend="serial", parallel="one-block")
    job = nw.make_job(load("ACGT"), load("ACGT"), backend="serial", threads_per_block=0, blocks=0)
    assert set(job.params) == {"match", "mismatch", "gap", "traceback"}


@pytest.mark.skipif(registry.backend_status("cuda")[0], reason="a GPU (or the simulator) is present")
def test_cli_without_a_gpu_says_so_in_one_line(tmp_path):
    check_cli_without_a_gpu(["nw", "ACGTACGT", "ACGTTT"], tmp_path / "out.txt")


@pytest.mark.parametrize("part", ["tiled or launch", "not tiled and not launch"])
def test_kernels_in_the_cuda_simulator(part):
    """Every CUDA form against the oracle, in numba's simulator (see cuda_sim_cases.py); in
    two complementary parts so that pytest-xdist can share them."""
    run_simulator_cases(HERE / "cuda_sim_cases.py", part)
