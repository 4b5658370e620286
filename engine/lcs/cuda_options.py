"""Checks of the CUDA-only options of an lcs job (plain Python: no numba import)."""

from __future__ import annotations

from engine.lcs.spec import SPEC
from engine.registry import check_backend_only

WARP = 32


def cuda_params(variant: str, backend: str, parallel: str | None, threads_per_block=None) -> dict:
    """The job parameters of the CUDA options (empty on CPU backends); ValueError when bad.

    The band kernels (bitparallel, tiled wavefront) run one band per warp, so a block
    of more than 32 threads must hold whole warps; fewer than 32 make one narrower band.
    """
    params = check_backend_only(SPEC, backend, threads_per_block=threads_per_block)
    tpb = params.get("threads_per_block", 0)  # (in the registry's range: make_job checked it)
    banded = not (variant == "wavefront" and parallel == "diagonal")
    if banded and tpb > WARP and tpb % WARP:
        raise ValueError(f"threads_per_block of lcs {variant}/cuda above {WARP} must be a multiple "
                         f"of {WARP} (one band per warp), got {tpb}")
    return params
