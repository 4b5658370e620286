"""Shared test set-up: hypothesis profiles and the real DNA in resources/demo."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

import engine
from tests.strategies import CI_EXAMPLES

# The test process stands in for the app (whose launcher does this before numba loads):
# its GUI and timing tests run with the settings the app runs with.
engine.configure_process()

#: The CUDA tests' shared fixtures (the GPU machine loads the same plugin with -p).
pytest_plugins = ("tests.cuda_support",)

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "resources" / "demo"

# Hypothesis profiles: "ci" (the default) and "thorough" (ten times the examples), chosen with
# pytest's --hypothesis-profile=thorough (or HYPOTHESIS_PROFILE). Tests scale their own counts
# with tests.strategies.examples(n), so the profile decides how many run.
_COMMON = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.register_profile("ci", max_examples=CI_EXAMPLES, **_COMMON)
settings.register_profile("thorough", max_examples=10 * CI_EXAMPLES, **_COMMON)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


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


@pytest.fixture(scope="session")
def dask_cluster():
    """(address, client) of a LocalCluster with 2 worker processes of one thread each.

    One per test process, shared by every Dask test: its workers start and load the kernels
    once (a killed worker is restarted by its nanny)."""
    import logging

    distributed = pytest.importorskip("distributed")
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=":0", silence_logs=logging.ERROR)
    client = distributed.Client(cluster, set_as_default=False)
    yield cluster.scheduler_address, client
    client.close()
    cluster.close()


def pytest_collection_modifyitems(items):
    """The simulator runs (``test_..._in_the_cuda_simulator`` and ``..._in_the_simulator``: a
    subprocess each, the longest tests of the suite) first: under pytest-xdist one that started
    near the end would leave the other worker idle until it finished."""
    items.sort(key=lambda item: not getattr(item, "originalname", "").endswith(
        ("in_the_cuda_simulator", "in_the_simulator")))
