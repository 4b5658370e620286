"""Registry entry of the nw family (plain data; no numba import)."""

from engine.registry import BackendSpec, FamilySpec, InputSpec, ParamSpec, VariantSpec

_CPU = (BackendSpec("serial"), BackendSpec("multicore"))

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
        ParamSpec("match", "Match", "int", 1, "Score of a column whose base sets intersect.",
                  minimum=-1000, maximum=1000),
        ParamSpec("mismatch", "Mismatch", "int", 0, "Score of a column whose base sets differ.",
                  minimum=-1000, maximum=1000),
        ParamSpec("gap", "Gap", "int", -1, "Score of each gap column (linear gaps; usually < 0).",
                  minimum=-1000, maximum=1000),
    ),
    flags=(),
    variants=(
        VariantSpec("rows", "rows (row-wise)",
                    "The textbook row sweep. Multicore: tiles of rows, tile anti-diagonals in "
                    "parallel.", _CPU),
        VariantSpec("diagonal", "diagonal (anti-diagonals)",
                    "Cells of one anti-diagonal are independent (SIMD inside a tile). Multicore: "
                    "the tiles of a tile anti-diagonal in parallel.", _CPU),
        VariantSpec("prefix", "prefix (Aluru prefix-max scan)",
                    "Each row from the previous one with a prefix-max scan (Aluru et al. 2003). "
                    "Multicore: a parallel scan over column blocks of every row.", _CPU),
    ),
    fastest_variant="diagonal",
    module="engine.nw",
    metric="cells",
)
