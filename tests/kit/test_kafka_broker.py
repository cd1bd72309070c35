"""assignors.testing.KafkaBroker: a real KRaft broker from Maven Central's jars, on loopback, stopped by its PID."""

from __future__ import annotations

import os
import time
import uuid
from pathlib import Path

import pytest

from assignors.testing import DEFAULT_KAFKA_VERSION, KafkaBroker, KafkaBrokerError, kafka_classpath
from assignors.testing._kafka import _answers_metadata
from helpers.kafka_jvm import classpath, pinned_version


def test_the_default_version_is_the_one_the_pom_pins() -> None:
    assert pinned_version() == DEFAULT_KAFKA_VERSION


_LOOPBACK_HEX = {"0100007F", "0000000000000000FFFF00000100007F"}  # 127.0.0.1, and as an IPv4-mapped IPv6 address


def _listening(port: int) -> list[str]:
    """The local addresses (hex, as /proc/net/tcp and tcp6 show them) listening on ``port``."""
    found = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text(encoding="ascii").splitlines()[1:]:
            local, state = line.split()[1], line.split()[3]
            address, hex_port = local.split(":")
            if state == "0A" and int(hex_port, 16) == port:  # LISTEN
                found.append(address)
    return found


OLD = 1_500_000_000_000  # 2017-07-14, in ms


@pytest.mark.kafka
def test_a_broker_serves_clients_survives_restarts_and_leaves_nothing_behind() -> None:
    """It answers as itself on loopback only, keeps an acknowledged record across a graceful and a SIGKILL restart
    and across Kafka's retention checks however old its timestamp, and leaves no process behind."""
    confluent_kafka = pytest.importorskip("confluent_kafka")
    from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]

    # Kafka's retention check every 200 ms from the start: the record below, stamped 2017, would be deleted by
    # Kafka's 7-day time retention at once; the kit's broker keeps it (log.retention.ms=-1).
    checks = {"log.retention.check.interval.ms": "200", "log.initial.task.delay.ms": "0"}
    broker = KafkaBroker(classpath=classpath(), config=checks)
    with broker:
        host, port = broker.bootstrap_servers.rsplit(":", 1)
        assert host == "127.0.0.1"
        assert broker.version == pinned_version()
        assert broker.startup_seconds is not None
        assert broker.startup_seconds > 0
        pid = broker.pid
        assert pid is not None
        # ready means: this broker answers, not another one that took the port first
        assert _answers_metadata(int(port), broker._cluster_id)
        assert not _answers_metadata(int(port), "AnotherClusterIdAAAAA")
        if Path("/proc/net/tcp").exists():
            addresses = _listening(int(port))
            assert addresses
            assert set(addresses) <= _LOOPBACK_HEX, addresses
        admin = AdminClient({"bootstrap.servers": broker.bootstrap_servers})
        for future in admin.create_topics([NewTopic("orders", 3, 1)]).values():
            future.result(60)
        producer = confluent_kafka.Producer({"bootstrap.servers": broker.bootstrap_servers, "acks": "all"})
        producer.produce("orders", key=b"k", value=b"before the restarts", partition=1, timestamp=OLD)
        assert producer.flush(60) == 0
        time.sleep(1.0)  # five retention checks

        broker.restart()  # graceful
        broker.restart(kill=True)  # SIGKILL: the record was flushed and acknowledged, so it is still there

        consumer = confluent_kafka.Consumer(
            {
                "bootstrap.servers": broker.bootstrap_servers,
                "group.id": f"g-{uuid.uuid4()}",
                "auto.offset.reset": "earliest",
            }
        )
        try:
            consumer.subscribe(["orders"])
            seen = []
            for _ in range(120):
                message = consumer.poll(0.5)
                if message is not None and message.error() is None:
                    seen.append((message.partition(), message.value()))
                    break
        finally:
            consumer.close()
        assert seen == [(1, b"before the restarts")]
    assert broker.pid is None
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    with pytest.raises(KafkaBrokerError, match="not been started"):
        _ = broker.bootstrap_servers


def test_a_missing_java_is_named() -> None:
    with pytest.raises(KafkaBrokerError, match="not an executable"):
        KafkaBroker(classpath=["unused.jar"], java="/nonexistent/bin/java").start()


def test_a_missing_java_is_named_from_the_path(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(KafkaBrokerError, match=r"java not found .*JDK 17"):
        KafkaBroker(classpath=["unused.jar"]).start()


def test_a_missing_maven_is_named(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("KAFKA_HOME", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(KafkaBrokerError, match=r"mvn not found: .*KAFKA_HOME"):
        kafka_classpath("4.4.0")


def test_a_kafka_home_without_jars_is_named(tmp_path: Path) -> None:
    with pytest.raises(KafkaBrokerError, match=r"has no libs/\*\.jar"):
        kafka_classpath(kafka_home=tmp_path)


def test_a_kafka_home_gives_its_jars(tmp_path: Path) -> None:
    (tmp_path / "libs").mkdir()
    for name in ("kafka-clients-4.1.1.jar", "kafka_2.13-4.1.1.jar"):
        (tmp_path / "libs" / name).write_bytes(b"")
    assert kafka_classpath(kafka_home=tmp_path) == [
        str(tmp_path / "libs" / "kafka-clients-4.1.1.jar"),
        str(tmp_path / "libs" / "kafka_2.13-4.1.1.jar"),
    ]


def test_a_version_that_is_not_one_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KAFKA_HOME", raising=False)
    with pytest.raises(KafkaBrokerError, match="not a version number"):
        kafka_classpath("4.4.0; rm -rf /")
