"""Tunables in one place (stumpy's config.py habit). Tests may patch these."""

#: Starts r advanced together by the bitparallel CPU kernel (independent word chains).
KDIFF_BITPARALLEL_LANES = 4

#: Rows per stripe in the fine-grained conventional kernel (opt1 is checked between stripes).
KDIFF_FINE_STRIPE_ROWS = 256

#: Matrices computed together by the coarse+fine kernels.
KDIFF_COARSE_FINE_BATCH = 4

#: Target duration of one job slice in seconds (progress/cancel granularity).
SLICE_SECONDS = 0.1

#: Longest side of the downsampled DP snapshot handed to the GUI.
SNAPSHOT_MAX_SIDE = 1024
