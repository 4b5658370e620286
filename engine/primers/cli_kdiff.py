"""``primerscope kdiff TARGET BACKGROUND -k K`` (CSV: target_id,start,end,length,sequence).

``--all-k K`` instead: every k in 1..K in one scan, a row per start (CSV: target_id, start,
len_k1 .. len_kK), with ``--bedgraph PREFIX`` / ``--bigwig PREFIX`` tracks (one per k).

Options from engine.primers add annotation columns after the standard ones, filter
candidates, or merge overlapping candidates into regions (CSV and BED). The writers are
:mod:`engine.primers.export_kdiff`. The plug-in lives here, a layer above the kdiff family,
because the annotations are the primer layer's (no family imports engine.primers).
"""

from __future__ import annotations

import os
import sys
import warnings
from dataclasses import dataclass, field

from engine import kdiff
from engine.cli import (UsageError, add_param_options, add_region_options, load_input, param_values,
                        selected_flags)
from engine.jobs import CancelToken, Job, Progress, now
from engine.output import check_outputs
from engine.primers import Conditions, Filters, export_kdiff as export
from engine.sequences import SequenceWarning
from engine.primers.cli_options import (add_filter_options, add_mask_option, conditions_from,
                                        filters_from)
from engine.primers.filters import to_annotate


def add_arguments(parser) -> None:
    add_region_options(parser, ('target', 'background'))
    parser.add_argument("target", help="FASTA/GenBank/EMBL file (.gz ok) or a literal sequence")
    parser.add_argument("background", help="FASTA/GenBank/EMBL file (.gz ok) or a literal sequence")
    add_param_options(parser, kdiff.SPEC)
    for action in parser._actions:  # -k or --all-k: make_job checks that one is given
        if action.dest == "k":
            action.required = False
    parser.add_argument("--all-k", type=int, metavar="K",
                        help="every k in 1..K in one scan: the candidate length per start and k "
                             "(instead of -k)")
    parser.add_argument("--bedgraph", metavar="PREFIX",
                        help="with --all-k: write PREFIX.k1.bedGraph ... (candidate length per start)")
    parser.add_argument("--bigwig", metavar="PREFIX",
                        help="with --all-k: write PREFIX.k1.bigWig ... (needs pyBigWig)")
    parser.add_argument("--merge", action="store_true",
                        help="output regions of overlapping candidates instead of candidates")
    parser.add_argument("--bed", metavar="FILE", help="also write the merged regions as BED")
    add_filter_options(parser)
    add_mask_option(parser)


def _check_all_k(args) -> None:
    """-k or --all-k (one of them); the tracks come with --all-k, the one-k options without."""
    if args.all_k is None:
        if args.k is None:
            raise UsageError("kdiff needs -k K (or --all-k K)")
        for option, given in (("--bedgraph", args.bedgraph), ("--bigwig", args.bigwig)):
            if given:
                raise UsageError(f"{option} needs --all-k K")
        return
    if args.k is not None:
        raise UsageError("give -k K or --all-k K, not both")
    if args.all_k < 1:
        raise UsageError(f"--all-k must be >= 1, got {args.all_k}")
    one_k = [name for name, given in (("--merge", args.merge), ("--bed", args.bed),
                                      ("--annotate", args.annotate),
                                      ("--filter", filters_from(args) is not None)) if given]
    if one_k:
        raise UsageError(f"{one_k[0]} works on the candidates of one k; --all-k writes lengths")
    if args.bigwig:
        from engine.kdiff.landscape_table import have_pybigwig

        if not have_pybigwig():
            raise UsageError("--bigwig needs pyBigWig (pip install 'primerscope[bigwig]')")
    args.k = args.all_k


@dataclass(frozen=True)
class AnnotatedJob:
    """``--annotate``/``--filter``: the kdiff job, then the annotations its writers read."""

    kdiff: Job
    annotate: bool
    conditions: Conditions
    filters: Filters | None


@dataclass(frozen=True)
class AnnotatedResult(kdiff.KdiffResult):
    """A kdiff result and its candidates' annotations (``{sequence: Annotation}``, under the
    command line's conditions), which the CSV, JSON and BED writers all read."""

    annotations: dict = field(default_factory=dict)


