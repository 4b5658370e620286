"""Where a long `primerscope pcr` run spends its time, without a profiler that writes only at
exit: every thread's stack is dumped to FILE every SECONDS (faulthandler), so a run cut
short by a time limit still tells. Issue 17 (pcr against the 3.1 Gb store).

    python3 scripts/probe/pcr_stacks.py FILE SECONDS PCR-ARGUMENTS..."""
import faulthandler
import sys
import time

out = open(sys.argv[1], "w")
faulthandler.dump_traceback_later(float(sys.argv[2]), repeat=True, file=out)
from engine.cli import main  # noqa: E402

t0 = time.perf_counter()
status = main(["pcr", *sys.argv[3:]])
print(f"pcr finished: status {status}, {time.perf_counter() - t0:.1f} s", flush=True)
