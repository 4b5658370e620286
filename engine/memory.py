"""How much more memory this process can take, so that reading an input too large for it
is refused with the reason instead of ending in a MemoryError half-way or the kernel's
OOM killer (no message at all).

The bound is the smallest of what is known: the address-space limit (``ulimit -v``,
RLIMIT_AS) less the address space in use, the machine's available memory
(``MemAvailable``), and the cgroup's limit less its usage (a container's).
"""

from __future__ import annotations

import os


def _address_space_left() -> int | None:
    try:
        import resource

        soft, _ = resource.getrlimit(resource.RLIMIT_AS)
        if soft == resource.RLIM_INFINITY:
            return None
        with open("/proc/self/statm") as fh:
            used = int(fh.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
        return max(0, soft - used)
    except (ImportError, OSError, ValueError, IndexError):
        return None


def _machine_available() -> int | None:
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def _cgroup_left() -> int | None:
    try:
        with open("/sys/fs/cgroup/memory.max") as fh:
            limit = fh.read().strip()
        if limit == "max":
            return None
        with open("/sys/fs/cgroup/memory.current") as fh:
            return max(0, int(limit) - int(fh.read().strip()))
    except (OSError, ValueError):
        return None


def available_bytes() -> int | None:
    """Bytes this process can still allocate, as far as is known; None when nothing is
    (not Linux, no limit)."""
    known = [v for v in (_address_space_left(), _machine_available(), _cgroup_left())
             if v is not None]
    return min(known) if known else None
