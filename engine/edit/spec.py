"""Registry entry of the edit family (plain data; no numba import)."""

from engine import config
from engine.gaps import GAP_MIN_PARAM
from engine.registry import (BackendSpec, FamilySpec, FlagSpec, InputSpec, ParamSpec, SCHEDULER_PARAM,
                             VariantSpec)

# dask: one task per text chunk on a Dask cluster (engine/edit/problem.py), so searches of
# whole records only; GPU workers run the cuda default variant (task), CPU workers this
# variant's multicore kernels.
_DASK_TAKES = {"mode": ("search",), "pairing": ("all",)}
# The CPU kernels of every variant (engine.registry.Binding.kernels: the variant is a
# run-time argument of the lanes; simd's many-pattern scan is engine/edit/cpu_simd.py).
_LANES = "engine.edit.cpu_lanes"


def _cpu(*flags: str) -> tuple:
    """A CPU variant's backends, ``flags`` (myers: simd) on by default."""
    on = {"flags": flags, "default_flags": flags}
    return (BackendSpec("serial", kernels=_LANES, **on),
            BackendSpec("multicore", parallel=("coarse",), kernels=_LANES, **on),
            BackendSpec("dask", takes=_DASK_TAKES, **on))


# The GPU variants (engine/edit/cuda*.py), as in Chacon et al.; CUDA-only parameters below.
_CUDA = (BackendSpec("cuda", kernels="engine.edit.cuda:CudaRunner"),)

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
                  "Most edits allowed (required for search hits). In global mode, distances above k "
                  "are not reported (none given: every distance).",
                  minimum=0, maximum=1_000_000, option="-k", optional=True),
        ParamSpec("strands", "Strands", "choice", "both",
                  "'both' also searches with the reverse complement of each pattern (search mode). "
                  "Default: both in a search over whole records, forward for global distances and "
                  "zip batches.",
                  choices=("forward", "both"), optional=True),
        GAP_MIN_PARAM,
        ParamSpec("pairing", "Pairing", "choice", "all",
                  "'all': every pattern against every text record; 'zip': pattern i against text "
                  "record i (a batch of query/candidate-region pairs).",
                  choices=("all", "zip"), option="--pairs"),
        ParamSpec("report", "Report", "choice", "hits",
                  "'hits': every end position within k; 'best': one best hit per pattern, strand "
                  "and record (read verification). Search mode only; default: hits.",
                  choices=("hits", "best"), optional=True),
        ParamSpec("threads_per_block", "Threads per block (CUDA)", "int",
                  config.EDIT_CUDA_THREADS_PER_BLOCK,
                  "CUDA only: threads per block of the task and cooperative kernels (cooperative: "
                  "a multiple of 32).", minimum=1, maximum=1024, backends=("cuda",), metavar="N"),
        ParamSpec("words_per_thread", "Words per thread (CUDA)", "int",
                  config.EDIT_CUDA_WORDS_PER_THREAD,
                  "CUDA cooperative only: 64-bit words of a query each thread of a warp holds; a "
                  "query spans ceil(words / this) threads and a warp takes as many queries as fit.",
                  minimum=1, maximum=8, backends=("cuda",), variants=("cooperative",), metavar="W"),
        SCHEDULER_PARAM,
    ),
    flags=(
        FlagSpec("simd", "simd: many patterns per instruction",
                 "myers on the CPU, when several patterns (or strands) search the same text: "
                 "the text is read once for a group of up to 128 of them, one 32-bit word each "
                 "(64-bit when a pattern is longer than 32), 16 (8) per AVX-512 instruction."),
    ),
    variants=(
        VariantSpec("dp", "dp (Sellers)",
                    "Column-by-column dynamic programming; O(mn) cells, one column of memory.", _cpu()),
        VariantSpec("myers", "myers (one word)",
                    "Myers' bit-vector algorithm, the whole pattern in one 64-bit word (m <= 64).",
                    _cpu("simd")),
        VariantSpec("myers-blocked", "myers-blocked (any m)",
                    "Myers' block-based bit-vectors: 64 rows per word, carries passed between words.",
                    _cpu()),
        VariantSpec("banded", "banded (Ukkonen cut-off)",
                    "Myers' blocks, only those that can still hold a value <= k (Ukkonen's cut-off, "
                    "as in edlib): down to the last such block (search), or the diagonal band, "
                    "doubled until the distance fits when no k is given (global).", _cpu()),
        VariantSpec("task", "task (GPU, thread per pair)",
                    "Myers' blocks on the GPU, one thread per (query, text) pair with the query's "
                    "words in registers (long queries: in global memory). Long texts are searched "
                    "as overlapping chunks; starts and CIGARs are traced on the CPU.", _CUDA),
        VariantSpec("cooperative", "cooperative (GPU, warp per queries)",
                    "Myers' blocks on the GPU, the threads of a warp sharing a query's words "
                    "(words per thread), carries passed between threads by warp shuffles in a "
                    "diagonal pipeline, several queries per warp (Chacon et al.). Long texts are "
                    "searched as overlapping chunks; starts and CIGARs are traced on the CPU.",
                    _CUDA),
    ),
    # cuda: task (its words in registers) beats cooperative at every m measured (docs/benchmarks.md).
    default_variants={"serial": "myers-blocked", "multicore": "myers-blocked", "cuda": "task",
                      "dask": "myers-blocked"},
    module="engine.edit",
    metric="cells",
)
