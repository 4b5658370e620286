"""Tunables in one place (stumpy's config.py habit). Tests may patch these."""

#: Starts r advanced together by the bitparallel CPU kernel (independent word chains).
KDIFF_BITPARALLEL_LANES = 4

#: bitparallel's ``simd`` flag: starts per group by word width (several AVX-512 registers'
#: worth, so the loop over lanes unrolls; measured on the 2-core machine: 32-bit lanes
#: 128 > 64 > 32, 64-bit lanes 16-32).
KDIFF_SIMD_LANES = {32: 128, 64: 32}

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

#: kdiff CUDA bitparallel: (words per thread, overlap columns) tiers. Without bounds an r
#: starts at one tier; the few whose c could exceed that tier's reach re-run at the next.
#: Up to KDIFF_CUDA_REGISTER_WORDS words live in registers, more in global memory; a final
#: tier sized to the longest suffix is always exact. (With the neighbours flag a start
#: with an upper bound is sized from it: the register tiers' words, its own overlap.)
KDIFF_CUDA_BITPARALLEL_TIERS = ((4, 256), (8, 512), (16, 1024), (64, 4096))
KDIFF_CUDA_REGISTER_WORDS = 16
#: kdiff --all-k on CUDA: the starts whose lower levels outgrew the lanes' word run the
#: every-level tiers first on every 16th of them, then every 4th of those their neighbours'
#: bounds left open, then on the rest (BitparallelDriver._every_level).
KDIFF_CUDA_LEVEL_STRIDES = (16, 4)

#: bitparallel on CUDA with the word32/word64 flags (engine/kdiff/cuda_lanes.py): starts a
#: thread for each word width, threads a block (the block's starts share its match words
#: in shared memory: 16 x threads x starts words, at most 48 KiB), and the shortest chunk
#: of background a block takes.
KDIFF_CUDA_LANES_PER_THREAD = {32: 4, 64: 2}
KDIFF_CUDA_LANES_THREADS_PER_BLOCK = 128
KDIFF_CUDA_LANES_MIN_CHUNK = 4096
#: ... and at least ratio x its overlap (word + k columns), so little work is repeated.
KDIFF_CUDA_LANES_CHUNK_OVERLAP_RATIO = 8

#: kdiff on CUDA: a slice lasts this many SLICE_SECONDS. Each slice runs its own tier
#: launches over the starts its lanes hand on, and with --all-k the ladder that tracks every
#: level gets only a sample of them: at 0.1 s a slice one of its launches was a fifth of a
#: wave on an H200 (W4k8 --all-k 8: 4.22 s; at 1 s 2.87 s; -k 8 1.87 vs 1.75 s; see
#: docs/benchmarks.md). Progress and the live view then move about once a second.
KDIFF_CUDA_SLICE_SCALE = 10

#: kdiff CUDA bitparallel: a chunk owns at least this many columns, and at least
#: ratio x its overlap (so at most 1/ratio of the work is repeated).
KDIFF_CUDA_MIN_CHUNK = 1024
KDIFF_CUDA_CHUNK_OVERLAP_RATIO = 4
#: ... unless that leaves less than a wave: the tiers' threads resident at once, as a share
#: of the GPU's (their kernels hold about 80 registers: 37.5 % occupancy on an H200).
KDIFF_CUDA_TIER_OCCUPANCY = 0.375

#: kdiff CUDA bitparallel: chunk threads per launch; None means 4 x the GPU's resident threads.
KDIFF_CUDA_BITPARALLEL_THREADS = None

#: kdiff CUDA bitparallel with the neighbours flag (engine/kdiff/neighbours.py): points a run
#: of unsettled starts is split at each round (2: bisection; more: fewer rounds, more scans).
KDIFF_CUDA_NEIGHBOUR_SPLIT = 4

#: kdiff CUDA bitparallel: a slice starts at the first tier that would have re-run at most
#: this fraction of the previous slice's starts.
KDIFF_CUDA_RERUN_FRACTION = 0.1

#: kdiff CUDA: fraction of the free GPU memory that per-launch scratch may take (more
#: matrices than that are run in batches).
KDIFF_CUDA_MEMORY_FRACTION = 0.5

#: Streaming (engine/streaming.py): a background whose text (both strands counted when a
#: job searches both) is longer than this many bases is read a chunk at a time instead of
#: held whole in memory (about 3 bytes a base of text in memory; 1 << 28: 768 MB at most).
STREAM_MEMORY_BASES = 1 << 28

#: Streaming: text bases per strand of one chunk. A streamed CPU job holds one chunk's text
#: (twice this with both strands, 128 MB) beyond its target and its kernels' scratch.
STREAM_CHUNK_BASES = 1 << 26

