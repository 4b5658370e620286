"""What the reliability tests share: the ``primerscope`` command in a fresh process.

``PRIMERSCOPE_ROOT`` points the subprocesses at another checkout (to see a test fail on
an older version: ``PRIMERSCOPE_ROOT=/path/to/old pytest tests/reliability``).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(os.environ.get("PRIMERSCOPE_ROOT") or Path(__file__).resolve().parents[2])
TEMP_PREFIX = ".primerscope-"


def env(**extra) -> dict:
    """The environment of a CLI subprocess: this checkout first on the path, no GPU simulator."""
    out = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    out["PYTHONPATH"] = str(ROOT) + os.pathsep + out.get("PYTHONPATH", "")
    out.update({k: str(v) for k, v in extra.items()})
    return out


def command(*args) -> list[str]:
    """``primerscope ARGS`` as the installed entry point runs it (app.launcher)."""
    return [sys.executable, "-c", "import sys; from app.launcher import main; sys.exit(main())",
            *map(str, args)]


def run(*args, cwd=None, timeout=300, extra_env=None, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(command(*args), capture_output=True, text=True, cwd=cwd or ROOT,
                          timeout=timeout, env=env(**(extra_env or {})), **kw)


def one_line_error(done: subprocess.CompletedProcess, status: int = 2) -> str:
    """Assert exit ``status`` with exactly one line on stderr and no traceback; return it."""
    lines = done.stderr.strip().splitlines()
    assert done.returncode == status, (done.returncode, done.stderr[-2000:])
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr[-2000:]
    return lines[0]


def leftovers(folder: Path) -> list[str]:
    """Temporary files an atomic write left behind in ``folder``."""
    return sorted(p.name for p in Path(folder).iterdir() if p.name.startswith(TEMP_PREFIX))
