"""Registry entry of the edit family (plain data; no numba import)."""

from engine.registry import BackendSpec, FamilySpec, InputSpec, ParamSpec, VariantSpec

_CPU = (
    BackendSpec("serial"),
    BackendSpec("multicore", parallel=("coarse",)),
)

SPEC = FamilySpec(
    name="edit",
    title="edit distance and approximate search",
    help="Levenshtein distance of patterns to texts (global), or every end position where a pattern "
         "occurs within k edits (search), with the start and a CIGAR for each hit.",
    inputs=(
        InputSpec("pattern", "Pattern", "Query sequence(s): primers, probes or reads."),
        InputSpec("text", "Text", "Sequence(s) to compare with or search in (genome, candidate regions)."),
    ),
    params=(
        ParamSpec("mode", "Mode", "choice", "global",
                  "'global': edit distance of each pattern to each text; 'search': every end position "
                  "in the text where the pattern occurs with <= k edits.",
                  choices=("global", "search")),
        ParamSpec("k", "k (edits)", "int", 2,
                  "Most edits allowed (search). In global mode, distances above k are not reported.",
                  minimum=0, maximum=1_000_000),
        ParamSpec("strands", "Strands", "choice", "forward",
                  "'both' also searches with the reverse complement of each pattern (search mode).",
                  choices=("forward", "both")),
        ParamSpec("pairing", "Pairing", "choice", "all",
                  "'all': every pattern against every text record; 'zip': pattern i against text "
                  "record i (a batch of query/candidate-region pairs).",
                  choices=("all", "zip")),
        ParamSpec("report", "Report", "choice", "hits",
                  "'hits': every end position within k; 'best': one best hit per pattern, strand "
                  "and record (read verification).",
                  choices=("hits", "best")),
    ),
    flags=(),
    variants=(
        VariantSpec("dp", "dp (Sellers)",
                    "Column-by-column dynamic programming; O(mn) cells, one column of memory.", _CPU),
        VariantSpec("myers", "myers (one word)",
                    "Myers' bit-vector algorithm, the whole pattern in one 64-bit word (m <= 64).", _CPU),
        VariantSpec("myers-blocked", "myers-blocked (any m)",
                    "Myers' block-based bit-vectors: 64 rows per word, carries passed between words.",
                    _CPU),
        VariantSpec("banded", "banded (Ukkonen cut-off)",
                    "Myers' blocks, only those that can still hold a value <= k (Ukkonen's cut-off, "
                    "as in edlib): down to the last such block (search), or the diagonal band, "
                    "doubled until the distance fits when no k is given (global).", _CPU),
    ),
    fastest_variant="myers-blocked",
    module="engine.edit",
    metric="cells",
)
