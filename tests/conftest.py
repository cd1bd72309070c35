"""Hypothesis profiles: ``dev`` by default, ``ci`` (derandomized, more examples) in CI."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest
from hypothesis import HealthCheck, settings

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

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


@pytest.fixture(scope="session")
def spark() -> Iterator[SparkSession]:
    """One local Spark session per test process (the Spark tests in tests/spark/)."""
    from spark_udfs.session import get_session

    session = get_session("local[2]", app_name="assignors-tests")
    yield session
    session.stop()
