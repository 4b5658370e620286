"""``primerscope kmismatch TEXT PATTERNS -k K``.

CSV columns: ``pattern_id,record_id,start,end,strand,mismatches,matched`` (1-based,
inclusive ends; '-' hits in forward coordinates, ``matched`` read on that strand).
PATTERNS is a FASTA/GenBank/EMBL file with one pattern per record, a literal
sequence, or several literals separated by commas.
"""

from __future__ import annotations

import os

from engine import kmismatch
from engine.cli import add_param_options, add_region_options, load_input, load_source, param_values
from engine.kmismatch import export as export  # the writers (engine.cli's plug-in contract)
from engine.sequences import Record, encode


def add_arguments(parser) -> None:
    add_region_options(parser, ('text',))
    parser.add_argument("text", help="FASTA/GenBank/EMBL file (.gz ok) or a literal sequence")
    parser.add_argument("patterns", help="file with one pattern per record, a literal, or "
                                         "literals separated by commas")
    add_param_options(parser, kmismatch.SPEC)


def load_patterns(source: str):
    """Pattern records from a file, a literal, or comma-separated literals."""
    if not source.strip():
        raise ValueError("empty pattern set: PATTERNS is empty")
    if "," in source and not os.path.exists(source):
        parts = [p.strip() for p in source.split(",")]
        if any(not p for p in parts):
            raise ValueError(f"empty pattern in the list {source!r}")
        return [Record(f"literal{n}", encode(part, record_id=f"literal{n}"), "", "<literal>")
                for n, part in enumerate(parts, start=1)]
    return load_source(source)


def make_job(args):
    params = param_values(args, kmismatch.SPEC)
    patterns = load_patterns(args.patterns)
    text = load_input(args, "text")
    return kmismatch.make_job(patterns, text, variant=args.variant, backend=args.backend,
                              threads=args.threads, **params)
