"""Registry entry of the kmismatch family (plain data; no numba import)."""

from engine.registry import BackendSpec, FamilySpec, InputSpec, ParamSpec, VariantSpec

_CPU = (BackendSpec("serial"), BackendSpec("multicore"))

SPEC = FamilySpec(
    name="kmismatch",
    title="k-mismatch search (many patterns)",
    help="Every place where one of many fixed-length patterns occurs in the text with at most k "
         "mismatches (Hamming distance; IUPAC codes match when their base sets intersect).",
    inputs=(
        InputSpec("text", "Text", "Sequence(s) to search (e.g. a genome)."),
        InputSpec("patterns", "Patterns", "The patterns, one record each (e.g. primers); "
                                          "patterns of different lengths are searched together."),
    ),
    params=(
        ParamSpec("k", "k (mismatches)", "int", 2, "Largest Hamming distance reported.",
                  minimum=0, maximum=100_000),
        ParamSpec("strands", "Strands", "choice", "both",
                  "'both' also searches each pattern's reverse complement.",
                  choices=("both", "forward")),
    ),
    flags=(),
    variants=(
        VariantSpec("naive", "naive", "Compares every window with every pattern, symbol by symbol, "
                    "stopping at the (k+1)-th mismatch; O(n m r).", _CPU),
        VariantSpec("shift-add", "shift-add (Baeza-Yates-Gonnet)",
                    "Per pattern, m b-bit mismatch counters packed in words, advanced with one "
                    "shift and one add per text symbol; O(n r m b / 64).", _CPU),
        VariantSpec("pmasm", "PMASM (look-up memory)",
                    "Per level and text symbol, a look-up memory of fb-vectors holding one b-bit "
                    "counter per pattern, so that one add updates all patterns at once.", _CPU),
    ),
    fastest_variant="pmasm",
    module="engine.kmismatch",
    metric="cells",
)
