"""``python -m benchmarks`` is ``primerscope bench``."""

import sys

from benchmarks import main

sys.exit(main())