def make_job(args):
    _check_all_k(args)
    params = param_values(args, kdiff.SPEC)
    options = export_options(args)  # check the primer options before the (possibly long) run
    if args.all_k is not None:
        check_outputs(list(track_paths(args)), [args.target, args.background])
    job = kdiff.make_job(load_input(args, "target"), load_input(args, "background"),
                         variant=args.variant, backend=args.backend, parallel=args.parallel,
                         flags=selected_flags(args), threads=args.threads,
                         count_comparisons=True, avoid_masked=args.avoid_masked,
                         all_k=args.all_k is not None, **params)
    if not (options["annotate"] or options["filters"]):
        return job
    return AnnotatedJob(job, options["annotate"], options["conditions"], options["filters"])


def iter_solve(job, cancel: CancelToken):
    """kdiff's run; for an :class:`AnnotatedJob` then the Primer3 annotations of its
    candidates, each distinct sequence once, in child processes (as the window's,
    :func:`~engine.primers.annotate_children.annotate_in_children`: one a core, ended on a
    cancel), made once for every writer (the CSV or JSON, and ``--bed``)."""
    if not isinstance(job, AnnotatedJob):
        return (yield from kdiff.iter_solve(job, cancel))
    from engine.primers.annotate_children import annotate_in_children

    result = yield from kdiff.iter_solve(job.kdiff, cancel)
    start = now()
    annotating = annotate_in_children(to_annotate(result.candidates, job.annotate, job.filters),
                                      job.conditions, cancel)
    try:
        while True:  # Primer3's fractions done, as the bar's Progress
            fraction = next(annotating)
            yield Progress(round(1000 * fraction), 1000, 0, 0, now() - start,
                           message="Primer3 annotations")
    except StopIteration as stop:
        known = stop.value
    finally:
        annotating.close()
    return result if known is None else AnnotatedResult(**vars(result), annotations=known)


def track_paths(args):
    """The track files --bedgraph and --bigwig name (one per k)."""
    for prefix, ext in ((args.bedgraph, "bedGraph"), (args.bigwig, "bigWig")):
        if prefix:
            yield from (f"{prefix}.k{k}.{ext}" for k in range(1, args.all_k + 1))


def report_background(summary) -> None:
    """The background's gaps and ambiguity codes, one line on stderr when it has any, and
    one warning when N runs shorter than --gap-min can hide candidates."""
    if summary is None:
        return
    if summary.gaps or summary.ambiguous:
        print(f"primerscope: background: {summary.line()}", file=sys.stderr)
    if summary.warning():
        warnings.warn(SequenceWarning(summary.warning()), stacklevel=2)


def report_empty(result) -> None:
    """A finished run without a candidate says why on stderr (its CSV is a header alone)."""
    if result.landscape is None and result.info.complete and not len(result.candidates):
        warnings.warn(SequenceWarning(
            f"no candidate: from every start, the rest of the target lies within {result.k - 1} "
            f"edits of the background (nothing in it is {result.k} edits away); lower -k, or "
            f"check that the background does not hold the target"), stacklevel=2)


def export_options(args) -> dict:
    """The writers' keyword options from the command line."""
    return {"annotate": args.annotate, "conditions": conditions_from(args),
            "filters": filters_from(args), "merge": args.merge}


def extra_outputs(result, args) -> dict:
    """``--bed FILE``: the regions of the candidates the filters keep. (Also where the
    background's summary line goes to stderr: after the run, before the files are written.)"""
    report_background(result.background_summary)
    report_empty(result)
    if result.landscape is not None:
        return track_outputs(result.landscape, args)
    if not args.bed:
        return {}
    options = export_options(args)
    del options["merge"]
    return {args.bed: export.result_bed_text(result, **options)}


def track_outputs(land, args) -> dict:
    """--bedgraph's texts, for the CLI to write with the main output; --bigwig's files are
    written here (pyBigWig writes them itself), each to a temporary renamed into place."""
    if args.bigwig:
        tmp = f"{args.bigwig}.primerscope-tmp"
        for k, path in zip(land.k, land.write_bigwigs(tmp)):
            os.replace(path, f"{args.bigwig}.k{k}.bigWig")
    return land.bedgraph_files(args.bedgraph) if args.bedgraph else {}
