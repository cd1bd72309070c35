"""Kafka 3.8/3.9's heterogeneous uniform builder (``UniformHeterogeneousAssignmentBuilder``, Kafka 3.9.1).

Its invariants as properties (a valid target, balanced as the builder's own ``isBalanced`` defines it, the same
whatever the input's order) and worked examples pinned from Kafka 3.9.1's output (tests/java/test_uniform.py
checks the same groups against the 3.9.1 jar under aligned ids).
"""

from __future__ import annotations

from collections.abc import Mapping

from hypothesis import given

from assignors import Assignment, Cluster, Subscription, TopicPartition
from assignors._core.base import validate_group_topics
from assignors._core.util import java_sorted
from assignors.consumer_group import UniformAssignor
from assignors.consumer_group._common import previous_targets
from assignors.consumer_group._heterogeneous_38 import KafkaThrows, heterogeneous_targets_38
from assignors.testing import Group, groups, validity_problems

KAFKA_39 = UniformAssignor(kafka_version="3.9.1")


def _kafka_balanced(
    cluster: Cluster, subscriptions: Mapping[str, Subscription], result: Mapping[str, Assignment]
) -> bool:
    """Kafka 3.9's ``isBalanced``: loads within one, or no member below its maximum could take a partition of its
    topics from a member more than one above it."""
    loads = {m: len(a.partitions) for m, a in result.items()}
    counts = cluster.partitions_per_topic
    owner = {tp: m for m, a in result.items() for tp in a.partitions}
    if max(loads.values()) - min(loads.values()) <= 1:
        return True
    for member, subscription in subscriptions.items():
        topics = {t for t in subscription.topics if counts.get(t, 0) > 0}
        if loads[member] == sum(counts[t] for t in topics):
            continue
        for topic in topics:
            for p in range(counts[topic]):
                other = owner.get(TopicPartition(topic, p))
                if other is not None and other != member and loads[member] + 1 < loads[other]:
                    return False
    return True


def _throws(group: Group) -> bool:
    counts, _ = validate_group_topics(group.cluster, group.subscriptions)
    order = java_sorted(group.subscriptions)
    current, _owners = previous_targets(order, counts, group.subscriptions)
    try:
        heterogeneous_targets_38(counts, [group.subscriptions[m].topics for m in order], current)
    except KafkaThrows:
        return True
    return False


@given(group=groups(identical=False, owned=True, max_members=8, max_topics=4, max_partitions=12))
def test_kafka_39_builder_is_valid_balanced_and_deterministic(group: Group) -> None:
    result = KAFKA_39.assign(group.cluster, group.subscriptions)
    assert not validity_problems(group.cluster, group.subscriptions, result), group
    reversed_input = dict(reversed(list(group.subscriptions.items())))
    assert KAFKA_39.assign(group.cluster, reversed_input) == result
    # Balanced as Kafka's isBalanced defines it, where Kafka's own builder is: not where Kafka throws (the 4.0
    # builder stands in), nor where two members claim the same previous partition. Kafka never hands one out
    # twice; given such input its assignStickyPartitions keeps it in both targets, so Kafka 3.9.1's result is then
    # invalid. Ours gives it to the first member in Kafka's order, and the builder then balances from other sizes
    # (drawn against the 3.9.1 jar: 19 of 2,971 groups unbalanced, all of them with a partition claimed twice;
    # of the 3,000 without one, every result equal to Kafka's under aligned ids).
    claimed = [tp for s in group.subscriptions.values() for tp in s.owned_partitions]
    if not _throws(group) and len(claimed) == len(set(claimed)):
        assert _kafka_balanced(group.cluster, group.subscriptions, result), group


def _pins(result: Mapping[str, Assignment]) -> dict[str, list[str]]:
    return {m: [str(tp) for tp in a.partitions] for m, a in result.items()}


OVERLAP = Group(
    Cluster({"t0": 10, "t1": 10}),
    {"m1": Subscription(["t0"]), "m2": Subscription(["t0", "t1"]), "m3": Subscription(["t1"])},
)
"""A fresh group, the middle member on both topics."""

OVERLAP_39 = {
    "m1": ["t0-0", "t0-1", "t0-2", "t0-4", "t0-5", "t0-7", "t0-8"],
    "m2": ["t0-3", "t0-6", "t0-9", "t1-0", "t1-2", "t1-5", "t1-8"],
    "m3": ["t1-1", "t1-3", "t1-4", "t1-6", "t1-7", "t1-9"],
}
"""Kafka 3.9.1's target (the 3.9.1 jar under aligned ids, tests/java/test_uniform.py)."""

HANDOVER = Group(
    Cluster({"t0": 10, "t1": 10}),
    {
        "m1": Subscription(["t0"]),
        "m2": Subscription(["t1"], owned_partitions=[TopicPartition("t1", p) for p in range(10)]),
        "m3": Subscription(["t1"]),
    },
)
"""m2 held all of t1; m3 joins it: Kafka 3.9 moves the upper half, 4.0 on the lower."""

HANDOVER_39 = {
    "m1": ["t0-0", "t0-1", "t0-2", "t0-3", "t0-4", "t0-5", "t0-6", "t0-7", "t0-8", "t0-9"],
    "m2": ["t1-5", "t1-6", "t1-7", "t1-8", "t1-9"],
    "m3": ["t1-0", "t1-1", "t1-2", "t1-3", "t1-4"],
}

WORKED = [(OVERLAP, OVERLAP_39), (HANDOVER, HANDOVER_39)]


def test_worked_examples_are_kafka_39s() -> None:
    for group, expected in WORKED:
        for version in ("3.8.1", "3.9.1"):
            result = UniformAssignor(kafka_version=version).assign(group.cluster, group.subscriptions)
            assert _pins(result) == expected, (version, group)
        assert _pins(UniformAssignor().assign(group.cluster, group.subscriptions)) != expected
