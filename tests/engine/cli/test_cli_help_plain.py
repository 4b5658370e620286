"""``--help`` speaks to users (issue 32): no reStructuredText and no module names."""

from __future__ import annotations

import re

import pytest

from engine.cli import TOOLS, build_parser, plain
from engine import registry

LEAKS = re.compile(r"``|:(?:func|mod|class|meth|data):`|\bengine\.[a-z_]+|\bapp\.[a-z_]+")
COMMANDS = [n for n in registry.family_names() if registry.has_module(f"engine.{n}", "cli")] \
    + list(TOOLS) + ["index"]


def test_plain_drops_markup_and_module_names():
    assert plain("``primerscope pairs T B``. Writers: engine.primers.export_pairs.") == \
        "primerscope pairs T B."
    assert plain("the store (engine.store) and :func:`engine.kdiff.iter_solve`") == \
        "the store and iter_solve"
    assert plain("0 picks the default (engine.config.NW_CUDA_THREADS_PER_BLOCK)") == \
        "0 picks the default"


@pytest.mark.parametrize("command", COMMANDS)
def test_help_has_no_markup_or_module_names(command):
    parser = build_parser(command)
    sub = next(a for a in parser._actions if hasattr(a, "choices") and isinstance(a.choices, dict))
    text = sub.choices[command].format_help()
    assert not LEAKS.search(text), LEAKS.search(text).group(0)


def test_the_command_list_gives_every_subcommand_one_short_line():
    """``primerscope --help``: each subcommand a phrase like the families' titles (the tools'
    lines were their docstrings' first lines: a usage line, whole sentences)."""
    from engine.cli import TOOL_HELP

    text = build_parser().format_help()
    for name in TOOLS:
        assert TOOL_HELP[name] in " ".join(text.split()), name
        assert len(TOOL_HELP[name]) <= 64 and not TOOL_HELP[name].endswith(".")
    assert "primerscope offtarget PRIMER" not in text


@pytest.mark.parametrize("argv, message", [
    (["--json"], "no command given (try: primerscope --help)"),
    (["-k", "3"], "no command given (try: primerscope --help)"),
    (["--json", "kdiff", "a.fa", "b.fa"],
     "options go after the command: primerscope kdiff ... --json (try: primerscope kdiff --help)"),
])
def test_options_before_the_command_say_so(capsys, argv, message):
    from engine.cli import main

    assert main(argv) == 2
    assert capsys.readouterr().err == f"primerscope: error: {message}\n"


def test_the_backend_and_parallel_choices_are_the_familys_own():
    """lcs and nw offered --backend dask (and --scheduler-timeout), then refused it; --parallel
    said "(multicore/cuda)" where nw's forms are cuda's only."""
    def options(command):
        parser = build_parser(command)
        sub = next(a for a in parser._actions if hasattr(a, "choices")
                   and isinstance(a.choices, dict))
        return {o: a for a in sub.choices[command]._actions for o in a.option_strings}

    for name in registry.family_names():
        fam, opts = registry.family(name), options(name)
        offered = {b.name for v in fam.variants for b in v.backends}
        assert set(opts["--backend"].choices) == offered, name
        assert ("--scheduler-timeout" in opts) == ("dask" in offered), name
    assert "dask" not in options("lcs")["--backend"].choices
    assert options("nw")["--parallel"].help == ("parallel form: diagonal/cuda, prefix/cuda: "
                                                "multi-block, one-block")
