"""Group-specific primers: pairs that amplify every inclusion genome and nothing in the exclusion set.

``primerscope group --include GENOME... --exclude BACKGROUND... -k K [--include-edits 1]
[--include-3prime-exact 3] [--min-coverage 1.0] [--product-size 100-300] [--num-return 10]
[--reference NAME] [--bed OUT.bed]``, with the Primer3 options of ``pairs``. Each genome is a
FASTA/GenBank/EMBL/.2bit file (.gz ok, a draft of many contigs) or a .psg store.
Writers: engine.primers.group.
"""

from __future__ import annotations

import warnings

from engine.cli import add_gap_option, gap_min_of
from engine.primers import group
from engine.primers import group as export  # noqa: F401  (the writers: engine.cli's plug-in contract)
from engine.primers.cli_options import add_design_options, design_values, integer, real
from engine.primers.group import iter_solve  # noqa: F401  (the plug-in's job generator)
from engine.primers.primer3_design import MAX_NUM_RETURN, DesignSettings, parse_product_ranges
from engine.sequences import SequenceWarning

FAMILY = "edit"  # the family whose backends run the in-silico PCR and the exclusivity search
DEFAULT_VARIANT = "the edit family's, per search (myers for primers of up to 64 nt)"


def add_arguments(parser) -> None:
    parser.add_argument("--include", nargs="+", required=True, metavar="GENOME",
                        help="inclusion genomes (at least two): every one should give a product")
    parser.add_argument("--exclude", nargs="+", required=True, metavar="BACKGROUND",
                        help="exclusion backgrounds: no primer within K-1 edits of any of them")
    parser.add_argument("-k", dest="k", type=integer(1, 64), required=True, metavar="K",
                        help="each primer at least K edits from every exclusion substring "
                             "(both strands)")
    parser.add_argument("--include-edits", type=integer(0, 64), default=1, metavar="J",
                        help="a primer may bind an inclusion genome with up to J edits (default 1)")
    parser.add_argument("--include-3prime-exact", type=integer(0, 64), default=3, metavar="N",
                        help="its 3'-most N bases match exactly there (default 3)")
    parser.add_argument("--min-coverage", type=real(0.0, 1.0), default=1.0, metavar="F",
                        help="the fraction of inclusion genomes that must give a product "
                             "(default 1.0: all)")
    parser.add_argument("--product-size", default="100-300", metavar="A-B",
                        help="product size range (default 100-300)")
    parser.add_argument("--num-return", type=integer(1, MAX_NUM_RETURN), default=10, metavar="N",
                        help=f"pairs to report (default 10; at most {MAX_NUM_RETURN})")
    parser.add_argument("--reference", metavar="NAME",
                        help="the inclusion genome (file stem) whose coordinates and Primer3 "
                             "penalties rank the pairs (default: the first)")
    parser.add_argument("--bed", metavar="FILE", help="also write the pairs as BED12 "
                                                      "(reference coordinates)")
    add_gap_option(parser)
    add_design_options(parser)


def make_job(args):
    from engine.output import check_outputs

    check_outputs((args.output, args.bed), tuple(args.include) + tuple(args.exclude))
    ranges = parse_product_ranges(args.product_size)
    if len(ranges) != 1:
        raise ValueError(f"--product-size takes one range A-B, got {args.product_size!r}")
    if args.min_coverage <= 0:
        raise ValueError("--min-coverage must be above 0")
    design = DesignSettings(product_ranges=ranges, num_return=args.num_return,
                            **design_values(args))
    settings = group.GroupSettings(
        include_edits=args.include_edits, include_3prime_exact=args.include_3prime_exact,
        min_coverage=args.min_coverage, product_size=ranges[0], num_return=args.num_return,
        reference=args.reference, pairs=group.PairSettings(design=design))
    return group.make_job(args.include, args.exclude, args.k, settings, backend=args.backend,
                          threads=args.threads, scheduler=args.scheduler,
                          gap_min=gap_min_of(args))


def partial_note(result) -> str:
    """What an interrupted run writes (engine.cli): the pairs verified before the cancel."""
    return f"the {len(result.pairs)} group pairs verified so far"


def extra_outputs(result, args) -> dict:
    if result.complete and not result.pairs:  # the CSV is a header alone: say why
        warnings.warn(SequenceWarning(f"no group pairs: {'; '.join(result.diagnosis)}"),
                      stacklevel=2)
    return {args.bed: lambda fh: group.write_bed(result, fh)} if args.bed else {}