#: Streaming: a chunk is at least this many times its pieces' overlap (a long target makes a
#: long overlap; little of the background is then read twice).
STREAM_OVERLAP_RATIO = 8

#: The dask backend (engine/cluster.py): background bases per strand of one task's chunk
#: (the smaller of this and STREAM_CHUNK_BASES; a GPU worker's chunk is STREAM_CHUNK_BASES):
#: a worker reads its chunk for each task, about 1 ms per 100 kb, against a task of
#: CLUSTER_TASK_SECONDS.
CLUSTER_CHUNK_BASES = 1 << 22

#: dask: about how long one task runs (kdiff sizes its ranges of starts from the tasks
#: done). Short enough that a cancelled job's running tasks end soon on an outside cluster.
CLUSTER_TASK_SECONDS = 0.5

#: dask, kdiff on GPU workers: starts of one task (a range of starts against a chunk), at
#: least. A GPU task's chunk is a cuda job's streaming chunk (seconds of work), and the
#: kernels fill the GPU only with many starts: one cuda process takes a whole 5 kb target
#: in one slice, so cutting it into ranges of 4,096 starts nearly doubled the work of a
#: 3.1 Gb job (dask-cuda at 0.69x plain cuda, H200).
CLUSTER_GPU_STARTS = 1 << 18

#: dask: times a task may lose its worker (the process died) before the job fails (the
#: local cluster's scheduler; an outside scheduler keeps its own setting).
CLUSTER_ALLOWED_FAILURES = 5

#: dask: seconds to reach a scheduler (and for it to have a worker) before a one-line error.
CLUSTER_CONNECT_SECONDS = 10

#: Streaming on the GPU: bytes of background text a cuda job keeps on the device (one byte a
#: base; both strands counted when it searches both). A background whose text fits is
#: uploaded once and reused by every slice; a larger one is uploaded a chunk of at most this
#: size at a time (the kernels' scratch comes on top: the *_CUDA_MEMORY_FRACTION settings).
#: At most 2^31 (the kdiff kernels' 32-bit positions). The host builds what it uploads, so
#: this also bounds a cuda job's host memory: about 3 bytes a base of it at most (1.5 GB).
GPU_STREAM_BYTES = 1 << 29

#: Text uploads to the GPU go in pieces of this many bytes (packed, two bases a byte), each
#: unpacked on the GPU as it lands, so that the kernels of the text already there run while
#: the rest is still on its way (kmismatch). Each piece is a batch of launches and waits of
#: its own: T3x20's 49 MB in one piece took 3.9 ms end to end, in three of 16 MB 8.9 ms (H100).
GPU_UPLOAD_BYTES = 1 << 26

#: Page-locked host memory kept for reuse once nothing refers to it (engine.gpu.PINNED):
#: hit columns copied back, texts packed for upload.
GPU_PINNED_POOL_BYTES = 1 << 30

#: Packed, page-locked texts kept for the records they came from while those live
#: (engine.gpu.PACKED_TEXTS): solving the same background again skips the packing.
GPU_TEXT_CACHE_BYTES = 1 << 30

#: Texts left on the GPU for the records they came from while those live
#: (engine.gpu.DEVICE_TEXTS): searching the same background again skips the upload (kmismatch:
#: T3x20's 49 MB, about 5 ms of a 10 ms solve on an H200; edit: a read-only genome array that
#: batches of SeqColumns regions are ranges of). Such a text also takes at most
#: GPU_DEVICE_TEXT_FREE_FRACTION of the device memory free when it is kept, and all of them
#: go when an allocation finds the GPU full.
GPU_DEVICE_TEXT_BYTES = 1 << 30
GPU_DEVICE_TEXT_FREE_FRACTION = 0.5

#: Device memory a finished job leaves for the next one (engine.gpu.SPARES).
GPU_SPARE_BYTES = 1 << 30

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

#: lcs CUDA: threads per block. The band kernels (bitparallel, tiled wavefront) run one band
#: per warp (fewer than 32: one band of that many lanes per block); the seed study's
#: per-diagonal kernel puts this many cells of an anti-diagonal in a block.
LCS_CUDA_THREADS_PER_BLOCK = 64

#: lcs CUDA band kernels: columns per tile, per variant. A band publishes its boundary row
#: to the band below once per tile, so bands lag each other by about a tile (plus the 32
#: steps of the lane pipeline): the thin bands of the wavefront (32 rows) want short tiles.
LCS_CUDA_TILE_COLUMNS = {"bitparallel": 256, "wavefront": 64}

