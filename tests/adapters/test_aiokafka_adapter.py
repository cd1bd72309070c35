"""assignors.aiokafka without a broker: aiokafka's own codecs read what the adapter writes; state per consumer."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from aiokafka.coordinator.protocol import ConsumerProtocol

from assignors import ConfigurationError, RebalanceProtocol, TopicPartition
from assignors.aiokafka import for_aiokafka
from assignors.consumer_protocol import decode_assignment, decode_sticky_user_data, decode_subscription

TP = TopicPartition


class _Cluster:
    def partitions_for_topic(self, topic: str) -> set[int] | None:
        return set(range(4)) if topic == "t" else None


def test_sticky_round_trip_through_aiokafkas_codecs_with_the_real_generation() -> None:
    """aiokafka decodes our v3 metadata as v0; ownership travels in sticky user data with the bound generation."""
    a, b = for_aiokafka("sticky"), for_aiokafka("sticky")
    consumer_a = SimpleNamespace(_coordinator=SimpleNamespace(generation=5))
    a.bind(consumer_a)
    members = {m: ConsumerProtocol.METADATA.decode(x.metadata({"t"})) for m, x in (("a", a), ("b", b))}
    assert list(members["a"].subscription) == ["t"]
    result = a.assign(_Cluster(), members)
    assert {m: decode_assignment(v).partitions for m, v in result.items()} == {
        "a": (TP("t", 0), TP("t", 2)),
        "b": (TP("t", 1), TP("t", 3)),
    }
    a.on_assignment(ConsumerProtocol.ASSIGNMENT.decode(result["a"]))
    b.on_assignment(ConsumerProtocol.ASSIGNMENT.decode(result["b"]))
    sent = decode_subscription(a.metadata({"t"}))
    assert sent.owned_partitions == ()  # EAGER: revoked before joining
    claim = decode_sticky_user_data(sent.user_data or b"")
    assert (claim.partitions, claim.generation) == ((TP("t", 0), TP("t", 2)), 5)
    unbound = decode_sticky_user_data((b.metadata({"t"}) and decode_subscription(b.metadata({"t"})).user_data) or b"")
    assert unbound.generation == -1  # not bound: the generation stays unknown, as with aiokafka's own assignor


def test_state_is_per_consumer() -> None:
    """Two adapters in one process never share what they remember (aiokafka issue 1175)."""
    a, b = for_aiokafka("sticky"), for_aiokafka("sticky")
    a.on_assignment(ConsumerProtocol.ASSIGNMENT.decode(a.assign(_Cluster(), {
        "a": ConsumerProtocol.METADATA.decode(a.metadata({"t"}))})["a"]))  # fmt: skip
    assert decode_subscription(b.metadata({"t"})).user_data is None


def test_cooperative_only_assignors_are_refused() -> None:
    """aiokafka runs EAGER only: an assignor without EAGER is a configuration error, named."""
    only_cooperative = SimpleNamespace(name="coop", supported_protocols=(RebalanceProtocol.COOPERATIVE,))
    with pytest.raises(ConfigurationError, match="assignor 'coop' does not support EAGER"):
        for_aiokafka(only_cooperative)
