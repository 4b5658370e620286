"""``primerscope index GENOME -o NAME.psg``: build a genome store (engine.store).

``primerscope index --check NAME.psg`` re-reads a store's payload and checks its
checksum; both print one summary line on stdout (with ``--json``, one JSON object).
"""

from __future__ import annotations

import json
import os
import sys
import time

from engine import store
from engine.cli.terminal import StderrLine
from engine.gaps import GAP_MIN, counted
from engine.jobs import check_int
from engine.output import check_outputs

FAMILY = None  # a command of its own (engine.cli runs ``run(args)``)


def add_arguments(parser) -> None:
    parser.add_argument("genome", help="FASTA (.gz and bgzip ok), GenBank, EMBL or UCSC .2bit file; "
                                       "with --check, a store (.psg)")
    parser.add_argument("-o", "--output", metavar="NAME.psg",
                        help="the store to write (default: GENOME's name with .psg, beside it)")
    parser.add_argument("--check", action="store_true",
                        help="verify an existing store (reads the payload, checks its SHA-256)")
    parser.add_argument("--gap-min", type=int, default=GAP_MIN, metavar="N",
                        help="runs of at least N N are assembly gaps that match nothing: the "
                             "store's default for the jobs that read it, which may ask for "
                             f"another (default {GAP_MIN}; every N run is recorded)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    parser.add_argument("--json", action="store_true",
                        help="print one JSON object instead of the summary line")


def store_path(genome: str, output: str | None = None) -> str:
    """Where the store of ``genome`` goes: ``output``, or by default GENOME's name with .psg,
    beside it; ValueError for a name that does not end with .psg (command line and API)."""
    if output is None:
        name = os.path.basename(genome)
        for suffix in (".gz", ".bgz"):
            if name.lower().endswith(suffix):
                name = name[:-len(suffix)]
        stem = os.path.splitext(name)[0] or name
        output = os.path.join(os.path.dirname(genome), stem + store.SUFFIX)
    if not output.lower().endswith(store.SUFFIX):
        raise ValueError(f"{output}: a genome store's name ends with {store.SUFFIX}")
    return output


class BuildProgress(StderrLine):
    """``progress(done, total)`` of a build or check, drawn as a bar on stderr when it is a
    terminal (at most ten times a second)."""

    WIDTH = 72

    def __init__(self, label: str, enabled: bool = True):
        super().__init__(enabled)
        self.label = label
        self.t0 = time.perf_counter()
        self.last = 0.0

    def __call__(self, done: int, total: int) -> None:
        now = time.perf_counter()
        if not self.enabled or now - self.last < 0.1:
            return
        self.last = now
        frac = done / total if total else 1.0
        rate = done / max(now - self.t0, 1e-9) / 1e6
        bar = "#" * int(30 * frac)
        self.draw(f"{self.label} [{bar:.<30}] {100 * frac:5.1f}% {rate:7.1f} MB/s")


def run(args) -> int:
    bar = BuildProgress("checking" if args.check else "indexing", not args.no_progress)
    t0 = time.perf_counter()
    try:
        if args.check:
            if args.output:
                raise ValueError("--check takes a store and writes nothing (drop -o)")
            info = store.verify(args.genome, bar)
            verb = "ok"
        else:
            output = store_path(args.genome, args.output or None)
            check_outputs([output], [args.genome])
            info = store.build(args.genome, output, bar,
                               check_int("gap_min", args.gap_min, 1))
            verb = "built"
    except KeyboardInterrupt:
        bar.close()
        print("primerscope: interrupted; no store written", file=sys.stderr)
        return 130
    finally:
        bar.close()
    seconds = time.perf_counter() - t0
    gaps = gap_bases = masked = None
    if info.version >= 2:
        gaps, gap_bases, masked = store.open_store(info.path).gap_counts()
    if args.json:
        print(json.dumps({"command": "index", "action": verb, "path": str(info.path),
                          "records": info.records, "bases": info.bases, "gaps": gaps,
                          "gap_bases": gap_bases, "gap_min": info.gap_min,
                          "soft_masked_bases": masked, "file_bytes": info.file_bytes,
                          "seconds": seconds, "source_sha256": info.source_sha256,
                          "format": info.version}))
        return 0
    # Bases per second: a compressed source's bytes say little, and a small genome's
    # megabytes per second rounded to whole numbers said "0 MB/s".
    rate = info.bases / max(seconds, 1e-9)
    if gaps is not None:
        tables = (f"{counted(gaps, 'gap')} ({gap_bases:,} bases in runs of >= {info.gap_min} N), "
                  f"{masked:,} soft-masked bases, ")
    else:
        tables = f"format {info.version} (no gap or mask table; rebuild to add them), "
    print(f"{info.path}: {verb}, {counted(info.records, 'record')}, {info.bases:,} bases, {tables}"
          f"{_size(info.file_bytes)}, {seconds:.2f} s ({rate / 1e6:.3g} Mbases/s), "
          f"source sha256 {info.source_sha256}")
    return 0


def _size(nbytes: int) -> str:
    """The store file's size: megabytes, or bytes below 0.1 MB (a small genome's store
    read "0.0 MB")."""
    return f"{nbytes / 1e6:.1f} MB" if nbytes >= 100_000 else f"{nbytes:,} bytes"
