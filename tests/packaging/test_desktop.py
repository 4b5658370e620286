"""``primerscope install-desktop [--uninstall]`` (issue #31, Packaging): a freedesktop entry and
the icon in $XDG_DATA_HOME that start this environment's primerscope."""

from __future__ import annotations

import configparser
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app import desktop
from app.paths import ICON

ROOT = Path(__file__).resolve().parents[2]


def unescape(value: str) -> str:
    """A string value as the Desktop Entry spec reads it (\\s \\n \\t \\r \\\\)."""
    escapes = {"s": " ", "n": "\n", "t": "\t", "r": "\r", "\\": "\\"}
    out, chars = [], iter(value)
    for c in chars:
        out.append(escapes[next(chars)] if c == "\\" else c)
    return "".join(out)


def read_entry(path: Path) -> dict[str, str]:
    """The [Desktop Entry] group, its values unescaped."""
    parser = configparser.ConfigParser(interpolation=None, delimiters=("=",))
    parser.optionxform = str  # keys are case-sensitive
    parser.read_string(path.read_text())
    return {k: unescape(v) for k, v in parser["Desktop Entry"].items()}


def exec_argv(value: str) -> list[str]:
    """An Exec= value (already string-unescaped) back to its arguments, as the Desktop Entry
    spec reads it: arguments split at unquoted spaces; inside double quotes a backslash
    escapes ``"`` `` ` `` ``$`` ``\\``; ``%%`` is a literal ``%``."""
    args, current, quoted, started = [], [], False, False
    chars = iter(value)
    for c in chars:
        if quoted and c == "\\":
            current.append(next(chars))
        elif c == '"':
            quoted, started = not quoted, True
        elif c == " " and not quoted:
            if started or current:
                args.append("".join(current))
            current, started = [], False
        else:
            current.append(c)
    assert not quoted, "unterminated quote"
    if started or current:
        args.append("".join(current))
    return [a.replace("%%", "%") for a in args]


def test_install_writes_an_entry_that_starts_this_primerscope(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    assert desktop.main([]) == 0
    entry = tmp_path / "applications" / "primerscope.desktop"
    icon = tmp_path / "icons" / "hicolor" / "scalable" / "apps" / "primerscope.svg"
    assert icon.read_bytes() == ICON.read_bytes()
    fields = read_entry(entry)
    assert fields["Type"] == "Application" and fields["Icon"] == "primerscope"
    assert "Science" in fields["Categories"].split(";")
    argv = exec_argv(fields["Exec"])
    assert argv == desktop.launcher()
    assert exec_argv(fields["TryExec"]) == argv[:1]
    # The program it names runs (this environment's primerscope, or python -m app).
    out = subprocess.run(argv[:-1] + ["--help"], capture_output=True, text=True,
                         timeout=60, cwd=tmp_path)
    assert out.returncode == 0 and out.stdout.startswith("usage: primerscope"), out.stderr
    assert str(entry) in capsys.readouterr().out

    assert desktop.main(["--uninstall"]) == 0
    assert not entry.exists() and not icon.exists()
    assert desktop.main(["--uninstall"]) == 0
    assert "no primerscope desktop entry" in capsys.readouterr().out


@given(st.lists(st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
                        min_size=1), min_size=1, max_size=4))
def test_exec_line_quotes_what_the_spec_reserves(argv):
    """Paths with spaces, quotes, $, backslashes, % or a newline come back whole."""
    line = desktop.exec_line(argv)
    assert "\n" not in line and "\r" not in line  # one line of the file
    assert exec_argv(unescape(line)) == argv


def test_relative_xdg_data_home_is_ignored(monkeypatch, tmp_path):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("XDG_DATA_HOME", "relative/share")
    assert desktop.data_home() == tmp_path / ".local" / "share"


def test_unwritable_data_home_is_one_line_and_exit_2(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    env = dict(os.environ, XDG_DATA_HOME=str(blocker))
    out = subprocess.run([sys.executable, "-m", "app", "install-desktop"], capture_output=True,
                         text=True, timeout=60, cwd=ROOT, env=env)
    assert out.returncode == 2
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("primerscope: error: cannot write ")
    assert not any(blocker.parent.glob("**/*primerscope-tmp"))


@pytest.mark.parametrize("argv", [["install-desktop", "--bogus"]])
def test_bad_option_is_one_line(argv, tmp_path):
    out = subprocess.run([sys.executable, "-m", "app", *argv], capture_output=True, text=True,
                         timeout=60, cwd=ROOT, env=dict(os.environ, XDG_DATA_HOME=str(tmp_path)))
    assert out.returncode == 2 and out.stderr.count("\n") == 1
    assert "unrecognized arguments: --bogus" in out.stderr
