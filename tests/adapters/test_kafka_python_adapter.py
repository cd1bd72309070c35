"""assignors.kafka_python without a broker: kafka-python's own codecs read what the adapter writes, and back."""

from __future__ import annotations

import socket
from types import SimpleNamespace
from typing import Any

import pytest
from kafka.protocol.consumer.metadata import ConsumerProtocolAssignment, ConsumerProtocolSubscription

from assignors import ConfigurationError, RebalanceProtocol, TopicPartition
from assignors.consumer_protocol import decode_assignment, decode_subscription
from assignors.kafka_python import finish_joins, for_kafka_python

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


def test_finish_joins_keeps_a_join_of_its_own_in_the_rebalance() -> None:
    """kafka-python's real coordinator, no broker: after ``finish_joins`` a join in flight, or done and not taken
    up, makes the next poll take it up; with none, the coordinator's own answer stands."""
    from kafka import KafkaConsumer

    # a port that accepts connections and never answers: a refused one leaves kafka-python a socket unclosed
    with socket.create_server(("127.0.0.1", 0)) as silent:
        port = silent.getsockname()[1]
        consumer = KafkaConsumer(bootstrap_servers=f"127.0.0.1:{port}", group_id="billing", api_version=(4, 0))
        _guarded_joins(consumer)


def _guarded_joins(consumer: Any) -> None:
    from kafka.errors import RebalanceInProgressError
    from kafka.future import Future

    try:
        consumer.subscribe(["orders"])
        coordinator: Any = consumer._coordinator  # the state the guard reads
        coordinator.rejoin_needed = False  # as after a finished rebalance whose metadata still holds
        coordinator._joined_subscription = set(consumer.subscription())
        coordinator._assignment_snapshot = coordinator._metadata_snapshot
        assert coordinator.need_rejoin() is False

        assert finish_joins(consumer) is True
        assert finish_joins(consumer) is True  # once is enough: a second call wraps nothing again
        assert coordinator.need_rejoin() is False  # no join of its own: nothing to finish
        coordinator._join_task = Future()  # a JoinGroup/SyncGroup round trip in flight
        assert coordinator.need_rejoin() is True
        coordinator._join_task.success(b"")  # done, its result not taken up by a poll
        assert coordinator.need_rejoin() is True
        coordinator._join_task = None  # taken up
        assert coordinator.need_rejoin() is False
        coordinator.rejoin_needed = True
        assert coordinator.need_rejoin() is True  # the coordinator's own reasons still count

        # the next poll's join_group_async awaits a finished task (no coordinator here: it stops there)
        finished = Future().success(b"the assignment")
        coordinator._join_task = finished
        assert coordinator._net.run(coordinator.join_group_async, 0) is False
        taken_up = coordinator._join_task
        assert taken_up is not finished
        assert taken_up.is_done is False  # so the loop awaits it instead of sending a new JoinGroup
        assert _result_of(taken_up) == b"the assignment"
        seen: list[Any] = []
        taken_up.add_callback(seen.append)
        assert seen == [b"the assignment"]  # at once, as kafka-python's wait_for needs
        coordinator._join_task = Future().failure(RebalanceInProgressError("billing"))
        coordinator._net.run(coordinator.join_group_async, 0)
        with pytest.raises(RebalanceInProgressError):
            _result_of(coordinator._join_task)  # the round trip's error, for the loop's own handling
    finally:
        consumer.close()


def _result_of(task: Any) -> Any:
    """What ``await task`` gives in kafka-python's loop, for a task that needs no waiting."""
    waiting = task.__await__()
    with pytest.raises(StopIteration) as stopped:
        next(waiting)
    return stopped.value.value


def test_finish_joins_changes_nothing_without_kafka_pythons_join_task() -> None:
    plain = SimpleNamespace(_coordinator=SimpleNamespace(need_rejoin=lambda: False))
    assert finish_joins(plain) is False
    assert finish_joins(SimpleNamespace()) is False
    assert plain._coordinator.need_rejoin() is False
