"""Hypothesis profiles: ``dev`` by default, ``ci`` derandomized with more examples in CI, ``ci-quick`` for the
core-only step. The Spark sessions are tests/spark/conftest.py's."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

settings.register_profile("dev", max_examples=100, deadline=None)
settings.register_profile(
    "ci",
    max_examples=300,
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
# No class-data-sharing archive of local Spark sessions dumped into the user's cache by the tests, nor by the
# commands they run (spark_udfs.session.class_archive_options; its own tests pass their directory).
os.environ["ASSIGNORS_CLASS_ARCHIVE"] = "0"
