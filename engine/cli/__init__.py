"""The ``primerscope`` command line for the compute subcommands (no Qt here).

Every family plugs in through ``engine/<family>/cli.py``, which provides:

- ``add_arguments(parser)``: the family's positional inputs and its own options
  (its registry parameters come from :func:`add_param_options`);
- ``make_job(args) -> Job``: load sequences (:func:`load_input`, :func:`load_source`: what
  engine.cli.preload's child read meanwhile, or a read here) and validate (raise
  SequenceError or ValueError);
- ``export``: the family's writer module (``engine/<family>/export.py``) with
  ``write_csv(result, fh, **options)`` and ``to_json(result, **options) -> dict``
  (the answer only; the run metadata is added here). The GUI calls the same writers;
- optionally ``export_options(args) -> dict``: the typed keyword options of those
  writers taken from the command line (columns, filters...);
- optionally ``extra_outputs(result, args) -> {path: text}``: files besides the main
  output (kdiff's ``--bed``), written after it.

Tools built on families (``TOOLS``: offtarget, pcr, pairs, panel) are plug-ins too; their
``FAMILY`` names the family whose ``--variant``/``--backend`` choices they take. A plug-in
whose result is not its family's (a tool's; kdiff's with its primer annotations) has its own
``iter_solve(job, cancel)`` (a module attribute) that the run uses instead of the family's.
A tool with ``FAMILY = None`` and a ``run(args) -> int`` (the primer library, ``index``) is
a command of its own: it declares all its options and does its own output.

This module adds the options every family shares (``--variant --backend
--parallel --opt --threads -o --json``), the progress bar on standard error,
the exit codes (2 for bad input, 1 for a failure inside a run, 130/143 for
Ctrl-C/SIGTERM, 141 when the reader of standard output went away) and writes
output atomically, so a failed or interrupted run never leaves a partial file
behind. Every output path is checked before the run; the job runs on a worker
thread so that a signal can cancel it (engine.interrupts). Warnings (duplicate
record ids...) are one line each on stderr. docs/errors.md lists every message.
"""

from __future__ import annotations

import argparse
import functools
import gc
import importlib
import json
import re
import sys
import warnings
from types import SimpleNamespace

import engine
from engine import interrupts
from engine.cli import preload
from engine.cli.terminal import StderrLine

# The rest of the engine is imported where it is used: a `--backend cuda` run starts
# creating the CUDA context (engine.cuda_start) before numpy, numba and the inputs load.


class UsageError(Exception):
    """Bad input detected by the CLI itself; printed as one line, exit status 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # argparse's default prints usage; keep errors to one line
        raise UsageError(message)


#: Subcommands built on a family, or commands of their own, not families themselves:
#: name -> plug-in module.
TOOLS = {"offtarget": "engine.primers.cli", "pcr": "engine.primers.cli_pcr",
         "pairs": "engine.primers.cli_pairs", "panel": "engine.primers.cli_panel",
         "check": "engine.primers.cli_check", "library": "engine.primers.cli_library",
         "group": "engine.primers.cli_group", "index": "engine.cli.index"}

#: The tools' lines in ``primerscope --help``, short as the families' titles (the plug-in's
#: docstring is the subcommand's own --help description).
TOOL_HELP = {"offtarget": "where a primer would still bind (off-target sites)",
             "pcr": "in-silico PCR: the products a primer set amplifies",
             "pairs": "specific primer pairs, designed by Primer3, with their PCR",
             "panel": "multiplex panel check: dimers and cross-products",
             "check": "check primers you have: sites, products and dimers",
             "library": "the primer library (SQLite): add, list, import, export",
             "group": "group-specific primers: every inclusion genome, no exclusion",
             "index": "build a genome store (.psg) from FASTA/GenBank/EMBL/.2bit"}

#: Subcommands that are neither a family nor a tool.
OTHER_COMMANDS = ("gui", "bench", "install-desktop")


#: Families whose command-line plug-in sits above them, in the primer layer (kdiff's output
#: takes primer annotations and filters; no family imports engine.primers).
FAMILY_PLUGINS = {"kdiff": "engine.primers.cli_kdiff"}


def plugin_module(name: str) -> str:
    """The module of subcommand ``name``'s plug-in (a tool's, or a family's)."""
    return TOOLS.get(name) or FAMILY_PLUGINS.get(name, f"engine.{name}.cli")


