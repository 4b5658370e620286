"""A line on stderr that redraws in place: the CLI's progress (a job, an index, an import).
Its own module so that the subcommands' modules need not import the CLI package's
``__init__`` (which imports them)."""

from __future__ import annotations

import sys


class StderrLine:
    """One line on stderr, redrawn in place (:meth:`draw`) only when stderr is a terminal;
    :meth:`close` blanks its :attr:`WIDTH` columns. The progress of a job, an index, an
    import."""

    WIDTH = 84

    def __init__(self, enabled: bool = True) -> None:
        self.enabled = enabled and sys.stderr is not None and sys.stderr.isatty()
        self.drawn = False

    def draw(self, text: str) -> None:
        sys.stderr.write("\r" + text)
        sys.stderr.flush()
        self.drawn = True

    def close(self) -> None:
        if self.drawn:
            sys.stderr.write("\r" + " " * self.WIDTH + "\r")
            sys.stderr.flush()
