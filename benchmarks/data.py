"""The real DNA the benchmarks use (shipped in resources/demo, loaded once)."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from engine.sequences import Record, load

DEMO_DIR = Path(__file__).resolve().parents[1] / "resources" / "demo"


@lru_cache(maxsize=None)
def lambda_phage() -> Record:
    return load(DEMO_DIR / "lambda_NC_001416.fa")[0]


@lru_cache(maxsize=None)
def ecoli() -> Record:
    return load(DEMO_DIR / "ecoli536_NC_008253.fna.gz")[0]


@lru_cache(maxsize=None)
def msx2() -> tuple[Record, ...]:
    return tuple(load(DEMO_DIR / "msx2_mrna_homologs.fa"))

