"""``primerscope offtarget PRIMER BACKGROUND --max-edits D``: where would a primer still bind?

CSV columns: record_id,start,end,strand,edits,edits_3prime,cigar,primer,site
(1-based, inclusive, forward-strand coordinates; primer and site in primer orientation).
"""

from __future__ import annotations

import dataclasses
from types import SimpleNamespace

from engine.cli import (add_gap_option, add_param_options, add_region_options, gap_min_of,
                        load_input, selected_flags)
from engine.primers import offtarget
from engine.primers.pcr import MAX_EDITS
from engine.sequences import load

export = offtarget  # its writers (engine.cli's plug-in contract)

FAMILY = "edit"  # the family whose variants, backends and search do the work


def add_arguments(parser) -> None:
    add_region_options(parser, ('background',))
    parser.add_argument("primer", help="the candidate primer: a literal or a file (first record)")
    parser.add_argument("background", help="FASTA/GenBank/EMBL file (.gz ok) or a literal")
    # (pcr's parameter, checked by offtarget.make_job: the API's words for a bad value)
    add_param_options(parser, SimpleNamespace(params=(dataclasses.replace(
        MAX_EDITS, help="report every site within D edits, both strands"),)))
    add_gap_option(parser)


def _primer(args):
    return load(args.primer)[0]


def make_job(args):
    primer = _primer(args)
    if selected_flags(args):
        raise ValueError("offtarget takes no --opt flags")
    return offtarget.make_job(primer, load_input(args, "background"), args.max_edits, variant=args.variant,
                              backend=args.backend, threads=args.threads, scheduler=args.scheduler,
                              gap_min=gap_min_of(args))


def export_options(args) -> dict:
    """The writers' ``primer``: the primer's text, as make_job read it."""
    return {"primer": _primer(args).text}
