"""``primerscope kdiff TARGET BACKGROUND -k K`` (CSV: target_id,start,end,length,sequence).

Options from engine.primers add annotation columns after the standard ones, filter
candidates, or merge overlapping candidates into regions (CSV and BED). The writers are
:mod:`engine.primers.export_kdiff`. The plug-in lives here, a layer above the kdiff family,
because the annotations are the primer layer's (no family imports engine.primers).
"""

from __future__ import annotations

import sys
import warnings

from engine import kdiff
from engine.cli import add_param_options, add_region_options, load_input, param_values, selected_flags
from engine.primers import export_kdiff as export
from engine.sequences import SequenceWarning
from engine.primers.cli_options import (add_filter_options, add_mask_option, conditions_from,
                                        filters_from)


def add_arguments(parser) -> None:
    add_region_options(parser, ('target', 'background'))
    parser.add_argument("target", help="FASTA/GenBank/EMBL file (.gz ok) or a literal sequence")
    parser.add_argument("background", help="FASTA/GenBank/EMBL file (.gz ok) or a literal sequence")
    add_param_options(parser, kdiff.SPEC)
    parser.add_argument("--merge", action="store_true",
                        help="output regions of overlapping candidates instead of candidates")
    parser.add_argument("--bed", metavar="FILE", help="also write the merged regions as BED")
    add_filter_options(parser)
    add_mask_option(parser)


def make_job(args):
    params = param_values(args, kdiff.SPEC)
    export_options(args)  # check the primer options before the (possibly long) run
    target = load_input(args, "target")
    background = load_input(args, "background")
    return kdiff.make_job(target, background, variant=args.variant, backend=args.backend,
                          parallel=args.parallel, flags=selected_flags(args), threads=args.threads,
                          count_comparisons=True, avoid_masked=args.avoid_masked, **params)


def report_background(summary) -> None:
    """The background's gaps and ambiguity codes, one line on stderr when it has any, and
    one warning when N runs shorter than --gap-min can hide candidates."""
    if summary is None:
        return
    if summary.gaps or summary.ambiguous:
        print(f"primerscope: background: {summary.line()}", file=sys.stderr)
    if summary.warning():
        warnings.warn(SequenceWarning(summary.warning()), stacklevel=2)


def export_options(args) -> dict:
    """The writers' keyword options from the command line."""
    return {"annotate": args.annotate, "conditions": conditions_from(args),
            "filters": filters_from(args), "merge": args.merge}


def extra_outputs(result, args) -> dict:
    """``--bed FILE``: the regions of the candidates the filters keep. (Also where the
    background's summary line goes to stderr: after the run, before the files are written.)"""
    report_background(result.background_summary)
    if not args.bed:
        return {}
    options = export_options(args)
    del options["merge"]
    return {args.bed: export.result_bed_text(result, **options)}
