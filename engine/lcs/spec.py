"""Registry entry of the lcs family (plain data; no numba import)."""

from engine.registry import BackendSpec, FamilySpec, InputSpec, ParamSpec, VariantSpec

_CPU = (BackendSpec("serial"), BackendSpec("multicore"))

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
                  "'length' computes the length only (one score pass); 'lcs' also recovers one "
                  "LCS in linear space.", choices=("lcs", "length")),
    ),
    flags=(),
    variants=(
        VariantSpec("rows", "rows (row-wise DP)",
                    "The DP matrix swept row by row; multicore runs tiles of rows in a wavefront.",
                    _CPU),
        VariantSpec("wavefront", "wavefront (anti-diagonals)",
                    "Cells of one anti-diagonal at once (SIMD); multicore runs the tiles of each "
                    "tile anti-diagonal in parallel.", _CPU),
        VariantSpec("bitparallel", "bitparallel (Allison-Dix/Hyyrö)",
                    "64 cells per word operation; multicore runs a wavefront of tiles that pass "
                    "their carry bits on.", _CPU),
    ),
    fastest_variant="bitparallel",
    module="engine.lcs",
    metric="cells",
)
