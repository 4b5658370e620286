"""The engine's layers: import-linter's contracts in pyproject.toml (engine never imports the
app or Qt, the families sit side by side, primers above them, executors below), run here and
by scripts/run-tests; and what the contracts cannot say: no Qt at run time (the command line
imports its plug-ins by name) and no import cycle at module level."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ENGINE = ROOT / "engine"

LINT_IMPORTS = ("import sys; from importlinter.cli import lint_imports_command; "
                "sys.exit(lint_imports_command())")


def _lint_imports(cwd: Path, config: Path) -> subprocess.CompletedProcess:
    environ = {**os.environ, "PYTHONPATH": str(cwd)}
    return subprocess.run([sys.executable, "-c", LINT_IMPORTS, "--config", str(config),
                           "--no-cache"], cwd=cwd, env=environ, capture_output=True,
                          text=True, timeout=300)


def test_the_import_contracts_are_kept():
    pytest.importorskip("importlinter")
    done = _lint_imports(ROOT, ROOT / "pyproject.toml")
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "0 broken" in done.stdout


# A miniature of the tree, one offender per contract: each must be reported broken.
_OFFENDERS = {
    "engine/__init__.py": "",
    "engine/qt.py": "import PySide6\n",
    "engine/peers.py": "def f():\n    import edlib\n",
    "engine/primers/__init__.py": "",
    "engine/kdiff/__init__.py": "from engine.primers import filters\n",
    "engine/primers/filters.py": "",
    "engine/kmismatch/__init__.py": "",
    "engine/lcs/__init__.py": "def f():\n    from engine.kmismatch import spec\n",
    "engine/kmismatch/spec.py": "",
    "engine/edit/__init__.py": "",
    "engine/nw/__init__.py": "",
    "engine/executors/__init__.py": "from engine import edit\n",
    "app/__init__.py": "",
    "benchmarks/__init__.py": "",
    "PySide6/__init__.py": "",
    "edlib/__init__.py": "",
}


def test_the_contracts_catch_an_offender_of_each(tmp_path):
    pytest.importorskip("importlinter")
    for path, text in _OFFENDERS.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text)
    config = tmp_path / "pyproject.toml"
    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    lines = ["[tool.importlinter]", f"root_packages = {json.dumps(contracts['root_packages'])}",
             "include_external_packages = true"]
    for contract in contracts["contracts"]:
        lines.append("[[tool.importlinter.contracts]]")
        lines += [f"{key} = {json.dumps(value)}" for key, value in contract.items()]
    config.write_text("\n".join(lines) + "\n")
    done = _lint_imports(tmp_path, config)
    assert done.returncode == 1, done.stdout
    report = done.stdout
    assert f"Contracts: 0 kept, {len(contracts['contracts'])} broken." in report, report
    for offence in ("engine.qt -> PySide6", "engine.peers -> edlib",
                    "engine.kdiff -> engine.primers.filters",
                    "engine.lcs -> engine.kmismatch.spec", "engine.executors -> engine.edit"):
        assert offence in report, (offence, report)


def test_importing_engine_and_cli_loads_no_qt():
    code = ("import sys, engine, engine.registry, engine.cli, engine.kdiff, benchmarks;"
            "engine.registry.families();"
            "bad=[m for m in sys.modules if m.split('.')[0] in ('PySide6','pyqtgraph','shiboken6')];"
            "print(','.join(bad))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


FAMILIES = ("kdiff", "kmismatch", "lcs", "edit", "nw")


def _module_name(path: Path) -> str:
    rel = path.relative_to(ENGINE.parent).with_suffix("")
    parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
    return ".".join(parts)


def _engine_graph(top_level_only: bool) -> dict[str, set[str]]:
    """module -> engine modules it imports (at module level only, when asked: the imports
    that run at import time and so can form a cycle)."""
    graph = {}
    for path in sorted(ENGINE.rglob("*.py")):
        tree = ast.parse(path.read_text(), filename=str(path))
        nodes = tree.body if top_level_only else list(ast.walk(tree))
        names = set()
        for node in nodes:
            if isinstance(node, ast.Import):
                names.update(a.name for a in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names.add(node.module)
                names.update(f"{node.module}.{a.name}" for a in node.names)
        graph[_module_name(path)] = {n for n in names if n.split(".")[0] == "engine"}
    return graph


def test_no_import_cycles_at_module_level():
    graph = _engine_graph(top_level_only=True)
    known = set(graph)

    def targets(module):
        # "from engine.x import y" names engine.x.y: a module if one exists, else engine.x
        out = set()
        for name in graph[module]:
            while name and name not in known:
                name = name.rpartition(".")[0]
            if name and name != module and not module.startswith(name + "."):
                out.add(name)
        return out

    state, stack, cycles = {}, [], []

    def visit(m):
        state[m] = "open"
        stack.append(m)
        for t in targets(m):
            if state.get(t) == "open":
                cycles.append(" -> ".join(stack[stack.index(t):] + [t]))
            elif t not in state:
                visit(t)
        stack.pop()
        state[m] = "done"

    for m in sorted(graph):
        if m not in state:
            visit(m)
    assert not cycles, "import cycles:\n" + "\n".join(cycles)
