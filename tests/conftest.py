"""Shared test set-up: hypothesis profiles and the real DNA in resources/demo."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

#: The CUDA tests' shared fixtures (the GPU machine loads the same plugin with -p).
pytest_plugins = ("tests.cuda_support",)

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "resources" / "demo"

settings.register_profile(
    "default", deadline=None, max_examples=int(os.environ.get("HYPOTHESIS_EXAMPLES", "60")),
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.load_profile("default")


@pytest.fixture(scope="session")
def demo_dir() -> Path:
    return DEMO


@pytest.fixture(scope="session")
def lambda_record():
    from benchmarks.data import lambda_phage

    return lambda_phage()


@pytest.fixture(scope="session")
def ecoli_record():
    from benchmarks.data import ecoli

    return ecoli()


@pytest.fixture(scope="session")
def msx2_records():
    from benchmarks.data import msx2

    return msx2()
