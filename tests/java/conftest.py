"""The Java oracle: one JVM per test session running Kafka's own classes (see helpers.java_oracle).

It runs the Kafka version ``make jvm`` built (``KAFKA_VERSION``, default the one jvm/pom.xml pins);
``make java-matrix`` runs these tests once per version. Without java, or without the build, the tests skip
with one message locally and fail under ``CI=true``.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from helpers import kafka_jvm
from helpers.java_oracle import JavaOracle

LEGACY_UNIFORM_VERSION = os.environ.get("ORACLE_LEGACY_VERSION", "4.0.0")
"""A Kafka before KAFKA-18688 (4.1): the oracle for UniformAssignor(stable_extras=False)."""


def _unavailable(message: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


def start_oracle(version: str | None, log_dir: Path) -> JavaOracle:
    if shutil.which("java") is None:
        _unavailable(
            "java not found: the Java oracle needs a JDK 17+ (Debian: apt-get install openjdk-17-jdk-headless)"
        )
    classpath = kafka_jvm.classpath(version)  # skips (fails under CI) when `make jvm` did not build it
    if not (Path(classpath[0]) / "dev" / "assignors" / "oracle" / "Oracle.class").is_file():
        _unavailable(
            f"no Java oracle in {classpath[0]}: run `make jvm KAFKA_VERSION={version or kafka_jvm.kafka_version()}`"
        )
    return JavaOracle.start(classpath, log_dir)


@pytest.fixture(scope="session")
def oracle(tmp_path_factory: pytest.TempPathFactory) -> Iterator[JavaOracle]:
    """Kafka's Java classes at the build's version, one JVM for the session, stopped by its PID."""
    with start_oracle(None, tmp_path_factory.mktemp("java-oracle")) as running:
        assert running.version == kafka_jvm.kafka_version(), (running.version, kafka_jvm.kafka_version())
        yield running


@pytest.fixture(scope="session")
def legacy_oracle(tmp_path_factory: pytest.TempPathFactory) -> Iterator[JavaOracle]:
    """A Kafka 4.0.x oracle (before KAFKA-18688), for the uniform assignor's ``stable_extras=False`` mode."""
    with start_oracle(LEGACY_UNIFORM_VERSION, tmp_path_factory.mktemp("java-oracle-legacy")) as running:
        yield running
