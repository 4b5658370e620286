"""One CLI run's start-up as a timeline (issue 16): when the CUDA context thread
(engine.cuda_start) started and ended, when the heavy modules began importing, the command
line's parser, the child that reads the inputs forked and its answer taken
(engine.cli.preload.start/take), the inputs' loading (what the child did not read), the job (on its thread: numba's compiler set-up,
engine.gpu.prepare, and the job's Device), the output (the writer, json.dumps, the files), and
every kernel loaded at its first launch with its seconds (engine.gpu.LOADED). Runs on a CPU
backend too (then without the CUDA marks).

    python3 scripts/probe/cli_startup.py kdiff TARGET BACKGROUND ... --backend cuda -o OUT

Seconds are from this script's start (the interpreter's own start-up comes before).
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import json
import sys
import threading
import time

T0 = time.perf_counter()
MARKS: list[tuple[float, str, str]] = []


def mark(what: str) -> None:
    MARKS.append((time.perf_counter() - T0, threading.current_thread().name, what))


def timed(function, what: str):
    def wrapper(*args, **kwargs):
        mark(f"{what}: start")
        try:
            return function(*args, **kwargs)
        finally:
            mark(f"{what}: end")
    return wrapper


FIRST_IMPORTS = ("numpy", "numba", "numba.cuda", "Bio", "Bio.SeqIO.FastaIO", "engine.kdiff",
                 "engine.kdiff.driver", "engine.gpu", "engine.kdiff.cuda_bitparallel")


_MARKED: set[str] = set()


def _audit(event: str, args) -> None:
    if (event == "import" and args[0] in FIRST_IMPORTS and args[0] not in sys.modules
            and args[0] not in _MARKED):
        _MARKED.add(args[0])
        mark(f"import {args[0]}")


def _patch_gpu(module) -> None:
    module.prepare = timed(module.prepare, "gpu.prepare (numba's CUDA compiler set-up)")
    module.Device.__init__ = timed(module.Device.__init__, "gpu.Device (waits for the context)")


def _patch(*names: str):
    """Mark the start and end of these functions of a module."""
    def patch(module) -> None:
        for name in names:
            setattr(module, name, timed(getattr(module, name), f"{module.__name__}.{name}"))
    return patch


AFTER = {"engine.gpu": _patch_gpu, "engine.sequences": _patch("load"),
         "engine.cli.preload": _patch("start", "take"),
         "engine.cli": _patch("build_parser"), "engine.interrupts": _patch("run_job"),
         "engine.output": _patch("write_texts"), "engine.primers.export_kdiff": _patch("to_json")}


class _AfterImport(importlib.abc.MetaPathFinder):
    """Patch a module right after it is executed."""

    def find_spec(self, name, path, target=None):
        if name not in AFTER:
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None:
            return spec
        run = spec.loader.exec_module

        def exec_module(module):
            run(module)
            AFTER[name](module)

        spec.loader.exec_module = exec_module
        return spec


def main(argv: list[str]) -> int:
    sys.addaudithook(_audit)
    sys.meta_path.insert(0, _AfterImport())
    from engine import cuda_start

    cuda_start._retain_primary_context = timed(cuda_start._retain_primary_context,
                                               "CUDA context (driver, own thread)")
    from engine import interrupts
    from engine.cli import main as cli_main

    interrupts.install()  # as the command line's entry point does (engine.cli.preload reads it)

    json.dumps = timed(json.dumps, "json.dumps")
    status = cli_main(argv)
    mark("run finished")
    for at, thread, what in sorted(MARKS):
        print(f"{at:7.3f} s  {thread:<14} {what}")
    if "engine.gpu" in sys.modules:
        loaded = sys.modules["engine.gpu"].LOADED
        print(f"kernels loaded at their first launch: {len(loaded)}, "
              f"{sum(s for _, s in loaded):.3f} s")
        for name, seconds in loaded:
            print(f"  {name:<20} {seconds:.3f} s")
    if "-o" in argv and argv[-1].endswith(".json"):
        with open(argv[argv.index("-o") + 1]) as fh:
            print(f"solve seconds (JSON): {json.load(fh)['seconds']:.3f}")
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
