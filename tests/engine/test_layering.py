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
