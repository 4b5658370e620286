"""Checks of a cuda kmismatch job's options and limits (plain Python; no numba.cuda import)."""

from __future__ import annotations

from engine.kmismatch.spec import SPEC

#: The CUDA methods (SPEC's variants with a cuda backend; the default: SPEC.default_variants).
CUDA_VARIANTS = tuple(v.name for v in SPEC.variants if v.backend("cuda"))
#: Limits of the CUDA kernels' packed hits: 16 bits each for the slot and the mismatches.
CUDA_MAX_SLOTS = 1 << 16
CUDA_MAX_LENGTH = (1 << 16) - 1
#: Most threads a block of the shared-mem kernels.
SHARED_MEM_MAX_THREADS = 512


def check_threads_per_block(variant: str, tpb: int) -> int:
    """``tpb`` (in the registry's range already: registry.check_params) checked for the
    variant (the backend is cuda)."""
    if variant == "block-thread":
        raise ValueError("threads_per_block does not apply to block-thread (one thread per "
                         "pattern position)")
    if variant == "shared-mem" and tpb > SHARED_MEM_MAX_THREADS:
        # Its kernels (eight windows a thread) need more registers than a block of 1024
        # threads has: the launch is refused (CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES on an H200).
        raise ValueError(f"threads_per_block of shared-mem must be <= {SHARED_MEM_MAX_THREADS}, "
                         f"got {tpb}")
    return tpb


def check_cuda_limits(patterns, strands: str) -> None:
    """ValueError when a pattern is too long, or a length has too many patterns, for the
    kernels' packed hits."""
    per_length: dict[int, int] = {}
    for rec in patterns:
        if len(rec) > CUDA_MAX_LENGTH:
            raise ValueError(f"pattern '{rec.id}' is {len(rec)} long; the cuda backend takes "
                             f"patterns of at most {CUDA_MAX_LENGTH} symbols (use a CPU backend)")
        per_length[len(rec)] = per_length.get(len(rec), 0) + (2 if strands == "both" else 1)
    for m, slots in per_length.items():
        if slots > CUDA_MAX_SLOTS:
            raise ValueError(f"{slots} patterns of length {m} (with both strands) exceed the cuda "
                             f"backend's {CUDA_MAX_SLOTS} per length (use a CPU backend)")
