"""Checks of the CUDA-only options of a kdiff job (plain Python: no numba import).

Which flags need which (opt1 on CUDA acts per tile, so it needs opt4...) is in the
registry entry (``BackendSpec.flag_requires``), checked by ``registry.resolve``.
"""

from __future__ import annotations

import numpy as np

from engine import registry
from engine.kdiff.spec import SPEC
from engine.registry import check_backend_only

MAX_THREADS_PER_BLOCK = 1024


def _positive_int(name: str, value, maximum: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise ValueError(f"{name} must be an integer, got {value!r}")
    if value < 1 or (maximum is not None and value > maximum):
        upper = f" and <= {maximum}" if maximum is not None else ""
        raise ValueError(f"{name} must be >= 1{upper}, got {value}")
    return int(value)


def cuda_params(variant: str, backend: str, flags, threads_per_block=None,
                prefetch_factor=None) -> dict:
    """The job parameters of the CUDA options (empty on CPU backends); ValueError when bad."""
    check_backend_only(SPEC, backend, threads_per_block=threads_per_block,
                       prefetch_factor=prefetch_factor)
    if not registry.on_gpu(backend):
        return {}
    params = {}
    if threads_per_block is not None:
        # The tiled kernels exchange values with the two threads before (tpb >= 2).
        tpb = _positive_int("threads_per_block", threads_per_block, MAX_THREADS_PER_BLOCK)
        if tpb < 2:
            raise ValueError("threads_per_block must be >= 2")
        params["threads_per_block"] = tpb
    if prefetch_factor is not None:
        params["prefetch_factor"] = _positive_int("prefetch_factor", prefetch_factor, 64)
    return params
