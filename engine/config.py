"""Tunables in one place (stumpy's config.py habit). Tests may patch these."""

#: Starts r advanced together by the bitparallel CPU kernel (independent word chains).
KDIFF_BITPARALLEL_LANES = 4

#: Rows per stripe in the fine-grained conventional kernel (opt1 is checked between stripes).
KDIFF_FINE_STRIPE_ROWS = 256

#: Matrices computed together by the coarse+fine kernels.
KDIFF_COARSE_FINE_BATCH = 4

#: kdiff CUDA: threads per block of the conventional and alternative kernels (tile size;
#: the seed study's best trade-off was 256).
KDIFF_CUDA_THREADS_PER_BLOCK = 256

#: kdiff CUDA: threads per block of the bitparallel chunk kernel.
KDIFF_CUDA_BITPARALLEL_THREADS_PER_BLOCK = 128

#: kdiff CUDA: the prefetch factor c (opt5/opt6 prefetch ceil(c*k/tpb)*tpb alpha symbols
#: and that plus tpb background symbols; the study found c = 3 removes all misses).
KDIFF_CUDA_PREFETCH_FACTOR = 3

#: kdiff CUDA bitparallel: (words per thread, overlap columns) tiers. Every r starts at
#: one tier; the few whose c could exceed that tier's reach re-run at the next. Up to
#: KDIFF_CUDA_REGISTER_WORDS words live in registers, more in global memory; a final
#: tier sized to the longest suffix is always exact.
KDIFF_CUDA_BITPARALLEL_TIERS = ((4, 256), (8, 512), (16, 1024), (64, 4096))
KDIFF_CUDA_REGISTER_WORDS = 16

#: kdiff CUDA bitparallel: a chunk owns at least this many columns, and at least
#: ratio x its overlap (so at most 1/ratio of the work is repeated).
KDIFF_CUDA_MIN_CHUNK = 1024
KDIFF_CUDA_CHUNK_OVERLAP_RATIO = 4

#: kdiff CUDA bitparallel: chunk threads per launch; None means 4 x the GPU's resident threads.
KDIFF_CUDA_BITPARALLEL_THREADS = None

#: kdiff CUDA bitparallel: a slice starts at the first tier that would have re-run at most
#: this fraction of the previous slice's starts.
KDIFF_CUDA_RERUN_FRACTION = 0.1

#: kdiff CUDA: fraction of the free GPU memory that per-launch scratch may take (more
#: matrices than that are run in batches).
KDIFF_CUDA_MEMORY_FRACTION = 0.5

#: Target duration of one job slice in seconds (progress/cancel granularity).
SLICE_SECONDS = 0.1

#: Longest side of the downsampled DP snapshot handed to the GUI.
SNAPSHOT_MAX_SIDE = 1024

#: lcs: rows per strip of the rows and wavefront variants on serial (bitparallel strips
#: are fixed by its register block). Wavefront pays a fixed cost per anti-diagonal, so
#: its strips are tall; rows keeps strips short so that slices stay short.
LCS_STRIP_ROWS = {"rows": 256, "wavefront": 2048}

#: lcs: columns per tile on multicore (rows, wavefront and bitparallel). None splits
#: the columns into one chunk per thread: tiles of one tile anti-diagonal run in
#: parallel, and fewer, larger tiles mean fewer fork/joins.
LCS_TILE_COLUMNS = None

#: lcs: multicore cuts the rows into at most this many bands of tiles (but no band is
#: thinner than a serial strip), so a pass has about this many fork/joins and its
#: pipeline fill and drain cost (threads - 1) / bands of the time.
LCS_TILE_BANDS = 32

#: lcs: largest traceback bit matrix (64-bit words, one bit per cell) that LCS recovery
#: stores; bigger problems are split by Hirschberg's rule first (8 MB, ~67 M cells).
LCS_TRACEBACK_WORDS = 1 << 20

#: edit: shortest text chunk a multicore search hands to one thread (chunks overlap by m + k).
EDIT_MIN_CHUNK_COLUMNS = 1 << 16

#: edit: chunks per thread in a multicore search (more balance, more overlap).
EDIT_CHUNKS_PER_THREAD = 4

#: edit: columns per slot in the first slice (later slices adapt to SLICE_SECONDS).
EDIT_FIRST_SLICE_COLUMNS = 1 << 14

#: edit: hits a slot buffers before the slice hands them over.
EDIT_HIT_BUFFER = 1 << 14

#: edit: banded global without k starts its band at |n - m| + this, then doubles it.
EDIT_BAND_FIRST_SLACK = 64

#: edit: uint64 words of bit-vector columns an alignment keeps whole; above, sqrt checkpoints.
EDIT_ALIGN_STORE_WORDS = 1 << 22

#: kmismatch: largest pmasm look-up memory (bytes) before levels are grouped less.
KMISMATCH_TABLE_BYTES = 1 << 20

#: kmismatch: windows per pmasm block (its q-gram codes stay in L1 while it is scanned).
KMISMATCH_PMASM_BLOCK = 4096

#: kmismatch: fewest windows a multicore chunk gets (more chunks than threads balance load).
KMISMATCH_MIN_CHUNK = 1 << 15

#: kmismatch: chunks a multicore slice is cut into, per thread (handed out one at a time).
KMISMATCH_CHUNKS_PER_THREAD = 4

#: kmismatch: text positions x pattern slots in the first slice (later slices adapt), per
#: variant, for a first slice of about 20 ms on one core (naive scans ~0.05 G cells/s,
#: shift-add ~0.35, pmasm ~7): progress comes early, and a whole bacterial genome is one or
#: two slices for pmasm, whose fixed cost per slice would otherwise show.
KMISMATCH_FIRST_SLICE_CELLS = {"naive": 1 << 20, "shift-add": 1 << 23, "pmasm": 1 << 27}

#: kmismatch: most bins of the hit-density profile of one record.
KMISMATCH_DENSITY_BINS = 4096

#: nw: largest tile of the multicore wavefront (rows, diagonal); tiles of one tile
#: anti-diagonal run in parallel, so this sets the fork/join grain.
NW_TILE_ROWS = 1024
NW_TILE_COLUMNS = 1024

#: nw: smallest wavefront tile side (below it, SIMD and fork/join overheads dominate).
NW_MIN_TILE = 64

#: nw: cells in the first band of a sweep (later bands adapt to SLICE_SECONDS).
NW_FIRST_SLICE_CELLS = 1 << 20

#: nw: largest sub-problem (cells) traced back with a full move matrix (one byte per cell);
#: bigger problems are split by Hirschberg's rule first, so memory stays linear.
NW_FULL_MATRIX_CELLS = 4 << 20

#: nw prefix: row segments scanned side by side (Aluru's processors, here SIMD lanes and
#: threads); a multiple of the SIMD width.
NW_PREFIX_LANES = 64
