"""The repo's Kafka build for the tests: the classpath ``make jvm`` wrote from jvm/pom.xml.

The tests run the version the Makefile built (``KAFKA_VERSION``, default the pom's); a missing build fails with
how to make it, never a skip under ``CI=true``.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
POM = ROOT / "jvm" / "pom.xml"


def pinned_version() -> str:
    """The Kafka version jvm/pom.xml pins (its ``kafka.version`` property)."""
    found = re.search(r"<kafka\.version>([^<]+)</kafka\.version>", POM.read_text(encoding="utf-8"))
    assert found is not None, f"no <kafka.version> in {POM}"
    return found.group(1)


def kafka_version() -> str:
    return os.environ.get("KAFKA_VERSION") or pinned_version()


def build_dir(version: str | None = None) -> Path:
    return ROOT / "jvm" / "target" / f"kafka-{version or kafka_version()}"


def classpath(version: str | None = None) -> list[str]:
    """Kafka's jars and this project's Java classes, as ``make jvm`` built them for ``version``."""
    folder = build_dir(version)
    listing = folder / "classpath.txt"
    if not listing.is_file():
        message = f"no {listing}: run `make jvm KAFKA_VERSION={version or kafka_version()}` (needs java and mvn)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    jars = [entry for entry in listing.read_text(encoding="utf-8").strip().split(os.pathsep) if entry]
    return [str(folder / "classes"), *jars]
