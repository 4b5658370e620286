import sys

from engine import interrupts
from engine.cli import main

# Guarded: child processes started by spawn (a Dask LocalCluster's workers) import this
# module again and must not run the program.
if __name__ == "__main__":
    interrupts.install()
    sys.exit(interrupts.leave(interrupts.guarded(main)))
