"""``primerscope install-desktop [--uninstall]``: primerscope in the desktop's application menu.

Writes a freedesktop ``.desktop`` entry and the icon into the user's data directory
(``$XDG_DATA_HOME``, ``~/.local/share`` by default): ``applications/primerscope.desktop`` and
``icons/hicolor/scalable/apps/primerscope.svg``. The entry starts the ``primerscope`` of the
environment this command runs in (a pipx or venv install is usually not on the menu's PATH),
by its absolute path. Never imports Qt: it must run where no display is.
"""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path

from app.paths import ICON

#: The entry's id: its file name, its Icon= name and the window's desktop file name
#: (app/window.py), which lets the desktop match the running window to the entry.
DESKTOP_ID = "primerscope"

#: Characters the Desktop Entry spec reserves in an Exec= argument: it is then quoted.
_RESERVED = set(" \t\n\r\"'\\><~|&;$*?#()`")


def data_home() -> Path:
    """``$XDG_DATA_HOME``, or ``~/.local/share`` when it is unset, empty or relative (the
    XDG Base Directory spec says a relative value is invalid and must be ignored)."""
    value = os.environ.get("XDG_DATA_HOME", "")
    return Path(value) if os.path.isabs(value) else Path.home() / ".local" / "share"


def entry_paths(base: Path) -> tuple[Path, Path]:
    """The desktop entry and the icon under the data directory ``base``."""
    return (base / "applications" / f"{DESKTOP_ID}.desktop",
            base / "icons" / "hicolor" / "scalable" / "apps" / f"{DESKTOP_ID}.svg")


def launcher() -> list[str]:
    """The command that opens the window: this environment's ``primerscope`` script, or
    ``python -m app`` when it has none (run from a checkout with ``python -m app``)."""
    script = Path(sys.executable).parent / "primerscope"  # not resolved: a venv's bin
    if script.is_file() and os.access(script, os.X_OK):
        return [str(script.absolute()), "gui"]
    return [str(Path(sys.executable).absolute()), "-m", "app", "gui"]


def exec_line(argv: list[str]) -> str:
    """``argv`` as the value of ``Exec=``: an argument with a reserved character in double
    quotes (with ``"`` `` ` `` ``$`` ``\\`` escaped), ``%`` doubled (field codes), then the
    escapes of every string value (``\\``, newline, tab, carriage return)."""
    def quote(arg: str) -> str:
        if not arg or _RESERVED & set(arg) or any(c.isspace() for c in arg):
            arg = '"' + "".join("\\" + c if c in '"`$\\' else c for c in arg) + '"'
        arg = arg.replace("%", "%%").replace("\\", "\\\\")
        return arg.replace("\n", "\\n").replace("\t", "\\t").replace("\r", "\\r")

    return " ".join(quote(a) for a in argv)


def desktop_entry(argv: list[str]) -> str:
    """The ``.desktop`` file's text for the command ``argv``."""
    return "\n".join([
        "[Desktop Entry]",
        "Type=Application",
        "Version=1.5",
        "Name=primerscope",
        "GenericName=Primer design",
        "Comment=Find candidate primer regions and explore DNA dynamic programming",
        f"Exec={exec_line(argv)}",
        f"TryExec={exec_line(argv[:1])}",  # the menu hides the entry once the program is gone
        f"Icon={DESKTOP_ID}",
        "Terminal=false",
        "Categories=Science;Biology;",
        "Keywords=DNA;primer;PCR;alignment;sequence;",
        "StartupNotify=true",
        f"StartupWMClass={DESKTOP_ID}",
        "",
    ])


def _write(path: Path, data: bytes) -> None:
    """``data`` into ``path`` whole or not at all (a half-written entry confuses menus)."""
    from engine.cli import UsageError

    tmp = path.with_name(f".{path.name}.primerscope-tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_bytes(data)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise UsageError(f"cannot write {path}: {exc.strerror or exc} "
                         "(set XDG_DATA_HOME to a folder you can write)") from None


def install(base: Path) -> list[Path]:
    """Write the entry and the icon under ``base``; returns their paths."""
    from engine.cli import UsageError

    if not ICON.is_file():
        raise UsageError(f"the icon {ICON} is missing from this installation "
                         "(reinstall primerscope)")
    entry, icon = entry_paths(base)
    _write(icon, ICON.read_bytes())
    _write(entry, desktop_entry(launcher()).encode())
    return [entry, icon]


def uninstall(base: Path) -> list[Path]:
    """Remove the entry and the icon under ``base``; returns those that were there."""
    from engine.cli import UsageError

    removed = []
    for path in entry_paths(base):
        try:
            path.unlink()
        except FileNotFoundError:
            continue
        except OSError as exc:
            raise UsageError(f"cannot remove {path}: {exc.strerror or exc}") from None
        removed.append(path)
    return removed


def main(argv: list[str]) -> int:
    from engine.cli import _Parser, report_errors

    parser = _Parser(prog="primerscope install-desktop",
                     description="Add primerscope to the desktop's application menu: a "
                                 "freedesktop .desktop entry and its icon in $XDG_DATA_HOME "
                                 "(~/.local/share). The entry starts this installation's "
                                 "primerscope.")
    parser.add_argument("--uninstall", action="store_true",
                        help="remove the entry and the icon instead")

    def run() -> int:
        args = parser.parse_args(argv)
        base = data_home()
        if args.uninstall:
            removed = uninstall(base)
            for path in removed:
                print(f"removed {path}")
            if not removed:
                print(f"no primerscope desktop entry in {base}")
            return 0
        entry, icon = install(base)
        print(f"installed {entry} (starts {' '.join(launcher())})")
        print(f"installed {icon}")
        return 0

    return report_errors(run)
