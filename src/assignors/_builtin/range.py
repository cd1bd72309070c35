"""Kafka's RangeAssignor, including KIP-881 rack-aware assignment."""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import chain
from operator import itemgetter
from typing import TYPE_CHECKING

from assignors._core.base import AbstractPartitionAssignor, subscriber_positions
from assignors._core.model import RANGE_ASSIGNOR_NAME, partition_of_each, topic_partitions, unchecked_tp
from assignors._core.util import kafka_member_order

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from assignors._core.model import Cluster, MemberId, Subscription, Topic, TopicPartition

__all__ = ["RangeAssignor"]


class RangeAssignor(AbstractPartitionAssignor):
    """Assigns each topic on its own, in contiguous ranges of partitions.

    For each topic, its subscribers in Kafka's member order (static members by
    ``group_instance_id``, then dynamic members by member id) take consecutive
    partitions: with ``P`` partitions and ``C`` subscribers, the first ``P % C`` take
    ``P // C + 1`` and the rest ``P // C``. Partition counts per topic differ by at most
    one, but the extras always land on the first members, so totals can be lopsided.

    When members and partitions carry racks and some topic's partitions are not on
    every rack (KIP-881), partitions first go to rack-local members, keeping
    co-partitioning (same partition number of equally sized, identically subscribed
    topics to the same member) and never the per-topic balance. The result equals
    Apache Kafka's ``RangeAssignor`` exactly; each member's list is sorted.

    Runtime complexity: ``O(P + M log M)`` without racks, ``O(P * M)`` at worst with them.

    >>> from assignors import Cluster, Subscription
    >>> result = RangeAssignor().assign(
    ...     Cluster({"t0": 3, "t1": 3}),
    ...     {"C0": Subscription(["t0", "t1"]), "C1": Subscription(["t0", "t1"])},
    ... )
    >>> {member: [str(tp) for tp in a.partitions] for member, a in result.items()}
    {'C0': ['t0-0', 't0-1', 't1-0', 't1-1'], 'C1': ['t0-2', 't1-2']}
    """

    name = RANGE_ASSIGNOR_NAME

    def _assign_partitions(
        self,
        cluster: Cluster,
        partitions_per_topic: Mapping[Topic, int],
        subscriptions: Mapping[MemberId, Subscription],
    ) -> dict[MemberId, list[TopicPartition]]:
        order = kafka_member_order(subscriptions)
        subscribers = subscriber_positions(partitions_per_topic, subscriptions, order)
        result: dict[MemberId, list[TopicPartition]] = {member: [] for member in order}
        if cluster.partition_racks and any(s.rack_id is not None for s in subscriptions.values()):
            states = [
                _TopicState.build(topic, count, [order[p] for p in subscribers[topic][1]], cluster, subscriptions)
                for topic, count in partitions_per_topic.items()
            ]
            if any(state.needs_rack_aware for state in states):
                _assign_with_racks(states, result)
                return result
        _assign_without_racks(partitions_per_topic, subscribers, order, result)
        return result


def _assign_without_racks(
    partitions_per_topic: Mapping[Topic, int],
    subscribers: Mapping[Topic, tuple[tuple[int, ...], tuple[int, ...]]],
    order: list[MemberId],
    result: dict[MemberId, list[TopicPartition]],
) -> None:
    # Topics with the same subscribers and partition count split identically, so each
    # member's share of all of them is one C-level pass over the group's topics.
    groups: dict[tuple[tuple[int, ...], int], list[Topic]] = {}
    for topic, count in partitions_per_topic.items():
        groups.setdefault((subscribers[topic][0], count), []).append(topic)
    for (_, count), topics in groups.items():
        positions = subscribers[topics[0]][1]
        per_member, extra = divmod(count, len(positions))
        if per_member + (extra > 0) == 1:
            # Nobody takes more than one partition of a topic: the i-th subscriber takes partition i
            # of every topic in the group, built straight into its (topic, partition) order.
            for partition, position in zip(range(count), positions, strict=False):
                result[order[position]].extend(partition_of_each(topics, partition))
            continue
        topic_lists = [topic_partitions(topic, count) for topic in topics]
        start = 0
        for index, position in enumerate(positions):
            size = per_member + 1 if index < extra else per_member
            if size == 0:
                break
            target = result[order[position]]
            if size == 1:
                target.extend(map(itemgetter(start), topic_lists))
            else:
                target.extend(chain.from_iterable(map(itemgetter(slice(start, start + size)), topic_lists)))
            start += size
    if len(groups) > 1:
        # Groups interleave topics; each list is a few sorted runs, which sort() merges cheaply.
        for partitions in result.values():
            partitions.sort()


