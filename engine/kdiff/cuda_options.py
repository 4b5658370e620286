"""The CUDA-only options of a kdiff job (plain Python: no numba import).

Their ranges (threads per block 2-1024: the tiled kernels exchange values with the two
threads before; prefetch factor 1-64) are the registry entry's, checked by ``make_job``
through ``registry.check_params`` as the command line and the GUI check them. Which flags
need which (opt1 on CUDA acts per tile, so it needs opt4...) is in the registry entry too
(``BackendSpec.flag_requires``), checked by ``registry.resolve``.
"""

from __future__ import annotations

from engine import registry
from engine.kdiff.spec import SPEC
from engine.registry import check_backend_only


def cuda_params(variant: str, backend: str, flags, threads_per_block=None,
                prefetch_factor=None) -> dict:
    """The job parameters of the CUDA options (empty on CPU backends); ValueError when one
    is given for another backend. The values are checked already (registry.check_params)."""
    check_backend_only(SPEC, backend, threads_per_block=threads_per_block,
                       prefetch_factor=prefetch_factor)
    if not registry.on_gpu(backend):
        return {}
    given = {"threads_per_block": threads_per_block, "prefetch_factor": prefetch_factor}
    return {name: value for name, value in given.items() if value is not None}
