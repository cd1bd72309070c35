from __future__ import annotations

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
