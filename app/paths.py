"""Where the app's data files are.

``resources/`` (the demo sequences, the style sheet, the icon) sits beside the ``engine`` and
``app`` packages: in a checkout, and in an installed wheel, which ships it as package data in
the same place (pyproject.toml), so one path serves both.
"""

from __future__ import annotations

from pathlib import Path

RESOURCES = Path(__file__).resolve().parents[1] / "resources"
ICON = RESOURCES / "icons" / "primerscope.svg"
