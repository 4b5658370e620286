"""``python -m benchmarks`` is ``primerscope bench``."""

import sys

import engine

# The programs' process settings first, as app.launcher gives ``primerscope bench`` them:
# without them numba's OpenMP threads spin while they wait, which on a busy machine doubles
# a multicore case's CPU time (docs/benchmarks.md, the seam's kmismatch T3 row).
engine.configure_process()

from benchmarks import main  # noqa: E402

# Guarded: child processes started by spawn (a Dask LocalCluster's workers) import this
# module again and must not run the program.
if __name__ == "__main__":
    sys.exit(main())
