"""The engine never imports Qt or pyqtgraph (napari's import-linter contract, as a test)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ENGINE = Path(__file__).resolve().parents[2] / "engine"
FORBIDDEN = ("PySide6", "PyQt5", "PyQt6", "shiboken6", "pyqtgraph", "qtpy", "superqt", "app")


def _imports(path: Path):
    tree = ast.parse(path.read_text(), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield node.lineno, node.module


def test_engine_source_has_no_gui_imports():
    offenders = []
    for path in sorted(ENGINE.rglob("*.py")):
        for lineno, name in _imports(path):
            if name.split(".")[0] in FORBIDDEN:
                offenders.append(f"{path.relative_to(ENGINE.parent)}:{lineno} imports {name}")
    assert not offenders, "engine/ must stay free of the GUI:\n" + "\n".join(offenders)


def test_importing_engine_and_cli_loads_no_qt():
    code = ("import sys, engine, engine.registry, engine.cli, engine.kdiff, benchmarks;"
            "engine.registry.families();"
            "bad=[m for m in sys.modules if m.split('.')[0] in ('PySide6','pyqtgraph','shiboken6')];"
            "print(','.join(bad))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_layering_check_catches_an_offender(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("from PySide6 import QtCore\n")
    assert [name for _, name in _imports(bad)] == ["PySide6"]


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


def _family(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in FAMILIES else None


def test_no_family_imports_another_family():
    offenders = []
    for module, imports in _engine_graph(top_level_only=False).items():
        mine = _family(module)
        for name in imports:
            theirs = _family(name)
            if mine and theirs and theirs != mine:
                offenders.append(f"{module} imports {name}")
    assert not offenders, "families sit side by side; share code through engine/:\n" + "\n".join(
        sorted(offenders))


def test_engine_imports_neither_benchmarks_nor_peers():
    offenders = []
    for path in sorted(ENGINE.rglob("*.py")):
        for lineno, name in _imports(path):
            if name.split(".")[0] in ("benchmarks", "edlib", "rapidfuzz", "parasail"):
                offenders.append(f"{path.relative_to(ENGINE.parent)}:{lineno} imports {name}")
    assert not offenders, "\n".join(offenders)


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
