import sys

from app.launcher import main

# Guarded: child processes started by spawn (a Dask LocalCluster's workers) import this
# module again and must not run the program.
if __name__ == "__main__":
    sys.exit(main())
