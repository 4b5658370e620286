"""Checks of the CUDA-only options of an nw job (plain Python: no numba import).

The cuda backend has five forms: the registry's parallel form (one-block or
multi-block) of each variant, and for the multi-block diagonal the ``tiled`` flag
(without it, one launch per anti-diagonal).
"""

from __future__ import annotations

from engine import registry
from engine.nw.scoring import Scores, value_range
from engine.nw.spec import SPEC
from engine.registry import check_backend_only

#: Largest |W| the CUDA kernels allow (W = H - (i + j) * gap in int32; the headroom keeps
#: every intermediate sum and the kernels' sentinels out of reach).
W_LIMIT = 1 << 30

FORMS = ("tiled", "per-launch", "diagonal-one-block", "prefix-one-block", "prefix-multi-block")

#: Lanes of a band of the tiled form (a warp; engine/nw/cuda_diagonal.py).
TILED_WARP = 32


def form_of(variant: str, parallel: str | None, flags) -> str:
    """The form a cuda job runs (one of FORMS)."""
    if variant == "diagonal":
        if parallel == "one-block":
            return "diagonal-one-block"
        return "tiled" if "tiled" in (flags or ()) else "per-launch"
    if variant == "prefix":
        return "prefix-one-block" if parallel == "one-block" else "prefix-multi-block"
    raise ValueError(f"nw variant {variant!r} has no cuda backend")


def cuda_params(variant: str, backend: str, parallel: str | None, flags, m: int, n: int,
                sc: Scores, threads_per_block=None, blocks=None) -> dict:
    """The job parameters of the CUDA options (empty on CPU backends); ValueError when bad.

    ``threads_per_block`` and ``blocks`` of 0 (or None) leave the choice to the form;
    one-block forms take no block count.
    """
    # 0 stands for "automatic", as None does.
    check_backend_only(SPEC, backend, threads_per_block=threads_per_block or None,
                       blocks=blocks or None)
    if not registry.on_gpu(backend):
        return {}
    # In the registry's ranges already (make_job: registry.check_params); 0 picks one.
    tpb, count = threads_per_block or 0, blocks or 0
    if parallel == "one-block" and count > 1:
        raise ValueError("blocks applies to the multi-block forms only (one-block runs one block)")
    if form_of(variant, parallel, flags) == "tiled" and tpb > TILED_WARP and tpb % TILED_WARP:
        raise ValueError(f"threads_per_block of the tiled form must be at most {TILED_WARP} or a "
                         f"multiple of {TILED_WARP} (a band is a warp), got {tpb}")
    check_size(m, n, sc)
    return {"threads_per_block": tpb, "blocks": count}


def check_size(m: int, n: int, sc: Scores) -> None:
    """ValueError when an m x n problem could overflow the kernels' 32-bit W.

    It covers what engine/nw/cuda.py checks on every tile: the host rows hold
    H - offset (offset centring H's range); W is -offset on a problem's first row and
    column and grows by at most max(s - 2 * gap) per diagonal step; a band that starts
    r rows down sees its W shifted by r * gap; a tile adds at most min(h, w) steps of
    growth to its boundary.
    """
    lo, hi = value_range(m, n, sc)
    offset = (lo + hi) // 2
    grow = max(0, sc.match - 2 * sc.gap, sc.mismatch - 2 * sc.gap)
    drop = max(0, 2 * sc.gap - min(sc.match, sc.mismatch))
    if abs(offset) + (m + n) * abs(sc.gap) + 2 * min(m, n) * grow + drop + 8 > W_LIMIT:
        raise ValueError(f"a {m} x {n} alignment with these scores is too large for the CUDA "
                         "kernels' 32-bit arithmetic; use a CPU backend")
