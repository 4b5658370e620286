"""Checks of the CUDA-only options of an edit job (plain Python: no numba import).

``threads_per_block`` applies to both GPU variants; ``words_per_thread`` to
``cooperative`` only, whose kernel works a warp at a time, so its blocks are
whole warps.
"""

from __future__ import annotations

from engine.edit.spec import SPEC
from engine.registry import check_backend_only

WARP = 32


def cuda_params(variant: str, backend: str, threads_per_block=None, words_per_thread=None) -> dict:
    """The job parameters of the CUDA options (empty on CPU backends); ValueError when bad.
    Their ranges are the registry's, checked already (make_job: registry.check_params)."""
    params = check_backend_only(SPEC, backend, threads_per_block=threads_per_block,
                                words_per_thread=words_per_thread)
    if "words_per_thread" in params and variant != "cooperative":
        raise ValueError("words_per_thread applies to the cooperative variant only")
    tpb = params.get("threads_per_block", 0)
    if variant == "cooperative" and tpb % WARP:
        raise ValueError(f"threads_per_block of the cooperative variant must be a multiple of "
                         f"{WARP} (whole warps), got {tpb}")
    return params
