import sys

from engine import interrupts
from engine.cli import main

interrupts.install()
sys.exit(interrupts.guarded(main))
