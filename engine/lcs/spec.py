"""Registry entry of the lcs family (plain data; no numba import)."""

from engine import config
from engine.registry import BackendSpec, FamilySpec, InputSpec, ParamSpec, VariantSpec



def _cpu(kernels: str) -> tuple:
    """serial and multicore on one kernel module (engine.registry.Binding.kernels)."""
    return BackendSpec("serial", kernels=kernels), BackendSpec("multicore", kernels=kernels)


_CUDA = "engine.lcs.cuda:CudaPasses"

SPEC = FamilySpec(
    name="lcs",
    title="longest common subsequence",
    help="The length of the longest common subsequence of two sequences, one such subsequence "
         "and the index pairs that realise it (IUPAC codes match when their base sets intersect).",
    inputs=(
        InputSpec("a", "Sequence A", "First sequence (the first record of a file).", many=False),
        InputSpec("b", "Sequence B", "Second sequence (the first record of a file).", many=False),
    ),
    params=(
        ParamSpec("task", "Task", "choice", "lcs",
                  "'lcs': one LCS and its index pairs (recovered in linear space); 'length': the "
                  "length only, from one score pass", choices=("lcs", "length")),
        ParamSpec("threads_per_block", "Threads per block (CUDA)", "int",
                  config.LCS_CUDA_THREADS_PER_BLOCK,
                  f"cuda only: threads per block (default {config.LCS_CUDA_THREADS_PER_BLOCK}); "
                  "bitparallel and the tiled wavefront run one band per warp (above 32, whole "
                  "warps), the per-diagonal wavefront puts this many cells in a block",
                  minimum=1, maximum=1024, backends=("cuda",), metavar="N"),
    ),
    flags=(),
    variants=(
        VariantSpec("rows", "rows (row-wise DP)",
                    "The DP matrix swept row by row; multicore runs tiles of rows in a wavefront.",
                    _cpu("engine.lcs.cpu_rows")),
        VariantSpec("wavefront", "wavefront (anti-diagonals)",
                    "Cells of one anti-diagonal at once (SIMD); multicore runs the tiles of each "
                    "tile anti-diagonal in parallel; CUDA keeps the anti-diagonals inside warp-wide "
                    "bands (tiled) or launches one kernel per anti-diagonal (diagonal, the seed "
                    "study's form).",
                    # engine/lcs/cuda_band.py (tiled) and engine/lcs/cuda_diagonal.py (diagonal)
                    _cpu("engine.lcs.cpu_wavefront")
                    + (BackendSpec("cuda", parallel=("tiled", "diagonal"), kernels=_CUDA),)),
        VariantSpec("bitparallel", "bitparallel (Allison-Dix/Hyyrö)",
                    "64 cells per word operation; multicore runs a wavefront of tiles that pass "
                    "their carry bits on; CUDA pipelines the words of a band across a warp's lanes.",
                    _cpu("engine.lcs.cpu_bitparallel")
                    + (BackendSpec("cuda", kernels=_CUDA),)),  # engine/lcs/cuda_band.py
    ),
    default_variants={"serial": "bitparallel", "multicore": "bitparallel", "cuda": "bitparallel"},
    module="engine.lcs",
    metric="cells",
)
