"""The cluster's Kafka version read from a real broker of the build's version (``make java-matrix``: each one).

``assignors collect`` reads the release from a broker's ApiVersions (its highest ``metadata.version`` level); here
a broker of every version the matrix builds answers, and the release read is that broker's own, its newest patch
the version the replay runs.
"""

from __future__ import annotations

import pytest

from assignors.collect import NEWEST_PATCH, read_cluster_version
from assignors.testing import KafkaBroker
from helpers.kafka_jvm import classpath, kafka_version

pytestmark = [pytest.mark.integration, pytest.mark.kafka]


def test_a_real_broker_reads_as_its_own_release() -> None:
    with KafkaBroker(classpath=classpath()) as broker:
        bootstrap = broker.bootstrap_servers
        found = read_cluster_version({"bootstrap.servers": bootstrap}, timeout=30)
        running = broker.version
    assert running == kafka_version()
    release = ".".join(running.split(".")[:2])
    assert found.release == release, found.describe()
    assert found.kafka_version == NEWEST_PATCH[release]
    patch = tuple(map(int, running.split(".")))
    assert patch <= tuple(map(int, NEWEST_PATCH[release].split(".")))  # the replay's patch is this one or newer
    assert found.broker == bootstrap
    consumer_protocol = tuple(map(int, release.split("."))) >= (4, 0)  # on by default from 4.0 (KIP-848 GA)
    assert ((found.group_version or 0) >= 1) == consumer_protocol
    assert found.finalized_metadata_level == found.metadata_level  # a fresh cluster runs its newest level
