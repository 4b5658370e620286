"""``primerscope bench`` from a checkout: the wheel leaves the benchmarks out, so an editable
install does not map them either; the launcher takes them from the checkout beside ``app``."""

from __future__ import annotations

import sys
from pathlib import Path

from app import launcher

ROOT = Path(__file__).resolve().parents[2]


def test_bench_is_taken_from_the_checkout(monkeypatch):
    # As under the console script: neither the checkout on sys.path nor benchmarks imported.
    monkeypatch.setattr(sys, "path", [p for p in sys.path if Path(p or ".").resolve() != ROOT])
    for name in [m for m in sys.modules if m == "benchmarks" or m.startswith("benchmarks.")]:
        monkeypatch.delitem(sys.modules, name)
    main = launcher._benchmarks()
    assert main is not None and main.__module__ == "benchmarks"
    assert Path(sys.modules["benchmarks"].__file__).resolve() == ROOT / "benchmarks" / "__init__.py"


def test_an_installation_without_benchmarks_says_so(monkeypatch, tmp_path, capsys):
    """Where app/ has no benchmarks beside it (site-packages), one line and exit 2."""
    fake_app = tmp_path / "site-packages" / "app"
    fake_app.mkdir(parents=True)
    monkeypatch.setattr(launcher, "__file__", str(fake_app / "launcher.py"))
    assert launcher._benchmarks() is None
    assert launcher._command(["bench", "--list"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "runs from a checkout" in err