def has_plugin(name: str) -> bool:
    """Whether family ``name`` has a command-line plug-in, importing nothing but engine."""
    from engine import registry

    package, _, leaf = plugin_module(name).rpartition(".")
    return registry.has_module(package, leaf)


def family_cli(name: str):
    return importlib.import_module(plugin_module(name))


def add_common_options(parser: argparse.ArgumentParser, fam, default_variant: str | None = None) -> None:
    """The options every family shares (``fam``: its registry.FamilySpec; ``default_variant``:
    a tool's own words for the variant it picks, when not its family's)."""
    from engine import registry

    variants = [v.name for v in fam.variants]
    cuda = fam.default_variants.get("cuda")
    cuda_only = [v.name for v in fam.variants if {b.name for b in v.backends} == {"cuda"}]
    parser.add_argument("--variant", choices=variants,
                        help=f"default: {default_variant or fam.fastest_variant}"
                             + (f" (--backend cuda: {cuda})" if cuda else "")
                             + (f"; {', '.join(cuda_only)}: --backend cuda only" if cuda_only else ""))
    offered = {b.name for v in fam.variants for b in v.backends}
    parser.add_argument("--backend", choices=[b for b in registry.BACKENDS if b in offered],
                        help="default: the fastest available")
    forms = sorted({p for v in fam.variants for b in v.backends for p in b.parallel})
    if forms:
        where: dict[tuple, list] = {}  # the forms -> the variant/backend pairs that offer them
        for v in fam.variants:
            for b in v.backends:
                if b.parallel:
                    where.setdefault(b.parallel, []).append(f"{v.name}/{b.name}")
        parser.add_argument("--parallel", choices=forms, help="parallel form: " + "; ".join(
            f"{', '.join(pairs)}: {', '.join(ps)}" for ps, pairs in where.items()))
    if fam.flags:
        parser.add_argument("--opt", action="append", metavar="NAME",
                            choices=[f.name for f in fam.flags] + ["none"],
                            help="optimisation flag, repeatable; without --opt the backend's "
                                 "defaults apply; '--opt none' switches all off")
    parser.add_argument("--threads", type=int, metavar="N", help="threads for multicore")
    if "dask" in offered:
        parser.add_argument("--scheduler-timeout", type=_seconds, metavar="S",
                            help="dask: seconds to reach --scheduler and find a worker there "
                                 "before giving up with one line (default: 10)")
    parser.add_argument("-o", "--output", metavar="OUT", help="output file (default: stdout)")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of CSV")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")


