"""Hypothesis profiles: ``dev`` by default, ``ci`` derandomized with more examples in CI, ``ci-quick`` for the
core-only step. The Spark sessions are tests/spark/conftest.py's."""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile("dev", max_examples=100, deadline=None)
settings.register_profile(
    "ci",
    max_examples=500,
    deadline=None,
    derandomize=True,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
# The core-only CI step (`make core-test`): deterministic, fewer examples; `make test` runs the full `ci` profile.
settings.register_profile(
    "ci-quick", max_examples=50, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "dev"))


@pytest.hookimpl(trylast=True)  # after tests/spark/conftest.py has marked and grouped its tests
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The standalone-cluster run first (a stable sort): in `make integration` it is the longest test by far, and
    handed out first it runs beside the real-group scenarios instead of after them."""
    items.sort(key=lambda item: item.get_closest_marker("cluster") is None)
