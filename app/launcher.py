"""Entry point of the ``primerscope`` command.

No subcommand, or ``gui``, opens the desktop application; every other
subcommand is the engine's command line, which never imports Qt (so it also
runs on machines without PySide6, such as the GPU machine). The command line
takes over Ctrl-C and SIGTERM first, before its heavy imports (engine.interrupts).
"""

from __future__ import annotations

import sys


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
        from benchmarks import main as bench_main

        return bench_main(argv[1:])
    from engine.cli import main as cli_main

    return cli_main(argv)


if __name__ == "__main__":
    sys.exit(main())
