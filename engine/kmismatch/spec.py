"""Registry entry of the kmismatch family (plain data; no numba import)."""

from engine import config
from engine.gaps import GAP_MIN_PARAM
from engine.registry import (BackendSpec, FamilySpec, InputSpec, ParamSpec, SCHEDULER_PARAM,
                             VariantSpec)


def _cpu(kernels: str) -> tuple:
    """A CPU variant's backends: serial and multicore on its kernel module (its
    ``build_model`` and ``scan_chunks_serial``/``_multicore``); dask: one task per text
    chunk on a Dask cluster, GPU workers running the cuda default variant (pair-tile), CPU
    workers this variant's multicore kernels."""
    return (BackendSpec("serial", kernels=kernels), BackendSpec("multicore", kernels=kernels),
            BackendSpec("dask"))


# The seed study's three CUDA methods and our pair-tile kernel (engine/kmismatch/cuda*.py).
_CUDA = (BackendSpec("cuda", kernels="engine.kmismatch.cuda:CudaSearch"),)

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
        ParamSpec("k", "k (mismatches)", "int", 2, "largest Hamming distance reported (k >= 0)",
                  minimum=0, maximum=100_000, option="-k", required=True),
        ParamSpec("strands", "Strands", "choice", "both",
                  "'both' also searches each pattern's reverse complement",
                  choices=("both", "forward")),
        GAP_MIN_PARAM,
        ParamSpec("threads_per_block", "Threads per block (CUDA)", "int",
                  config.KMISMATCH_CUDA_THREADS_PER_BLOCK,
                  "CUDA thread, shared-mem and pair-tile: threads (text windows) per block "
                  "(shared-mem is fastest at 128); block-thread runs one thread per pattern "
                  "position.", minimum=1, maximum=1024, backends=("cuda",),
                  variants=("thread", "shared-mem", "pair-tile"), metavar="N"),
        SCHEDULER_PARAM,
    ),
    flags=(),
    variants=(
        VariantSpec("naive", "naive", "Compares every window with every pattern, symbol by symbol, "
                    "stopping at the (k+1)-th mismatch; O(n m r).",
                    _cpu("engine.kmismatch.cpu_naive")),
        VariantSpec("shift-add", "shift-add (Baeza-Yates-Gonnet)",
                    "Per pattern, m b-bit mismatch counters packed in words, advanced with one "
                    "shift and one add per text symbol; O(n r m b / 64).",
                    _cpu("engine.kmismatch.cpu_shiftadd")),
        VariantSpec("pmasm", "PMASM (look-up memory)",
                    "Per level and text symbol, a look-up memory of fb-vectors holding one b-bit "
                    "counter per pattern, so that one add updates all patterns at once.",
                    _cpu("engine.kmismatch.cpu_pmasm")),
        VariantSpec("thread", "thread (PMASM, CUDA)",
                    "The study's thread PMASM: one GPU thread per text window, whose bit_vector adds "
                    "the window's m fb-vectors from the look-up memory in global memory.", _CUDA),
        VariantSpec("block-thread", "block-thread (PMASM, CUDA)",
                    "The study's block-thread PMASM: one block per window and one thread per level; "
                    "one thread sums the fb-vectors the others leave in shared memory.", _CUDA),
        VariantSpec("shared-mem", "shared-mem (PMASM, CUDA)",
                    "The study's shared-mem PMASM: the thread method, with each block's text chunk "
                    "staged in shared memory first.", _CUDA),
        VariantSpec("pair-tile", "pair-tile (CUDA, ours)",
                    "PMASM with two levels per look-up (a 256-entry table per level pair, in shared "
                    "memory, laid out free of bank conflicts for A/C/G/T) and four windows per "
                    "thread: half the look-ups and a quarter of the hit bookkeeping.", _CUDA),
    ),
    # cuda: pair-tile (half the look-ups and a quarter of shared-mem's hit bookkeeping).
    default_variants={"serial": "pmasm", "multicore": "pmasm", "cuda": "pair-tile", "dask": "pmasm"},
    module="engine.kmismatch",
    metric="cells",
)
