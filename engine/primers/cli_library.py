"""The primer library: primers kept between runs (SQLite), with CSV, order sheet and GenBank exports.

``primerscope library [--library DB] add|list|remove|export|import ...``. Without
--library, the library in the user's data directory (engine.primers.library.default_path).
"""

from __future__ import annotations

import json
import sys
import time

from engine.cli.terminal import StderrLine
from engine.output import check_outputs, write_text

FAMILY = None  # a command of its own (engine.cli runs ``run(args)``)


def add_arguments(parser) -> None:
    parser.add_argument("--library", metavar="DB",
                        help="the library file (default: the user's data directory)")
    actions = parser.add_subparsers(dest="action", metavar="ACTION", parser_class=type(parser))
    add = actions.add_parser("add", help="add a primer")
    add.add_argument("--name", required=True)
    add.add_argument("--sequence", required=True, help="5'->3' (IUPAC codes allowed)")
    add.add_argument("--orientation", choices=("forward", "reverse"), default="")
    add.add_argument("--target-id", default="", help="the record it was designed on")
    add.add_argument("--start", dest="target_start", type=int, help="1-based start on the target")
    add.add_argument("--end", dest="target_end", type=int, help="1-based inclusive end")
    add.add_argument("-k", type=int, help="the k it was checked at")
    add.add_argument("--background", default="", help="the background it was checked against")
    add.add_argument("--tm", type=float, help="default: Primer3's Tm (plain ACGT primers)")
    add.add_argument("--gc", dest="gc_percent", type=float, help="default: computed")
    add.add_argument("--notes", default="")
    lst = actions.add_parser("list", help="list the primers (CSV, or --json)")
    lst.add_argument("--json", action="store_true", help='one JSON object: {"primers": [...]}')
    lst.add_argument("-o", "--output", metavar="OUT", help="output file (default: stdout)")
    rm = actions.add_parser("remove", help="remove primers by name")
    rm.add_argument("names", nargs="+", metavar="NAME")
    ex = actions.add_parser("export", help="export: csv, an order sheet, or the target as GenBank")
    ex.add_argument("--format", choices=("csv", "order", "genbank"), default="csv")
    ex.add_argument("--target", metavar="FILE", help="genbank: the target the primers bind")
    ex.add_argument("--scale", default="25nm", help="order sheet: synthesis scale (25nm)")
    ex.add_argument("--purification", default="STD", help="order sheet: purification (STD)")
    ex.add_argument("-o", "--output", metavar="OUT", help="output file (default: stdout)")
    im = actions.add_parser("import", help="add the primers of a CSV (an export's columns)")
    im.add_argument("file", metavar="FILE.csv")


def _entry(args):
    from engine.primers.library import LibraryEntry

    tm, gc = args.tm, args.gc_percent
    if tm is None or gc is None:
        from engine.primers.annotate import annotate

        seq = args.sequence.strip().upper()
        if seq and set(seq) <= set("ACGTU"):
            note = annotate(seq.replace("U", "T"))
            tm = note.tm if tm is None else tm
            gc = round(note.gc_percent, 2) if gc is None else gc
    return LibraryEntry(args.name, args.sequence, args.orientation, args.target_id,
                        args.target_start, args.target_end, args.k, args.background, tm, gc,
                        args.notes)


def _emit(text: str, output) -> None:
    if output:
        write_text(output, text)
    else:
        sys.stdout.write(text)
        sys.stdout.flush()


def _read_csv(path: str) -> str:
    """The text of an import's CSV; one line for a path that is not a readable file."""
    from engine.sequences import reading_errors

    with (reading_errors(path, ValueError, "a CSV file"),
          open(path, encoding="utf-8-sig", errors="replace") as fh):
        return fh.read()


class _ImportProgress(StderrLine):
    """Rows inserted so far, on standard error when it is a terminal."""

    WIDTH = 60

    def __call__(self, done: int, total: int) -> None:
        if self.enabled:
            self.draw(f"importing: {done:,} of {total:,} rows")


def run(args) -> int:
    from dataclasses import asdict

    from engine.primers.library import Library

    if args.action is None:
        raise ValueError("library needs an action: add, list, remove, export or import")
    output = getattr(args, "output", None)
    if output:
        check_outputs([output], [args.library, getattr(args, "target", None)])
    if args.action == "import":
        text = _read_csv(args.file)
    if args.action == "export" and args.format == "genbank" and not args.target:
        raise ValueError("--format genbank needs --target FILE (the sequence the primers bind)")
    from engine import interrupts

    # Reading commands never write (read-only media, another application's file); a
    # change is settled just before its COMMIT: a signal after that cannot make the
    # message say that nothing happened.
    with Library(args.library, readonly=args.action in ("list", "export"),
                 before_commit=interrupts.settle) as lib:
        if args.action == "add":
            e = lib.add(_entry(args))
            print(f"added {e.name} to {lib.path}", file=sys.stderr)
        elif args.action == "remove":
            n = lib.remove(args.names)
            print(f"removed {n} primer(s) from {lib.path}", file=sys.stderr)
        elif args.action == "import":
            t0 = time.perf_counter()
            bar = _ImportProgress()
            try:
                n = lib.import_csv(text, args.file, bar)
            finally:
                bar.close()
            rate = n / max(time.perf_counter() - t0, 1e-9)
            print(f"imported {n} primer(s) into {lib.path} ({rate:,.0f} rows/s)",
                  file=sys.stderr)
        elif args.action == "list":
            if args.json:
                _emit(json.dumps({"library": str(lib.path),
                                  "primers": [asdict(e) for e in lib.entries()]}) + "\n", output)
            else:
                _emit(lib.csv_text(), output)
        else:  # export
            if args.format == "csv":
                text = lib.csv_text()
            elif args.format == "order":
                text = lib.order_sheet_text(scale=args.scale, purification=args.purification)
            else:
                from engine.sequences import load

                text = lib.genbank_text(load(args.target))
            _emit(text, output)
    return 0
