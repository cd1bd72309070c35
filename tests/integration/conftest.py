from __future__ import annotations

import gc
import logging
import socket
from collections.abc import Iterator

import pytest

for _client in ("confluent_kafka", "kafka", "aiokafka"):
    pytest.importorskip(_client, reason="the real-group tests need the Kafka clients of the dev group")

from integration.members import PARTITIONS, TOPIC  # noqa: E402 - once the clients are known to be there
from integration.mock_cluster import MockCluster  # noqa: E402


def open_sockets_to(port: int) -> list[socket.socket]:
    """The Python sockets still open and connected to ``port`` on loopback (librdkafka's are not Python objects)."""
    found = []
    for candidate in gc.get_objects():
        if isinstance(candidate, socket.socket) and candidate.fileno() != -1 and candidate.family == socket.AF_INET:
            try:
                peer = candidate.getpeername()
            except OSError:  # not connected
                continue
            if peer[1] == port:
                found.append(candidate)
    return found


@pytest.fixture
def cluster() -> Iterator[MockCluster]:
    """A fresh mock cluster with the scenarios' topic of :data:`PARTITIONS` partitions.

    When the test is over, every client must have closed its sockets to it (a socket left open
    would surface as a ResourceWarning whenever the garbage collector frees it, often at exit).
    """
    with MockCluster() as mock:
        mock.create_topic(TOPIC, PARTITIONS)
        yield mock
        port = int(mock.bootstrap_servers.rsplit(":", 1)[1])
        left_open = [str(s) for s in open_sockets_to(port)]
        assert left_open == [], f"sockets still open to the mock cluster: {left_open}"


@pytest.fixture(autouse=True)
def _client_logs(caplog: pytest.LogCaptureFixture) -> None:
    """Keep the clients' group-coordination story (joins, elections, errors) for the report of a failure."""
    for name in ("kafka.coordinator", "aiokafka.consumer.group_coordinator"):
        caplog.set_level(logging.INFO, logger=name)
