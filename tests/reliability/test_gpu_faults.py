"""GPU faults mid-job (out of memory, a refused launch, a lost device): one line, partial
results kept, the next job working. The cases run under numba's CUDA simulator, which must
be switched on before numba is imported: in a subprocess (cuda_fault_cases.py)."""

from __future__ import annotations

from pathlib import Path

from tests.cuda_support import run_simulator_cases


def test_gpu_faults_in_the_simulator():
    run_simulator_cases(Path(__file__).with_name("cuda_fault_cases.py"), "test_")
