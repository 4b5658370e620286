"""Entry point of the ``primerscope`` command.

No subcommand, or ``gui``, opens the desktop application; every other
subcommand is the engine's command line, which never imports Qt (so it also
runs on machines without PySide6, such as the GPU machine). The command line
takes over Ctrl-C and SIGTERM first, before its heavy imports (engine.interrupts).
"""

from __future__ import annotations

import sys
from pathlib import Path


def main(argv=None) -> int:
    import engine

    engine.configure_process()  # the app's and the command line's settings, before numba
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] == "gui":
        from app.main import main as gui_main

        return gui_main(argv[1:] if argv else [])
    from engine import interrupts

    interrupts.install()
    return interrupts.leave(interrupts.guarded(lambda: _command(argv)))


def _command(argv: list[str]) -> int:
    if argv[0] == "bench":
        bench_main = _benchmarks()
        if bench_main is None:
            print("primerscope: error: primerscope bench runs from a checkout of the repository "
                  "(a development tool; this installation has no benchmarks)", file=sys.stderr)
            return 2
        return bench_main(argv[1:])
    if argv[0] == "install-desktop":
        from app.desktop import main as desktop_main

        return desktop_main(argv[1:])
    from engine.cli import main as cli_main

    return cli_main(argv)


def _benchmarks():
    """The checkout's ``benchmarks.main``, or None in an installation: the wheel leaves the
    benchmarks out (a development tool), so an editable install does not map them either;
    they are taken from the checkout that holds this ``app`` (never another ``benchmarks``)."""
    checkout = Path(__file__).resolve().parents[1]
    if not (checkout / "benchmarks" / "__init__.py").is_file():
        return None
    if str(checkout) not in sys.path:
        sys.path.insert(0, str(checkout))
    from benchmarks import main

    return main


if __name__ == "__main__":
    sys.exit(main())
