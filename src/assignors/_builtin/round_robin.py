"""Kafka's RoundRobinAssignor."""

from __future__ import annotations

from bisect import bisect_left
from typing import TYPE_CHECKING

from assignors._core.base import AbstractPartitionAssignor, subscriber_positions
from assignors._core.model import ROUNDROBIN_ASSIGNOR_NAME, topic_partitions
from assignors._core.util import java_sorted, kafka_member_order

if TYPE_CHECKING:
    from collections.abc import Mapping

    from assignors._core.model import Cluster, MemberId, Subscription, Topic, TopicPartition

__all__ = ["RoundRobinAssignor"]


class RoundRobinAssignor(AbstractPartitionAssignor):
    """Deals all partitions out one at a time, like cards, skipping members not subscribed.

    Members are in Kafka's member order (static by ``group_instance_id`` first, then
    dynamic by member id) on a circular iterator; partitions go topic by topic in topic
    name order, partitions ascending; each goes to the next member on the circle that
    subscribes to its topic. With identical subscriptions member totals differ by at
    most one. The result equals Apache Kafka's ``RoundRobinAssignor`` exactly; each
    member's list is in assignment order, which is sorted order.

    Runtime complexity: ``O(P + T log M + M log M)``: a run of topics with the same
    subscribers is dealt out with one strided slice per member.

    >>> from assignors import Cluster, Subscription
    >>> result = RoundRobinAssignor().assign(
    ...     Cluster({"t1": 3, "t2": 3}),
    ...     {"c1": Subscription(["t1", "t2"]), "c2": Subscription(["t1", "t2"])},
    ... )
    >>> {member: [str(tp) for tp in a.partitions] for member, a in result.items()}
    {'c1': ['t1-0', 't1-2', 't2-1'], 'c2': ['t1-1', 't2-0', 't2-2']}
    """

    name = ROUNDROBIN_ASSIGNOR_NAME

    def _assign_partitions(
        self,
        cluster: Cluster,  # noqa: ARG002 - RoundRobin is not rack-aware
        partitions_per_topic: Mapping[Topic, int],
        subscriptions: Mapping[MemberId, Subscription],
    ) -> dict[MemberId, list[TopicPartition]]:
        order = kafka_member_order(subscriptions)
        subscribers = subscriber_positions(partitions_per_topic, subscriptions, order)
        lists: list[list[TopicPartition]] = [[] for _ in order]
        cursor = 0  # position in `order` of the circular iterator
        # A run of consecutive topics with the same subscribers is one segment.
        segment: list[TopicPartition] = []
        segment_positions: tuple[int, ...] = ()
        for topic in java_sorted(partitions_per_topic):
            positions = subscribers[topic][1]
            if positions is not segment_positions and segment:
                cursor = _deal(segment, segment_positions, cursor, lists)
                segment = []
            segment_positions = positions
            segment.extend(topic_partitions(topic, partitions_per_topic[topic]))
        if segment:
            _deal(segment, segment_positions, cursor, lists)
        return {member: lists[position] for position, member in enumerate(order)}


def _deal(
    partitions: list[TopicPartition], positions: tuple[int, ...], cursor: int, lists: list[list[TopicPartition]]
) -> int:
    """Deal ``partitions`` to the members at ``positions``, starting at the iterator's ``cursor``.

    Kafka advances the iterator past non-subscribers before each partition, so the
    first partition goes to the first subscriber at or after ``cursor`` (wrapping), and
    each next one to the next subscriber: member ``positions[(first + k) % n]`` gets
    partition ``k``. Returns the cursor after the last partition.
    """
    count = len(positions)
    first = bisect_left(positions, cursor)
    if first == count:
        first = 0
    for offset in range(min(count, len(partitions))):
        lists[positions[(first + offset) % count]].extend(partitions[offset::count])
    return positions[(first + len(partitions) - 1) % count] + 1
