"""``primerscope bench`` / ``python -m benchmarks``: the figures the issues ask for.

Benchmarks live outside the engine: they import the peers (edlib, RapidFuzz,
parasail: the ``bench`` extra), which the product does not need. Each family
contributes ``benchmarks/<family>.py`` (its CUDA cases: ``<family>_cuda.py``) with
``cases(opts) -> list[Case]`` and ``RATIOS`` (the speed-ups its issue names).
Cases of one workload run in the same process on the same input, so ratios
are like for like. Results print as a table and are saved as JSON.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import platform
import sys
import time
from dataclasses import asdict, dataclass, field
from typing import Callable

from engine import registry
from engine.jobs import check_threads
from engine.output import check_outputs, write_text


@dataclass
class Case:
    """One timed run. ``run`` returns a dict with at least ``seconds``."""

    family: str
    workload: str
    name: str
    run: Callable[[], dict]
    describe: str = ""


class Skip(ImportError):
    """A case that cannot run on this machine (no GPU, a package missing): its row reads
    ``skipped: <reason>``, as for a peer that is not installed."""


@dataclass
class Ratio:
    """speed-up = seconds(baseline) / seconds(subject), checked against ``goal``."""

    workload: str
    subject: str
    baseline: str
    goal: float | None
    label: str


@dataclass
class Row:
    family: str
    workload: str
    name: str
    seconds: float | None
    metrics: dict = field(default_factory=dict)
    error: str | None = None


#: Suites that are not families (run only when named): benchmarks/<name>.py.
SUITES = ("scale",)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("families", nargs="*",
                        help="families to run (default: all), the tools pairs and pcr, or a suite: "
                             + ", ".join(SUITES))
    parser.add_argument("--workload", action="append", metavar="W",
                        help="only these workloads (repeatable), e.g. W1")
    parser.add_argument("--case", action="append", metavar="SUBSTRING",
                        help="only cases whose name contains this (repeatable)")
    parser.add_argument("--backend", choices=registry.BACKENDS,
                        help="only cases on this backend (peers always run)")
    parser.add_argument("--threads", type=int, default=None, help="threads for multicore cases")
    parser.add_argument("--json-out", default=None, metavar="FILE",
                        help="where to save the JSON (default: bench-results/bench-<time>.json)")
    parser.add_argument("--list", action="store_true", help="list the cases and exit")


def machine_info() -> dict:
    info = {"python": platform.python_version(), "machine": platform.machine(),
            "cpus": os.cpu_count(), "platform": platform.platform()}
    try:
        import numba

        info["numba"] = numba.__version__
        info["numba_threads"] = numba.config.NUMBA_NUM_THREADS
    except ImportError:
        pass
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    info["cpu"] = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return info


def _select(cases, args):
    out = []
    for case in cases:
        if args.workload and case.workload not in args.workload:
            continue
        if args.case and not any(s in case.name for s in args.case):
            continue
        if args.backend and args.backend not in case.name and "/" in case.name:
            continue
        out.append(case)
    return out


def build_parser() -> argparse.ArgumentParser:
    from engine.cli import UsageError

    class Parser(argparse.ArgumentParser):
        def error(self, message):  # one line, as every primerscope error
            raise UsageError(message)

    parser = Parser(prog="primerscope bench", description="benchmarks (prints a table, writes JSON)")
    add_arguments(parser)
    return parser


def main(argv=None) -> int:
    """``primerscope bench ...``: exit 2 with one line on bad arguments."""
    from engine.cli import report_errors

    argv = list(sys.argv[1:] if argv is None else argv)
    return report_errors(lambda: run(build_parser().parse_args(argv)))


#: Benchmarks of tools built on the families (``benchmarks/<tool>.py``), run when named.
TOOLS = ("pairs", "pcr", "group")


def run(args) -> int:
    names = args.families or [f.name for f in registry.families()]
    for name in names:
        if name not in TOOLS and name not in SUITES:
            registry.family(name)  # raises ValueError for an unknown family (exit 2)
    check_threads(args.threads)  # (the API's check: one message)
    if args.json_out:
        check_outputs([args.json_out])
    cases, ratios = [], []
    for name in names:
        mod = importlib.import_module(f"benchmarks.{name}")
        cases += mod.cases(args)
        ratios += list(getattr(mod, "RATIOS", ()))
    cases = _select(cases, args)
    if args.list:
        for c in cases:
            print(f"{c.family:10} {c.workload:6} {c.name:40} {c.describe}")
        return 0
    if not cases:
        raise ValueError("no benchmark case matches the selection")
    info = machine_info()
    print(f"# primerscope bench on {info.get('cpu', info['machine'])}, {info['cpus']} CPUs",
          flush=True)
    rows: list[Row] = []
    for case in cases:
        print(f"  running {case.family} {case.workload} {case.name} …", file=sys.stderr, flush=True)
        try:
            metrics = case.run()
            rows.append(Row(case.family, case.workload, case.name, metrics.pop("seconds"), metrics))
        except ImportError as exc:
            rows.append(Row(case.family, case.workload, case.name, None, {}, f"skipped: {exc}"))
        except Exception as exc:  # a broken case must not hide the others' figures
            rows.append(Row(case.family, case.workload, case.name, None, {},
                            f"{type(exc).__name__}: {exc}"))
        # Each row as it comes: a run stopped by a time limit still shows what it measured.
        done = rows[-1]
        print(f"    {done.seconds if done.seconds is not None else '-'} s  "
              f"{done.error or done.metrics}", file=sys.stderr, flush=True)
    ratio_rows = _ratios(rows, ratios)
    _print_table(rows, ratio_rows)
    path = args.json_out or os.path.join("bench-results", time.strftime("bench-%Y%m%d-%H%M%S.json"))
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    write_text(path, json.dumps({"machine": info, "rows": [asdict(r) for r in rows],
                                 "ratios": ratio_rows}, indent=1, default=str))
    print(f"# saved {path}")
    return 0


def _ratios(rows, ratios) -> list[dict]:
    by = {(r.workload, r.name): r for r in rows}
    out = []
    for rt in ratios:
        a, b = by.get((rt.workload, rt.subject)), by.get((rt.workload, rt.baseline))
        if not a or not b or not a.seconds or not b.seconds:
            continue
        speedup = b.seconds / a.seconds
        ok = None if rt.goal is None else speedup >= rt.goal
        out.append({"workload": rt.workload, "label": rt.label, "subject": rt.subject,
                    "baseline": rt.baseline, "speedup": speedup, "goal": rt.goal, "met": ok})
    return out


def _fmt_metric(key, value):
    if isinstance(value, float):
        if abs(value) >= 1e6:
            return f"{key}={value:.3g}"
        return f"{key}={value:.4g}"
    return f"{key}={value}"


def _print_table(rows, ratio_rows) -> None:
    print(f"{'family':8} {'work':5} {'case':44} {'seconds':>9}  metrics")
    for r in rows:
        secs = f"{r.seconds:9.3f}" if r.seconds is not None else "        -"
        extra = r.error or "  ".join(_fmt_metric(k, v) for k, v in r.metrics.items())
        print(f"{r.family:8} {r.workload:5} {r.name:44} {secs}  {extra}")
    if ratio_rows:
        print("\n# speed-ups (same run, same input)")
        for rt in ratio_rows:
            goal = "" if rt["goal"] is None else f"  goal >= {rt['goal']:g}x: " + (
                "met" if rt["met"] else "NOT MET")
            print(f"{rt['workload']:5} {rt['label']:60} {rt['speedup']:8.2f}x{goal}")


def timed(fn, *, repeat: int = 1) -> tuple[float, object]:
    """Best wall time of ``repeat`` calls (after the caller's warm-up) and the last value."""
    best, value = float("inf"), None
    for _ in range(repeat):
        t0 = time.perf_counter()
        value = fn()
        best = min(best, time.perf_counter() - t0)
    return best, value
