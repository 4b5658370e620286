"""Registry entry of the nw family (plain data; no numba import)."""

from engine.registry import BackendSpec, FamilySpec, FlagSpec, InputSpec, ParamSpec, VariantSpec

# Each backend's tile kernel (engine.registry.Binding.kernels); rows and diagonal share the
# multicore wavefront, told which by the job's variant.
_WAVEFRONT = BackendSpec("multicore", kernels="engine.nw.cpu_wavefront:wavefront")
_CUDA = "engine.nw.cuda:CudaKernels"
# The study's two CUDA forms of both variants (Dicker et al.): the whole matrix in one block,
# or spread over many blocks; "multi-block" first, so it is the default.
_FORMS = ("multi-block", "one-block")

SPEC = FamilySpec(
    name="nw",
    title="Needleman-Wunsch global alignment",
    help="The best global alignment of two sequences with linear gap scores: its score, one "
         "optimal alignment (traceback in linear space for long inputs), identity and CIGAR.",
    inputs=(
        InputSpec("a", "Sequence A", "First sequence (matrix rows); the first record is used.",
                  many=False),
        InputSpec("b", "Sequence B", "Second sequence (matrix columns); the first record is used.",
                  many=False),
    ),
    params=(
        ParamSpec("match", "Match", "int", 1,
                  "score of a match (a column whose base sets intersect)",
                  minimum=-1000, maximum=1000),
        ParamSpec("mismatch", "Mismatch", "int", 0,
                  "score of a mismatch (a column whose base sets differ)",
                  minimum=-1000, maximum=1000),
        ParamSpec("gap", "Gap", "int", -1, "score of each gap column, linear (usually < 0)",
                  minimum=-1000, maximum=1000),
        ParamSpec("threads_per_block", "Threads per block (CUDA)", "int", 0,
                  "cuda only: threads per block; 0 picks the form's default "
                  "(engine.config.NW_CUDA_THREADS_PER_BLOCK)", minimum=0, maximum=1024,
                  backends=("cuda",), metavar="N"),
        ParamSpec("blocks", "Blocks (CUDA)", "int", 0,
                  "cuda multi-block forms only: blocks per launch (per-launch diagonal: a "
                  "grid-stride loop over each anti-diagonal; tiled: bands in flight; prefix: "
                  "column segments of every row); 0 picks one for the input and the GPU",
                  minimum=0, maximum=65535, backends=("cuda",), metavar="N"),
    ),
    flags=(
        FlagSpec("tiled", "tiled wavefront",
                 "CUDA multi-block diagonal: a block owns a band of rows and sweeps it by "
                 "anti-diagonals in registers and shared memory, handing its bottom row to the "
                 "next band in chunks (tiles along tile anti-diagonals, one persistent launch); "
                 "without it, one launch per anti-diagonal of the whole matrix."),
    ),
    variants=(
        VariantSpec("rows", "rows (row-wise)",
                    "The textbook row sweep. Multicore: tiles of rows, tile anti-diagonals in "
                    "parallel.",
                    (BackendSpec("serial", kernels="engine.nw.cpu_rows:rows_tile"), _WAVEFRONT)),
        VariantSpec("diagonal", "diagonal (anti-diagonals)",
                    "Cells of one anti-diagonal are independent (SIMD inside a tile). Multicore: "
                    "the tiles of a tile anti-diagonal in parallel. CUDA: one block, or many "
                    "(one launch per anti-diagonal, or tiled).",
                    (BackendSpec("serial", kernels="engine.nw.cpu_diagonal:diagonal_tile"),
                     _WAVEFRONT,
                     BackendSpec("cuda", parallel=_FORMS, flags=("tiled",), default_flags=("tiled",),
                                 flag_forms={"tiled": ("multi-block",)}, kernels=_CUDA))),
        VariantSpec("prefix", "prefix (Aluru prefix-max scan)",
                    "Each row from the previous one with a prefix-max scan (Aluru et al. 2003). "
                    "Multicore: a parallel scan over column blocks of every row. CUDA: one block "
                    "scans each row, or blocks own column segments and pass carries along.",
                    (BackendSpec("serial", kernels="engine.nw.cpu_prefix:prefix_tile"),
                     BackendSpec("multicore", kernels="engine.nw.cpu_prefix:prefix_tile_parallel"),
                     BackendSpec("cuda", parallel=_FORMS, kernels=_CUDA))),
    ),
    # cuda: the tiled multi-block diagonal wins from n = 256 (docs/benchmarks.md).
    default_variants={"serial": "diagonal", "multicore": "diagonal", "cuda": "diagonal"},
    module="engine.nw",
    metric="cells",
)
