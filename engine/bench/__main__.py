"""``python -m engine.bench`` is ``primerscope bench``."""

import sys

from engine.cli import main

sys.exit(main(["bench", *sys.argv[1:]]))
