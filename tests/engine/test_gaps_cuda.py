"""Assembly gaps on the CUDA kernels (issue #28): gaps_cuda_cases.py in numba's CUDA
simulator, in a subprocess (NUMBA_ENABLE_CUDASIM must be set before numba is imported)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cuda_support import run_simulator_cases

CASES = Path(__file__).resolve().parent / "gaps_cuda_cases.py"


@pytest.mark.parametrize("part", ["kdiff", "kmismatch", "edit"])
def test_gaps_in_the_cuda_simulator(part):
    run_simulator_cases(CASES, part)
