"""One CLI run between two clocks (issue 16): this prints, on stderr, the epoch seconds at
which the interpreter reached this script and at which the command called os._exit (or
returned), so that a shell that notes its own clock before and after the process can split
its wall time into the interpreter's start, the command, and the process's exit.

    s=$(date +%s.%N); python3 scripts/probe/cli_clock.py kdiff ... ; e=$(date +%s.%N)
"""

import os
import runpy
import sys
import time

START = time.time()
PID = os.getpid()


def _report(what: str) -> None:
    sys.stderr.write(f"clock {what} {time.time():.6f}\n")
    sys.stderr.flush()


_exit = os._exit


def _clocked_exit(status: int) -> None:
    if os.getpid() == PID:  # (not a child's: engine.cli.preload's and cuda_start's end so too)
        _report("exit")
    _exit(status)


if __name__ == "__main__":
    sys.stderr.write(f"clock start {START:.6f}\n")
    os._exit = _clocked_exit
    sys.argv = ["engine.cli", *sys.argv[1:]]
    try:
        runpy.run_module("engine.cli", run_name="__main__", alter_sys=True)
    finally:
        _report("exit")
