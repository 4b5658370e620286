"""Device helpers shared by the kdiff CUDA kernels."""

from __future__ import annotations

from numba import config as numba_config
from numba import cuda


@cuda.jit(device=True, inline=True)
def imin(a, b):
    # Plain comparisons: the builtins min/max go through generic overloads on CUDA.
    return a if a < b else b


@cuda.jit(device=True, inline=True)
def imax(a, b):
    return a if a > b else b


def register_cap(threads_per_block: int) -> int:
    """Most registers per thread that still let a block of this size launch (64K per block)."""
    return min(255, 65536 // max(1, threads_per_block))


def kernel_jit(cap: int = 255):
    """``cuda.jit`` for a kernel, cached on disk (the compile then happens once per
    machine), with its registers capped at ``cap`` so that a block of 65536 // cap
    threads always launches (the simulator has neither)."""
    if numba_config.ENABLE_CUDASIM:
        return cuda.jit
    if cap >= 255:
        return cuda.jit(cache=True)
    return cuda.jit(cache=True, max_registers=cap)
