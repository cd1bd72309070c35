"""assignors.kafka_python without a broker: kafka-python's own codecs read what the adapter writes, and back."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from kafka.protocol.consumer.metadata import ConsumerProtocolAssignment, ConsumerProtocolSubscription

from assignors import ConfigurationError, RebalanceProtocol, TopicPartition
from assignors.consumer_protocol import decode_assignment, decode_subscription
from assignors.kafka_python import for_kafka_python

TP = TopicPartition


class _Cluster:
    def __init__(self, counts: dict[str, int]) -> None:
        self.counts = counts

    def partitions_for_topic(self, topic: str) -> set[int] | None:
        return set(range(self.counts[topic])) if topic in self.counts else None


def _member(member_id: str, metadata: bytes, instance: str | None = None) -> Any:
    return SimpleNamespace(
        member_id=member_id, group_instance_id=instance, metadata=ConsumerProtocolSubscription.decode(metadata)
    )


def test_metadata_is_kafkas_bytes_and_kafka_python_reads_it() -> None:
    """JoinGroup metadata: version 3, sorted topics, the cooperative generation user data."""
    adapter = for_kafka_python("cooperative-sticky", rack="r1")
    blob = adapter.metadata({"b", "a"})
    ours = decode_subscription(blob)
    assert (ours.topics, ours.owned_partitions, ours.generation_id, ours.rack_id) == (("a", "b"), (), -1, "r1")
    theirs = ConsumerProtocolSubscription.decode(blob)
    assert list(theirs.topics) == ["a", "b"]
    assert theirs.rack_id == "r1"


def test_cooperative_round_trip_through_kafka_pythons_codecs() -> None:
    """The leader assigns from kafka-python's decoded metadata; owned partitions and the generation flow back."""
    a, b = for_kafka_python("cooperative-sticky"), for_kafka_python("cooperative-sticky")
    members = [_member("a", a.metadata({"t"})), _member("b", b.metadata({"t"}))]
    result = a.assign(_Cluster({"t": 4}), members)
    assert {m: decode_assignment(v).partitions for m, v in result.items()} == {
        "a": (TP("t", 0), TP("t", 2)),
        "b": (TP("t", 1), TP("t", 3)),
    }
    for adapter, member in ((a, "a"), (b, "b")):
        adapter.on_assignment(ConsumerProtocolAssignment.decode(result[member]), 7)
    again = decode_subscription(a.metadata({"t"}))
    assert (again.owned_partitions, again.generation_id) == ((TP("t", 0), TP("t", 2)), 7)


def test_eager_reports_nothing_owned() -> None:
    """Beside EAGER-only assignors the consumer revokes everything before joining, so it claims nothing."""
    adapter = for_kafka_python("cooperative-sticky", protocol=RebalanceProtocol.EAGER)
    assert [int(p) for p in adapter.supported_protocols()] == [0]
    adapter.on_assignment(
        ConsumerProtocolAssignment.decode(
            b"\x00\x03\x00\x00\x00\x01\x00\x01t\x00\x00\x00\x01\x00\x00\x00\x00\xff\xff\xff\xff"
        ),
        3,
    )
    assert decode_subscription(adapter.metadata({"t"})).owned_partitions == ()
    with pytest.raises(ConfigurationError, match="assignor 'range' does not support COOPERATIVE"):
        for_kafka_python("range", protocol=RebalanceProtocol.COOPERATIVE)
