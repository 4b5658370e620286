"""The test suite's own CUDA helpers (tests/cuda_support.py)."""

from hypothesis import settings

from tests.cuda_support import _loaded_profile


def test_simulator_cases_load_the_parents_hypothesis_profile():
    """run_simulator_cases hands its child the profile this run loaded, so that
    --hypothesis-profile=thorough scales the simulator cases' examples too."""
    loaded = _loaded_profile()
    try:
        for name in ("thorough", "ci"):
            settings.load_profile(name)
            assert _loaded_profile() == name
    finally:
        settings.load_profile(loaded)
