"""The group search on the cuda backend in numba's CUDA simulator: the same pairs as on the
CPU, with the seeded filters (on the CPU, with every core: the cuda job has no ``threads``)
and with the GPU's edit searches (the filters told they cannot judge any primer). Run by
test_group.py in a subprocess with NUMBA_ENABLE_CUDASIM=1."""

from __future__ import annotations

import os

import pytest

if os.environ.get("NUMBA_ENABLE_CUDASIM") != "1":
    pytest.skip("run with NUMBA_ENABLE_CUDASIM=1 (test_group.py does)", allow_module_level=True)

from engine.cluster import local_cores  # noqa: E402
from engine.primers import group as G  # noqa: E402
from engine.primers import group_exclusion as gx  # noqa: E402
from engine.primers.pairs import PairSettings  # noqa: E402
from engine.primers.primer3_design import DesignSettings  # noqa: E402
from tests.engine.test_group import SIZE, Case  # noqa: E402


def small_settings() -> G.GroupSettings:
    design = DesignSettings(min_three_prime_distance=-1)
    return G.GroupSettings(pairs=PairSettings(design=design), product_size=SIZE, num_return=2)


@pytest.mark.parametrize("seeded", [True, False])
def test_cuda_pairs_equal_the_cpus(seeded, monkeypatch):
    # a copy of LP 3 edits away in the exclusion genome: some primers fail exclusivity; a
    # SNP in strain2: some bind there only with the tolerance
    case = Case(3, snp_in=1, exclusion_lp_edits=[5, 16, 28])
    passes = []

    def spy(real):
        def wrapped(primers, records, e, threads=None, cancel=None):
            passes.append(threads)
            return real(primers, records, e, threads, cancel)
        return wrapped

    monkeypatch.setattr(gx, "iter_hits", spy(gx.iter_hits))
    monkeypatch.setattr(gx, "iter_windows", spy(gx.iter_windows))
    if not seeded:
        monkeypatch.setattr(gx, "usable", lambda codes, e: False)
    gpu = G.group(case.include, case.exclude, 3, small_settings(), backend="cuda")
    assert gpu.info.backend == "cuda" and gpu.complete
    assert passes == ([local_cores()] * len(passes) if seeded else [])
    assert len(passes) >= (2 if seeded else 0)
    passes.clear()
    cpu = G.group(case.include, case.exclude, 3, small_settings(), backend="serial")
    assert gpu.pairs and gpu.pairs == cpu.pairs
    assert any("within 2 edits of an exclusion genome (other" in line for line in gpu.diagnosis)