#: lcs CUDA: the traceback bit matrix (64-bit words) below which a recovery subproblem is
#: finished on the CPU with the variant's serial kernels; larger ones are split by score
#: passes on the GPU (Hirschberg). A pass costs the GPU about one step per column however
#: few rows it has, so small subproblems are cheaper on the CPU (H100: 100k x 100k took
#: 0.73 s with 1 << 16 words, mostly in GPU passes of a few thousand rows).
LCS_CUDA_TRACEBACK_WORDS = 1 << 20

#: CUDA band kernels (lcs, nw tiled): polls of the band above's progress before a launch
#: gives up (a guard against a deadlock; a wait lasts a few tiles at most).
CUDA_SPIN_LIMIT = 1 << 24

#: edit: shortest text chunk a multicore search hands to one thread (chunks overlap by m + k).
EDIT_MIN_CHUNK_COLUMNS = 1 << 16

#: edit: chunks per thread in a multicore search (more balance, more overlap).
EDIT_CHUNKS_PER_THREAD = 4

#: edit: columns per slot in the first slice (later slices adapt to SLICE_SECONDS).
EDIT_FIRST_SLICE_COLUMNS = 1 << 14

#: edit: hits a slot buffers before the slice hands them over.
EDIT_HIT_BUFFER = 1 << 14

#: edit myers with the simd flag: most instances (patterns x strands) advanced together
#: (one group; more groups scan the text again). 128 uint32 lanes keep a group's match
#: words and state (about 12 KB) in L1.
EDIT_SIMD_MAX_LANES = 128

#: edit myers: fewest instances sharing a text for the simd flag to apply (below it the
#: two-lane kernel of cpu_lanes is as fast).
EDIT_SIMD_MIN_LANES = 4

#: edit: banded global without k starts its band at |n - m| + this, then doubles it.
EDIT_BAND_FIRST_SLACK = 64

#: edit: uint64 words of bit-vector columns an alignment keeps whole; above, sqrt checkpoints.
EDIT_ALIGN_STORE_WORDS = 1 << 22

#: edit CUDA: threads per block of the task and cooperative kernels (cooperative: a multiple
#: of 32; the study used 128 on Kepler).
EDIT_CUDA_THREADS_PER_BLOCK = 128

#: edit CUDA cooperative: 64-bit words each thread holds (the study's words/thread).
EDIT_CUDA_WORDS_PER_THREAD = 2

#: edit CUDA cooperative: text columns a lane computes per pipeline step (1, 2 or 4): one
#: warp shuffle carries the horizontal deltas of all of them.
EDIT_CUDA_COLUMNS_PER_STEP = 2

#: edit CUDA cooperative: most lanes of a warp one query spans; a longer query runs in
#: stripes of this many lanes x words per thread, its carries passed on through memory.
EDIT_CUDA_MAX_LANES = 32

#: edit CUDA task: register tiers (words per thread); a query longer than the last tier
#: keeps its words in global memory.
EDIT_CUDA_TASK_TIERS = (1, 2, 4, 8, 16)

#: edit CUDA: shortest text chunk of a search in long records (chunks overlap by m + k), and
#: at least this ratio x that overlap, so that little of the text is scanned twice.
EDIT_CUDA_MIN_CHUNK_COLUMNS = 4096
EDIT_CUDA_CHUNK_OVERLAP_RATIO = 4

#: edit CUDA: text columns of the first slice; None: 256 per resident GPU thread (later
#: slices adapt to SLICE_SECONDS).
EDIT_CUDA_FIRST_SLICE_COLUMNS = None

#: edit CUDA: tasks a slice takes at least; None: as many as the GPU runs at once (its
#: resident threads). A slice of fewer leaves the GPU idle, and when tasks are long (a
#: genome's chunks: ~1M columns each) its time never falls below SLICE_SECONDS, so the
#: adaptive budget would never grow: 69 tasks a slice made a 3.1 Gb pcr run last hours.
EDIT_CUDA_MIN_SLICE_TASKS = None

#: edit CUDA: hits a launch buffers at first (a launch that finds more runs again with room
#: for all of them).
EDIT_CUDA_HIT_BUFFER = 1 << 20

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

#: kmismatch CUDA: threads per block of thread, shared-mem and pair-tile (block-thread
#: runs one thread per level).
KMISMATCH_CUDA_THREADS_PER_BLOCK = 256

#: kmismatch CUDA shared-mem: threads per block when the job does not set them (smaller
#: blocks than the other methods': fewer warps wait at its barriers and for a block's last
#: warp; 128 was fastest on an H200).
KMISMATCH_CUDA_SHARED_MEM_THREADS_PER_BLOCK = 128

