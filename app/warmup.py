"""First-use compile waits: telling them apart from search time, and compiling ahead.

numba compiles a kernel on its first use and keeps it in its disk cache. On a fresh install
the first kdiff run, the first off-target search and the first pair design wait for that
(docs/gui.md lists the measured waits). Two things make those waits honest and shorter:

- :class:`CompileClock` measures the compiling phase a job announces (``Progress.phase ==
  "compiling"``) so that the window reports it apart from the search time, as "compiling
  (once)";
- :class:`Warmup` compiles the kernels the current page will use, on tiny inputs, in a
  separate low-priority process started after the window shows (``python -m app.warmup``):
  the kernels land in numba's disk cache, and the GUI process never holds its GIL for them.

No Qt at import: ``python -m app.warmup`` runs without a display.
"""

from __future__ import annotations

import json
import os
import sys
import time
from dataclasses import dataclass

#: What the window says while kernels compile.
COMPILING = "compiling (once)"
#: Seconds after start before compiling ahead (the window draws first).
WARMUP_DELAY_MS = 1500


@dataclass
class CompileClock:
    """Seconds a job spent in its compiling phase, from its Progress stream."""

    started: float | None = None
    seconds: float = 0.0

    def see(self, progress) -> None:
        compiling = getattr(progress, "phase", "") == "compiling"
        now = time.perf_counter()
        if compiling and self.started is None:
            self.started = now
        elif not compiling and self.started is not None:
            self.seconds += now - self.started
            self.started = None

    def total(self) -> float:
        """Compile seconds so far (a phase still open counts up to now)."""
        open_phase = time.perf_counter() - self.started if self.started is not None else 0.0
        return self.seconds + open_phase

    def note(self) -> str:
        """"+ 12.3 s compiling (once)" when the job compiled, else ""."""
        seconds = self.total()
        return f"+ {seconds:.3g} s {COMPILING}" if seconds >= 0.05 else ""


# -- what to compile -------------------------------------------------------------------------------
def plan(family: str, state: dict) -> list[dict]:
    """The warm-up tasks for a family's run panel ``state`` (ParamsPanel.state): its own job
    with the chosen variant, backend, form and flags, and for kdiff the off-target search its
    Off-targets tab runs and the pair design of its Pairs tab. Dask and CUDA are left alone (a cluster, a device: not for a guess)."""
    if state.get("backend") not in ("serial", "multicore"):
        return []
    tasks = [{"task": "run", "family": family, "variant": state["variant"],
              "backend": state["backend"], "parallel": state.get("parallel"),
              "flags": list(state.get("flags") or ()), "params": dict(state.get("params") or {}),
              "threads": state.get("threads")}]
    if family == "kdiff":
        tasks.append({"task": "offtarget", "backend": state["backend"], "threads": state.get("threads")})
        tasks.append(dict(tasks[0], task="pairs"))  # the Pairs tab: the scan and the PCR
    return tasks


def _tiny(role_index: int):
    """A short random-looking record (both strands have hits at small k)."""
    import numpy as np

    from engine.sequences import Record

    rng = np.random.default_rng(7 + role_index)
    codes = rng.integers(0, 4, 300 if role_index else 120).astype(np.uint8)
    return Record(f"warm{role_index}", codes, "warm-up", "warm-up")


def _run(task: dict) -> None:
    import engine
    from engine import registry

    from app.families import RunChoice, adapter

    fam = registry.family(task["family"])
    ad = adapter(task["family"])
    sel = registry.resolve(fam, task["variant"], task["backend"], task["parallel"],
                           frozenset(task["flags"]))
    params = dict(task["params"])
    for p in fam.params:
        if p.name == "k" and params.get("k") is not None:
            params["k"] = min(int(params["k"]), 3)  # tiny inputs; k is an argument, not a kernel
        if p.backends and task["backend"] not in p.backends:
            params.pop(p.name, None)
    choice = RunChoice(task["family"], sel, params,
                       task["threads"] if task["backend"] == "multicore" else None)
    inputs = {spec.role: [_tiny(i)] for i, spec in enumerate(fam.inputs)}
    job = ad.make_job(inputs, choice)
    for _ in engine.iter_solve(job):
        pass


