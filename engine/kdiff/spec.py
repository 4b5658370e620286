"""Registry entry of the kdiff family (plain data; no numba import)."""

from engine import config
from engine.gaps import GAP_MIN_PARAM
from engine.registry import (BackendSpec, FamilySpec, FlagSpec, InputSpec, ParamSpec, SCHEDULER_PARAM,
                             VariantSpec)

_FINE = ("fine", "coarse+fine")
# Where each variant's kernels are (engine.registry.Binding.kernels): conventional and
# alternative run their module's cores through cpu_scan's serial and coarse scans.
_BITPARALLEL = "engine.kdiff.cpu_bitparallel"
_CUDA = "engine.kdiff.cuda:CudaSliceRunner"
# neighbours acts on the starts the 32-bit pass hands on (without a lanes pass, at larger k,
# c(r) rarely falls by exactly one per start, and the tier ladder's one batch is better).
_CUDA_BITPARALLEL_REQUIRES = {"neighbours": ("word32",)}


def _matrix_backends(early: str, kernels: str, cuda_flags: tuple, cuda_requires: dict) -> tuple:
    """The backends of conventional and alternative: the variant's early stop (opt1, opt2)
    on the CPU, opt3 in the fine forms, the seed study's flags on CUDA (all on by default)."""
    return (
        BackendSpec("serial", flags=(early,), default_flags=(early,), kernels=kernels),
        BackendSpec("multicore", parallel=("coarse",) + _FINE, flags=(early, "opt3"),
                    default_flags=(early, "opt3"), flag_forms={"opt3": _FINE}, kernels=kernels),
        BackendSpec("cuda", flags=cuda_flags, default_flags=cuda_flags,
                    flag_requires=cuda_requires, kernels=_CUDA),
    )


#: Flags whose work holds for one k only: the neighbours' bounds are on one k's c(r). An
#: ``all_k`` run takes a backend's default flags without them (make_job, and a GPU worker's
#: job: engine/kdiff/problem.py), and refuses them when asked for by name.
ONE_K_FLAGS = frozenset({"neighbours"})

