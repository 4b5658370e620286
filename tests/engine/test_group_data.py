"""The synthetic groups of benchmarks/data.py (issue 30): deterministic, islands in every
strain and in no relative, strains as drafts; and G1 listed by the benchmark runner."""

from __future__ import annotations

import subprocess
import sys

import edlib
import numpy as np

from benchmarks.data import synthetic_group
from engine.sequences import decode

COMP = str.maketrans("ACGT", "TGCA")


def best_distance(query: str, genome) -> int:
    return min(edlib.align(q, r.text, mode="HW", task="distance")["editDistance"]
               for r in genome.records for q in (query, query.translate(COMP)[::-1]))


def test_deterministic_islands_in_strains_only():
    a = synthetic_group(3, 2, 1, 20_000, islands=2, island_length=400, contigs=3, seed=5)
    b = synthetic_group(3, 2, 1, 20_000, islands=2, island_length=400, contigs=3, seed=5)
    c = synthetic_group(3, 2, 1, 20_000, islands=2, island_length=400, contigs=3, seed=6)
    same = [np.array_equal(x.codes, y.codes) for g, h in zip(a.include + a.exclude,
                                                          b.include + b.exclude)
            for x, y in zip(g.records, h.records)]
    assert all(same)
    assert not np.array_equal(a.include[0].records[0].codes, c.include[0].records[0].codes)
    assert [g.name for g in a.include] == ["strain1", "strain2", "strain3"]
    assert [g.name for g in a.exclude] == ["relative1", "relative2", "unrelated1"]
    assert all(len(g.records) == 3 for g in a.include)
    for island in a.islands:
        text = decode(island)
        for strain in a.include:   # 0.25-1.5 % from the ancestor: a few edits at most
            assert best_distance(text, strain) <= 0.04 * len(text)
        for other in a.exclude:    # absent: as far as a random stretch
            assert best_distance(text, other) >= 0.3 * len(text)


def test_g1_is_listed():
    done = subprocess.run([sys.executable, "-m", "benchmarks", "group", "--list"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "G1" in done.stdout and "group/multicore" in done.stdout
