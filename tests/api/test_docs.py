"""Documentation that runs (issue #31, item 5): the README's Python examples, the tutorial
and every docstring example in the engine are doctests, run here from the repository root
(the examples read resources/demo by relative path)."""

from __future__ import annotations

import doctest
import importlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def _modules_with_examples() -> list[str]:
    """Every engine module whose source holds a ``>>>`` example (found, not listed: a new
    example is run without touching this file)."""
    found = []
    for path in sorted((ROOT / "engine").rglob("*.py")):
        if ">>>" in path.read_text():
            parts = path.relative_to(ROOT).with_suffix("").parts
            found.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return found


MODULES = _modules_with_examples()


def test_the_families_examples_are_among_them():
    assert {"engine.kdiff", "engine.kmismatch", "engine.edit", "engine.lcs", "engine.nw",
            "engine.sequences", "engine.api", "engine.primers.pcr"} <= set(MODULES)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name, monkeypatch):
    monkeypatch.chdir(ROOT)
    result = doctest.testmod(importlib.import_module(name), optionflags=FLAGS, verbose=False)
    assert result.attempted > 0, name
    assert result.failed == 0, name


@pytest.mark.parametrize("page", ["README.md", "docs/tutorial.md"])
def test_pages_run(page, monkeypatch):
    monkeypatch.chdir(ROOT)
    result = doctest.testfile(str(ROOT / page), module_relative=False, optionflags=FLAGS,
                              verbose=False)
    assert result.attempted > 0, page
    assert result.failed == 0, page
