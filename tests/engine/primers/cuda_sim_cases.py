"""In-silico PCR on the cuda backend in numba's CUDA simulator: the same sites and products
as the CPU. Run by test_pcr_cuda.py in a subprocess with NUMBA_ENABLE_CUDASIM=1."""

from __future__ import annotations

import os

import pytest

if os.environ.get("NUMBA_ENABLE_CUDASIM") != "1":
    pytest.skip("run with NUMBA_ENABLE_CUDASIM=1 (test_pcr_cuda.py does)", allow_module_level=True)

from engine.primers import pcr  # noqa: E402
from engine.sequences import Record, encode  # noqa: E402
from tests.engine.primers.test_pcr import random_scene  # noqa: E402


@pytest.mark.parametrize("variant", ["task", "cooperative"])
@pytest.mark.parametrize("seed", [1, 9])
def test_cuda_products_equal_the_cpus(variant, seed):
    primers, records = random_scene(seed)
    p = [Record(n, encode(s)) for n, s in primers.items()]
    r = [Record(n, encode(s)) for n, s in records.items()]
    settings = pcr.PcrSettings(2, 2, 3, 150, 1, True)
    gpu = pcr.solve(p, r, settings, backend="cuda", variant=variant)
    cpu = pcr.solve(p, r, settings, backend="serial")
    assert gpu.info.backend == "cuda" and gpu.info.complete
    assert gpu.products == cpu.products and gpu.sites == cpu.sites
    assert cpu.products
