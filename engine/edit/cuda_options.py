"""Checks of the CUDA-only options of an edit job (plain Python: no numba import).

``threads_per_block`` applies to both GPU variants; ``words_per_thread`` to
``cooperative`` only, whose kernel works a warp at a time, so its blocks are
whole warps.
"""

from __future__ import annotations

from engine import registry
from engine.edit.spec import SPEC
from engine.jobs import check_int
from engine.registry import check_backend_only

MAX_THREADS_PER_BLOCK = 1024
MAX_WORDS_PER_THREAD = 8
WARP = 32


def cuda_params(variant: str, backend: str, threads_per_block=None, words_per_thread=None) -> dict:
    """The job parameters of the CUDA options (empty on CPU backends); ValueError when bad."""
    check_backend_only(SPEC, backend, threads_per_block=threads_per_block,
                       words_per_thread=words_per_thread)
    if not registry.on_gpu(backend):
        return {}
    params = {}
    if words_per_thread is not None:
        if variant != "cooperative":
            raise ValueError("words_per_thread applies to the cooperative variant only")
        words = check_int("words_per_thread", words_per_thread, 1)
        if words > MAX_WORDS_PER_THREAD:
            raise ValueError(f"words_per_thread must be <= {MAX_WORDS_PER_THREAD}, got {words}")
        params["words_per_thread"] = words
    if threads_per_block is not None:
        tpb = check_int("threads_per_block", threads_per_block, 1)
        if tpb > MAX_THREADS_PER_BLOCK:
            raise ValueError(f"threads_per_block must be <= {MAX_THREADS_PER_BLOCK}, got {tpb}")
        if variant == "cooperative" and tpb % WARP:
            raise ValueError(f"threads_per_block of the cooperative variant must be a multiple of "
                             f"{WARP} (whole warps), got {tpb}")
        params["threads_per_block"] = tpb
    return params