SPEC = FamilySpec(
    name="kdiff",
    title="k-difference primers",
    help="For each start in the target, the shortest substring at least k edits away from "
         "everything in the background (candidate primer regions).",
    inputs=(
        InputSpec("target", "Target", "Sequence(s) to find primer regions in (e.g. the pathogen)."),
        InputSpec("background", "Background", "Sequence(s) the primers must not bind (e.g. the host)."),
    ),
    params=(
        ParamSpec("k", "k (edits)", "int", 5, "minimum edit distance from every background "
                  "substring (k >= 1)", minimum=1, maximum=10_000, option="-k", required=True),
        ParamSpec("strands", "Strands", "choice", "both",
                  "'both' also searches the background's reverse complement",
                  choices=("both", "forward")),
        GAP_MIN_PARAM,
        ParamSpec("threads_per_block", "Threads per block (CUDA)", "int",
                  config.KDIFF_CUDA_THREADS_PER_BLOCK,
                  "cuda only: threads per block, i.e. the tile size of the seed study's kernels",
                  minimum=2, maximum=1024, backends=("cuda",), metavar="N"),
        ParamSpec("prefetch_factor", "Prefetch factor c (CUDA)", "int",
                  config.KDIFF_CUDA_PREFETCH_FACTOR,
                  "cuda alternative with opt5/opt6: the seed study's prefetch factor c (prefetch "
                  "ceil(c*k/tpb)*tpb target symbols and that plus tpb background symbols)",
                  minimum=1, maximum=64, backends=("cuda",), metavar="C"),
        SCHEDULER_PARAM,
    ),
    flags=(
        FlagSpec("opt1", "opt1: stop matrix at a row >= k",
                 "Stop a D matrix as soon as a whole row is >= k (seed study, optimisation 1)."),
        FlagSpec("opt2", "opt2: stop at a full match",
                 "Stop an L matrix as soon as the whole suffix is found within k-1 (optimisation 2)."),
        FlagSpec("opt3", "opt3: per-thread result slots",
                 "Each thread keeps its best row in its own slot, reduced once, instead of a shared "
                 "result updated under serialisation (optimisation 3)."),
        FlagSpec("simd", "simd: many starts per instruction",
                 "bitparallel on the CPU: groups of starts advanced together in 32-bit (then "
                 "64-bit) words, 16 or 8 per AVX-512 instruction; candidates longer than 64 go "
                 "to the blocked kernel."),
        FlagSpec("word32", "word32: a 32-bit first pass",
                 "bitparallel on CUDA: every start first runs with one 32-bit word (its match "
                 "words in shared memory, several starts a thread); only starts whose candidate "
                 "outgrows 32 go on."),
        FlagSpec("word64", "word64: a 64-bit lanes pass",
                 "bitparallel on CUDA: starts that outgrew 32 (every start, without word32) run "
                 "with one 64-bit word the same way; only those outgrowing 64 go on to the "
                 "blocked tiers. With neighbours, only the starts whose bound says they fit 64."),
        FlagSpec("neighbours", "neighbours: bounds from settled starts",
                 "bitparallel on CUDA, with word32: c(r) <= c(r+1) + 1, so settled starts bound "
                 "the others. The 32-bit pass takes every other start first and skips a start "
                 "between two long ones; of the starts it hands on, one between two settled "
                 "ones whose bounds meet needs no scan (most of a stretch shared with the "
                 "background), and one that does is scanned once, sized from its bound, "
                 "instead of climbing the tiers."),
        # CUDA only (seed study, section 4); opt1/opt5 of conventional and opt6 need opt4.
        FlagSpec("opt4", "opt4: tiling",
                 "CUDA: rectangular tiles of D (stripes of one row per thread), or parallelogram "
                 "tiles of L whose carried state stays in shared memory (optimisation 4)."),
        FlagSpec("opt5", "opt5: alpha prefetch",
                 "CUDA: copy the target segment a tile (conventional) or the whole block "
                 "(alternative) reads into shared memory first (optimisation 5)."),
        FlagSpec("opt6", "opt6: beta prefetch",
                 "CUDA alternative: keep a window of ceil(c*k/tpb)*tpb + tpb background symbols "
                 "per tile in shared memory, c being the prefetch factor (optimisation 6)."),
    ),
    variants=(
        # The seed study's CUDA flags. Some build on tiling: opt1 is checked on the cells saved
        # between tiles, and the conventional alpha prefetch and the alternative beta prefetch
        # are per tile, so without opt4 they would have nothing to act on.
        VariantSpec(
            "conventional", "conventional (D matrix)",
            "Row-by-row edit-distance matrix D; O(m^2 n) overall.",
            _matrix_backends("opt1", "engine.kdiff.cpu_conventional", ("opt1", "opt3", "opt4", "opt5"),
                             {"opt1": ("opt4",), "opt5": ("opt4",)}),
        ),
        VariantSpec(
            "alternative", "alternative (L diagonals)",
            "Landau-Vishkin diagonal matrix L; O(m^2 n k) worst case, fewer comparisons in practice.",
            _matrix_backends("opt2", "engine.kdiff.cpu_alternative", ("opt3", "opt4", "opt5", "opt6"),
                             {"opt6": ("opt4",)}),
        ),
        VariantSpec(
            "bitparallel", "bitparallel (Myers/Hyyrö)",
            "64 rows per word operation with Ukkonen's cut-off; blocks added only as needed.",
            (
                BackendSpec("serial", flags=("simd",), default_flags=("simd",),
                            kernels=_BITPARALLEL),
                BackendSpec("multicore", parallel=("coarse",), flags=("simd",),
                            default_flags=("simd",), kernels=_BITPARALLEL),
                # one thread per (r, background chunk): engine/kdiff/cuda_bitparallel.py
                # default word32 + neighbours: W4 1.39 s on an H100, vs 1.67 s with word64 too
                # and 2.57 s with word32 alone (docs/benchmarks.md)
                BackendSpec("cuda", flags=("word32", "word64", "neighbours"),
                            default_flags=("word32", "neighbours"),
                            flag_requires=_CUDA_BITPARALLEL_REQUIRES, kernels=_CUDA),
                # tasks (starts x background chunks) on a Dask cluster (engine/cluster.py);
                # simd acts on CPU workers; GPU workers run the cuda kernels with its default flags
                # (but ONE_K_FLAGS for --all-k)
                BackendSpec("dask", flags=("simd",), default_flags=("simd",)),
            ),
        ),
    ),
    default_variants={"serial": "bitparallel", "multicore": "bitparallel", "cuda": "bitparallel",
                      "dask": "bitparallel"},
    module="engine.kdiff",
    metric="comparisons",
)