@dataclass(slots=True)
class _TopicState:
    """Kafka's ``RangeAssignor.TopicAssignmentState`` for one topic."""

    topic: Topic
    consumers: tuple[MemberId, ...]
    consumer_racks: dict[MemberId, str | None]
    partition_racks: list[frozenset[str]]
    needs_rack_aware: bool
    per_member: int
    extra: int
    unassigned: dict[int, None]
    assigned: dict[MemberId, int] = field(default_factory=dict)

    @classmethod
    def build(
        cls,
        topic: Topic,
        count: int,
        consumers: list[MemberId],
        cluster: Cluster,
        subscriptions: Mapping[MemberId, Subscription],
    ) -> _TopicState:
        consumer_racks = {member: subscriptions[member].rack_id for member in consumers}
        partition_racks = [cluster.racks_of(unchecked_tp(topic, p)) for p in range(count)]
        all_racks = frozenset().union(*partition_racks)
        known_consumer_racks = {rack for rack in consumer_racks.values() if rack is not None}
        # Kafka's useRackAwareAssignment: some consumer rack hosts a replica, and not
        # every partition is on every rack.
        needs = bool(known_consumer_racks & all_racks) and any(racks != all_racks for racks in partition_racks)
        per_member, extra = divmod(count, len(consumers))
        return cls(
            topic,
            tuple(consumers),
            consumer_racks,
            partition_racks,
            needs,
            per_member,
            extra,
            dict.fromkeys(range(count)),
        )

    def max_assignable(self, member: MemberId) -> int:
        limit = self.per_member + (1 if self.extra > 0 else 0)
        return max(0, limit - self.assigned.get(member, 0))

    def racks_match(self, member: MemberId, partition: int) -> bool:
        rack = self.consumer_racks[member]
        return rack is None or rack in self.partition_racks[partition]

    def give(self, member: MemberId, partitions: list[int], result: dict[MemberId, list[TopicPartition]]) -> None:
        count = self.assigned.get(member, 0) + len(partitions)
        self.assigned[member] = count
        if count > self.per_member:
            self.extra -= 1
        unassigned = self.unassigned
        topic = self.topic
        target = result[member]
        for partition in partitions:
            del unassigned[partition]
            target.append(unchecked_tp(topic, partition))


def _assign_ranges(
    state: _TopicState, may_assign: Callable[[MemberId, int], bool], result: dict[MemberId, list[TopicPartition]]
) -> None:
    for member in state.consumers:
        if not state.unassigned:
            return
        limit = state.max_assignable(member)
        if limit == 0:
            continue
        chosen: list[int] = []
        for partition in state.unassigned:
            if may_assign(member, partition):
                chosen.append(partition)
                if len(chosen) == limit:
                    break
        if chosen:
            state.give(member, chosen, result)


def _assign_co_partitioned(states: list[_TopicState], result: dict[MemberId, list[TopicPartition]]) -> None:
    remaining = list(states[0].consumers)
    for partition in range(len(states[0].partition_racks)):
        member = next(
            (m for m in remaining if all(s.racks_match(m, partition) and s.max_assignable(m) > 0 for s in states)),
            None,
        )
        if member is None:
            continue
        for state in states:
            state.give(member, [partition], result)
        if all(state.max_assignable(member) == 0 for state in states):
            remaining.remove(member)
            if not remaining:
                return


def _assign_with_racks(states: list[_TopicState], result: dict[MemberId, list[TopicPartition]]) -> None:
    # Kafka's assignWithRackMatching: topics grouped by subscribers, then by size; a group
    # of several topics keeps co-partitioning, a lone topic matches racks if it needs to.
    groups: dict[tuple[tuple[MemberId, ...], int], list[_TopicState]] = {}
    for state in states:
        groups.setdefault((state.consumers, len(state.partition_racks)), []).append(state)
    for group in groups.values():
        if len(group) > 1:
            _assign_co_partitioned(group, result)
        elif group[0].needs_rack_aware:
            _assign_ranges(group[0], group[0].racks_match, result)
    for state in states:
        _assign_ranges(state, lambda _member, _partition: True, result)
    for partitions in result.values():
        partitions.sort()
