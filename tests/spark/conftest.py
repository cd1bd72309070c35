"""The Spark tests need the `spark` extra; without it (the core-only CI step) they skip here.

They get a local session, and a Spark Connect one: one server per test process, started from the pyspark package
on 127.0.0.1 and stopped by its PID. The ``session`` fixture runs a test once on each. pyspark picks its classic or
Connect code paths by a process-wide switch (``SPARK_CONNECT_MODE_ENABLED``), which a Connect application has on
for its whole life; here it is on only while a Connect test runs, so both sessions share one process.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

from helpers.spark_processes import TEST_JVM_OPTIONS, start_connect_server

pytest.importorskip("pyspark", reason="needs the spark extra")
pytest.importorskip("pandas", reason="needs the spark extra")

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


@pytest.fixture(scope="session")
def spark() -> Iterator[SparkSession]:
    """One local Spark session per test process (the Spark tests in tests/spark/)."""
    from spark_udfs.session import get_session

    with pytest.MonkeyPatch.context() as patch:  # for the JVM pyspark starts now, through spark-submit
        patch.setenv("SPARK_SUBMIT_OPTS", TEST_JVM_OPTIONS)
        session = get_session("local[2]", app_name="assignors-tests")
    yield session
    session.stop()


@pytest.fixture(scope="session")
def connect_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A Spark Connect server from the pyspark package on 127.0.0.1 and a free port."""
    server, url = start_connect_server(tmp_path_factory.mktemp("spark-connect"))
    try:
        yield url
    finally:
        server.stop()


@pytest.fixture(scope="session")
def connect_spark(connect_url: str) -> Iterator[SparkSession]:
    from pyspark.sql.connect.session import SparkSession as RemoteSparkSession

    session = RemoteSparkSession.builder.remote(connect_url).config("spark.sql.session.timeZone", "UTC").create()
    yield session  # type: ignore[misc]
    session.stop()


@pytest.fixture
def connect_mode(monkeypatch: pytest.MonkeyPatch, connect_spark: SparkSession) -> SparkSession:
    """The Connect session, with pyspark switched to its Connect code paths for this test."""
    monkeypatch.setenv("SPARK_CONNECT_MODE_ENABLED", "1")
    return connect_spark


_CONNECT_FIXTURES = frozenset({"connect_url", "connect_spark", "connect_mode"})
_SPARK_FIXTURES = frozenset({"spark", "session"}) | _CONNECT_FIXTURES


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects, and before xdist reads the groups
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test that uses the Spark Connect server is marked ``connect`` (``make connect`` selects them).

    Every test that uses a Spark session and names no group of its own joins the ``spark`` group:
    under ``--dist loadgroup`` one worker holds the local JVM and the Connect server, instead of
    each worker starting its own.
    """
    for item in items:
        fixtures = set(getattr(item, "fixturenames", ()))
        if _CONNECT_FIXTURES & fixtures:
            item.add_marker(pytest.mark.connect)
        if _SPARK_FIXTURES & fixtures and item.get_closest_marker("xdist_group") is None:
            item.add_marker(pytest.mark.xdist_group("spark"))


@pytest.fixture(params=["local", pytest.param("connect", marks=pytest.mark.connect)])
def session(request: pytest.FixtureRequest) -> SparkSession:
    """A local session, then a Spark Connect one."""
    if request.param == "local":
        local: SparkSession = request.getfixturevalue("spark")
        return local
    remote: SparkSession = request.getfixturevalue("connect_mode")
    return remote
