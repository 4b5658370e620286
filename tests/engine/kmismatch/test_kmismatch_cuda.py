"""kmismatch's cuda backend seen from the normal test process (numba running natively).

The kernels themselves run in numba's CUDA simulator, which must be switched on
before numba is first imported: test_kernels_in_the_cuda_simulator runs
cuda_sim_cases.py in a subprocess with NUMBA_ENABLE_CUDASIM=1. The real-GPU
checks are in test_kmismatch_cuda_gpu.py (marked gpu).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.cuda_support import (check_cli_without_a_gpu, numba_cuda_modules_loaded_by,
                                 run_simulator_cases)
from engine import kmismatch, registry
from engine.kmismatch.cuda_options import CUDA_VARIANTS
from engine.kmismatch.spec import SPEC
from engine.sequences import load

HERE = Path(__file__).resolve().parent
CUDA_METHODS = ("thread", "block-thread", "shared-mem", "pair-tile")


def test_the_registry_offers_the_cuda_methods():
    cuda = [v.name for v in SPEC.variants if v.backend("cuda")]
    assert tuple(cuda) == CUDA_METHODS == CUDA_VARIANTS
    for v in SPEC.variants:  # a CUDA method has no CPU backend, a CPU variant no cuda one
        names = [b.name for b in v.backends]  # (dask runs the CPU variants' tasks)
        assert names == (["cuda"] if v.name in CUDA_METHODS else ["serial", "multicore", "dask"])
    assert SPEC.fastest_variant == "pmasm"  # what the GUI starts from runs everywhere


def test_importing_and_running_on_cpu_never_loads_numba_cuda():
    code = ("from engine import kmismatch, registry\n"
            "from engine.sequences import load\n"
            "registry.families(); registry.backend_status('cuda')\n"
            "kmismatch.solve(load('ACTTGTAC'), load('ACTG'), 1, backend='serial')\n"
            "import benchmarks.kmismatch, benchmarks.kmismatch_cuda, engine.kmismatch.cli\n")
    assert numba_cuda_modules_loaded_by(code) == []


def test_threads_per_block_needs_the_cuda_backend():
    with pytest.raises(ValueError, match="applies to the cuda backend only"):
        kmismatch.make_job(load("ACG"), load("ACGT"), 1, backend="serial", threads_per_block=64)
    job = kmismatch.make_job(load("ACG"), load("ACGT"), 1, backend="serial")
    assert "threads_per_block" not in job.params


def test_counter_layout_flags_hits_with_the_top_bit():
    """b-bit counters hold bias + mismatches; the top bit is set exactly past k."""
    from engine.kmismatch.cpu_pmasm import counter_bits

    cuda = pytest.importorskip("engine.kmismatch.cuda")  # imports numba.cuda (no GPU needed)
    for m in range(1, 70):
        for k in range(0, m + 1):
            b, bias = cuda.counter_layout(m, k)
            assert b in (counter_bits(m), counter_bits(m) + 1)
            assert all(((bias + d) >> (b - 1) & 1) == (d > k) for d in range(m + 1))
            assert bias + m < 1 << b
    assert cuda.counter_layout(12, 4) == (4, 3)  # the study's setting: 16 counters a word
    index = cuda.pair_index()
    assert sorted(index.ravel().tolist()) == list(range(256))
    plain = [index[a, c] % 16 for a in (1, 2, 4, 8) for c in (1, 2, 4, 8)]
    assert sorted(plain) == list(range(16))  # A/C/G/T pairs: 16 different bank pairs


@pytest.mark.skipif(registry.backend_status("cuda")[0], reason="a GPU (or the simulator) is present")
def test_cli_without_a_gpu_says_so_in_one_line(tmp_path):
    check_cli_without_a_gpu(["kmismatch", "ACGTACGT", "ACG", "-k", "1"], tmp_path / "out.csv")
    # Without a GPU the defaults stay on the CPU.
    job = kmismatch.make_job(load("ACG"), load("ACGT"), 1)
    assert job.variant == "pmasm" and job.backend in ("serial", "multicore")


SIMULATOR_PART = "63_64_and_65 or several_windows or bench_cases or random_inputs"


@pytest.mark.parametrize("part", [SIMULATOR_PART, f"not ({SIMULATOR_PART})"],
                         ids=["long-cases", "the-rest"])
def test_kernels_in_the_cuda_simulator(part):
    """Every CUDA method against the oracles, in numba's simulator (see cuda_sim_cases.py); in
    two complementary parts of about equal time, so that pytest-xdist can share them."""
    run_simulator_cases(HERE / "cuda_sim_cases.py", part)


def test_numpy_oracle_agrees_with_reference_on_iupac():
    """The two oracles the CUDA tests use agree with each other (a guard on the guards)."""
    from engine.kmismatch.reference import kmismatch_reference
    from tests.engine.kmismatch.oracles import numpy_hits

    rng = np.random.default_rng(0)
    text = [rng.integers(1, 16, 60).astype(np.uint8)]
    pats = [rng.integers(1, 16, m).astype(np.uint8) for m in (3, 6)]
    assert numpy_hits(text, pats, 2) == kmismatch_reference(text, pats, 2)
