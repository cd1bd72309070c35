"""One real Apache Kafka broker per pytest worker (``assignors.testing.KafkaBroker``), a fresh topic and group id
per test."""

from __future__ import annotations

import gc
import logging
import socket
import time
import uuid
from collections.abc import Iterator

import pytest

for _client in ("confluent_kafka", "kafka", "aiokafka"):
    pytest.importorskip(_client, reason="the real-group tests need the Kafka clients of the dev group")

from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined] # noqa: E402

from assignors.testing import KafkaBroker  # noqa: E402
from helpers.kafka_jvm import classpath  # noqa: E402
from helpers.members import PARTITIONS  # noqa: E402

TOPIC_TIMEOUT_S = 60.0


def open_sockets_to(port: int) -> list[socket.socket]:
    """The Python sockets still open and connected to ``port`` on loopback (librdkafka's are not Python objects)."""
    found = []
    for candidate in gc.get_objects():
        # type(), not isinstance(): isinstance reads __class__, which a weakref.proxy whose referent is gone (as
        # kafka-python 3's WakeupNotifier keeps to its closed client) answers with ReferenceError
        if not issubclass(type(candidate), socket.socket):
            continue
        if candidate.fileno() != -1 and candidate.family == socket.AF_INET:
            try:
                peer = candidate.getpeername()
            except OSError:  # not connected
                continue
            if peer[1] == port:
                found.append(candidate)
    return found


@pytest.fixture(scope="session")
def broker() -> Iterator[KafkaBroker]:
    """A KRaft broker for this worker's tests: started once, stopped by its PID at the end (also on failure)."""
    with KafkaBroker(classpath=classpath()) as running:
        yield running


def create_topic(bootstrap: str, name: str, partitions: int) -> None:
    """Create ``name`` and wait until its metadata shows every partition with a leader."""
    admin = AdminClient({"bootstrap.servers": bootstrap, "log_level": 2})  # quiet while a broker restarts
    for future in admin.create_topics([NewTopic(name, partitions, 1)], request_timeout=TOPIC_TIMEOUT_S).values():
        future.result(TOPIC_TIMEOUT_S)
    deadline = time.monotonic() + TOPIC_TIMEOUT_S
    while time.monotonic() < deadline:
        found = admin.list_topics(name, timeout=10).topics.get(name)
        if found is not None and found.error is None and len(found.partitions) == partitions:  # noqa: SIM102
            if all(p.leader >= 0 for p in found.partitions.values()):
                return
        time.sleep(0.2)
    pytest.fail(f"topic {name} did not get {partitions} partitions with leaders within {TOPIC_TIMEOUT_S} s")


@pytest.fixture
def topic(broker: KafkaBroker) -> Iterator[str]:
    """A fresh topic of :data:`PARTITIONS` partitions. When the test is over, every Python client must have closed
    its sockets to the broker (one left open surfaces as a ResourceWarning when the garbage collector frees it)."""
    name = f"orders-{uuid.uuid4().hex[:12]}"
    create_topic(broker.bootstrap_servers, name, PARTITIONS)
    yield name
    port = int(broker.bootstrap_servers.rsplit(":", 1)[1])
    left_open = [str(s) for s in open_sockets_to(port)]
    assert left_open == [], f"sockets still open to the broker: {left_open}"


@pytest.fixture
def group() -> str:
    """A group id no other test uses."""
    return f"group-{uuid.uuid4().hex[:12]}"


@pytest.fixture(autouse=True)
def _client_logs(caplog: pytest.LogCaptureFixture) -> None:
    """Keep the clients' group-coordination story (joins, elections, errors) for the report of a failure."""
    for name in ("kafka.coordinator", "aiokafka.consumer.group_coordinator"):
        caplog.set_level(logging.INFO, logger=name)
