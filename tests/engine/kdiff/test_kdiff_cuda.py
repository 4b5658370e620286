"""kdiff's cuda backend seen from the normal test process (numba running natively).

The kernels themselves run in numba's CUDA simulator, which must be switched on
before numba is first imported: test_kernels_in_the_cuda_simulator runs
cuda_sim_cases.py in a subprocess with NUMBA_ENABLE_CUDASIM=1. The real-GPU
checks are in test_kdiff_cuda_gpu.py (marked gpu).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.cuda_support import (check_cli_without_a_gpu, numba_cuda_modules_loaded_by,
                                 run_simulator_cases)
from engine import kdiff, registry
from engine.kdiff.spec import SPEC
from engine.sequences import load
from tests.strategies import codes, examples

HERE = Path(__file__).resolve().parent


def test_the_registry_offers_cuda_with_the_study_flags():
    cuda = {v.name: v.backend("cuda") for v in SPEC.variants}
    assert cuda["conventional"].flags == ("opt1", "opt3", "opt4", "opt5")
    assert cuda["alternative"].flags == ("opt3", "opt4", "opt5", "opt6")
    assert cuda["bitparallel"].flags == ("word32", "word64", "neighbours")  # ours, not the study's
    assert set(cuda["alternative"].default_flags) == set(cuda["alternative"].flags)
    for v in SPEC.variants:  # the CPU backends keep their own flags
        for b in v.backends:
            if b.name != "cuda":
                assert not {"opt4", "opt5", "opt6"} & set(b.flags)


def test_importing_and_running_on_cpu_never_loads_numba_cuda():
    code = ("from engine import kdiff, registry\n"
            "from engine.sequences import load\n"
            "registry.families(); registry.backend_status('cuda')\n"
            "kdiff.solve(load('ACTG'), load('AGCAAG'), 2, backend='serial')\n"
            "import benchmarks.kdiff, benchmarks.kdiff_cuda\n")
    assert numba_cuda_modules_loaded_by(code) == []


def test_cuda_options_need_the_cuda_backend():
    for option in ({"threads_per_block": 64}, {"prefetch_factor": 2}):
        with pytest.raises(ValueError, match="applies to the cuda backend only"):
            kdiff.make_job(load("ACGT"), load("ACGT"), 2, backend="serial", **option)
    job = kdiff.make_job(load("ACGT"), load("ACGT"), 2, backend="serial")
    assert not {"threads_per_block", "prefetch_factor"} & set(job.params)


def test_prefetch_lengths_follow_the_study():
    from engine.kdiff.cuda import prefetch_lengths

    # Table 4 of the study: k = 256, 256 threads per block, c = 1, 2, 3.
    assert [prefetch_lengths(256, 256, c) for c in (1, 2, 3)] == [(256, 512), (512, 768), (768, 1024)]
    assert prefetch_lengths(100, 256, 3) == (512, 768)


@pytest.mark.skipif(registry.backend_status("cuda")[0], reason="a GPU (or the simulator) is present")
def test_cli_without_a_gpu_says_so_in_one_line(tmp_path):
    check_cli_without_a_gpu(["kdiff", "ACGTACGT", "ACGTTT", "-k", "2"], tmp_path / "out.csv")


@pytest.mark.parametrize("part", ["conventional", "not conventional"])
def test_kernels_in_the_cuda_simulator(part):
    """Every CUDA variant and flag against the oracle, in numba's simulator (see
    cuda_sim_cases.py); in two complementary parts so that pytest-xdist can share them."""
    run_simulator_cases(HERE / "cuda_sim_cases.py", part)


# The lanes stages, the tier kernels and the every-level samples (~120 s alone); the rest
# (~130 s): parts of about equal length, so that neither makes the run wait at its end.
BITPARALLEL_PART = "stage or tier_kernels or every_level_starts_settled"


@pytest.mark.parametrize("part", [BITPARALLEL_PART, f"not ({BITPARALLEL_PART})"],
                         ids=["stages-and-tiers", "the-rest"])
def test_bitparallel_stages_in_the_cuda_simulator(part):
    """bitparallel's lanes stages (32 and 64 bits) and the neighbour rounds against the oracle,
    in the simulator (see cuda_sim_bitparallel.py), in two parts like the above."""
    run_simulator_cases(HERE / "cuda_sim_bitparallel.py", part)


@settings(max_examples=examples(60))
@given(alpha=codes(0, 30), texts=st.lists(codes(0, 30, alphabet=st.integers(0, 15)), max_size=3),
       k=st.integers(0, 6), piece=st.tuples(st.integers(0, 30), st.integers(0, 30)))
def test_the_simulator_cases_oracle_equals_the_reference(alpha, texts, k, piece):
    """The all-starts oracle of the simulator cases (oracle_rows) gives the reference's c(r)
    and candidates, start by start (a guard on the guards): IUPAC and gap codes, no text or
    empty ones, k = 0, and a piece of the target planted so that prefixes run long."""
    from engine.kdiff.reference import kdiff_reference, longest_prefix_within
    from tests.engine.kdiff.oracle_rows import candidates, longest_prefixes

    if texts:
        texts[0] = np.concatenate([texts[0], alpha[min(piece):max(piece)]])
    want = [longest_prefix_within(alpha[r:], texts, k) for r in range(len(alpha))]
    assert longest_prefixes(alpha, texts, k).tolist() == want
    assert candidates(alpha, texts, k) == kdiff_reference(alpha, texts, k)