#: kmismatch CUDA shared-mem: most registers a thread of its kernels for one counter word and
#: a look-up memory in shared memory (fewer than the compiler would take, so that more warps
#: are resident to hide the shared-memory look-ups' latency; 40 spill nothing up to m = 32).
KMISMATCH_CUDA_SHARED_MEM_REGISTERS = 40

#: kmismatch CUDA block-thread: windows a block takes in turn before it writes their hits.
KMISMATCH_CUDA_BLOCK_THREAD_WINDOWS = 64

#: kmismatch CUDA: pattern lengths up to this get kernels compiled for their length (the
#: level loop unrolled); longer patterns share one kernel with a run-time loop.
KMISMATCH_CUDA_UNROLL_MAX = 32

#: kmismatch CUDA pair-tile: shared memory for the pair look-up memory staged at a time;
#: shared-mem stages its look-up memory in shared memory when it takes at most this.
KMISMATCH_CUDA_LUT_BYTES = 32 * 1024

#: kmismatch CUDA: threads (and table entries) per block of the pass that puts the hits of
#: a launch in text order (a power of two; a block first adds up its group's tiles, so
#: smaller blocks spend less of their time on that: T3x20 on an H200, ordering 0.072 ms
#: with 1024, 0.062-0.065 with 256).
KMISMATCH_CUDA_ORDER_THREADS = 256

#: kmismatch CUDA: fewest hits a launch's buffer holds (a launch that finds more runs again
#: with room for all of them).
KMISMATCH_CUDA_MIN_HITS = 1 << 16

#: kmismatch CUDA: the first guess of hits a window, as a multiple of what random DNA gives
#: (tiles' hit regions are sized from it until a launch has counted them): a text that hits
#: far more often (repeats) spills and runs its first launches again; raise it there.
KMISMATCH_CUDA_HIT_GUESS = 1.0

#: kmismatch CUDA: text positions x pattern slots in the first slice (later slices adapt):
#: a few milliseconds of GPU work (T3x20, 98.8 Mb x 16 slots, is one slice).
KMISMATCH_CUDA_FIRST_SLICE_CELLS = 1 << 32

#: kmismatch CUDA: fraction of the free GPU memory that one launch's hits may take (a
#: launch that finds more is split in two).
KMISMATCH_CUDA_MEMORY_FRACTION = 0.25

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

#: nw CUDA: threads per block of each form when the job does not set them
#: (keys: "tiled", "per-launch", "diagonal-one-block", "prefix-one-block", "prefix-multi-block").
#: tiled: 128 threads are 4 bands (warps) to a block, which an SM's 4 schedulers run side
#: by side (lambda x 100k on an H200: 373 GCUPS against 360 with one band a block).
NW_CUDA_THREADS_PER_BLOCK = {"tiled": 128, "per-launch": 256, "diagonal-one-block": 1024,
                             "prefix-one-block": 1024, "prefix-multi-block": 256}

#: nw CUDA tiled: rows each lane keeps in registers (a band is 32 lanes x rows tall). More
#: rows: more work per step for the same fixed cost, but fewer bands to share the GPU
#: (8: the best on lambda x 100k, within 10 % of the best on 100k x 100k).
NW_CUDA_TILED_ROWS = 8

#: nw CUDA tiled: columns each lane computes per step (1, 2 or 4): the step's fixed cost
#: (shuffles, loads, the loop) is shared, and the columns' chains overlap.
NW_CUDA_TILED_COLUMNS = 4

#: nw CUDA tiled: columns of the row above that a band takes from the band above at a time
#: (a multiple of the lanes of a band and of the columns per step; a band runs about its
#: lanes' steps plus two tiles behind the one above it).
NW_CUDA_TILED_CHUNK = 32

#: nw CUDA prefix multi-block: fewest columns per thread when the job sets no block count.
NW_CUDA_PREFIX_MIN_COLUMNS = 8

#: nw CUDA: cells in the first band of a sweep, per form (later bands adapt to SLICE_SECONDS).
#: A thin band leaves a multi-block form's GPU mostly idle, so those start with about a
#: slice's worth at their speed; the anti-diagonal forms also take bands at least as tall
#: as wide (each band costs h + w anti-diagonal steps).
NW_CUDA_FIRST_SLICE_CELLS = {"tiled": 1 << 34, "prefix-multi-block": 1 << 32, "per-launch": 1 << 28,
                             "diagonal-one-block": 1 << 26, "prefix-one-block": 1 << 26}

#: nw CUDA prefix multi-block: fraction of the free GPU memory that the blocks' row carries
#: of one launch may take (taller bands run in several launches).
NW_CUDA_MEMORY_FRACTION = 0.25