def _seconds(text: str) -> float:
    """An argparse type: a time limit in seconds, above 0 and at most an hour."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected seconds, got {text!r}") from None
    if not 0 < value <= 3600:  # (NaN fails this too)
        raise argparse.ArgumentTypeError(f"must be > 0 and <= 3600 seconds, got {text}")
    return value


def add_param_options(parser: argparse.ArgumentParser, fam,
                      only: tuple[str, ...] | None = None) -> None:
    """One option per family parameter, from the registry (name, help, range, backends);
    ``only``: just these (a tool built on the family takes its backend's, e.g. --scheduler).
    Values are checked by the registry (:func:`param_values`), not by argparse's choices,
    so a bad value reads as it does from the Python API and the GUI."""
    types = {"int": int, "float": float, "choice": str, "text": str}
    for p in fam.params:
        if only is not None and p.name not in only:
            continue
        metavar = "{" + ",".join(p.choices) + "}" if p.kind == "choice" else p.metavar or None
        text = plain(p.help)
        unset = p.backends or p.required or p.optional
        if not unset and p.default is not None:
            text += f" (default: {p.default})"
        parser.add_argument(p.flag, dest=p.name, type=types[p.kind], required=p.required,
                            metavar=metavar, default=None if unset else p.default, help=text)


def param_values(args, fam) -> dict:
    """The family parameters given on the command line, checked by the registry."""
    return {p.name: p.check(getattr(args, p.name)) for p in fam.params}


def add_gap_option(parser: argparse.ArgumentParser) -> None:
    """``--gap-min N`` of a command built on the families (pcr, panel, off-target, pairs): the
    registry's parameter (engine.gaps.GAP_MIN_PARAM); read it with :func:`gap_min_of`."""
    from engine.gaps import GAP_MIN_PARAM

    add_param_options(parser, SimpleNamespace(params=(GAP_MIN_PARAM,)))


def gap_min_of(args) -> int | None:
    """``--gap-min`` checked (one line naming the option when out of range); None when not
    given (the job then takes a genome store's own, engine.gaps.resolve_gap_min)."""
    from engine.gaps import GAP_MIN_PARAM

    return GAP_MIN_PARAM.check(args.gap_min)


def add_region_options(parser: argparse.ArgumentParser, roles: tuple[str, ...]) -> None:
    """``--<role>-region [RECORD:]START-END`` for inputs that may be cut to a region."""
    for role in roles:
        parser.add_argument(f"--{role}-region", metavar="[RECORD:]START-END",
                            help=f"only positions START-END (1-based, inclusive) of the {role} "
                                 "record named RECORD (as chr2:1000-5000), or of its only record; "
                                 "results keep the record's own id and numbering")


def load_input(args, role: str):
    """The records of positional input ``role``, cut to ``--<role>-region`` when given."""
    from engine.sequences import parse_region

    text = getattr(args, f"{role}_region", None)
    option = f"--{role.replace('_', '-')}-region"
    region = _named(option, parse_region, text) if text else None  # fails before loading
    records = load_source(getattr(args, role))
    if region is None:
        return records
    cut = _named(option, region.select, records)
    _say_clipped(f"{option} {text}", region.end, cut)
    return cut


def _named(option: str, fn, arg):
    """``fn(arg)``, a ValueError's message led by ``option`` (a command may have two regions)."""
    try:
        return fn(arg)
    except ValueError as err:
        raise ValueError(f"{option}: {err}") from None


def _say_clipped(option: str, end: int, records) -> None:
    """One warning when a region runs past a record's end: the record was cut there, and a
    silent cut let a typo pass for the region asked for."""
    from engine.sequences import SequenceWarning

    for rec in records:
        last = rec.offset + len(rec)
        if end > last:
            warnings.warn(SequenceWarning(
                f"{option} ends after {rec.id} (its last base is {last:,}): used "
                f"{rec.offset + 1:,}-{last:,}"), stacklevel=3)


def load_source(source):
    """``engine.sequences.load(source)``, or what the child that read the command's input
    files in the meantime read from it (engine.cli.preload)."""
    records = preload.take(source)
    if records is None:
        from engine.sequences import load

        records = load(source)
    return records


def selected_flags(args):
    opts = getattr(args, "opt", None)
    if not opts:
        return None
    return frozenset(o for o in opts if o != "none")


_LITERAL = re.compile(r"``([^`]*)``")
_ROLE = re.compile(r":[a-z]+:`~?([^`]*)`")
_MODULE_NOTE = re.compile(r"\s*\((?:see |default )?engine\.[\w.]+\)")
_WRITERS = re.compile(r"\s*Writers?: engine\.[\w.]+\.?")
_MODULE_IN = re.compile(r"\s*\((?:[^()]*?)engine\.[\w.]+(?:[^()]*?)\)")


def plain(text: str | None) -> str | None:
    """A docstring as ``--help`` should say it: no reStructuredText markup (````x````,
    ``:func:`x```) and no module names meant for programmers."""
    if not text:
        return text
    text = _ROLE.sub(lambda m: m.group(1).rsplit(".", 1)[-1], text)
    text = _LITERAL.sub(r"\1", text)
    text = _WRITERS.sub("", text)
    text = _MODULE_NOTE.sub("", text)
    return _MODULE_IN.sub("", text)


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The whole command line; with ``command`` (the subcommand about to run) only that
    one's plug-in is imported and given its options (the others are listed, empty):
    importing every family's package and plug-in costs start-up time a run does not need."""
    from engine import registry

    parser = _Parser(prog="primerscope",
                     description="Candidate primer regions and DNA dynamic programming, live.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {engine.__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    gui = sub.add_parser("gui", help="open the desktop application")
    gui.add_argument("--demo", action="store_true", help="load the demo data")
    gui.add_argument("--screenshot", metavar="FILE.png", help="run the demo job, save a PNG, exit")
    families = [name for name in registry.family_names() if has_plugin(name)]
    # (a family is offered on the command line once it has its cli plug-in)
    for name in (*families, *TOOLS):
        if command not in (None, name):
            sub.add_parser(name)
            continue
        plugin, tool = family_cli(name), name in TOOLS
        built_on = getattr(plugin, "FAMILY", name)  # (a tool's family; None: a command of its own)
        try:
            fam = None if built_on is None else registry.family(built_on)
        except ValueError:
            continue  # the family a tool builds on is not installed
        p = sub.add_parser(name, help=TOOL_HELP[name] if tool else fam.title,
                           description=plain(plugin.__doc__ if tool else fam.help))
        plugin.add_arguments(p)
        if fam is not None:
            add_common_options(p, fam, getattr(plugin, "DEFAULT_VARIANT", None))
            if tool:  # a tool runs on its family's backends: it takes what they need (dask's address)
                add_param_options(p, fam, only=("scheduler",))
            _remember_inputs(p)
    # Listed here for --help; the launcher hands `bench` to the benchmarks package.
    sub.add_parser("bench", help="benchmarks (primerscope bench --help)", add_help=False)
    sub.add_parser("install-desktop", add_help=False,
                   help="add primerscope to the desktop's menu (--uninstall removes it)")
    return parser


def _remember_inputs(parser: argparse.ArgumentParser) -> None:
    """Positional arguments are the inputs (files or literals) no output may overwrite."""
    dests = [a.dest for a in parser._actions if not a.option_strings and a.dest != "help"]
    parser.set_defaults(input_paths=tuple(dests))


class ProgressBar(StderrLine):
    """A job's progress bar on stderr (when it is a terminal)."""

    def __call__(self, p) -> None:
        if self.enabled:
            self.draw(self.line(p))

    @staticmethod
    def line(p) -> str:
        """What the bar says for Progress ``p``: the fraction, the time so far, the rate and,
        once a fraction is measured, the time left."""
        if p.phase == "compiling":
            message = p.message if p.message and p.message != "compiling kernels…" else \
                "compiling kernels (once; kept on disk)…"
            return message + " " * 30
        width = 30
        filled = int(width * p.fraction)
        text = (f"[{'#' * filled}{'.' * (width - filled)}] {100 * p.fraction:5.1f}% "
                f"{p.elapsed:6.1f}s")
        if p.cells:   # (a stage that counts no DP cells, such as Primer3's, shows no rate)
            text += f" {p.cells_per_second / 1e9:7.2f} Gcells/s"
        if 0 < p.fraction < 1 and p.elapsed >= 0.5:
            left = int(round(p.elapsed * (1 - p.fraction) / p.fraction))
            text += f" ETA {left // 3600}:{left // 60 % 60:02d}:{left % 60:02d}" if left >= 3600 \
                else f" ETA {left // 60}:{left % 60:02d}"
        return text


def run_family(args) -> int:
    """Check everything, run the job (interruptible, see engine.interrupts), then write."""
    from engine import registry
    from engine.jobs import CancelToken, check_threads, drive
    from engine.output import check_outputs, write_texts

    plugin = family_cli(args.command)
    check_threads(args.threads)  # (the API's check: one message)
    if getattr(args, "scheduler_timeout", None) is not None:
        from engine import config

        config.CLUSTER_CONNECT_SECONDS = args.scheduler_timeout  # (this process's one run)
    if not args.output and sys.stdout is None:
        raise UsageError("standard output is closed; give -o FILE")
    inputs = [getattr(args, dest, None) for dest in args.input_paths]
    check_outputs((args.output, getattr(args, "bed", None)), inputs)
    cuda = _start_cuda_early(plugin, args)
    if getattr(args, "backend", None) != "dask" and preload.start(inputs):
        # While a child reads the inputs, import what the job will: numba, and numba.cuda.
        importlib.import_module("engine.gpu" if cuda else "numba")
    job = plugin.make_job(args)
    iter_solve = getattr(plugin, "iter_solve", None) or registry.family_api(job.family).iter_solve
    bar = ProgressBar(not args.no_progress)
    cancel = CancelToken()
    _StartUpGC.end()
    interrupted = None
    try:
        result = interrupts.run_job(lambda: drive(iter_solve(job, cancel), bar), cancel)
    except interrupts.Interrupted as exc:
        # A family whose cancelled result is worth keeping (``partial_note``) writes it.
        if exc.result is None or not hasattr(plugin, "partial_note"):
            raise
        result, interrupted = exc.result, exc
    finally:
        bar.close()
    _StartUpGC.freeze()  # (what the job imported and set up: numba's targets, kernels)
    if args.json:
        info = result.info
        payload = {"command": args.command,  # (offtarget's family is edit, check's panel)
                   "family": info.family, "variant": info.variant, "backend": info.backend,
                   "parallel": info.parallel, "flags": list(info.flags), "threads": info.threads,
                   "seconds": info.seconds, "cells": info.cells, "comparisons": info.comparisons,
                   "complete": info.complete}
        payload.update(_writer(plugin, "to_json", args)(result))
        body = json.dumps(payload, check_circular=False) + "\n"  # (plain data: ~15% faster)
    else:  # streamed from the result's columns into the output: no copy of the whole CSV
        body = functools.partial(_writer(plugin, "write_csv", args), result)
    outputs = dict(plugin.extra_outputs(result, args)) if hasattr(plugin, "extra_outputs") else {}
    if args.output:
        outputs = {args.output: body, **outputs}
    else:
        if callable(body):
            body(sys.stdout)
        else:
            sys.stdout.write(body)
        sys.stdout.flush()
    write_texts(outputs, before_commit=interrupts.settle)
    if interrupted is not None:
        print(f"primerscope: interrupted; wrote {plugin.partial_note(result)}", file=sys.stderr)
        return interrupted.status
    return 0


def _backend_named(argv: list[str]) -> str | None:
    """The ``--backend`` value of a command line, read before argparse (and before the
    imports that building its parser takes)."""
    for i, arg in enumerate(argv):
        if arg == "--":
            break
        if arg == "--backend" and i + 1 < len(argv):
            return argv[i + 1]
        if arg.startswith("--backend="):
            return arg.partition("=")[2]
    return None


def _start_cuda_early(plugin, args) -> bool:
    """A run whose backend is cuda by default (no ``--backend``, a GPU present) starts the
    CUDA context once its options are known, while the inputs are read (``--backend cuda``
    started it first thing, in :func:`main`). Never for a CPU run, and never an error here:
    the run itself reports a GPU that fails. True for a cuda run."""
    from engine import registry

    name = getattr(plugin, "FAMILY", args.command)
    backend = getattr(args, "backend", None)
    if name is None or backend not in (None, "cuda"):
        return False
    if backend is None:
        try:
            sel = registry.resolve(registry.family(name), getattr(args, "variant", None), None,
                                   getattr(args, "parallel", None), selected_flags(args))
        except ValueError:
            return False  # make_job says why, in its own words
        if not registry.on_gpu(sel.backend):
            return False
    from engine import cuda_start

    cuda_start.start()  # (once per process: main may have started it)
    return True


def _writer(plugin, name: str, args):
    """The plug-in's writer with its command-line options bound (typed keywords)."""
    options = plugin.export_options(args) if hasattr(plugin, "export_options") else {}
    return functools.partial(getattr(plugin.export, name), **options)


def report_errors(action) -> int:
    """Run ``action()`` and turn what it raises into one line on stderr and an exit status:
    2 for bad input, 1 for a failure inside a run, 128 + the signal for an interrupt
    (130 Ctrl-C, 143 SIGTERM), 141 (as SIGPIPE) when standard output was closed early."""
    try:
        return action()
    except (interrupts.Interrupted, KeyboardInterrupt) as exc:
        interrupts.settle()
        print(interrupts.MESSAGE, file=sys.stderr)
        return exc.status if isinstance(exc, interrupts.Interrupted) else 130
    except BrokenPipeError:  # `primerscope ... | head`: the reader has all it wanted
        interrupts.settle()
        interrupts.quiet_stdout()
        return 141
    except (UsageError, ValueError) as exc:  # (engine.sequences.SequenceError is a ValueError)
        interrupts.settle()
        print(f"primerscope: error: {one_line(exc)}", file=sys.stderr)
        return 2
    except MemoryError:
        interrupts.settle()
        print("primerscope: error: out of memory", file=sys.stderr)
        return 1
    except Exception as exc:  # a failure inside a run: one line, exit 1
        interrupts.settle()
        print(f"primerscope: run failed: {type(exc).__name__}: {one_line(exc)}", file=sys.stderr)
        return 1


def one_line(message) -> str:
    """``message`` as one line: characters that end a line or do not print (a path may
    hold them: NEL, LINE SEPARATOR, a newline) are written as Python escapes."""
    text = str(message)
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


class _StartUpGC:
    """Python's cyclic garbage collector, paused while a command starts (issue #16).

    Importing numpy and numba (and numba.cuda, and setting up numba's targets) makes some
    150,000 objects that live as long as the process. Each full collection walks all of them
    (~40 ms on the 2-core machine) and the allocations of start-up (imports, reading the
    inputs, building the output) ran two or three, plus the younger generations': 80-90 ms of
    a W2 run. So the collector is off from :func:`main` until the job starts (nothing made
    before is cyclic garbage worth collecting: modules, sequence text); then what exists is
    frozen (``gc.freeze``: left out of every later collection) and collection goes on as
    usual, for a compile (numba's IR makes cycles) or a long job. What the job set up is
    frozen too, before the output is built. When :func:`main` returns, the collector is as
    it found it (tests call it in-process)."""

    active = False  # main() manages the collector (it was on when main began)
    paused = False

    @classmethod
    def begin(cls) -> None:
        cls.active = cls.paused = gc.isenabled()
        if cls.active:
            gc.disable()

    @classmethod
    def end(cls) -> None:
        """Freeze what start-up made and collect as usual from here on (idempotent)."""
        if cls.paused:
            cls.paused = False
            gc.freeze()
            gc.enable()

    @classmethod
    def freeze(cls) -> None:
        if cls.active:
            gc.freeze()

    @classmethod
    def restore(cls) -> None:
        if cls.active:
            cls.end()
            cls.active = False
            gc.unfreeze()


def main(argv=None) -> int:
    engine.configure_process()  # before numba loads (importing engine changes nothing)
    argv = list(sys.argv[1:] if argv is None else argv)
    if _backend_named(argv) == "cuda":  # first: the context is made while the rest loads
        from engine import cuda_start

        cuda_start.start()
    _StartUpGC.begin()
    from engine import numba_setup

    try:
        with warnings.catch_warnings(), numba_setup.numba_without_extras():
            warnings.showwarning = _show_warning
            command = argv[0] if argv and not argv[0].startswith("-") else None
            if command is None and not {"-h", "--help", "--version"} & set(argv):
                return report_errors(lambda: _no_command(argv))
            return report_errors(lambda: _dispatch(build_parser(command).parse_args(argv)))
    finally:
        _StartUpGC.restore()


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """A warning (duplicate ids, a file named like a literal...) as one line on stderr;
    numba's notes about its compiler are for developers and are not shown."""
    if category.__module__.split(".")[0] == "numba":
        return
    print(f"primerscope: warning: {' '.join(str(message).split())}", file=sys.stderr)


def _no_command(argv: list[str]) -> int:
    """No subcommand first: none at all, or options before it (``primerscope --json``,
    ``primerscope -k 3 kdiff ...``), where argparse would only say it does not know them."""
    from engine import registry

    names = (*registry.family_names(), *TOOLS, *OTHER_COMMANDS)
    later = next((a for a in argv if a in names), None)
    if later is None:
        raise UsageError("no command given (try: primerscope --help)")
    raise UsageError(f"options go after the command: primerscope {later} ... {argv[0]} "
                     f"(try: primerscope {later} --help)")


def _dispatch(args) -> int:
    if args.command == "gui":
        raise UsageError("the gui command is started through the app package (primerscope gui)")
    if args.command == "bench":
        raise UsageError("benchmarks run through the launcher: primerscope bench ... "
                         "(or python -m benchmarks)")
    if args.command == "install-desktop":
        raise UsageError("install-desktop runs through the launcher: primerscope install-desktop")
    plugin = family_cli(args.command)
    if getattr(plugin, "FAMILY", "") is None:
        _StartUpGC.end()
        return plugin.run(args)
    return run_family(args)
