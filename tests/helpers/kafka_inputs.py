"""Helpers that rebuild the inputs of Apache Kafka's own assignor tests, and a naive oracle.

``kafka_cluster`` lays replicas out as Kafka's ``AbstractPartitionAssignorTest`` does:
brokers ``0..n-1`` on the given racks; partition ``i`` of a topic has its replicas on
brokers ``(i + j + offset) % n`` for ``j < replication factor``, where ``offset`` counts
the partitions of the topics before it (in the given order).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from assignors import Cluster, Subscription, TopicPartition
from assignors._core.util import kafka_member_order


def kafka_cluster(
    partitions_per_topic: Mapping[str, int], replication_factor: int, broker_racks: Sequence[str | None]
) -> Cluster:
    racks: dict[TopicPartition, list[str]] = {}
    offset = 0
    for topic, count in partitions_per_topic.items():
        for partition in range(count):
            replicas = [broker_racks[(partition + j + offset) % len(broker_racks)] for j in range(replication_factor)]
            racks[TopicPartition(topic, partition)] = [r for r in replicas if r is not None]
        offset += count
    return Cluster(partitions_per_topic, partition_racks=racks)


def kafka_consumers(
    consumer_topics: Sequence[Sequence[str]], consumer_racks: Sequence[str | None]
) -> dict[str, Subscription]:
    return {
        f"consumer{i}": Subscription(topics, rack_id=rack)
        for i, (topics, rack) in enumerate(zip(consumer_topics, consumer_racks, strict=True))
    }


def racks(count: int) -> list[str | None]:
    return [("a", "b", "c", "d", "e", "f")[i % 6] for i in range(count)]


def null_racks(count: int) -> list[str | None]:
    return [None] * count


def as_strings(result: Mapping[str, object]) -> dict[str, str]:
    """Kafka's ``toSortedString``: each member's partitions as sorted strings joined by ', '."""
    return {
        member: ", ".join(sorted(str(tp) for tp in getattr(assignment, "partitions", ())))
        for member, assignment in result.items()
    }


def naive_range(cluster: Cluster, subscriptions: Mapping[str, Subscription]) -> dict[str, list[TopicPartition]]:
    """Kafka's non-rack RangeAssignor, written the slow, obvious way."""
    order = kafka_member_order(subscriptions)
    result: dict[str, list[TopicPartition]] = {m: [] for m in subscriptions}
    topics = {t for s in subscriptions.values() for t in s.topics}
    for topic in sorted(topics):
        count = cluster.partition_count(topic) or 0
        consumers = [m for m in order if topic in subscriptions[m].topics]
        per_consumer, extra = divmod(count, len(consumers))
        start = 0
        for i, member in enumerate(consumers):
            size = per_consumer + (1 if i < extra else 0)
            result[member] += [TopicPartition(topic, p) for p in range(start, start + size)]
            start += size
    return result


def naive_round_robin(cluster: Cluster, subscriptions: Mapping[str, Subscription]) -> dict[str, list[TopicPartition]]:
    """Kafka's RoundRobinAssignor with its circular iterator, partition by partition."""
    order = kafka_member_order(subscriptions)
    result: dict[str, list[TopicPartition]] = {m: [] for m in subscriptions}
    topics = sorted({t for s in subscriptions.values() for t in s.topics})
    cursor = 0
    for topic in topics:
        for partition in range(cluster.partition_count(topic) or 0):
            while topic not in subscriptions[order[cursor % len(order)]].topics:
                cursor += 1
            result[order[cursor % len(order)]].append(TopicPartition(topic, partition))
            cursor += 1
    return result