def _offtarget(task: dict) -> None:
    import engine
    from engine.primers import offtarget

    from app.primers import edit_backend

    backend, threads, _ = edit_backend(task["backend"], task["threads"])
    primer, background = _tiny(0).slice(0, 20), _tiny(1)
    job = offtarget.make_job(primer, [background], 3, backend=backend, threads=threads)
    for _ in engine.iter_solve(job):
        pass


def _pairs(task: dict) -> None:
    from engine.primers import pairs

    from app import demo

    # Real DNA, so that Primer3 finds pairs and their in-silico PCR runs (random DNA gives
    # none, and the PCR's kernels would stay uncompiled): a 700 bp piece of lambda against
    # 20 kb of E. coli, as the pairs tests use.
    target = [r.region(20_001, 20_700) for r in demo.records("lambda")]
    background = [r.region(1, 20_000) for r in demo.records("ecoli")]
    job = pairs.make_job(target, background, 3, variant=task["variant"], backend=task["backend"],
                         parallel=task["parallel"], flags=frozenset(task["flags"]),
                         threads=task["threads"] if task["backend"] == "multicore" else None)
    gen = pairs.iter_solve(job)
    while True:
        try:
            next(gen)
        except StopIteration as stop:
            return len(stop.value.pairs)  # pairs found: the PCR ran (and compiled) for them


def warm(tasks: list[dict]) -> list[dict]:
    """Run the tasks; their wall seconds (compiling, or loading from the cache) and errors."""
    out = []
    for task in tasks:
        started = time.perf_counter()
        found = None
        try:
            found = {"offtarget": _offtarget, "pairs": _pairs, "run": _run}[task["task"]](task)
            error = ""
        except Exception as exc:  # a warm-up never matters enough to stop the next one
            error = f"{type(exc).__name__}: {exc}"
        line = {"task": task["task"], "family": task.get("family", "edit"),
                "seconds": round(time.perf_counter() - started, 3), "error": error}
        if found is not None:
            line["found"] = found
        out.append(line)
    return out


def main(argv=None) -> int:
    """``python -m app.warmup TASKS_JSON``: compile ahead, print one JSON line per task."""
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        tasks = json.loads(argv[0]) if argv else []
    except ValueError:
        print("app.warmup: the argument must be a JSON list of tasks", file=sys.stderr)
        return 2
    if hasattr(os, "nice"):
        os.nice(10)  # below the window and its runs
    for line in warm(tasks):
        print(json.dumps(line), flush=True)
    return 0


class Warmup:
    """Starts ``python -m app.warmup`` for a family's state once per (family, selection) and
    stops it when the window closes. Built lazily so that importing this module needs no Qt."""

    def __init__(self, parent, again=None):
        from PySide6.QtCore import QProcess

        self._process_class = QProcess
        self.parent = parent
        self._again = again  # called when a warm-up ends: a choice made meanwhile gets its turn
        self.process = None
        self.done: set[str] = set()
        self.log: list[dict] = []

    def start(self, family: str, state: dict) -> bool:
        """Compile ahead for this state, unless done (or running) already; True if started."""
        tasks = plan(family, state)
        key = json.dumps(tasks, sort_keys=True)
        if not tasks or key in self.done or self.running:
            return False
        self.done.add(key)
        process = self._process_class(self.parent)
        process.setProgram(sys.executable)
        process.setArguments(["-m", "app.warmup", json.dumps(tasks)])
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        process.setWorkingDirectory(root)  # this checkout's app and engine
        process.readyReadStandardOutput.connect(self._read)
        if self._again is not None:
            process.finished.connect(lambda *_: self._again())
        process.start()
        self.process = process
        return True

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.state() != self._process_class.ProcessState.NotRunning

    def _read(self) -> None:
        data = bytes(self.process.readAllStandardOutput()).decode(errors="replace")
        for line in data.splitlines():
            try:
                self.log.append(json.loads(line))
            except ValueError:
                pass

    def wait(self, msecs: int) -> bool:
        """Wait for the process to end (tests); True if it has."""
        if self.process is None:
            return True
        ended = self.process.waitForFinished(msecs)
        self._read()
        return ended

    def shutdown(self) -> None:
        """Stop the warm-up (the window is closing): its compile is lost, nothing else."""
        if self.running:
            self.process.kill()
            self.process.waitForFinished(2000)


if __name__ == "__main__":
    sys.exit(main())
