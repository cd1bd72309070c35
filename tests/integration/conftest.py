from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest

for _client in ("confluent_kafka", "kafka", "aiokafka"):
    pytest.importorskip(_client, reason="the real-group tests need the Kafka clients of the dev group")

from integration.members import PARTITIONS, TOPIC  # noqa: E402 - once the clients are known to be there
from integration.mock_cluster import MockCluster  # noqa: E402


@pytest.fixture
def cluster() -> Iterator[MockCluster]:
    """A fresh mock cluster with the scenarios' topic of :data:`PARTITIONS` partitions."""
    with MockCluster() as mock:
        mock.create_topic(TOPIC, PARTITIONS)
        yield mock


@pytest.fixture(autouse=True)
def _client_logs(caplog: pytest.LogCaptureFixture) -> None:
    """Keep the clients' group-coordination story (joins, elections, errors) for the report of a failure."""
    for name in ("kafka.coordinator", "aiokafka.consumer.group_coordinator"):
        caplog.set_level(logging.INFO, logger=name)
