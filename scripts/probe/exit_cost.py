"""How long a process takes to end after os._exit, with what a CUDA run leaves (issue 16):

    python3 scripts/probe/exit_cost.py MODE   # prints "exit <epoch seconds>" just before os._exit

MODE: none (plain interpreter), driver (cuInit and the primary context, through ctypes),
numba (numba.cuda's context, a device array and 1 MB of page-locked memory), numba-close
(the same, then numba's cuda.close() timed before the exit), numba-fork (the same, then a
child forked to hold the driver's files while this process exits; the child closes its
standard streams and ends 0.5 s later)."""

import os
import sys
import time


def main(mode: str) -> None:
    if mode == "driver":
        import ctypes

        lib = ctypes.CDLL("libcuda.so.1")
        assert lib.cuInit(0) == 0
        device = ctypes.c_int()
        lib.cuDeviceGet(ctypes.byref(device), 0)
        lib.cuDevicePrimaryCtxRetain(ctypes.byref(ctypes.c_void_p()), device)
    elif mode.startswith("numba"):
        import numpy as np
        from numba import cuda

        cuda.current_context()
        keep = [cuda.to_device(np.zeros(1 << 20, np.uint8)), cuda.pinned_array(1 << 20, np.uint8)]
        cuda.synchronize()
        if mode == "numba-close":
            t = time.time()
            del keep
            cuda.close()
            print(f"close {time.time() - t:.3f} s", flush=True)
    print(f"exit {time.time():.6f}", flush=True)
    if mode == "numba-fork" and os.fork() == 0:
        for fd in (0, 1, 2):
            os.close(fd)
        time.sleep(0.5)
    os._exit(0)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "none")
