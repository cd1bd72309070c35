from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest

from integration.members import PARTITIONS, TOPIC
from integration.mock_cluster import MockCluster


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
