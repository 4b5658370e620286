"""Memory bounds (issue #14, "Also cover"): no family allocates m x n for long inputs.

Each family's largest command-line case runs under an address-space limit
(``resource.setrlimit(RLIMIT_AS)`` in the subprocess) that an m x n matrix, even one bit a
cell, could not fit in, and must pass. A control run shows the limit bites.
"""

from __future__ import annotations

import resource
import subprocess
import sys

import numpy as np
import pytest

from tests.reliability.helpers import ROOT, command, env

#: The process's own footprint (Python, numpy, numba, LLVM: about 0.45 GB of address space
#: with two threads) plus room for the inputs and linear-size buffers.
LIMIT = 1 << 30
ECOLI = ROOT / "resources" / "demo" / "ecoli536_NC_008253.fna.gz"


@pytest.fixture(scope="module")
def long_inputs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("long")
    rng = np.random.default_rng(1414)
    paths = {}
    for name, n in (("a200k", 200_000), ("b200k", 200_000), ("a100k", 100_000),
                    ("b100k", 100_000), ("t60", 60)):
        seq = np.frombuffer(b"ACGT", np.uint8)[rng.integers(0, 4, n)].tobytes().decode()
        paths[name] = folder / f"{name}.fa"
        paths[name].write_text(f">{name}\n{seq}\n")
    return paths


def _limited():
    resource.setrlimit(resource.RLIMIT_AS, (LIMIT, LIMIT))


def _run_limited(args, cwd):
    # Two threads and two malloc arenas: the footprint must not grow with the machine's cores.
    return subprocess.run(command(*args), capture_output=True, text=True, cwd=cwd, timeout=600,
                          env=env(NUMBA_NUM_THREADS=2, MALLOC_ARENA_MAX=2), preexec_fn=_limited)


CASES = {  # family -> (arguments, cells m x n)
    "lcs": (["lcs", "{a200k}", "{b200k}"], 200_000 ** 2),
    "nw": (["nw", "{a100k}", "{b100k}"], 100_000 ** 2),
    "edit": (["edit", "{a200k}", "{b200k}", "--align"], 200_000 ** 2),
    "kdiff": (["kdiff", "{t60}", str(ECOLI), "-k", "2"], 60 * 5_000_000),
    "kmismatch": (["kmismatch", str(ECOLI), "ACGTACGTAGCTAGCTAGCATGC", "-k", "3"],
                  23 * 5_000_000),
}


@pytest.mark.slow
@pytest.mark.parametrize("family", sorted(CASES))
def test_largest_case_runs_in_bounded_memory(tmp_path, long_inputs, family):
    args, cells = CASES[family]
    args = [a.format(**long_inputs) for a in args] + ["-o", str(tmp_path / "out")]
    done = _run_limited(args, ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    assert (tmp_path / "out").stat().st_size > 0
    if family in ("lcs", "nw", "edit"):
        assert cells // 8 > LIMIT  # not even a bit a cell would have fitted


def test_the_limit_bites():
    code = "import numpy; numpy.ones((100_000 * 100_000) // 8, dtype=numpy.uint8)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                          timeout=120, env=env(), preexec_fn=_limited)
    assert done.returncode != 0 and "MemoryError" in done.stderr
